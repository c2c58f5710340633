"""The serving kinds: one module each (its spec, its chart's values model, its values), listed here.

A kind is a ``serve KIND`` command and a chart ``charts/<chart>``; its chart's name is Arena's ``servingType``
label. Adding a kind: its row below, its module (``ServeKindModule``: a type checker holds every kind's module to it
in the repo tier) and its chart; the CLI, the schema generation and the read side take it from this list.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

from .catalog import ONE_CHART_KINDS, Api, Family, OneChartKind

KINDS_PACKAGE = "arena_helm.serving.kinds"  # where each kind's module lives


# A serving's shape in ``top job``: its desired replicas, the containers of each pod of a replica, a pod spec
Shape = tuple[int, list[list[dict]], dict]


class ServeKindModule(Protocol):
    """What a serving kind's module (``arena_helm.serving.kinds.<module_name>``) is: every member is there, none
    is looked up by name at run time. The spec and values models; the words after the flags (their help,
    ``from_words``: the spec fields they give); ``UPDATES``: the fields ``serve update`` may change, with the
    values keys each sets (over every kind's), and ``PLACEHOLDERS``: what a spec needs to be built for that
    patch; ``values``: its own chart values (over what every serving sets). The read side, for a kind whose chart
    makes its own workload (``ServeKind.apis``; None for a Deployment's): ``workload_view`` (what the workload
    changes in the serving's view) and ``workload_shape`` (its shape for ``top job``; None when its pods are a
    Deployment's)."""

    @property
    def SPEC(self) -> type: ...  # noqa: N802 (a module constant)

    @property
    def VALUES(self) -> type: ...  # noqa: N802

    @property
    def WORDS(self) -> str: ...  # noqa: N802

    @property
    def UPDATES(self) -> Mapping[str, tuple[str, ...]]: ...  # noqa: N802

    @property
    def PLACEHOLDERS(self) -> Mapping[str, str]: ...  # noqa: N802

    def values(self, spec: Any, /) -> dict[str, Any]: ...

    def from_words(self, words: list[str], /) -> dict[str, Any]: ...

    @property
    def workload_view(self) -> Callable[[dict, Any], dict[str, Any]] | None: ...

    @property
    def workload_shape(self) -> Callable[[dict], Shape] | None: ...


@dataclass(frozen=True)
class ServeKind:
    key: str  # the command: serve <key>
    chart: str  # charts/<chart>, and Arena's servingType label
    module_name: str  # its module in this package
    summary: str  # one line for --help
    spec_name: str  # its spec class, also arena_helm.<spec_name> of the Python API
    # the custom API its chart makes its workload of, and who serves it (none: a Deployment); the read side lists
    # its objects, doctor checks it is served and its controller's webhook answers
    apis: tuple[Api, ...] = ()

    @property
    def family(self) -> Family:
        return Family.SERVING

    def module(self) -> ServeKindModule:
        """Its module, imported on first use (the repo tier's type check holds it to ``ServeKindModule``)."""
        return cast(ServeKindModule, importlib.import_module(f"{KINDS_PACKAGE}.{self.module_name}"))

    def spec_class(self) -> type:
        return self.module().SPEC

    def values_class(self) -> type:
        return self.module().VALUES


SERVE_KINDS = (
    ServeKind("custom", "custom-serving", "custom", "your own image and command", "CustomServeSpec"),
    ServeKind("vllm", "vllm-serving", "vllm", "an LLM behind vLLM's OpenAI-compatible server",
              "VllmServeSpec"),
    ServeKind("sglang", "sglang-serving", "sglang", "an LLM behind SGLang's OpenAI-compatible server",
              "SglangServeSpec"),
    ServeKind("tensorflow", "tf-serving", "tensorflow", "a TensorFlow SavedModel behind TensorFlow Serving",
              "TFServeSpec"),
    ServeKind("triton", "triton-serving", "triton", "models behind NVIDIA Triton Inference Server",
              "TritonServeSpec"),
    # the webhooks: kserve v0.20.0 config/webhook/manifests.yaml, lws v0.9.0 config/webhook/manifests.yaml
    ServeKind("kserve", "kserve", "kserve", "a model as a KServe InferenceService", "KServeSpec",
              (Api("serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices",
                   "KServe (RawDeployment/Standard mode, or Knative)",
                   "inferenceservice.kserve-webhook-server.validator"),)),
    ServeKind("distributed", "distributed-serving", "distributed",
              "a model over groups of a leader and workers (a LeaderWorkerSet)", "DistributedServeSpec",
              (Api("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets", "LeaderWorkerSet (LWS)",
                   "vleaderworkerset.kb.io"),)),
)
BY_KEY = {k.key: k for k in SERVE_KINDS}
BY_CHART = {k.chart: k for k in SERVE_KINDS}

# The kinds whose charts make objects of an API of their own (the servings' and the traffic split's): doctor's -T
# names them beside the job kinds, and checks each API
_WITH_APIS: tuple[ServeKind | OneChartKind, ...] = (*SERVE_KINDS, *ONE_CHART_KINDS)
API_KINDS = {k.key: k for k in _WITH_APIS if k.apis}
