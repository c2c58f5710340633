"""``serve triton``: models behind NVIDIA Triton Inference Server (Arena's triton serving; charts/triton-serving).

The server is ``tritonserver --model-repository=PATH --http-port=H --grpc-port=G --allow-metrics=B
[--metrics-port=M] [--model-control-mode=explicit --load-model=NAME...] [SERVER ARGS...]``, as Arena's triton chart
runs it (kubeflow/arena charts/triton/templates/deployment.yaml), without its shell: each argument reaches the
server as it is. The image is Triton's release image, its vLLM or TensorRT-LLM variant with ``--backend``
(Arena's ``triton.image`` helper). Probes: Triton's KServe-v2 health endpoints, ``/v2/health/ready`` (every
model loaded) for readiness and ``/v2/health/live`` for liveness, and a startup probe that gives the models
``--startup-timeout`` to load.
"""

from __future__ import annotations

import enum
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from ...core.grammars import AbsPath, Image
from ...workload.chart_values import Empty, ValuesModel
from ...workload.spec import opt
from ..servings import ServeSpec, ServingValues, changed_values

WORDS = "More arguments of tritonserver, passed as they are (e.g. --log-verbose=1 --strict-readiness=false)."
PORTS = (("http_port", "http"), ("grpc_port", "grpc"), ("metrics_port", "metrics"))  # flag field, port name
# a model's name: its folder in the repository
MODEL_NAME_RX = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class Backend(enum.StrEnum):
    """Triton's LLM backends with an image of their own (Arena's --backend)."""

    vllm = "vllm"
    trt_llm = "trt-llm"


class TritonServeSpec(ServeSpec):
    """A Triton Inference Server serving: the models of --model-repository behind Triton's HTTP/REST API on
    --http-port (/v2/models/NAME/infer), its gRPC API on --grpc-port and, with --allow-metrics, Prometheus
    metrics on --metrics-port. Each field is the flag of the same name."""

    KIND: ClassVar[str] = "triton"

    model_repository: AbsPath | None = opt("The model repository (one folder per model), in the container: under a "
                                           "-d mount. Required.")
    backend: Backend | None = opt("The LLM backend whose Triton image to run: vllm or trt-llm "
                                                      "(needs --gpus).")
    http_port: int = opt("Port of the HTTP/REST API (the Service's port http).", 8000, ge=1, le=65535)
    grpc_port: int = opt("Port of the gRPC API (the Service's port grpc).", 8001, ge=1, le=65535)
    metrics_port: int = opt("Port of the Prometheus metrics, with --allow-metrics (the Service's port metrics).",
                            8002, ge=1, le=65535)
    allow_metrics: bool = opt("Serve Prometheus metrics on --metrics-port.", False)
    load_model: list[str] = opt("Load only this model of the repository (repeatable; Triton's explicit model "
                                "control). Default: every model.", [])
    startup_timeout: int = opt("Seconds the models may take to load before the pod is restarted.", 600, ge=30)
    server_args: list[str] = Field([], description="More arguments of tritonserver (the words after the flags).",
                                   json_schema_extra={"flag": {"cli": False}})

    @field_validator("load_model")
    @classmethod
    def _models(cls, names: list[str]) -> list[str]:
        for n in names:
            if not MODEL_NAME_RX.fullmatch(n):
                raise ValueError(f"--load-model {n!r}: not a model's folder name in the repository (letters, "
                                 f"digits, '_', '.', '-')")
        return names

    @model_validator(mode="after")
    def _triton(self) -> TritonServeSpec:
        if not self.model_repository:
            raise ValueError("--model-repository: give where the models are (a path under a -d mount)")
        if self.backend and self.gpus < 1:
            raise ValueError(f"--backend {self.backend.value}: Triton's {self.backend.value} backend runs on NVIDIA GPUs: give "
                             f"--gpus 1 or more")
        ports = [getattr(self, f) for f, name in PORTS if name != "metrics" or self.allow_metrics]
        if len(set(ports)) < len(ports):
            raise ValueError("--http-port/--grpc-port/--metrics-port: two of them are the same port: give each its "
                             "own")
        return self


class TritonImages(ValuesModel):
    standard: Image = Field("nvcr.io/nvidia/tritonserver:25.01-py3", description="Image without backend.")
    vllm: Image = Field("nvcr.io/nvidia/tritonserver:25.01-vllm-python-py3", description="Image of backend vllm.")
    trt_llm: Image = Field("nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3",
                           description="Image of backend trt-llm.")


class TritonServingValues(ServingValues):
    """The values of the triton-serving chart."""

    image: Empty | Image = Field("", description="Image; \"\" = the image of the backend (images).")
    images: TritonImages = Field(default_factory=TritonImages, description="The default images, by backend.")
    backend: Literal["", "vllm", "trt-llm"] = Field("", description="The LLM backend (its image): vllm, trt-llm; "
                                                    "\"\" = none.")
    model_repository: Empty | AbsPath = Field("", description="--model-repository: the models' folders, in the "
                                              "container (required).")
    http_port: int = Field(8000, ge=1, le=65535, description="HTTP/REST port (the Service's port http).")
    grpc_port: int = Field(8001, ge=1, le=65535, description="gRPC port (the Service's port grpc).")
    metrics_port: int = Field(8002, ge=1, le=65535, description="Metrics port (the Service's port metrics), with "
                              "allowMetrics.")
    allow_metrics: bool = Field(False, description="--allow-metrics: serve Prometheus metrics on metricsPort.")
    load_models: list[str] = Field([], description="Models to load (--model-control-mode=explicit --load-model "
                                   "each); [] = every model of the repository.")
    extra_args: list[str] = Field([], description="More arguments of tritonserver, after arena-helm's.")
    startup_timeout_seconds: int = Field(600, ge=30, description="Seconds the models may take to load (the startup "
                                         "probe's limit) before the pod is restarted.")


SPEC, VALUES = TritonServeSpec, TritonServingValues
workload_view = workload_shape = None  # its workload is the serving's Deployment
PLACEHOLDERS = {"model_repository": "/placeholder"}  # what a spec needs to be built for serve update's patch
UPDATES = {"model_repository": ("modelRepository",), "http_port": ("httpPort",), "grpc_port": ("grpcPort",),
           "metrics_port": ("metricsPort",), "allow_metrics": ("allowMetrics",), "load_model": ("loadModels",),
           "startup_timeout": ("startupTimeoutSeconds",), "server_args": ("extraArgs",)}


def values(spec: TritonServeSpec) -> dict[str, Any]:
    """What a Triton serving adds to the common values: the repository, the backend, the ports. Pure."""
    return {"modelRepository": spec.model_repository, **changed_values(spec, {
        "backend": "backend", "http_port": "httpPort", "grpc_port": "grpcPort", "metrics_port": "metricsPort",
        "startup_timeout": "startupTimeoutSeconds", "allow_metrics": "allowMetrics", "load_model": "loadModels",
        "server_args": "extraArgs"})}


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: more arguments of tritonserver, each as it is."""
    return {"server_args": list(words)}
