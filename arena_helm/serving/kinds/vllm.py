"""``serve vllm``: an LLM behind vLLM's OpenAI-compatible server (charts/vllm-serving).

The server is ``vllm serve MODEL --host 0.0.0.0 --port PORT --tensor-parallel-size N [--max-model-len L]
[ENGINE ARGS...]`` (vLLM's CLI, vllm/entrypoints/cli/serve.py), in the vllm/vllm-openai image; the model is a
Hugging Face model id (a token: ``--env-from-secret HF_TOKEN=SECRET``) or a path in a mounted volume (``-d``).
The tensor parallel size defaults to the replica's GPUs. Probes: vLLM's ``/health`` (200 once the engine
serves) for readiness and liveness, and a startup probe that gives the model ``startupTimeoutSeconds`` to load.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from ...core.grammars import Image, Quantity
from ...workload.chart_values import Empty
from ...workload.spec import Gpus, opt
from ..servings import ServeSpec, ServingValues, changed_values, check_llm_server

DEFAULT_IMAGE = "vllm/vllm-openai:v0.12.0"
WORDS = "More arguments of vllm serve, passed as they are (e.g. --dtype half --gpu-memory-utilization 0.9)."


class VllmServeSpec(ServeSpec):
    """A vLLM serving: the model behind vLLM's OpenAI-compatible API (/v1/chat/completions, /v1/completions,
    /v1/models) on --port. Each field is the flag of the same name."""

    KIND: ClassVar[str] = "vllm"

    model: str = opt("The model: a Hugging Face id (org/name) or an absolute path in a mounted volume (-d). "
                     "Required.", "")
    port: int = opt("Port of the OpenAI-compatible API (the Service's port http).", 8000, ge=1, le=65535)
    gpus: Gpus = opt("GPUs of each replica (nvidia.com/gpu).", 1)
    tensor_parallel_size: int | None = opt("GPUs one model copy is split over (default: the replica's GPUs).",
                                           ge=1, le=64)
    max_model_len: int | None = opt("Longest context (prompt + output tokens; default: the model's).", ge=1)
    startup_timeout: int = opt("Seconds the model may take to load before the pod is restarted.", 1800, ge=30)
    engine_args: list[str] = Field([], description="More arguments of vllm serve (the words after the flags).",
                                   json_schema_extra={"flag": {"cli": False}})

    @model_validator(mode="after")
    def _vllm(self) -> VllmServeSpec:
        check_llm_server(self.model, self.gpus, self.tensor_parallel_size, "vLLM")
        return self


class VllmServingValues(ServingValues):
    """The values of the vllm-serving chart."""

    image: Image = Field(DEFAULT_IMAGE, description="The vLLM OpenAI server image (its vllm command serves).")
    model: str = Field("", description="The model: a Hugging Face id (org/name) or an absolute path in a mounted "
                       "volume (required).")
    port: int = Field(8000, ge=1, le=65535, description="Port of the OpenAI-compatible API (the Service's port "
                      "http).")
    gpus: int = Field(1, ge=0, description="nvidia.com/gpu of each replica, in requests and limits.")
    tensor_parallel_size: int | None = Field(None, ge=1, description="--tensor-parallel-size; null = gpus.")
    max_model_len: int | None = Field(None, ge=1, description="--max-model-len; null = the model's.")
    extra_args: list[str] = Field([], description="More arguments of vllm serve, after arena-helm's.")
    startup_timeout_seconds: int = Field(1800, ge=30, description="Seconds the model may take to load (the startup "
                                         "probe's limit) before the pod is restarted.")
    shm_size: Empty | Quantity = Field("2Gi", description="Size of the memory-backed /dev/shm (tensor parallel "
                                       "workers share tensors through it); \"\" = the runtime's default.")


SPEC, VALUES = VllmServeSpec, VllmServingValues
workload_view = workload_shape = None  # its workload is the serving's Deployment
PLACEHOLDERS = {"model": "/placeholder"}  # what a spec needs to be built for serve update's patch
UPDATES = {"model": ("model",), "max_model_len": ("maxModelLen",), "tensor_parallel_size": ("tensorParallelSize",),
           "startup_timeout": ("startupTimeoutSeconds",), "port": ("port",), "engine_args": ("extraArgs",)}


def values(spec: VllmServeSpec) -> dict[str, Any]:
    """What a vLLM serving adds to the common values: the model and the engine's arguments. Pure."""
    return {"model": spec.model, "gpus": spec.gpus, **changed_values(spec, {
        "port": "port", "tensor_parallel_size": "tensorParallelSize", "max_model_len": "maxModelLen",
        "startup_timeout": "startupTimeoutSeconds", "engine_args": "extraArgs"})}


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: more arguments of vllm serve, each as it is."""
    return {"engine_args": list(words)}
