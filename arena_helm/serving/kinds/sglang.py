"""``serve sglang``: an LLM behind SGLang's OpenAI-compatible server (charts/sglang-serving).

The server is ``python3 -m sglang.launch_server --model-path MODEL --host 0.0.0.0 --port PORT --tp-size N
[--context-length L] [--mem-fraction-static F] [SERVER ARGS...]`` (SGLang's launcher,
python/sglang/launch_server.py, its arguments python/sglang/srt/server_args.py), in the lmsysorg/sglang image;
the model is a Hugging Face model id (a token: ``--env-from-secret HF_TOKEN=SECRET``) or a path in a mounted
volume (``-d``). The tensor parallel size defaults to the replica's GPUs. Probes: SGLang's ``/health`` (200
once the server is up) for readiness and liveness, and a startup probe that gives the model
``startupTimeoutSeconds`` to load.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from ...core.grammars import Image, Quantity
from ...workload.chart_values import Empty
from ...workload.spec import Gpus, opt
from ..servings import ServeSpec, ServingValues, changed_values, check_llm_server

DEFAULT_IMAGE = "lmsysorg/sglang:v0.5.16"
DEFAULT_PORT = 30000  # SGLang's own default port (server_args.py)
WORDS = "More arguments of sglang.launch_server, passed as they are (e.g. --dtype half --trust-remote-code)."


class SglangServeSpec(ServeSpec):
    """An SGLang serving: the model behind SGLang's OpenAI-compatible API (/v1/chat/completions, /v1/completions,
    /v1/models) and its native /generate on --port. Each field is the flag of the same name."""

    KIND: ClassVar[str] = "sglang"

    model: str = opt("The model: a Hugging Face id (org/name) or an absolute path in a mounted volume (-d). "
                     "Required.", "")
    port: int = opt("Port of the API (the Service's port http).", DEFAULT_PORT, ge=1, le=65535)
    gpus: Gpus = opt("GPUs of each replica (nvidia.com/gpu).", 1)
    tensor_parallel_size: int | None = opt("GPUs one model copy is split over (--tp-size; default: the replica's "
                                           "GPUs).", ge=1, le=64)
    context_length: int | None = opt("Longest context (prompt + output tokens; default: the model's).", ge=1)
    mem_fraction_static: float | None = opt("Share of the GPU memory for the weights and the KV cache (default: "
                                            "SGLang's).", gt=0, lt=1)
    startup_timeout: int = opt("Seconds the model may take to load before the pod is restarted.", 1800, ge=30)
    server_args: list[str] = Field([], description="More arguments of sglang.launch_server (the words after the "
                                   "flags).", json_schema_extra={"flag": {"cli": False}})

    @model_validator(mode="after")
    def _sglang(self) -> SglangServeSpec:
        check_llm_server(self.model, self.gpus, self.tensor_parallel_size, "SGLang")
        return self


class SglangServingValues(ServingValues):
    """The values of the sglang-serving chart."""

    image: Image = Field(DEFAULT_IMAGE, description="The SGLang image (its python3 has the sglang package).")
    model: str = Field("", description="The model: a Hugging Face id (org/name) or an absolute path in a mounted "
                       "volume (required).")
    port: int = Field(DEFAULT_PORT, ge=1, le=65535, description="Port of the API (the Service's port http).")
    gpus: int = Field(1, ge=0, description="nvidia.com/gpu of each replica, in requests and limits.")
    tensor_parallel_size: int | None = Field(None, ge=1, description="--tp-size; null = gpus.")
    context_length: int | None = Field(None, ge=1, description="--context-length; null = the model's.")
    mem_fraction_static: float | None = Field(None, gt=0, lt=1, description="--mem-fraction-static; null = "
                                              "SGLang's.")
    extra_args: list[str] = Field([], description="More arguments of sglang.launch_server, after arena-helm's.")
    startup_timeout_seconds: int = Field(1800, ge=30, description="Seconds the model may take to load (the startup "
                                         "probe's limit) before the pod is restarted.")
    shm_size: Empty | Quantity = Field("2Gi", description="Size of the memory-backed /dev/shm (tensor parallel "
                                       "workers share tensors through it); \"\" = the runtime's default.")


SPEC, VALUES = SglangServeSpec, SglangServingValues
workload_view = workload_shape = None  # its workload is the serving's Deployment
PLACEHOLDERS = {"model": "/placeholder"}  # what a spec needs to be built for serve update's patch
UPDATES = {"model": ("model",), "context_length": ("contextLength",), "tensor_parallel_size": ("tensorParallelSize",),
           "mem_fraction_static": ("memFractionStatic",), "startup_timeout": ("startupTimeoutSeconds",),
           "port": ("port",), "server_args": ("extraArgs",)}


def values(spec: SglangServeSpec) -> dict[str, Any]:
    """What an SGLang serving adds to the common values: the model and the server's arguments. Pure."""
    return {"model": spec.model, "gpus": spec.gpus, **changed_values(spec, {
        "port": "port", "tensor_parallel_size": "tensorParallelSize", "context_length": "contextLength",
        "mem_fraction_static": "memFractionStatic", "startup_timeout": "startupTimeoutSeconds",
        "server_args": "extraArgs"})}


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: more arguments of sglang.launch_server, each as it is."""
    return {"server_args": list(words)}
