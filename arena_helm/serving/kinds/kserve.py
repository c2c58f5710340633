"""``serve kserve``: a KServe InferenceService (Arena's kserve serving; charts/kserve).

The chart renders one ``serving.kserve.io/v1beta1`` InferenceService named as the release, whose predictor is
either a model (``--model-format NAME[:VERSION]`` with ``--storage-uri``, served by the ServingRuntime KServe
picks for that format, or ``--runtime``) or the user's container (``--image`` and the command after the
flags), as Arena's kserve chart (kubeflow/arena charts/kserve/templates/inferenceservice.yaml) renders it. KServe
makes the Deployment, Service and autoscaler of the predictor (named ``<release>-predictor``); the serving's
labels go on the InferenceService and, through the predictor's ``labels``, on its pods.
"""

from __future__ import annotations

import enum
import re
from typing import Any, ClassVar

from pydantic import Field, model_validator

from ...core.grammars import IMAGE_TAG_RX, DNSSubdomain, Image, check_no_credentials, check_subdomain, matches
from ...workload.chart_values import Empty, ValuesModel
from ...workload.spec import JobSpec, opt
from ..servings import ServeSpec, ServingValues, _shared

WORDS = "The command of your container (joined with spaces; none: the image's entrypoint, or the runtime's)."
# a storage URI KServe's storage initializer reads (pkg/storage: gs, s3, pvc, hdfs, webhdfs, hf, oci, http(s),
# azure blob); the scheme is checked, the rest is the storage's business
STORAGE_RX = re.compile(r"^(gs|s3|pvc|hdfs|webhdfs|hf|oci|https?)://\S+$")
MODEL_FORMAT_RX = re.compile(r"^([a-z0-9][a-z0-9_.-]*)(?::([A-Za-z0-9][A-Za-z0-9_.-]*))?$")


class ProtocolVersion(enum.StrEnum):
    """KServe's inference protocols (the predictor's protocolVersion)."""

    v1 = "v1"
    v2 = "v2"
    grpc_v1 = "grpc-v1"
    grpc_v2 = "grpc-v2"


class ScaleMetric(enum.StrEnum):
    """The metric KServe's autoscaler follows (concurrency and rps need Knative's autoscaler)."""

    cpu = "cpu"
    memory = "memory"
    concurrency = "concurrency"
    rps = "rps"


class KServeSpec(ServeSpec):
    """A KServe InferenceService: a model of --model-format from --storage-uri behind its serving runtime, or your
    container (--image and the command after the flags); KServe makes its Deployment, Service and autoscaler.
    Each field is the flag of the same name."""

    KIND: ClassVar[str] = "kserve"

    command: str = Field("", description="The container's command, run as [SHELL, -c, COMMAND] byte for byte (none: "
                         "the image's or runtime's own).", json_schema_extra={"flag": {"cli": False}})
    shell: str = _shared(JobSpec, "shell")
    model_format: str | None = opt("The model's format, NAME[:VERSION] (sklearn, xgboost, onnx, pytorch, "
                                   "tensorflow, huggingface, ...): KServe serves it with a runtime for that format.")
    storage_uri: str | None = opt("Where the model is: pvc://CLAIM/PATH, s3://, gs://, hf://, oci://, https:// "
                                  "(with --model-format).")
    runtime: DNSSubdomain | None = opt("The ServingRuntime or ClusterServingRuntime to use (default: KServe picks one "
                                       "for the format).")
    runtime_version: str | None = opt("The runtime image's tag.")
    protocol_version: ProtocolVersion | None = opt("The inference protocol: v1, v2, grpc-v1, grpc-v2.")
    port: int = opt("The port your container listens on (0: KServe's 8080).", 0, ge=0, le=65535)
    min_replicas: int | None = opt("Fewest replicas (0: scale to zero, with Knative). Default: --replicas.", ge=0)
    max_replicas: int | None = opt("Most replicas the autoscaler may make (default: --min-replicas).", ge=1)
    scale_metric: ScaleMetric | None = opt("The metric the autoscaler follows: cpu, memory, concurrency, rps.")
    scale_target: int | None = opt("The metric's target value a replica (e.g. 80: % CPU).", ge=1)
    container_concurrency: int | None = opt("Most requests a replica handles at once.", ge=1)
    request_timeout: int | None = opt("Seconds a request may take (Arena's --timeout of serve kserve).", ge=1)
    canary_traffic_percent: int | None = opt("Percent of the traffic the latest revision gets, the rest staying on "
                                             "the previous one (a canary rollout with serve update).", ge=0, le=100)

    @model_validator(mode="after")
    def _kserve(self) -> KServeSpec:
        if self.model_format:
            if not MODEL_FORMAT_RX.fullmatch(self.model_format):
                raise ValueError(f"--model-format {self.model_format!r}: not NAME[:VERSION] (e.g. sklearn or "
                                 f"onnx:1)")
        elif not self.image:
            raise ValueError("--model-format/--image: give the model's format (with --storage-uri), or your own "
                             "--image")
        else:
            for flag, value in (("storage-uri", self.storage_uri), ("runtime", self.runtime),
                                ("runtime-version", self.runtime_version)):
                if value:
                    raise ValueError(f"--{flag}: only a model (--model-format) has one; your container reads "
                                     f"its model itself")
        if self.storage_uri:
            check_no_credentials(self.storage_uri, "--storage-uri", "KServe reads a storage's credentials from a "
                                 "Secret of the predictor's service account, never from the URI")
            if not STORAGE_RX.fullmatch(self.storage_uri):
                raise ValueError(f"--storage-uri {self.storage_uri!r}: not a URI KServe reads (pvc://CLAIM/PATH, "
                                 f"s3://, gs://, hf://, oci://, https://...)")
            if self.storage_uri.startswith("pvc://"):  # a claim's name is a DNS subdomain (ValidatePersistentVolumeName)
                claim = self.storage_uri[len("pvc://"):].partition("/")[0]
                check_subdomain(claim, "--storage-uri: the claim")
        if self.runtime_version and not matches(IMAGE_TAG_RX, self.runtime_version):
            raise ValueError(f"--runtime-version {self.runtime_version!r}: not an image tag (at most 128 letters, "
                             f"digits, '_', '.', '-', not starting with '.' or '-')")
        if self.min_replicas is not None and self.replicas != 1 and self.min_replicas != self.replicas:
            raise ValueError(f"--replicas {self.replicas} and --min-replicas {self.min_replicas}: give one (a "
                             f"KServe serving's replicas are its fewest)")
        low = self.fewest
        if self.max_replicas is not None and self.max_replicas < max(low, 1):
            raise ValueError(f"--max-replicas {self.max_replicas}: fewer than --min-replicas {low}")
        return self

    @property
    def fewest(self) -> int:
        return self.replicas if self.min_replicas is None else self.min_replicas


class ModelFormat(ValuesModel):
    name: str = Field("", description="The model's format (sklearn, onnx, ...); \"\" = no model: the container "
                      "(image) serves.")
    version: str = Field("", description="The format's version; \"\" = any.")


class KServeValues(ServingValues):
    """The values of the kserve chart (replicas: the predictor's minReplicas)."""

    image: Empty | Image = Field("", description="Image of your container (required without modelFormat); with a "
                                 "model, the runtime's image instead of its own.")
    command: str = Field("", description="The container's command, run as [shell, -c, command] byte for byte; \"\" = "
                         "the image's (or runtime's) own.")
    shell: str = Field("sh", min_length=1, description="Shell that runs the command.")
    model_format: ModelFormat = Field(default_factory=ModelFormat, description="The model's format: the predictor "
                                      "serves a model (spec.predictor.model) with a runtime for it.")
    storage_uri: str = Field("", description="Where the model is (pvc://, s3://, gs://, hf://, ...).")
    runtime: str = Field("", description="ServingRuntime or ClusterServingRuntime; \"\" = KServe's choice.")
    runtime_version: str = Field("", description="The runtime image's tag; \"\" = the runtime's.")
    protocol_version: str = Field("", pattern="^(|v1|v2|grpc-v1|grpc-v2)$", description="Inference protocol: v1, v2, "
                                  "grpc-v1, grpc-v2; \"\" = the runtime's.")
    port: int = Field(0, ge=0, le=65535, description="Port of your container (port http1); 0 = KServe's 8080.")
    max_replicas: int = Field(0, ge=0, description="Most replicas; 0 = KServe's default.")
    scale_metric: str = Field("", pattern="^(|cpu|memory|concurrency|rps)$", description="Autoscaling metric; \"\" = "
                              "KServe's (cpu).")
    scale_target: int = Field(0, ge=0, description="The metric's target a replica; 0 = KServe's default.")
    container_concurrency: int = Field(0, ge=0, description="Most requests a replica handles at once; 0 = no limit.")
    timeout: int = Field(0, ge=0, description="Seconds a request may take; 0 = KServe's default.")
    canary_traffic_percent: int | None = Field(None, ge=0, le=100, description="Percent of the traffic to the latest "
                                               "revision; null = all of it.")
    deployment_mode: str = Field("", pattern="^(|Standard|RawDeployment|Knative|Serverless)$", description="The "
                                 "serving.kserve.io/deploymentMode annotation; \"\" = the cluster's default (Standard: "
                                 "a Deployment, in KServe 0.20).")


SPEC, VALUES = KServeSpec, KServeValues
workload_shape = None  # its pods are its predictor's Deployment's, which top job reads
PLACEHOLDERS = {"model_format": "placeholder"}  # what a spec needs to be built for serve update's patch
UPDATES = {"command": ("command", "shell"), "shell": ("command", "shell"), "storage_uri": ("storageUri",),
           "runtime_version": ("runtimeVersion",), "min_replicas": ("replicas",), "max_replicas": ("maxReplicas",),
           "scale_metric": ("scaleMetric",), "scale_target": ("scaleTarget",),
           "container_concurrency": ("containerConcurrency",), "request_timeout": ("timeout",),
           "canary_traffic_percent": ("canaryTrafficPercent",), "port": ("port",)}


def values(spec: KServeSpec) -> dict[str, Any]:
    """What a KServe serving adds to the common values: the model or the command, the autoscaling. Pure."""
    out: dict[str, Any] = {}
    if spec.command:
        out["command"] = spec.command
        if spec.shell != "sh":
            out["shell"] = spec.shell
    if spec.model_format:
        name, _, version = spec.model_format.partition(":")
        out["modelFormat"] = {"name": name, **({"version": version} if version else {})}
    for field, key in (("storage_uri", "storageUri"), ("runtime", "runtime"), ("runtime_version", "runtimeVersion"),
                       ("protocol_version", "protocolVersion"), ("max_replicas", "maxReplicas"),
                       ("scale_metric", "scaleMetric"), ("scale_target", "scaleTarget"),
                       ("container_concurrency", "containerConcurrency"), ("request_timeout", "timeout"),
                       ("canary_traffic_percent", "canaryTrafficPercent")):
        value = getattr(spec, field)
        if value is not None and value != "":
            out[key] = value.value if isinstance(value, enum.Enum) else value
    if spec.port:
        out["port"] = spec.port
    if spec.min_replicas is not None and spec.min_replicas != 1:
        out["replicas"] = spec.min_replicas
    return out


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: the container's command, joined with spaces (as submit's)."""
    return {"command": " ".join(words)}


def port_protocol(name: str) -> str:
    """The PORTS name of a port of the predictor's Service: the protocol a client speaks. KServe names that port
    after the container's first port (http1 for HTTP, h2c for gRPC) or, when the container declares none, after
    the component (``iris-v1-predictor``, served over HTTP): kserve/kserve v0.20.0
    pkg/controller/v1beta1/inferenceservice/reconcilers/service/service_reconciler.go, createDefaultSvc."""
    if name == "h2c":
        return "grpc"
    return "http" if name == "http1" or name.endswith("-predictor") else name


def workload_view(isvc: dict, view) -> dict[str, Any]:
    """What the InferenceService adds to the view of its predictor's Deployment (KServe's, found by the serving's
    labels): its URL; ready only once KServe says so too; before KServe made a Deployment, the replicas and GPUs
    it asks for."""
    status = isvc.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    out: dict[str, Any] = {"url": status.get("url") or (status.get("address") or {}).get("url") or "",
                           "ports": [(port_protocol(name), port) for name, port in view.ports],
                           "rolled_out": view.rolled_out and ready,
                           "created": view.created or (isvc.get("metadata") or {}).get("creationTimestamp", "")}
    if not view.created:  # no Deployment (yet)
        predictor = (isvc.get("spec") or {}).get("predictor") or {}
        containers = [predictor.get("model") or {}] if predictor.get("model") else predictor.get("containers") or []
        out["desired"] = int(predictor.get("minReplicas", 1) if predictor.get("minReplicas") is not None else 1)
        out["gpus"] = sum(int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0) or 0)
                          for c in containers)
        labels = (isvc.get("metadata") or {}).get("labels") or {}
        out.update(name=labels.get("servingName") or view.name, version=labels.get("servingVersion", view.version),
                   type=labels.get("servingType") or view.type)
    return out
