"""What a user asks for, validated: pydantic specs of a training job. Pure (no I/O).

The string forms that the command line takes (``K=V``, ``PVC:MOUNT``, ``KEY=VALUE:EFFECT``, ``10m``,
``amd.com/gpu=1``) are parsed here too, so the Python API accepts either those strings or the
structured form, and every problem is reported against the field (and so the flag) it came from.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .enums import CleanPodPolicy, ImagePullPolicy, JobKind

# ---- Kubernetes syntax rules ----------------------------------------------------------------------
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
QUANTITY = re.compile(r"^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[numkMGTPE]|[KMGTPE]i)?$")
DURATION_PART = re.compile(r"(\d+)(h|m|s)")
HELM_RELEASE_MAX = 53
NAME_MAX = 63
MAX_REPLICAS = 1000
MAX_GPUS = 128
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def check_qualified_key(key: str, what: str) -> str:
    """A label or annotation key: ``[prefix/]name``, prefix a DNS subdomain, name a qualified name."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix)):
        raise ValueError(f"{what} key {key!r}: prefix {prefix!r} must be a lowercase DNS subdomain")
    if not name or len(name) > 63 or not QUALIFIED_NAME.match(name):
        raise ValueError(
            f"{what} key {key!r}: name must be 1-63 characters of letters, digits, '-', '_', '.', "
            "starting and ending with a letter or digit"
        )
    return key


def parse_duration(value: str | int) -> int:
    """``90``, ``30s``, ``10m``, ``1h30m`` -> seconds."""
    if isinstance(value, int):
        seconds = value
    else:
        text = value.strip()
        if text.isdigit():
            seconds = int(text)
        else:
            parts = DURATION_PART.findall(text)
            if not parts or "".join(n + u for n, u in parts) != text:
                raise ValueError(f"{value!r} is not a duration: use e.g. 30s, 10m, 1h or 1h30m")
            seconds = sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)
    if seconds < 0:
        raise ValueError(f"{value!r}: a duration cannot be negative")
    return seconds


def _quantity(value: Any, what: str) -> str | None:
    if value is None or value == "":
        return None
    text = str(value).strip()
    if not QUANTITY.match(text):
        example = "500m, 2, 0.5" if what == "cpu" else "512Mi, 4Gi, 1G"
        raise ValueError(f"{value!r} is not a valid {what} quantity (e.g. {example})")
    return text


def _split_kv(item: str, what: str, example: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ValueError(f"{item!r} is not {what} (expected {example})")
    return key, value


# ---- small models ---------------------------------------------------------------------------------
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


class EnvVar(Strict):
    name: str
    value: str = ""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not ENV_NAME.match(v):
            raise ValueError(f"environment variable name {v!r} must match [-._a-zA-Z][-._a-zA-Z0-9]*")
        return v


class DataVolume(Strict):
    claim_name: str
    mount_path: str
    read_only: bool = False

    @field_validator("claim_name")
    @classmethod
    def _claim(cls, v: str) -> str:
        if not DNS1123_SUBDOMAIN.match(v) or len(v) > 253:
            raise ValueError(f"PVC name {v!r} must be a lowercase DNS subdomain (e.g. training-data)")
        return v

    @field_validator("mount_path")
    @classmethod
    def _mount(cls, v: str) -> str:
        return _abs_path(v, "mount path")


class HostPathVolume(Strict):
    path: str
    mount_path: str
    read_only: bool = False

    @field_validator("path", "mount_path")
    @classmethod
    def _abs(cls, v: str) -> str:
        return _abs_path(v, "path")


def _abs_path(v: str, what: str) -> str:
    if not v.startswith("/"):
        raise ValueError(f"{what} {v!r} must be absolute (start with /)")
    if ":" in v or "\n" in v:
        raise ValueError(f"{what} {v!r} must not contain ':' or a newline")
    return v.rstrip("/") or "/"


class Toleration(Strict):
    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: str = ""

    @model_validator(mode="after")
    def _check(self) -> Toleration:
        if self.effect and self.effect not in TAINT_EFFECTS:
            raise ValueError(f"toleration effect {self.effect!r} must be one of {', '.join(TAINT_EFFECTS)}")
        if self.operator == "Exists" and self.value:
            raise ValueError("a toleration with operator Exists takes no value")
        if self.key:
            check_qualified_key(self.key, "toleration")
        elif self.operator != "Exists":
            raise ValueError("a toleration without a key must use operator Exists")
        return self

    @classmethod
    def parse(cls, text: str) -> Toleration:
        """``all`` | ``KEY[=VALUE][:EFFECT][,OPERATOR]``."""
        if text == "all":
            return cls(operator="Exists")
        body, _, operator = text.partition(",")
        body, _, effect = body.partition(":")
        key, eq, value = body.partition("=")
        if not key or (":" in text and not effect) or ("," in text and not operator):
            raise ValueError(f"{text!r} is not a toleration (expected all or KEY[=VALUE][:EFFECT][,OPERATOR])")
        if operator and operator not in ("Equal", "Exists"):
            raise ValueError(f"toleration operator {operator!r} must be Equal or Exists")
        op = operator or ("Equal" if eq else "Exists")
        return cls(key=key, value=value, effect=effect, operator=op)

    def to_values(self) -> dict[str, str]:
        out = {"operator": self.operator}
        for k in ("key", "value", "effect"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        return out


class CodeSync(Strict):
    repo: str
    ref: str = ""
    image: str | None = None
    secret: str | None = None

    @field_validator("repo")
    @classmethod
    def _repo(cls, v: str) -> str:
        if not re.match(r"^(https?://|ssh://|git@|git://|file://)\S+$", v):
            raise ValueError(f"{v!r} is not a git URL (https://, ssh://, git@host:path or file://)")
        return v

    @field_validator("secret")
    @classmethod
    def _secret(cls, v: str | None) -> str | None:
        if v is not None and not DNS1123_SUBDOMAIN.match(v):
            raise ValueError(f"Secret name {v!r} must be a lowercase DNS subdomain")
        return v


class TensorBoard(Strict):
    enabled: bool = True
    image: str | None = None
    logdir: str = "/training_logs"

    @field_validator("logdir")
    @classmethod
    def _logdir(cls, v: str) -> str:
        return _abs_path(v, "log directory")


class Replica(Strict):
    """One replica type: count, image and per-pod resources."""

    replicas: Annotated[int, Field(ge=0, le=MAX_REPLICAS)] = 0
    image: str | None = None
    gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    cpu: str | None = None
    memory: str | None = None
    cpu_limit: str | None = None
    memory_limit: str | None = None
    selector: dict[str, str] = Field(default_factory=dict)
    port: Annotated[int, Field(ge=1, le=65535)] | None = None

    @field_validator("cpu", "cpu_limit", mode="before")
    @classmethod
    def _cpu(cls, v: Any) -> str | None:
        return _quantity(v, "cpu")

    @field_validator("memory", "memory_limit", mode="before")
    @classmethod
    def _mem(cls, v: Any) -> str | None:
        return _quantity(v, "memory")


# ---- the job ----------------------------------------------------------------------------------------
class JobSpec(Strict):
    """What every job kind shares. Subclasses add their replica layout."""

    kind: ClassVar[JobKind]
    # replica type names (as in pod names) used to check every derived name fits
    replica_names: ClassVar[tuple[str, ...]] = ()

    name: str
    namespace: str = "default"
    image: str | None = None
    command: str = ""
    shell: str = "sh"
    working_dir: str | None = None
    env: list[EnvVar] = Field(default_factory=list)
    data: list[DataVolume] = Field(default_factory=list)
    data_dirs: list[HostPathVolume] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    selector: dict[str, str] = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)
    priority_class: str | None = None
    image_pull_secrets: list[str] = Field(default_factory=list)
    image_pull_policy: ImagePullPolicy = ImagePullPolicy.IfNotPresent
    retry: Annotated[int, Field(ge=0, le=1000)] | None = None
    ttl_after_finished: int | None = None
    running_timeout: int | None = None
    clean_task_policy: CleanPodPolicy = CleanPodPolicy.Running
    share_memory: str | None = None
    devices: dict[str, Annotated[int, Field(ge=0, le=MAX_GPUS)]] = Field(default_factory=dict)
    sync: CodeSync | None = None
    tensorboard: TensorBoard | None = None
    queue: str | None = None
    scheduler: str | None = None
    service_account: str | None = None

    # -- parsing of the command-line forms --
    @field_validator("env", mode="before")
    @classmethod
    def _env(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return [{"name": k, "value": val} for k, val in v.items()]
        out = []
        for item in v or []:
            if isinstance(item, str):
                key, value = _split_kv(item, "an environment variable", "NAME=VALUE")
                out.append({"name": key, "value": value})
            else:
                out.append(item)
        return out

    @field_validator("data", mode="before")
    @classmethod
    def _data(cls, v: Any) -> Any:
        out = []
        for item in v or []:
            if isinstance(item, str):
                claim, sep, mount = item.partition(":")
                if not sep or not claim or not mount:
                    raise ValueError(f"{item!r} is not PVC:MOUNT_PATH (e.g. training-data:/data)")
                out.append({"claim_name": claim, "mount_path": mount})
            else:
                out.append(item)
        return out

    @field_validator("data_dirs", mode="before")
    @classmethod
    def _data_dirs(cls, v: Any) -> Any:
        out = []
        for item in v or []:
            if isinstance(item, str):
                host, _, container = item.partition(":")
                if not host:
                    raise ValueError(f"{item!r} is not HOST_PATH[:CONTAINER_PATH]")
                out.append({"path": host, "mount_path": container or host})
            else:
                out.append(item)
        return out

    @field_validator("labels", "annotations", "selector", mode="before")
    @classmethod
    def _kv_list(cls, v: Any, info: ValidationInfo) -> Any:
        if isinstance(v, list | tuple):
            out: dict[str, str] = {}
            what = {"labels": "a label", "annotations": "an annotation", "selector": "a node selector"}
            for item in v:
                key, value = _split_kv(item, what[info.field_name], "KEY=VALUE")
                out[key] = value
            return out
        return v

    @field_validator("labels", "selector")
    @classmethod
    def _label_like(cls, v: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        what = "label" if info.field_name == "labels" else "node selector"
        for key, value in v.items():
            check_qualified_key(key, what)
            if len(value) > 63 or not LABEL_VALUE.match(value):
                raise ValueError(
                    f"{what} {key}={value!r}: a value must be at most 63 letters, digits, '-', '_', '.', "
                    "starting and ending with a letter or digit"
                )
        return v

    @field_validator("annotations")
    @classmethod
    def _annotations(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            check_qualified_key(key, "annotation")
        return v

    @field_validator("tolerations", mode="before")
    @classmethod
    def _tolerations(cls, v: Any) -> Any:
        return [Toleration.parse(t) if isinstance(t, str) else t for t in v or []]

    @field_validator("devices", mode="before")
    @classmethod
    def _devices(cls, v: Any) -> Any:
        if isinstance(v, list | tuple):
            out: dict[str, Any] = {}
            for item in v:
                key, value = _split_kv(item, "a device", "VENDOR/RESOURCE=COUNT, e.g. amd.com/gpu=1")
                if "/" not in key:
                    raise ValueError(f"device {key!r} must be VENDOR/RESOURCE (e.g. amd.com/gpu)")
                try:
                    out[key] = int(value)
                except ValueError:
                    raise ValueError(f"device {item!r}: the count must be a whole number") from None
            return out
        return v

    @field_validator("devices")
    @classmethod
    def _device_names(cls, v: dict[str, int]) -> dict[str, int]:
        for key in v:
            check_qualified_key(key, "device resource")
            if key == "nvidia.com/gpu":
                raise ValueError("use --gpus for nvidia.com/gpu; --device is for other device resources")
        return v

    @field_validator("ttl_after_finished", "running_timeout", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> Any:
        return None if v is None or v == "" else parse_duration(v)

    @field_validator("share_memory", mode="before")
    @classmethod
    def _shm(cls, v: Any) -> Any:
        return _quantity(v, "memory")

    @field_validator("image_pull_secrets")
    @classmethod
    def _secrets(cls, v: list[str]) -> list[str]:
        for s in v:
            if not DNS1123_SUBDOMAIN.match(s):
                raise ValueError(f"image pull secret {s!r} must be a lowercase DNS subdomain")
        return list(dict.fromkeys(v))

    @field_validator("priority_class", "scheduler", "service_account")
    @classmethod
    def _dns_name(cls, v: str | None) -> str | None:
        if v is not None and (not DNS1123_SUBDOMAIN.match(v) or len(v) > 253):
            raise ValueError(f"{v!r} must be a lowercase DNS subdomain name")
        return v

    @field_validator("queue")
    @classmethod
    def _queue(cls, v: str | None) -> str | None:
        if v is not None and (len(v) > 63 or not LABEL_VALUE.match(v) or not v):
            raise ValueError(f"queue {v!r} must be a valid label value (at most 63 letters, digits, '-', '_', '.')")
        return v

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        if len(v) > 63 or not DNS1123_LABEL.match(v):
            raise ValueError(f"namespace {v!r} must be a lowercase DNS label (a-z, 0-9, '-'; at most 63)")
        return v

    @field_validator("shell")
    @classmethod
    def _shell(cls, v: str) -> str:
        if not v or any(c.isspace() for c in v):
            raise ValueError(f"shell {v!r} must be one program name or path, e.g. sh or /bin/bash")
        return v

    @field_validator("working_dir")
    @classmethod
    def _workdir(cls, v: str | None) -> str | None:
        return None if v is None else _abs_path(v, "working directory")

    @model_validator(mode="after")
    def _cross(self) -> JobSpec:
        self._check_name()
        mounts = [d.mount_path for d in self.data] + [d.mount_path for d in self.data_dirs]
        dup = sorted({m for m in mounts if mounts.count(m) > 1})
        if dup:
            raise ValueError(f"--data/--data-dir: mount path {dup[0]} is used twice: mount each path once")
        claims = [d.claim_name for d in self.data]
        dup = sorted({c for c in claims if claims.count(c) > 1})
        if dup:
            raise ValueError(f"--data: PVC {dup[0]} is given twice: mount each claim once")
        for replica_name, replica in self.replicas().items():
            if replica.replicas and not (replica.image or self.image):
                raise ValueError(f"--image: no image for the {replica_name} replicas: give --image IMAGE")
        return self

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not name:
            raise ValueError("the job name is empty: give --name NAME")
        if not DNS1035.match(name):
            raise ValueError(
                f"job name {name!r} must start with a lowercase letter and hold only a-z, 0-9 and '-' "
                "(not ending in '-')"
            )
        return name

    def _check_name(self) -> None:
        name = self.name
        longest = max(
            (len(f"-{rname}-{max(r.replicas - 1, 0)}") for rname, r in self.replicas().items()), default=0
        )
        limit = min(HELM_RELEASE_MAX, NAME_MAX - longest)
        if len(name) > limit:
            raise ValueError(
                f"--name: job name {name!r} is {len(name)} characters; at most {limit} fit this "
                f"{self.kind.value} (its pod names and the helm release name have length limits)"
            )

    # -- layout --
    def replicas(self) -> dict[str, Replica]:
        """Replica type (lowercase, as in pod names) -> replica, as the job will run."""
        raise NotImplementedError


class TFJobSpec(JobSpec):
    kind: ClassVar[JobKind] = JobKind.tfjob

    workers: Annotated[int, Field(ge=0, le=MAX_REPLICAS)] = 1
    gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    worker: Replica = Field(default_factory=Replica)
    ps: Replica = Field(default_factory=Replica)
    chief: Replica = Field(default_factory=Replica)
    evaluator: Replica = Field(default_factory=Replica)
    ps_count: Annotated[int, Field(ge=0, le=MAX_REPLICAS)] = 0
    use_chief: bool = False
    use_evaluator: bool = False
    ps_gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    success_policy: Literal["", "AllWorkers"] = ""

    @property
    def standalone(self) -> bool:
        """As in Arena: one worker and no PS (and no explicit chief/evaluator) is a single Chief."""
        return self.workers == 1 and self.ps_count == 0 and not self.use_chief and not self.use_evaluator

    def replicas(self) -> dict[str, Replica]:
        worker = self.worker.model_copy(update={"replicas": self.workers, "gpus": self.gpus})
        out: dict[str, Replica] = {}
        if self.standalone:
            merged = self.chief.model_dump(exclude_unset=True, exclude={"replicas", "gpus"})
            out["chief"] = worker.model_copy(update={**merged, "replicas": 1})
            return out
        if self.use_chief:
            out["chief"] = self.chief.model_copy(
                update={"replicas": 1, "gpus": self.gpus, "image": self.chief.image or self.worker.image}
            )
        if self.workers:
            out["worker"] = worker
        if self.ps_count:
            out["ps"] = self.ps.model_copy(update={"replicas": self.ps_count, "gpus": self.ps_gpus})
        if self.use_evaluator:
            out["evaluator"] = self.evaluator.model_copy(
                update={"replicas": 1, "gpus": self.gpus, "image": self.evaluator.image or self.worker.image}
            )
        return out

    @model_validator(mode="after")
    def _layout(self) -> TFJobSpec:
        if not self.replicas():
            raise ValueError("--workers: the job has no replicas: give --workers 1 or more (or --ps/--chief)")
        return self


class PyTorchJobSpec(JobSpec):
    kind: ClassVar[JobKind] = JobKind.pytorchjob

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = 1
    gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    worker: Replica = Field(default_factory=Replica)
    nproc_per_node: str | None = None

    @field_validator("nproc_per_node", mode="before")
    @classmethod
    def _nproc(cls, v: Any) -> Any:
        if v is None or v == "":
            return None
        text = str(v)
        if text not in ("auto", "cpu", "gpu") and not (text.isdigit() and int(text) > 0):
            raise ValueError(f"{v!r} must be a positive number, auto, cpu or gpu")
        return text

    def replicas(self) -> dict[str, Replica]:
        """``--workers`` counts the master, as in Arena: 3 = Master 1 + Worker 2."""
        base = self.worker.model_copy(update={"gpus": self.gpus})
        out = {"master": base.model_copy(update={"replicas": 1})}
        if self.workers > 1:
            out["worker"] = base.model_copy(update={"replicas": self.workers - 1})
        return out


class MPIJobSpec(JobSpec):
    kind: ClassVar[JobKind] = JobKind.mpijob

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = 1
    gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    worker: Replica = Field(default_factory=Replica)
    launcher: Replica = Field(default_factory=Replica)
    slots_per_worker: Annotated[int, Field(ge=1, le=1024)] | None = None
    mpi_api: Literal["auto", "v2beta1", "v1"] = "auto"

    def replicas(self) -> dict[str, Replica]:
        return {
            "launcher": self.launcher.model_copy(update={"replicas": 1, "gpus": 0}),
            "worker": self.worker.model_copy(update={"replicas": self.workers, "gpus": self.gpus}),
        }


SPECS: dict[JobKind, type[JobSpec]] = {
    JobKind.tfjob: TFJobSpec,
    JobKind.pytorchjob: PyTorchJobSpec,
    JobKind.mpijob: MPIJobSpec,
}
