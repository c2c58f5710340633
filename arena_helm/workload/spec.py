"""What a user asks for, validated: the fields and checks every training job's spec shares (``JobSpec``);
each kind's own spec is in its module of ``arena_helm.core.jobkinds``. Pure, but for reading the files
``--config-file`` names (their content travels in the values).

**Each field is a flag of** ``arena-helm submit``: the field ``data_dir`` is ``--data-dir``, ``image_pull_secret``
is ``--image-pull-secret``, and so on (``command`` is the training command, ``namespace`` is ``-n``). The flags
are generated from these fields (their names, help and choices), so the command line and the Python API
cannot drift apart. A repeatable flag is a list field: it takes the flag's text forms (``"K=V"``,
``"PVC:MOUNT"``, ``"KEY=VALUE:EFFECT"``) or, from Python, the structured form (a dict, or the small models
of :mod:`arena_helm.core.flagtypes`). Every problem is reported as :class:`~arena_helm.core.errors.UsageError` naming the flag::

    from arena_helm import TFJobSpec
    spec = TFJobSpec(name="mnist", image="tensorflow/tensorflow:2.15.0", workers=2, ps=1, gpus=1,
                     data=["training-data:/data"], env={"EPOCHS": "3"}, command="python train.py")

There is one way to say each thing: where two flags could say the same (``--cpu`` and ``--worker-cpu``)
giving both with different values is an error, never a silent override.
"""

import enum
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, ValidationInfo, field_validator, model_validator

from ..core import grammars as k8s
from ..core.catalog import CHART_LABELS
from ..core.enums import CleanPodPolicy, ImagePullPolicy, ServiceType, SyncMode
from ..core.errors import PARAMETERS, UsageError
from ..core.flagtypes import (
    ConfigFile,
    DataVolume,
    EnvSource,
    EnvVar,
    HostPathVolume,
    SecretEnv,
    SecretVolume,
    Strict,
    Toleration,
    check_labels,
    kv_items,
    split_kv,
)
from ..core.grammars import AbsPath, Deadline, DNSSubdomain, Duration, Image, LabelValue, Quantity, QueueName, SyncSource

HELM_RELEASE_MAX = 53
NAME_MAX = 63
TENSORBOARD_SUFFIX = "-tensorboard"  # a TensorBoard's objects: <name>-tensorboard (charts/tensorboard), a DNS label
TENSORBOARD_NAME_MAX = NAME_MAX - len(TENSORBOARD_SUFFIX)  # the name of a job with one, or of a standalone one
MAX_REPLICAS = 1000
MAX_GPUS = 128
# the env that names the ref to sync (Arena's git-sync v3 reads them); arena-helm gives it as --ref
GIT_REF_ENV = ("GIT_SYNC_BRANCH", "GIT_SYNC_REV")
# Arena's local logging: a --logdir on no --data PVC lives on the node, under this directory of the host
LOGS_HOST_ROOT = "/arena_logs"
# a --logdir TensorBoard reads itself (hdfs://, s3://, gs://): the tensorboard chart's own URL grammar
LOGDIR_URL_RX = r"^[a-z][a-z0-9+.-]*://[^\s]+$"


# ---- flag metadata ----------------------------------------------------------------------------------
def flag_of_field(name: str, model: type[BaseModel] | None = None) -> str:
    """The flag a field stands for: ``data_dir`` -> ``--data-dir``; the command is the COMMAND argument, and a
    field of ``model`` that is an argument of its command (its flag's ``argument``) is that argument (NAME)."""
    if name == "command":
        return "COMMAND"
    info = model.model_fields.get(name) if model is not None else None
    argument = (flag_info(info) or {}).get("argument") if info is not None else None
    if argument:
        return str(argument)
    if name == "namespace":
        return "-n/--namespace"
    return "--" + name.replace("_", "-")


def _flag(short, hidden, metavar, values, pod=False) -> dict[str, Any]:
    flag = {"short": list(short), "hidden": list(hidden), "metavar": metavar, "values": values}
    return {"flag": {**flag, "pod": True} if pod else flag}


def opt(description: str, default: Any = None, *short: str, hidden: tuple[str, ...] = (), metavar: str | None = None,
        values: str | None = None, pod: bool = False, **constraints: Any) -> Any:
    """A spec field that is also a flag: its help text, default, short and hidden (Arena) spellings,
    ``values``: the dotted chart value it sets as it is (``runPolicy.backoffLimit``), when it maps to one, and
    ``pod``: a pod-level flag every family takes (``PodLevelFlags``: the jobs', the servings', the workspace's)."""
    return Field(default, description=description, json_schema_extra=_flag(short, hidden, metavar, values, pod),
                 **constraints)


def _empty_list() -> list[Any]:  # not the builtin list: pydantic reads a builtin's signature through the tokenizer
    return []


def _empty_map() -> dict[str, Any]:
    return {}


def opt_list(description: str, *short: str, metavar: str | None = None, hidden: tuple[str, ...] = (),
             values: str | None = None, pod: bool = False) -> Any:
    return Field(default_factory=_empty_list, description=description,
                 json_schema_extra=_flag(short, hidden, metavar, values, pod))


def opt_map(description: str, *short: str, metavar: str | None = None, hidden: tuple[str, ...] = (),
            values: str | None = None, pod: bool = False) -> Any:
    return Field(default_factory=_empty_map, description=description,
                 json_schema_extra=_flag(short, hidden, metavar, values, pod))


def set_path(values: dict[str, Any], path: str, value: Any) -> None:
    """``set_path(v, "runPolicy.backoffLimit", 3)``: the nested maps are made as needed."""
    *parents, last = path.split(".")
    node = values
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def flag_info(info) -> dict[str, Any] | None:
    extra = info.json_schema_extra
    return extra.get("flag") if isinstance(extra, dict) else None


@dataclass
class Replica:
    """One replica type as the job will run it (derived from the flags; not an input)."""

    replicas: int
    image: str | None = None
    gpus: int = 0
    cpu: str | None = None
    memory: str | None = None
    cpu_limit: str | None = None
    memory_limit: str | None = None
    selector: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)  # of these pods only, over the job's
    port: int | None = None
    devices: bool = False  # gets the job's --device resources


def _check_logdir(v: Any) -> str:
    if isinstance(v, str) and "://" in v:
        if not k8s.matches(LOGDIR_URL_RX, v):
            raise ValueError(f"{v!r} is not a URL TensorBoard reads (e.g. s3://bucket/logs, hdfs://nn/logs)")
        return v
    if isinstance(v, str) and not v.startswith("/"):
        raise ValueError(f"{v!r} must be an absolute path or a URL such as s3://bucket/logs")
    return k8s.check_abs_path(v)


LogDir = Annotated[str, BeforeValidator(_check_logdir)]
Count = Annotated[int, Field(ge=0, le=MAX_REPLICAS)]
Gpus = Annotated[int, Field(ge=0, le=MAX_GPUS)]
Port = Annotated[int, Field(ge=1, le=65535)]


# ---- the job ----------------------------------------------------------------------------------------
class PodFlags(Strict):
    """The parsing of the pod-level flags (``--env``, ``--data``, ``--selector``, ``--toleration``...) that the
    job specs and the other specs (a workspace's) share: each subclass declares the fields it has, these
    validators apply to those of them it declares. A problem is a :class:`UsageError` naming its flag."""

    # label keys the family's chart sets itself: -l/--label may not set them (a serving's, a workspace's add theirs)
    OWNED_LABELS: ClassVar[frozenset[str]] = CHART_LABELS

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        PARAMETERS.update(cls.model_fields)  # the Python API's words for these flags (errors.for_python)

    # -- parsing of the command-line forms --
    @field_validator("env", mode="before", check_fields=False)
    @classmethod
    def _env(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return [{"name": k, "value": val} for k, val in v.items()]
        out = []
        for item in v or []:
            if isinstance(item, str):
                key, value = split_kv(item, "an environment variable", "NAME=VALUE")
                out.append({"name": key, "value": value})
            else:
                out.append(item)
        return out

    @field_validator("env_from_secret", "env_from", "secret", mode="before", check_fields=False)
    @classmethod
    def _secret_forms(cls, v: Any, info: ValidationInfo) -> Any:
        model = {"env_from_secret": SecretEnv, "env_from": EnvSource, "secret": SecretVolume}[info.field_name]
        return [model.fields_of(t) if isinstance(t, str) else t for t in v or []]

    @field_validator("data", mode="before", check_fields=False)
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

    @field_validator("data_dir", mode="before", check_fields=False)
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

    @field_validator("annotation", "label", "selector", mode="before", check_fields=False)
    @classmethod
    def _kv_list(cls, v: Any, info: ValidationInfo) -> Any:
        return kv_items(v, {"annotation": "an annotation", "label": "a label"}.get(info.field_name, "a node selector"))

    @field_validator("label", "selector", check_fields=False)
    @classmethod
    def _label_like(cls, v: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        if info.field_name == "label":
            owned = [k for k in v if k in cls.OWNED_LABELS]
            if owned:
                raise ValueError(f"{owned[0]}={v[owned[0]]}: the chart sets label {owned[0]} itself: give another key")
        return check_labels(v, "label" if info.field_name == "label" else "node selector")

    @field_validator("annotation", check_fields=False)
    @classmethod
    def _annotations(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            k8s.check_label_key(key, "annotation")
        return v

    @field_validator("config_file", mode="before", check_fields=False)
    @classmethod
    def _config_files(cls, v: Any) -> Any:
        return [ConfigFile.parse(t) if isinstance(t, str) else t for t in v or []]

    @field_validator("toleration", mode="before", check_fields=False)
    @classmethod
    def _tolerations(cls, v: Any) -> Any:
        return [Toleration.parse(t) if isinstance(t, str) else t for t in v or []]

    @field_validator("image_pull_secret", check_fields=False)
    @classmethod
    def _secrets(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))

    @field_validator("namespace", check_fields=False)
    @classmethod
    def _namespace(cls, v: str) -> str:
        return k8s.check_dns_label(v, "namespace")

    @model_validator(mode="before")
    @classmethod
    def _python_forms(cls, data: Any) -> Any:
        """From Python: one item of a repeatable flag alone (``data="pvc:/data"``) is a list of one, and a
        ``command`` given as a list of words runs as exactly those words (quoted for the shell)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name, value in data.items():
            info = cls.model_fields.get(name)
            if isinstance(value, str) and info is not None and typing.get_origin(info.annotation) is list:
                data[name] = [value]
        command = data.get("command")
        if isinstance(command, list | tuple) and all(isinstance(w, str) for w in command):
            import shlex

            data["command"] = shlex.join(command)
        return data

    def pod_values(self) -> dict[str, Any]:
        """The chart values of the pod-level flags this spec declares, as the one-pod charts (workspace, the
        serving charts) name them: GPUs, CPU/memory (request = limit), /dev/shm, data, host paths, Secret
        volumes, env, envFrom, tolerations, the Kueue queue, and every pod-level flag that sets one chart value as
        it is (``opt(..., values=KEY, pod=True)``: node selector, priority, pull Secrets, labels, annotations...);
        only what is set (the chart's defaults do the rest). Pure."""
        get = lambda name: getattr(self, name, None)  # noqa: E731 - a subclass declares only some of them
        values: dict[str, Any] = {}
        if get("gpus"):
            values["gpus"] = self.gpus
        amounts = {k: v for k, v in (("cpu", get("cpu")), ("memory", get("memory"))) if v}
        if amounts:
            values["resources"] = {"requests": amounts, "limits": dict(amounts)}
        if get("share_memory") is not None and "share_memory" in self.model_fields_set:
            values["shmSize"] = "" if k8s.parse_quantity(self.share_memory) == 0 else self.share_memory
        if get("data"):
            values["data"] = [{"claimName": d.claim_name, "mountPath": d.mount_path, "readOnly": d.read_only}
                              for d in self.data]
        if get("data_dir"):
            values["hostPaths"] = [{"path": d.path, "mountPath": d.mount_path, "readOnly": d.read_only}
                                   for d in self.data_dir]
        if get("secret"):
            values["secretVolumes"] = [v.to_values() for v in self.secret]
        env = [e.to_values() for e in get("env") or []] + [e.to_values() for e in get("env_from_secret") or []]
        if env:
            values["env"] = env
        if get("env_from"):
            values["envFrom"] = [e.to_values() for e in self.env_from]
        if get("toleration"):
            values["tolerations"] = [t.to_values() for t in self.toleration]
        if get("queue_name"):
            values["queue"] = self.queue_name
        values.update(self.declared_values(pod_only=True))
        return values

    def declared_values(self, *, pod_only: bool = False) -> dict[str, Any]:
        """The fields that set one chart value as they are (``opt(..., values="path")`` on the field; with
        ``pod_only``, the pod-level ones only): every one that is set (a switch when on, a list or map when not
        empty; 0 is a value). Pure."""
        values: dict[str, Any] = {}
        for name, info in type(self).model_fields.items():
            meta = flag_info(info) or {}
            path = meta.get("values")
            value = getattr(self, name)
            if not path or (pod_only and not meta.get("pod")) or value is None or value is False or (
                    isinstance(value, list | dict) and not value):
                continue
            if isinstance(value, enum.Enum):
                value = value.value
            set_path(values, path, list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict)
                     else value)
        return values

    @model_validator(mode="after")
    def _mounts(self) -> Any:
        """One mount a container path, whichever flag mounts it (--data, --data-dir)."""
        get = lambda name: getattr(self, name, None) or []  # noqa: E731 - a subclass declares only some of them
        mounts = [d.mount_path for d in get("data")] + [d.mount_path for d in get("data_dir")]
        dup = sorted({m for m in mounts if mounts.count(m) > 1})
        if dup:
            raise ValueError(f"--data/--data-dir: mount path {dup[0]} is used twice: mount each path once")
        return self

    def __init__(self, **fields: Any):
        """Validate ``fields``; a problem is a :class:`UsageError` naming its flag (all problems, one line)."""
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise UsageError("; ".join(spec_errors(exc, type(self)))) from None


class JobSpec(PodFlags):
    """What every job kind shares. Each field is the flag of the same name (see the module docstring)."""

    kind: ClassVar[str]  # the kinds registry's key (arena_helm.core.jobkinds)
    # a submit without a training command is a mistake, unless the kind has a command of its own to run
    # (a TrainJob's runtime) or --image-entrypoint says the image's entrypoint is meant
    COMMAND_OPTIONAL: ClassVar[bool] = False

    name: str = opt("Job name (also the release name). Required.")
    namespace: str = Field("default", description="Namespace of the job (-n/--namespace).",
                           json_schema_extra={"flag": {"cli": False}})
    image: Image | None = opt("Container image of the job.", values="image")
    command: str = Field("", description="The training command, run as [SHELL, -c, COMMAND] byte for byte.",
                         json_schema_extra={"flag": {"cli": False}})
    image_entrypoint: bool = opt("Run the image's own entrypoint: no training command.", False)
    shell: str = opt("Shell that runs the command.", "sh", values="shell")
    working_dir: AbsPath = opt("Working directory of the command (synced code lands in <working dir>/code).",
                               "/root", hidden=("--workingDir",), values="workingDir")
    env: list[EnvVar] = opt_list("Environment variable NAME=VALUE (repeatable).", "-e", metavar="NAME=VALUE", pod=True)
    env_from_secret: list[SecretEnv] = opt_list(
        "Environment variable NAME from a key of a Secret: NAME=SECRET[:KEY], the key defaults to NAME "
        "(repeatable; only the names reach the release).", metavar="NAME=SECRET[:KEY]", pod=True)
    env_from: list[EnvSource] = opt_list("Every key of a Secret (or configmap:NAME, a ConfigMap) as environment "
                                         "variables (repeatable).", metavar="[configmap:]NAME", pod=True)
    secret: list[SecretVolume] = opt_list("Mount a Secret read-only, a file per key: SECRET:PATH (repeatable).",
                                          metavar="SECRET:PATH", pod=True)
    data: list[DataVolume] = opt_list("Mount a PVC: PVC:MOUNT_PATH (repeatable).", "-d", metavar="PVC:PATH", pod=True)
    data_dir: list[HostPathVolume] = opt_list("Mount a host path: HOST[:CONTAINER] (repeatable).",
                                              metavar="HOST[:PATH]", hidden=("--dataDir",), pod=True)
    config_file: list[ConfigFile] = opt_list("Mount a local file: HOST_FILE[:CONTAINER_FILE] (repeatable; the file "
                                             "goes into a ConfigMap of the job).", metavar="FILE[:PATH]")
    annotation: dict[str, str] = opt_map("Annotation KEY=VALUE of the pods (repeatable).", "-a", metavar="KEY=VALUE",
                                         values="annotations", pod=True)
    label: dict[str, str] = opt_map("Label KEY=VALUE of the job and pods (repeatable).", "-l", metavar="KEY=VALUE",
                                    values="labels", pod=True)
    selector: dict[str, str] = opt_map("Node selector KEY=VALUE (repeatable).", metavar="KEY=VALUE",
                                       values="nodeSelector", pod=True)
    toleration: list[Toleration] = opt_list(
        "Tolerate a taint: KEY[=VALUE][:EFFECT][,OPERATOR], or all (repeatable).", metavar="TOLERATION", pod=True)
    priority: DNSSubdomain | None = opt("PriorityClass of the pods.", None, "-p", values="priorityClassName", pod=True)
    termination_grace_period: Duration | None = opt(
        "How long the pods get to stop between SIGTERM and SIGKILL, e.g. to save a checkpoint or drain requests "
        "(30s, 5m; default: Kubernetes' 30s).", values="terminationGracePeriodSeconds", pod=True)
    image_pull_secret: list[DNSSubdomain] = opt_list("Image pull Secret name (repeatable).", metavar="SECRET",
                                                     values="imagePullSecrets", pod=True)
    image_pull_policy: ImagePullPolicy = opt("Image pull policy.", ImagePullPolicy.Always,
                                             values="imagePullPolicy")
    service_account: DNSSubdomain | None = opt("ServiceAccount of the pods.", values="serviceAccountName")
    retry: Annotated[int, Field(ge=0, le=1000)] | None = opt("Retries before the job is marked failed (backoffLimit).",
                                                             values="runPolicy.backoffLimit")
    ttl_after_finished: Duration | None = opt("Delete the job and its pods this long after it ends (30s, 10m, 1h).",
                                              values="runPolicy.ttlSecondsAfterFinished")
    running_timeout: Deadline | None = opt(
        "Fail the job if it runs longer than this (e.g. 2h).", values="runPolicy.activeDeadlineSeconds")
    clean_task_policy: CleanPodPolicy = opt("Which pods to delete when the job ends.", CleanPodPolicy.Running,
                                            hidden=("--cleanTaskPolicy",), values="runPolicy.cleanPodPolicy")
    share_memory: Quantity | None = opt("Size of the memory-backed /dev/shm (0 for the runtime's 64Mi).", "2Gi",
                                        values="shmSize")
    device: dict[str, Gpus] = opt_map("Other device resource VENDOR/RESOURCE=N per worker pod (repeatable).",
                                      metavar="RESOURCE=N")
    sync_mode: SyncMode | None = opt("Code sync mode: git (implied by a git --sync-source) or rsync.",
                                     hidden=("--syncMode",))
    sync_source: SyncSource | None = opt("Where to sync the code from: a git repository URL, or an rsync source.",
                                  hidden=("--syncSource",))
    sync_branch: str | None = opt("Branch, tag or commit to sync (also -e GIT_SYNC_BRANCH=...).")
    sync_image: Image | None = opt("Image of the sync init container (default: git-sync v4; for rsync, Arena's "
                                   "rsync image).",
                                   hidden=("--syncImage",), values="codeSync.image")
    sync_secret: DNSSubdomain | None = opt("Secret with username/password keys for the repository.",
                                           values="codeSync.secretName")
    tensorboard: bool = opt("Start a TensorBoard with the job (removed with it).", False)
    tensorboard_image: Image | None = opt("TensorBoard image.", hidden=("--tensorboardImage",))
    logdir: LogDir = opt("Training log directory TensorBoard reads: under a --data mount (that PVC), another "
                         "absolute path (a directory of the node, as in Arena) or a URL (s3://, hdfs://).",
                         "/training_logs")
    tensorboard_service_type: ServiceType = opt("Service type of the TensorBoard.", ServiceType.NodePort)
    queue: bool = opt("Queue the job with kube-queue (Arena's --queue: annotation scheduling.x-k8s.io/suspend).",
                      False)
    queue_name: QueueName | None = opt("Kueue LocalQueue (label kueue.x-k8s.io/queue-name).", values="queue")
    scheduler: DNSSubdomain | None = opt("Scheduler name of the pods.", values="schedulerName")
    gang: bool = opt("Gang-schedule the pods (scheduler-plugins coscheduling pod-group labels, as Arena).", False)
    rdma: bool = opt("Request an RDMA device (rdma/hca: 1) per pod, with the IPC_LOCK capability.", False)
    host_network: bool = opt("Run the pods in the node's network namespace.", False, hidden=("--hostNetwork",),
                             values="hostNetwork")
    host_ipc: bool = opt("Run the pods in the node's IPC namespace.", False, hidden=("--hostIPC",), values="hostIPC")
    host_pid: bool = opt("Run the pods in the node's PID namespace.", False, hidden=("--hostPID",), values="hostPID")
    model_name: LabelValue | None = opt("Model name: the job's modelName label (with --model-source).")
    model_source: str | None = opt("Where the model is stored (a URI: s3://..., pvc://NAMESPACE/PVC/PATH).")
    user: str | None = Field(None, description="The Kubernetes user who submits (Arena's arena.kubeflow.org/uid "
                             "label and username annotation); found in the kubeconfig by the CLI.",
                             json_schema_extra={"flag": {"cli": False}})

    @field_validator("device", mode="before")
    @classmethod
    def _devices(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return v
        out: dict[str, Any] = {}
        for item in v or []:
            key, value = split_kv(item, "a device", "VENDOR/RESOURCE=COUNT, e.g. amd.com/gpu=1")
            if not value.isdigit():
                raise ValueError(f"{item!r}: the count must be a whole number")
            out[key] = int(value)
        return out

    @field_validator("device")
    @classmethod
    def _device_names(cls, v: dict[str, int]) -> dict[str, int]:
        for key in v:
            if "/" not in key:
                raise ValueError(f"device {key!r} must be VENDOR/RESOURCE (e.g. amd.com/gpu)")
            k8s.check_label_key(key, "device resource")
            if key == "nvidia.com/gpu":
                raise ValueError("use --gpus for nvidia.com/gpu; --device is for other device resources")
        return v

    @field_validator("shell")
    @classmethod
    def _shell(cls, v: str) -> str:
        if not v or any(c.isspace() for c in v):
            raise ValueError(f"shell {v!r} must be one program name or path, e.g. sh or /bin/bash")
        return v

    @field_validator("sync_branch")
    @classmethod
    def _branch(cls, v: str | None) -> str | None:
        if v is not None and (not v or any(c.isspace() for c in v)):
            raise ValueError(f"branch {v!r} must be a branch, tag or commit without spaces")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not name:
            raise ValueError("the job name is empty: give --name NAME")
        return k8s.check_dns1035(name, "job name")

    @model_validator(mode="before")
    @classmethod
    def _required(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("name"):
            raise ValueError("--name is required: give the job a name, e.g. --name mnist")
        return data

    @model_validator(mode="after")
    def _cross(self) -> "JobSpec":
        self._check_name()
        self._check_secrets()
        claims = [d.claim_name for d in self.data]
        dup = sorted({c for c in claims if claims.count(c) > 1})
        if dup:
            raise ValueError(f"--data: PVC {dup[0]} is given twice: mount each claim once")
        for replica_name, replica in self.replicas().items():
            if replica.replicas and not (replica.image or self.image):
                raise ValueError(f"--image: no image for the {replica_name} replicas: give --image IMAGE")
        if self.sync_mode is not None and not self.sync_source:
            raise ValueError(f"--sync-mode {self.sync_mode.value} needs --sync-source")
        for name in ("sync_branch", "sync_image", "sync_secret"):
            if getattr(self, name) and not self.sync_source:
                raise ValueError(f"{flag_of_field(name)} needs --sync-source URL")
        if self.sync_source:
            mode = self.code_sync_mode
            if mode is SyncMode.git:
                k8s.check_git_url(self.sync_source, "--sync-source")
            if mode is SyncMode.rsync:
                k8s.check_rsync_source(self.sync_source, "--sync-source")
                if self.sync_branch or self.sync_secret:
                    raise ValueError("--sync-branch and --sync-secret are for --sync-mode git")
        if self.sync_source:
            self._check_sync_ref()
        if self.model_name and not self.model_source:
            raise ValueError("--model-name needs --model-source URI (where the model version is stored)")
        paths = [c.mount_path for c in self.config_file]
        dup = sorted({m for m in paths if paths.count(m) > 1})
        if dup:
            raise ValueError(f"--config-file: {dup[0]} is given twice: mount each file once")
        for name in ("tensorboard_image",):
            if getattr(self, name) and not self.tensorboard:
                raise ValueError(f"{flag_of_field(name)} needs --tensorboard")
        for name in ("logdir", "tensorboard_service_type"):
            if name in self.model_fields_set and not self.tensorboard:
                raise ValueError(f"{flag_of_field(name)} needs --tensorboard")
        self._check_logdir_mount()
        if self.image_entrypoint and self.command:
            raise ValueError("--image-entrypoint runs the image's own entrypoint: give no training command with it")
        return self

    def _check_secrets(self) -> None:
        """A variable is set once (-e or --env-from-secret); a --secret mounts where nothing else does."""
        plain = {e.name for e in self.env}
        seen: set[str] = set()
        for e in self.env_from_secret:
            if e.name in plain:
                raise ValueError(f"--env-from-secret {e.name}: -e sets {e.name} too: give it once")
            if e.name in seen:
                raise ValueError(f"--env-from-secret: {e.name} is given twice: give it once")
            seen.add(e.name)
        sources = [(s.kind, s.name) for s in self.env_from]
        dup = next((s for n, s in enumerate(sources) if s in sources[:n]), None)
        if dup:
            raise ValueError(f"--env-from: {dup[0]} {dup[1]} is given twice: give it once")
        taken = {d.mount_path: "a --data mount" for d in self.data}
        taken.update({d.mount_path: "a --data-dir mount" for d in self.data_dir})
        taken.update({c.mount_path: "a --config-file" for c in self.config_file})
        taken["/"] = "the container's root"
        for v in self.secret:
            if v.mount_path in taken:
                raise ValueError(f"--secret {v.secret}:{v.mount_path}: {v.mount_path} is {taken[v.mount_path]}: "
                                 "mount the Secret elsewhere")
            taken[v.mount_path] = "another --secret"

    def _check_sync_ref(self) -> None:
        """--sync-branch, GIT_SYNC_BRANCH and GIT_SYNC_REV, where given, name one ref."""
        env = {e.name: e.value for e in self.env}
        ref = self.sync_branch
        for key in GIT_REF_ENV:
            if env.get(key):
                if ref and ref != env[key]:
                    raise ValueError(f"--sync-branch {ref} and -e {key}={env[key]} say different things: give one")
                ref = env[key]

    @property
    def code_sync_ref(self) -> str | None:
        """The ref to sync: --sync-branch, else the user's -e GIT_SYNC_BRANCH or GIT_SYNC_REV (Arena passes
        those to its git-sync), else the remote's HEAD (None)."""
        env = {e.name: e.value for e in self.env}
        return self.sync_branch or next((env[k] for k in GIT_REF_ENV if env.get(k)), None)

    @property
    def code_sync_mode(self) -> SyncMode | None:
        """The sync mode: --sync-mode, else git when --sync-source is given (Arena needs --sync-mode)."""
        if not self.sync_source:
            return None
        return self.sync_mode or SyncMode.git

    def _check_name(self) -> None:
        name = self.name
        longest = max(
            (len(f"-{rname}-{max(r.replicas - 1, 0)}") for rname, r in self.replicas().items()), default=0
        )
        limit = min(HELM_RELEASE_MAX, NAME_MAX - longest)
        if len(name) > limit:
            raise ValueError(
                f"--name: job name {name!r} is {len(name)} characters; at most {limit} fit this "
                f"{self.kind} (its pod names and the helm release name have length limits)"
            )
        if self.tensorboard and len(name) > TENSORBOARD_NAME_MAX:
            raise ValueError(
                f"--name: job name {name!r} is {len(name)} characters; at most {TENSORBOARD_NAME_MAX} "
                f"fit a job with --tensorboard (its TensorBoard's Service is <name>{TENSORBOARD_SUFFIX}, a DNS label "
                f"of at most {NAME_MAX})"
            )

    @staticmethod
    def _one_of(a: str, va: Any, b: str, vb: Any) -> Any:
        """Two flags that say the same thing: either one, or both with the same value."""
        if va is not None and vb is not None and va != vb:
            raise ValueError(f"{flag_of_field(a)} {va} and {flag_of_field(b)} {vb} say different things: give one")
        return vb if vb is not None else va

    def logdir_volume(self) -> DataVolume | None:
        """The ``--data`` volume whose mount holds ``--logdir`` (the deepest one), if any."""
        for d in sorted(self.data, key=lambda d: len(d.mount_path), reverse=True):
            if _under(self.logdir, d.mount_path):
                return d
        return None

    def logdir_host_path(self) -> HostPathVolume | None:
        """Arena's local logging: the node directory that holds ``--logdir``, and where the training containers
        mount it (TensorBoard mounts it at the same path). The ``--data-dir`` whose mount holds ``--logdir``,
        else the job's own ``/arena_logs/<namespace>/<name>`` mounted at ``--logdir``. None without
        ``--tensorboard``, for a URL, and when a ``--data`` PVC holds ``--logdir``. Pure: the same job always
        gets the same directory (Arena draws a random one)."""
        if not self.tensorboard or "://" in self.logdir or self.logdir_volume() is not None:
            return None
        for d in sorted(self.data_dir, key=lambda d: len(d.mount_path), reverse=True):
            if _under(self.logdir, d.mount_path):
                return d
        return HostPathVolume(path=f"{LOGS_HOST_ROOT}/{self.namespace}/{self.name}", mount_path=self.logdir)

    def _check_logdir_mount(self) -> None:
        host = self.logdir_host_path()
        if host is None or host in self.data_dir:
            return
        taken = {"/": "the container's root"}
        if self.share_memory:
            taken["/dev/shm"] = "the --share-memory mount"
        if self.sync_source:
            taken[f"{(self.working_dir or '/root').rstrip('/')}/code"] = "the mount of the --sync-source code"
        if self.logdir in taken:
            raise ValueError(f"--logdir {self.logdir} is {taken[self.logdir]}: the logs' host directory is mounted "
                             "there, so pick another --logdir")

    # -- layout --
    def replicas(self) -> dict[str, Replica]:
        """Replica type (lowercase, as in pod names) -> replica, as the job will run."""
        raise NotImplementedError

    # -- construction with the project's errors --


class PodJobSpec(JobSpec):
    """A job whose pods all take the same resources: --gpus, --cpu and --memory (and their limits) per pod,
    --workers pods of the main role, --retry. A kind's spec says what its --workers count and builds its
    replicas from :meth:`pod` (PyTorchJob, JAXJob, XGBoostJob, PaddleJob)."""

    gpus: Gpus = opt("GPUs (nvidia.com/gpu) per pod.", 0)
    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt("Worker pods.", 1)
    cpu: Quantity | None = opt("CPU per pod (e.g. 4, 500m): the request, and the limit unless --cpu-limit.")
    memory: Quantity | None = opt("Memory per pod (e.g. 16Gi): the request, and the limit unless --memory-limit.")
    cpu_limit: Quantity | None = opt("CPU limit per pod (default: --cpu).")
    memory_limit: Quantity | None = opt("Memory limit per pod (default: --memory).")
    retry: Annotated[int, Field(ge=0, le=1000)] = opt(
        "Restarts in place before the job is marked failed (backoffLimit). 0: no pod restarts, the first pod that "
        "fails fails the job and is kept (its exit code and log).", 0)

    def restart_policy(self, with_retry: str) -> str:
        """A replica's restartPolicy: the kind's ``with_retry`` when --retry allows restarts, else Never. Under
        backoffLimit 0 training-operator v1.9.3 deletes every pod of the job, the failed one first, before it
        records the failure (pkg/controller.v1/common/job.go ReconcileJobs), and a reconcile that misses that
        update makes the pods again; with every replica Never and no backoffLimit it fails the job from the
        failed pod (UpdateJobStatus) and keeps that pod (clean-pod policy Running)."""
        return with_retry if self.retry else "Never"

    def declared_values(self, *, pod_only: bool = False) -> dict[str, Any]:
        """With --retry N (not 0): runPolicy.backoffLimit N (see :meth:`restart_policy`)."""
        values = super().declared_values(pod_only=pod_only)
        if self.retry and not pod_only:
            set_path(values, "runPolicy.backoffLimit", self.retry)
        return values

    def pod(self, n: int) -> Replica:
        """``n`` pods with the job's per-pod resources (the limits default to the requests) and --device."""
        return Replica(replicas=n, gpus=self.gpus, cpu=self.cpu, memory=self.memory,
                       cpu_limit=self.cpu_limit or self.cpu, memory_limit=self.memory_limit or self.memory,
                       devices=True)


def _pod_level_flags() -> type[PodFlags]:
    """The pod-level flags every family takes (a serving's and a workspace's spec inherit them; a job spec has
    them in its own order): the fields of ``JobSpec`` declared with ``pod=True``, each with its one help text,
    parser and chart value. A new pod-level flag is one such field (and its chart value)."""
    import copy

    from pydantic import create_model

    fields = {name: (info.annotation, copy.copy(info)) for name, info in JobSpec.model_fields.items()
              if (flag_info(info) or {}).get("pod")}
    return create_model("PodLevelFlags", __base__=PodFlags, __module__=__name__, **fields)


PodLevelFlags = _pod_level_flags()


def _under(path: str, mount: str) -> bool:
    return path == mount or path.startswith(mount.rstrip("/") + "/")


# ---- errors -----------------------------------------------------------------------------------------
_BOUNDS = {"greater_than_equal": ("ge", "{} or more"), "less_than_equal": ("le", "at most {}"),
           "greater_than": ("gt", "more than {}"), "less_than": ("lt", "less than {}")}


def spec_errors(exc: ValidationError, model: type[BaseModel] | None = None) -> list[str]:
    """A pydantic ValidationError (of ``model``) as one message per problem, each naming its flag."""
    lines = []
    for e in exc.errors():
        msg = str(e.get("msg", "")).removeprefix("Value error, ")
        loc = tuple(e.get("loc", ()))
        flag = flag_of_field(str(loc[0]), model) if loc else ""
        etype = e.get("type", "")
        if etype in ("int_parsing", "int_type"):
            msg = f"{e.get('input')!r} is not a whole number"
        elif etype == "extra_forbidden":
            msg = f"unknown field {loc[-1]!r}" if loc else msg
            flag = ""
        elif etype in ("enum", "literal_error"):
            msg = f"{e.get('input')!r}: {msg.lower()}"
        elif etype in _BOUNDS:  # a number out of its range: the value given and what to give
            bound = (e.get("ctx") or {}).get(_BOUNDS[etype][0])
            msg = f"{e.get('input')}: give {_BOUNDS[etype][1].format(bound)}"
        if msg.startswith(f"{flag}") or msg.startswith("--"):
            lines.append(msg)
        else:
            lines.append(f"{flag}: {msg}" if flag else msg)
    return list(dict.fromkeys(lines))
