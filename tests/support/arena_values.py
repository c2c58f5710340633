"""A Python port of Arena v1's values builders: the values file ``arena submit tfjob|pytorchjob|mpijob`` hands
to helm for its own chart (tests/data/arena-charts/).

Ported line by line from kubeflow/arena at commit e30882c143cc2be32b7ed767ae0f78681892741b (the commit the
charts were vendored from, see tests/data/arena-charts/PROVENANCE.md):

- ``pkg/apis/types/submit.go`` (``CommonSubmitArgs``, ``SubmitSyncCodeArgs``, ``TolerationArgs``,
  ``DataDirVolume``, ``LimitedPodSecurityContext``), ``submit_tfjob.go`` (``SubmitTFJobArgs``,
  ``SubmitTensorboardArgs``), ``submit_pytorchjob.go``, ``submit_mpijob.go``: the structs and their yaml tags,
  i.e. the keys of the values file;
- ``pkg/apis/training/common.go`` (``DefaultCommonSubmitArgs``, ``DefaultSubmitTensorboardArgs``),
  ``tfjob_builder.go`` / ``pytorchjob_builder.go`` / ``mpijob_builder.go`` (``New*Builder``: the struct
  defaults, ``Command``: the positional words joined with single spaces, ``Build``: PreBuild then Build);
- ``pkg/argsbuilder/submit.go`` (the common flags and ``SubmitArgsBuilder.PreBuild``/``Build``),
  ``submit_tfjob.go``, ``submit_pytorchjob.go``, ``submit_mpijob.go``, ``submit_sync_code.go``,
  ``submit_tensorboard.go``, ``util.go`` (``transformSliceToMap``, ``parseTolerationString``), ``const.go``;
- ``pkg/training/submit_tfjob.go`` / ``submit_pytorchjob.go`` / ``submit_mpijob.go`` (what happens after the
  build: ``TrainingOperatorCRD``, PyTorch's ``WorkerCount - 1``), ``pkg/workflow/workflow.go``
  (``SubmitJob``) and ``pkg/util/helm/util.go`` (``GenerateValueFile``/``toYaml``: the args struct is
  marshalled with gopkg.in/yaml.v3, so every field without ``omitempty`` is written, zero values included,
  and overrides the chart's ``values.yaml`` default; a field without a yaml name is keyed by its lower-cased
  Go name, e.g. ``Port`` -> ``port``, ``UseChief`` -> ``usechief``, ``Coscheduling`` -> ``coscheduling``);
- ``pkg/util/volume.go`` (``ParseDataDirRaw``, ``ValidateDatasets``), ``pkg/util/port_allocate.go``
  (``SelectAvailablePortWithDefault``), ``pkg/apis/config/arenaconfig.go`` and ``user.go`` (the user name
  and ``arena.kubeflow.org/uid`` = md5 of it).

Everything Arena reads from the machine or the cluster is a parameter with a fixed test value: the user
name (``user.go``: from the API server, or ``kubecfg:basicauth:NAME`` offline for a basic-auth kubeconfig),
the user id (md5 of the name), ``os.Getuid``/``os.Getgid``/``os.Getgroups`` (``setPodSecurityContext``), the
arena config file (``imagePullSecrets``, ``tfjob_role_sequence``), whether the TFJob/PyTorchJob CRD has
``runPolicy`` (``CompatibleJobCRD``), whether a kube-batch scheduler runs (``checkGangCapablitiesInCluster``),
the node ports in use (``SelectAvailablePort`` picks the first free port from 20000 up) and the random
number of the TensorBoard host log path (``util.RandomInt32``).

``arena_values(kind, argv)`` returns ``(values, helm_set_files)``: the values map as Arena writes it, and the
``--set-file`` options ``setConfigFiles`` adds for ``--config-file``, each one string
``--set-file configFiles.DIRKEY.config-N.content=HOST_FILE``. Arena passes them only to a helm binary
(``arena --helm-binary``, pkg/util/helm/helm_advanced.go); its default in-process helm SDK
(``GenerateHelmTemplate``) ignores them, so the ConfigMaps get empty files.

Validation that Arena does and this test needs (unknown flags, bad values, ``--sync-mode`` without source)
raises ``ArenaUsageError`` with Arena's message, so a case table cannot hold a command line Arena refuses.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

KINDS = ("tfjob", "pytorchjob", "mpijob")
# pkg/apis/types/training.go: TFTrainingJob, PytorchTrainingJob, MPITrainingJob
TRAINING_TYPES = {"tfjob": "tfjob", "pytorchjob": "pytorchjob", "mpijob": "mpijob"}

# pkg/apis/types/const.go, training.go; pkg/argsbuilder/const.go; pkg/argsbuilder/submit_tfjob.go
USER_ID_LABEL = "arena.kubeflow.org/uid"
USER_NAME_ANNOTATION = "arena.kubeflow.org/username"
REQUEST_GPUS_ANNOTATION = "requestGPUsOfJobOwner"
JOB_SUSPEND_ANNOTATION = "scheduling.x-k8s.io/suspend"
ALIYUN_ENI_ANNOTATION = "k8s.aliyun.com/eni"
DISABLE_TF_CONFIG_ANNOTATION = "arena.kubeflow.org/disable-tf-config"
# pkg/common/const.go
ENV_NVIDIA_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
LABEL_ALIYUN_COM_GPU_COUNT = "aliyun.com/gpu-count"
DEVICE_ALIYUN_COM_GPU_MEM = "aliyun.com/gpu-mem"
# pkg/util/port_allocate.go
AUTO_SELECT_PORT_MIN = 20000
AUTO_SELECT_PORT_MAX = 30000


class ArenaUsageError(ValueError):
    """Arena refuses the command line (cobra/pflag or a builder's check)."""


# ----------------------------------------------------------------------------------------------- flags
@dataclass(frozen=True)
class Flag:
    dest: str                 # the Go field / local variable the flag writes
    type: str                 # str, int, bool, array (StringArray), duration
    default: Any = None
    short: str | None = None


def _common_flags() -> dict[str, Flag]:
    """pkg/argsbuilder/submit.go, SubmitArgsBuilder.AddCommandFlags (defaults: --workers 1, --working-dir /root
    at line 107, --image-pull-policy Always at line 141, --shell sh)."""
    f = {
        "name": Flag("Name", "str", ""),
        "image": Flag("Image", "str", ""),
        "gpus": Flag("GPUCount", "int", 0),
        "device": Flag("device", "array", ()),
        "workers": Flag("WorkerCount", "int", 1),
        "retry": Flag("Retry", "int", 0),
        # --workingDir is deprecated, --working-dir is the same variable; default "/root"
        "workingDir": Flag("WorkingDir", "str", "/root"),
        "working-dir": Flag("WorkingDir", "str", "/root"),
        "env": Flag("env", "array", (), "e"),
        "data": Flag("data", "array", (), "d"),
        "dataDir": Flag("data-dir", "array", ()),
        "data-dir": Flag("data-dir", "array", ()),
        "annotation": Flag("annotation", "array", (), "a"),
        "label": Flag("label", "array", (), "l"),
        "rdma": Flag("EnableRDMA", "bool", False),
        "gang": Flag("Coscheduling", "bool", False),
        "priority": Flag("PriorityClassName", "str", "", "p"),
        "queue": Flag("EnableQueue", "bool", False),
        "toleration": Flag("toleration", "array", ()),
        "selector": Flag("selector", "array", ()),
        "config-file": Flag("config-file", "array", ()),
        "image-pull-secret": Flag("image-pull-secret", "array", ()),
        "image-pull-policy": Flag("ImagePullPolicy", "str", "Always"),
        "shell": Flag("Shell", "str", "sh"),
        "scheduler": Flag("SchedulerName", "str", ""),
        "hostNetwork": Flag("UseHostNetwork", "bool", False),
        "hostIPC": Flag("UseHostIPC", "bool", False),
        "hostPID": Flag("UseHostPID", "bool", False),
        "model-name": Flag("ModelName", "str", ""),
        "model-source": Flag("ModelSource", "str", ""),
    }
    # pkg/argsbuilder/submit_sync_code.go, SubmitSyncCodeArgsBuilder.AddCommandFlags
    for old, new, dest in (("syncMode", "sync-mode", "SyncMode"), ("syncSource", "sync-source", "SyncSource"),
                           ("syncImage", "sync-image", "SyncImage")):
        f[old] = f[new] = Flag(dest, "str", "")
    # pkg/argsbuilder/submit_tensorboard.go, SubmitTensorboardArgsBuilder.AddCommandFlags
    f["tensorboard"] = Flag("UseTensorboard", "bool", False)
    f["tensorboardImage"] = f["tensorboard-image"] = Flag("TensorboardImage", "str", "")
    f["logdir"] = Flag("TrainingLogdir", "str", "/training_logs")
    # the root command's persistent flags (cmd/arena/commands/root.go): read by the client, not the builder
    f["namespace"] = Flag("namespace", "str", "", "n")
    f["loglevel"] = Flag("loglevel", "str", "info")
    f["arena-namespace"] = Flag("arena-namespace", "str", "arena-system")
    f["config"] = Flag("config", "str", "")
    # --helm-binary: template with the helm binary, which gets the --set-file options (workflow.SubmitJob);
    # without it the in-process helm SDK (util/helm/util.go GenerateHelmTemplate) drops them
    f["helm-binary"] = Flag("helm-binary", "bool", False)
    return f


def _tf_flags() -> dict[str, Flag]:
    """pkg/argsbuilder/submit_tfjob.go, SubmitTFJobArgsBuilder.AddCommandFlags (--success-policy ChiefWorker at
    line 144, --share-memory 2Gi at line 186, --clean-task-policy Running)."""
    f: dict[str, Flag] = {}

    def both(old: str, new: str, dest: str, typ: str = "str", default: Any = "") -> None:
        f[old] = f[new] = Flag(dest, typ, default)

    both("workerImage", "worker-image", "WorkerImage")
    both("psImage", "ps-image", "PSImage")
    f["ps"] = Flag("PSCount", "int", 0)
    both("psPort", "ps-port", "PSPort", "int", 0)
    both("workerPort", "worker-port", "WorkerPort", "int", 0)
    both("workerCpu", "worker-cpu", "WorkerCpu")
    f["worker-cpu-limit"] = Flag("WorkerCpuLimit", "str", "")
    both("workerMemory", "worker-memory", "WorkerMemory")
    f["worker-memory-limit"] = Flag("WorkerMemoryLimit", "str", "")
    f["worker-affinity-policy"] = Flag("WorkerAffinityPolicy", "str", "none")
    f["worker-affinity-constraint"] = Flag("WorkerAffinityConstraint", "str", "preferred")
    both("psCpu", "ps-cpu", "PSCpu")
    f["ps-cpu-limit"] = Flag("PSCpuLimit", "str", "")
    f["ps-gpus"] = Flag("PSGpu", "int", 0)
    both("psMemory", "ps-memory", "PSMemory")
    f["ps-memory-limit"] = Flag("PSMemoryLimit", "str", "")
    f["ps-affinity-policy"] = Flag("PSAffinityPolicy", "str", "none")
    f["ps-affinity-constraint"] = Flag("PSAffinityConstraint", "str", "preferred")
    f["success-policy"] = Flag("SuccessPolicy", "str", "ChiefWorker")
    both("cleanTaskPolicy", "clean-task-policy", "CleanPodPolicy", "str", "Running")
    f["running-timeout"] = Flag("running-timeout", "duration", 0)
    f["starting-timeout"] = Flag("starting-timeout", "duration", 0)
    f["ttl-after-finished"] = Flag("ttl-after-finished", "duration", 0)
    f["chief"] = Flag("UseChief", "bool", False)
    f["evaluator"] = Flag("UseEvaluator", "bool", False)
    both("ChiefCpu", "chief-cpu", "ChiefCpu")
    f["chief-cpu-limit"] = Flag("ChiefCpuLimit", "str", "")
    both("ChiefMemory", "chief-memory", "ChiefMemory")
    f["chief-memory-limit"] = Flag("ChiefMemoryLimit", "str", "")
    both("evaluatorCpu", "evaluator-cpu", "EvaluatorCpu")
    f["evaluator-cpu-limit"] = Flag("EvaluatorCpuLimit", "str", "")
    both("evaluatorMemory", "evaluator-memory", "EvaluatorMemory")
    f["evaluator-memory-limit"] = Flag("EvaluatorMemoryLimit", "str", "")
    both("chiefPort", "chief-port", "ChiefPort", "int", 0)
    for role in ("worker", "chief", "evaluator", "ps"):
        f[f"{role}-selector"] = Flag(f"{role}-selector", "array", ())
    f["role-sequence"] = Flag("role-sequence", "str", "")
    f["share-memory"] = Flag("ShareMemory", "str", "2Gi")
    return f


def _pytorch_flags() -> dict[str, Flag]:
    """pkg/argsbuilder/submit_pytorchjob.go, SubmitPytorchJobArgsBuilder.AddCommandFlags."""
    return {
        "clean-task-policy": Flag("CleanPodPolicy", "str", "Running"),
        "cpu": Flag("Cpu", "str", ""),
        "memory": Flag("Memory", "str", ""),
        "running-timeout": Flag("running-timeout", "duration", 0),
        "ttl-after-finished": Flag("ttl-after-finished", "duration", 0),
        "share-memory": Flag("ShareMemory", "str", "2Gi"),
        "nproc-per-node": Flag("NprocPerNode", "str", ""),
    }


def _mpi_flags() -> dict[str, Flag]:
    """pkg/argsbuilder/submit_mpijob.go, SubmitMPIJobArgsBuilder.AddCommandFlags (--clean-task-policy All at line
    79; no --share-memory, no
    --running-timeout, no --ttl-after-finished: the chart's ``shmSize: 2Gi`` gives /dev/shm)."""
    return {
        "cpu": Flag("Cpu", "str", ""),
        "memory": Flag("Memory", "str", ""),
        "gputopology": Flag("GPUTopology", "bool", False),
        "mounts-on-launcher": Flag("MountsOnLauncher", "bool", False),
        "clean-task-policy": Flag("CleanPodPolicy", "str", "All"),
    }


def arena_flags(kind: str) -> dict[str, Flag]:
    """Every flag ``arena submit KIND`` accepts (long name -> Flag)."""
    own = {"tfjob": _tf_flags, "pytorchjob": _pytorch_flags, "mpijob": _mpi_flags}[kind]()
    return {**_common_flags(), **own}


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """time.ParseDuration (what pflag's DurationVar uses): seconds as a float."""
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if body == "0":
        return 0.0
    if not body:
        raise ArenaUsageError(f'time: invalid duration "{text}"')
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if not m:
            raise ArenaUsageError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def _parse_bool(text: str, flag: str) -> bool:
    # strconv.ParseBool
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise ArenaUsageError(f'invalid argument "{text}" for "--{flag}" flag: strconv.ParseBool: parsing "{text}"')


def parse_argv(kind: str, argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """pflag's parsing of ``arena submit KIND ARGV``: interspersed flags (a flag after the command is still a
    flag), ``--`` ends the flags, ``--flag=value`` or ``--flag value``, a bool flag takes no separate value,
    an unknown flag is an error. Returns (values by Flag.dest, positional words)."""
    flags = arena_flags(kind)
    shorts = {f.short: name for name, f in flags.items() if f.short}
    values: dict[str, Any] = {}
    for f in flags.values():
        values.setdefault(f.dest, list(f.default) if f.type == "array" else f.default)
    positional: list[str] = []
    i = 0

    def take(name: str, inline: str | None) -> None:
        nonlocal i
        f = flags[name]
        if f.type == "bool":
            values[f.dest] = True if inline is None else _parse_bool(inline, name)
            return
        if inline is None:
            i += 1
            if i >= len(argv):
                raise ArenaUsageError(f"flag needs an argument: --{name}")
            inline = argv[i]
        if f.type == "int":
            try:
                values[f.dest] = int(inline, 0)
            except ValueError:
                raise ArenaUsageError(f'invalid argument "{inline}" for "--{name}" flag') from None
        elif f.type == "duration":
            values[f.dest] = parse_go_duration(inline)
        elif f.type == "array":
            values[f.dest].append(inline)
        else:
            values[f.dest] = inline

    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            positional.extend(argv[i + 1:])
            break
        if arg.startswith("--"):
            name, eq, inline = arg[2:].partition("=")
            if name not in flags:
                raise ArenaUsageError(f"unknown flag: --{name}")
            take(name, inline if eq else None)
        elif arg.startswith("-") and len(arg) > 1:
            short = arg[1]
            if short not in shorts:
                raise ArenaUsageError(f"unknown shorthand flag: '{short}' in {arg}")
            rest = arg[2:]
            if rest.startswith("="):
                rest = rest[1:]
            take(shorts[short], rest or None)
        else:
            positional.append(arg)
        i += 1
    return values, positional


# ------------------------------------------------------------------------------------------------ helpers
def transform_slice_to_map(sets: list[str], split: str) -> dict[str, str]:
    """pkg/argsbuilder/util.go, transformSliceToMap: items without the separator are dropped silently."""
    out: dict[str, str] = {}
    for member in sets:
        parts = member.split(split, 1)
        if len(parts) == 2:
            out[parts[0]] = parts[1]
    return out


def parse_toleration_string(toleration: str) -> dict[str, str] | None:
    """pkg/argsbuilder/util.go:37, parseTolerationString: only KEY=VALUE:EFFECT,OPERATOR (all three separators)
    is accepted; anything else is skipped by setTolerations (logged at debug level only)."""
    if "=" in toleration and ":" in toleration and "," in toleration:
        key, rest = toleration.split("=", 1)
        value, rest = rest.split(":", 1)
        effect, operator = rest.split(",", 1)
        # TolerationArgs: every field is `omitempty`
        return {k: v for k, v in (("key", key), ("value", value), ("operator", operator), ("effect", effect)) if v}
    return None


def _validate_mount_destination(dest: str) -> None:
    # pkg/util/volume.go, validateMountDestination: not "/" and absolute
    if posixpath.normpath(dest) == "/":
        raise ArenaUsageError("invalid specification: dataDir can't be '/'")
    if not dest.startswith("/"):
        raise ArenaUsageError(f"invalid dataDir: '{dest}' must be absolute")


_RESTRICTED_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]+$")


def validate_datasets(datasets: list[str]) -> None:
    """pkg/util/volume.go, ValidateDatasets."""
    seen: set[str] = set()
    for dataset in datasets:
        parts = dataset.split(":")
        if len(parts) != 2:
            raise ArenaUsageError(f"dataset {dataset} has incorrect format, should like data_name:/data0")
        if len(parts[0]) == 1 or not _RESTRICTED_NAME.match(parts[0]):
            raise ArenaUsageError(f"invalid PVC name {parts[0]!r}")
        if parts[0] in seen:
            raise ArenaUsageError(f"your PVC name: {parts[0]} is repeated, please check it")
        seen.add(parts[0])
        _validate_mount_destination(parts[1])


def parse_data_dir_raw(raw: str) -> tuple[str, str]:
    """pkg/util/volume.go, ParseDataDirRaw: HOST or HOST:CONTAINER, both absolute, not "/"."""
    if raw.count(":") > 1 or raw.split(":")[0] == "":
        raise ArenaUsageError(f"invalid DataDir: '{raw}'")
    arr = raw.split(":")
    host, container = (arr[0], arr[0]) if len(arr) == 1 else (arr[0], arr[1])
    for p in (host, container):
        if not p:
            raise ArenaUsageError(f"invalid DataDir: '{p}'")
        _validate_mount_destination(p)
    return host, container


def _valid_quantity(text: str) -> bool:
    # resource.ParseQuantity's grammar: a signed decimal number with an optional suffix
    return bool(re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE]|n|u)?", text))


# ------------------------------------------------------------------------------------------------ builder
@dataclass
class MachineState:
    """What Arena reads from the machine or the cluster, fixed for the test."""
    username: str
    uid: str
    os_uid: int
    gid: int
    groups: tuple[int, ...]
    arena_config: dict[str, str] = field(default_factory=dict)
    training_operator_crd: bool = True
    has_gang_scheduler: bool = False
    used_ports: tuple[int, ...] = ()
    random_int32: str = "1234567890"


def _select_port(state: MachineState, used: list[int], port: int) -> int:
    """pkg/util/port_allocate.go, SelectAvailablePortWithDefault / SelectAvailablePort: the given port, else the
    first port from 20000 up that no running pod's host port nor NodePort Service uses (and that this submit
    has not picked yet: setUsedPort)."""
    if port != 0:
        return port
    for candidate in range(AUTO_SELECT_PORT_MIN, AUTO_SELECT_PORT_MAX):
        if candidate not in used:
            used.append(candidate)
            return candidate
    raise ArenaUsageError("failed to select a available port")


def arena_values(kind: str, argv: list[str], *, username: str = "kubecfg:basicauth:alice", uid: str | None = None,
                 os_uid: int = 0, gid: int = 0, groups: tuple[int, ...] = (),
                 arena_config: dict[str, str] | None = None, training_operator_crd: bool = True,
                 has_gang_scheduler: bool = False, used_ports: tuple[int, ...] = (),
                 random_int32: str = "1234567890") -> tuple[dict[str, Any], list[str]]:
    """The values map Arena writes for ``arena submit KIND ARGV`` and its ``--set-file`` helm options.

    ``username`` is what Arena's ``getUserName`` finds (``kubecfg:basicauth:NAME`` for a basic-auth kubeconfig
    user, pkg/apis/config/user.go); ``uid`` the ``arena.kubeflow.org/uid`` label (default: md5 of the name, as
    arenaconfig.go computes it); ``os_uid``/``gid``/``groups`` are ``os.Getuid``/``Getgid``/``Getgroups``
    (0: root, then no pod security context); ``arena_config`` the arena config file's keys;
    ``training_operator_crd``: the cluster's TFJob/PyTorchJob CRD has ``spec.runPolicy`` (training-operator);
    ``used_ports``: node ports already in use in the cluster; ``random_int32``: ``util.RandomInt32()``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    state = MachineState(username=username, uid=uid if uid is not None else hashlib.md5(username.encode()).hexdigest(),
                         os_uid=os_uid, gid=gid, groups=tuple(groups), arena_config=dict(arena_config or {}),
                         training_operator_crd=training_operator_crd, has_gang_scheduler=has_gang_scheduler,
                         used_ports=tuple(used_ports), random_int32=random_int32)
    flags, positional = parse_argv(kind, argv)
    # cmd: RunE refuses an empty command ("not found command args")
    if not positional:
        raise ArenaUsageError("not found command args")
    a = _Args(kind, flags, state)
    # pkg/apis/training/*_builder.go, Command(args): strings.Join(args, " ")
    a.Command = " ".join(positional)
    a.pre_build()
    a.build()
    a.after_build()
    return a.values(), a.HelmOptions


class _Args:
    """The args struct (CommonSubmitArgs + the kind's own) and the builders' steps, in Arena's order."""

    def __init__(self, kind: str, flags: dict[str, Any], state: MachineState):
        self.kind = kind
        self.state = state
        self.f = flags
        # pkg/apis/training/*_builder.go New*Builder: CleanPodPolicy + DefaultCommonSubmitArgs +
        # DefaultSubmitTensorboardArgs; then AddCommandFlags writes every flag's default into the struct
        self.TrainingType = TRAINING_TYPES[kind]
        for dest, value in flags.items():
            if dest[:1].isupper():
                setattr(self, dest, value)
        self.NodeSelectors: dict[str, str] = {}
        self.ConfigFiles: dict[str, dict[str, dict[str, str]]] = {}
        self.Tolerations: list[dict[str, str]] = []
        self.Devices: dict[str, str] = {}
        self.Envs: dict[str, str] = {}
        self.DataSet: dict[str, str] = {}
        self.DataDirs: list[dict[str, str]] = []
        self.UseENI = False
        self.Annotations: dict[str, str] = {}
        self.Labels: dict[str, str] = {}
        self.IsNonRoot = False
        self.PodSecurityContext = {"runAsUser": 0, "runAsNonRoot": False, "runAsGroup": 0, "supplementalGroups": []}
        self.PodGroupName = ""
        self.PodGroupMinAvailable = ""
        self.ImagePullSecrets: list[str] = []
        self.HelmOptions: list[str] = []
        self.EnableSpotInstance = False
        self.MaxWaitTime = 0
        self.Mode = ""
        self.HostLogPath = ""
        self.IsLocalLogging = False
        self.SyncGitProjectName = ""
        self.TrainingOperatorCRD = False
        if kind == "tfjob":
            self.TFNodeSelectors: dict[str, dict[str, str]] = {}
            self.Port = 0
            self.ChiefCount = 0
            self.EvaluatorCount = 0
            self.HasGangScheduler = False
            self.ActiveDeadlineSeconds = 0
            self.StartingDeadlineSeconds = 0
            self.TTLSecondsAfterFinished = 0
        elif kind == "pytorchjob":
            self.ActiveDeadlineSeconds = 0
            self.TTLSecondsAfterFinished = 0
        else:
            self.GPUTopologyReplica = ""

    # ---------------------------------------------------------------------------------------- PreBuild
    def pre_build(self) -> None:
        # SubmitArgsBuilder.PreBuild: checkNameAndPriorityClassName, setDataSet, checkModelNameAndSource
        if not self.Name:
            raise ArenaUsageError("--name must be set")
        datasets = self.f["data"]
        if datasets:
            validate_datasets(datasets)
            self.DataSet = transform_slice_to_map(datasets, ":")
        if self.ModelName and not self.ModelSource:
            raise ArenaUsageError("model version source must be specified when registering a model version")
        # Submit*ArgsBuilder.PreBuild: AddArgValue("share-dataset", DataSet) for the TensorBoard builder

    # ------------------------------------------------------------------------------------------- Build
    def build(self) -> None:
        # The kind's builder runs its sub-builders' Build first (a Go map: no fixed order, but they touch
        # different fields), then its own steps.
        self._common_build()
        self._sync_code_build()
        self._tensorboard_build()
        {"tfjob": self._tf_build, "pytorchjob": self._pytorch_build, "mpijob": self._mpi_build}[self.kind]()

    def _common_build(self) -> None:
        """pkg/argsbuilder/submit.go, SubmitArgsBuilder.Build, step by step."""
        # setDataDirs
        self.DataDirs = []
        for i, raw in enumerate(self.f["data-dir"]):
            host, container = parse_data_dir_raw(raw)
            self.DataDirs.append({"hostPath": host, "containerPath": container, "name": f"training-data-{i}"})
        # setAnnotations
        self.Annotations.update(transform_slice_to_map(self.f["annotation"], "="))
        if self.Annotations.get(ALIYUN_ENI_ANNOTATION) == "true":
            self.UseENI = True
        # setQueue
        if self.EnableQueue:
            self.Annotations[JOB_SUSPEND_ANNOTATION] = "true"
        # setLabels
        self.Labels.update(transform_slice_to_map(self.f["label"], "="))
        # setDevices
        for device in self.f["device"]:
            name, _, value = device.partition("=")
            if not name or not value or not _valid_quantity(value):
                raise ArenaUsageError(f"invalid device '{device}', refer to amd.com/gpu=1")
            if name.lower() == "nvidia.com/gpu":
                raise ArenaUsageError(f"please use '--gpus {value}' instead of '--device {name}={value}'")
        self.Devices.update(transform_slice_to_map(self.f["device"], "="))
        # setUserNameAndUserId (submit.go:422); the id is util.Md5(userName) (apis/config/arenaconfig.go:142)
        self.Labels[USER_ID_LABEL] = self.state.uid
        self.Annotations[USER_NAME_ANNOTATION] = self.state.username
        # setConfigFiles: the host file must exist on the submitting machine (a relative one is made absolute,
        # ~/ is $HOME); files of one container directory share a ConfigMap keyed by md5(dir)[:15]
        self.ConfigFiles = {}
        seen: set[str] = set()
        for index, val in enumerate(self.f["config-file"]):
            files = val.split(":")
            host_file = posixpath.abspath(files[0])
            container_file = host_file if len(files) == 1 else files[1]
            if len(files) > 2:
                raise ArenaUsageError("invalid format for assigning config file,it should be "
                                      "'--config-file <host_path_file>:<container_path_file>'")
            if f"{host_file}:{container_file}" in seen:
                continue
            seen.add(f"{host_file}:{container_file}")
            if not container_file.startswith("/"):
                raise ArenaUsageError("the path of file in container must be absolute path")
            if not os.path.exists(host_file):
                raise ArenaUsageError(f"stat {host_file}: no such file or directory")
            key = f"config-{index}"
            path_key = hashlib.md5(posixpath.dirname(container_file).encode()).hexdigest()[:15]
            self.ConfigFiles.setdefault(path_key, {})[key] = {
                "containerFileName": posixpath.basename(container_file), "hostFile": host_file, "key": key,
                "containerFilePath": posixpath.dirname(container_file)}
        for path_key, infos in self.ConfigFiles.items():
            for key, info in infos.items():
                self.HelmOptions.append(f"--set-file configFiles.{path_key}.{key}.content={info['hostFile']}")
        # setImagePullSecrets: the flag's own list, else the arena config's imagePullSecrets (comma-separated)
        self.ImagePullSecrets = []
        if not self.f["image-pull-secret"]:
            if "imagePullSecrets" in self.state.arena_config:
                self.ImagePullSecrets = self.state.arena_config["imagePullSecrets"].split(",")
        else:
            self.ImagePullSecrets = list(self.f["image-pull-secret"])
        # setEnvs
        self.Envs.update(transform_slice_to_map(self.f["env"], "="))
        # setJobInfoToEnv (submit.go:653): the counts as given (before TF's standalone mode, before PyTorch's
        # WorkerCount - 1)
        self.Envs["workers"] = str(self.WorkerCount)
        self.Envs["gpus"] = str(self.GPUCount)
        # setNodeSelectors
        self.NodeSelectors = transform_slice_to_map(self.f["selector"], "=")
        # setPodSecurityContext: os.Getuid() == 0 -> nothing
        self.PodSecurityContext = {"runAsUser": 0, "runAsNonRoot": False, "runAsGroup": 0, "supplementalGroups": []}
        if self.state.os_uid != 0:
            self.IsNonRoot = True
            self.PodSecurityContext.update(runAsNonRoot=True, runAsUser=self.state.os_uid, runAsGroup=self.state.gid)
            if self.state.groups:
                self.PodSecurityContext["supplementalGroups"] = list(self.state.groups)
        # setTolerations (submit.go:559): "all" -> one {operator: Exists} and the rest is ignored
        self.Tolerations = []
        for taint in self.f["toleration"]:
            if taint == "all":
                self.Tolerations.append({"operator": "Exists"})
                break
            parsed = parse_toleration_string(taint)
            if parsed is not None:
                self.Tolerations.append(parsed)
        # addPodGroupLabel
        if self.Coscheduling:
            self.PodGroupName = f"{self.TrainingType}-{self.Name}"
            self.PodGroupMinAvailable = str(self.WorkerCount)
        # addRequestGPUsToAnnotation
        self.Annotations[REQUEST_GPUS_ANNOTATION] = str(self.WorkerCount * self.GPUCount)
        # disabledNvidiaENVWithNoneGPURequest (submit.go:629)
        aliyun = bool(self.Labels.get(LABEL_ALIYUN_COM_GPU_COUNT)) or bool(self.Devices.get(DEVICE_ALIYUN_COM_GPU_MEM))
        if not aliyun and self.GPUCount == 0:
            self.Envs[ENV_NVIDIA_VISIBLE_DEVICES] = "void"
        # setModelName
        if self.ModelName:
            self.Labels["modelName"] = self.ModelName

    def _sync_code_build(self) -> None:
        """pkg/argsbuilder/submit_sync_code.go, handleSyncCode."""
        if self.SyncMode == "":
            return
        if self.SyncMode not in ("git", "rsync"):
            raise ArenaUsageError(f"Unknown sync mode: {self.SyncMode}, it should be git or rsync")
        if self.SyncSource == "":
            raise ArenaUsageError("--syncSource should be set when syncMode is set")
        if self.SyncMode == "git":
            parts = self.SyncSource.strip("/").split("/")
            self.SyncGitProjectName = parts[-1].split(".git")[0]

    def _tensorboard_build(self) -> None:
        """pkg/argsbuilder/submit_tensorboard.go, processTensorboard: an absolute logdir outside every --data
        mount is logged on the node (hostPath /arena_logs/training<random>)."""
        if not self.UseTensorboard:
            return
        in_pvc = any(self.TrainingLogdir.startswith(path) for path in self.DataSet.values())
        if self.TrainingLogdir.startswith("/") and not in_pvc:
            self.HostLogPath = f"/arena_logs/training{self.state.random_int32}"  # submit_tensorboard.go:106
            self.IsLocalLogging = True
        else:
            self.IsLocalLogging = False

    def _check_quantity(self, value: str, flag: str) -> None:
        if value and not _valid_quantity(value):
            raise ArenaUsageError(f"--{flag} is invalid")

    def _tf_build(self) -> None:
        """pkg/argsbuilder/submit_tfjob.go, SubmitTFJobArgsBuilder.Build, step by step."""
        # setStandaloneMode (submit_tfjob.go:376): one worker and no PS -> a single Chief, TF_CONFIG disabled,
        # whether or not --chief/--evaluator is given
        if self.PSCount < 1 and self.WorkerCount == 1:
            self.Annotations[DISABLE_TF_CONFIG_ANNOTATION] = "true"
            self.UseChief = True
            self.WorkerCount = 0
        # transform (submit_tfjob.go:388): ports in the order worker, chief, ps
        used = list(self.state.used_ports)
        if not self.WorkerImage:
            self.WorkerImage = self.Image
        if self.WorkerCount > 0:
            self.WorkerPort = _select_port(self.state, used, self.WorkerPort)
        if self.UseChief:
            self.ChiefPort = _select_port(self.state, used, self.ChiefPort)
            self.ChiefCount = 1
        if self.PSCount > 0:
            self.PSPort = _select_port(self.state, used, self.PSPort)
            if not self.PSImage:
                self.PSImage = self.Image
        if self.UseEvaluator:
            self.EvaluatorCount = 1
        if self.SuccessPolicy == "ChiefWorker":
            self.SuccessPolicy = ""
        # setTFNodeSelectors (submit_tfjob.go:454, 493): a role's own --ROLE-selector, else --selector
        self.TFNodeSelectors = {}
        for role, flag in (("PS", "ps-selector"), ("Worker", "worker-selector"), ("Evaluator", "evaluator-selector"),
                           ("Chief", "chief-selector")):
            own = self.f[flag]
            self.TFNodeSelectors[role] = transform_slice_to_map(own, "=") if own else self.NodeSelectors
        # checkGangCapablitiesInCluster
        self.HasGangScheduler = self.state.has_gang_scheduler
        # setRuntime: the annotation "runtime" picks a TFRuntime; the only one (tfjob) checks nothing
        # setRunPolicy: int64(duration.Seconds()) truncates
        self.ActiveDeadlineSeconds = int(self.f["running-timeout"])
        self.StartingDeadlineSeconds = int(self.f["starting-timeout"])
        self.TTLSecondsAfterFinished = int(self.f["ttl-after-finished"])
        # checkRoleSequence: the flag, else the arena config's tfjob_role_sequence
        sequence = self.f["role-sequence"] or self.state.arena_config.get("tfjob_role_sequence", "").strip(" ")
        if sequence:
            names = {"worker": "Worker", "w": "Worker", "ps": "PS", "p": "PS", "evaluator": "Evaluator",
                     "e": "Evaluator", "chief": "Chief", "c": "Chief"}
            roles = []
            for r in sequence.split(","):
                key = r.strip(" ").lower()
                if key not in names:
                    raise ArenaUsageError(f"unknown role: {r}")
                roles.append(names[key])
            self.Annotations["job-role-sequence"] = ",".join(roles)
        # addRequestGPUsToAnnotation (submit_tfjob.go:506): chief + evaluator + workers (PS GPUs are not counted)
        gpus = (self.ChiefCount + self.EvaluatorCount + self.WorkerCount) * self.GPUCount
        self.Annotations[REQUEST_GPUS_ANNOTATION] = str(gpus)
        # addPodGroupLabel
        if self.Coscheduling:
            self.PodGroupName = f"{self.TrainingType}-{self.Name}"
            self.PodGroupMinAvailable = str(self.WorkerCount + self.PSCount + self.ChiefCount + self.EvaluatorCount)
        # check
        if self.SuccessPolicy not in ("", "AllWorkers"):
            raise ArenaUsageError(f"unsupported successPolicy {self.SuccessPolicy}")
        if self.CleanPodPolicy not in ("None", "Running", "All"):
            raise ArenaUsageError(f"unsupported cleanTaskPolicy {self.CleanPodPolicy}")
        if self.WorkerCount == 0 and not self.UseChief:
            raise ArenaUsageError("--workers must be greater than 0 in distributed training")
        if not self.WorkerImage:
            raise ArenaUsageError("--image or --workerImage must be set")
        if self.PSCount > 0 and not self.PSImage:
            raise ArenaUsageError("--image or --psImage must be set")
        if self.GPUCount < 0 or self.PSGpu < 0:
            raise ArenaUsageError("--gpus is invalid")
        for value, flag in ((self.ChiefCpu, "chief-cpu"), (self.ChiefMemory, "chief-memory"), (self.PSCpu, "ps-cpu"),
                            (self.PSMemory, "ps-memory"), (self.EvaluatorCpu, "evaluator-cpu"),
                            (self.EvaluatorMemory, "evaluator-memory"), (self.WorkerCpu, "worker-cpu"),
                            (self.WorkerMemory, "worker-memory"), (self.ShareMemory, "share-memory")):
            self._check_quantity(value, flag)
        if min(self.ActiveDeadlineSeconds, self.StartingDeadlineSeconds, self.TTLSecondsAfterFinished) < 0:
            raise ArenaUsageError("--running-timeout/--starting-timeout/--ttl-after-finished is invalid")

    def _pytorch_build(self) -> None:
        """pkg/argsbuilder/submit_pytorchjob.go, SubmitPytorchJobArgsBuilder.Build: setRunPolicy, check, addEnv."""
        self.ActiveDeadlineSeconds = int(self.f["running-timeout"])
        self.TTLSecondsAfterFinished = int(self.f["ttl-after-finished"])
        if not self.Image:
            raise ArenaUsageError("--image must be set ")
        if self.CleanPodPolicy not in ("None", "Running", "All"):
            raise ArenaUsageError(f"unsupported cleanTaskPolicy {self.CleanPodPolicy}")
        if self.GPUCount < 0:
            raise ArenaUsageError("--gpus is invalid")
        for value, flag in ((self.Cpu, "cpu"), (self.Memory, "memory"), (self.ShareMemory, "share-memory")):
            self._check_quantity(value, flag)
        if self.ActiveDeadlineSeconds < 0 or self.TTLSecondsAfterFinished < 0:
            raise ArenaUsageError("--running-timeout/--ttl-after-finished is invalid")
        if self.NprocPerNode not in ("auto", "cpu", "gpu", "") and not re.fullmatch(r"[+-]?\d+", self.NprocPerNode):
            raise ArenaUsageError("--nproc-per-node is invalid")
        # addEnv
        if self.EnableRDMA:
            self.Envs["MASTER_ADDR"] = f"{self.Name}-master-0"
        if self.NprocPerNode:
            self.Envs["PET_NPROC_PER_NODE"] = self.NprocPerNode

    def _mpi_build(self) -> None:
        """pkg/argsbuilder/submit_mpijob.go, SubmitMPIJobArgsBuilder.Build: setGPUTopologyReplica, check."""
        if self.GPUTopology:
            self.GPUTopologyReplica = str(self.WorkerCount)
        if not self.Image:
            raise ArenaUsageError("--image must be set ")
        if self.CleanPodPolicy not in ("None", "Running", "All"):
            raise ArenaUsageError(f"unsupported cleanTaskPolicy {self.CleanPodPolicy}")
        if self.GPUCount < 0:
            raise ArenaUsageError("--gpus is invalid")
        for value, flag in ((self.Cpu, "cpu"), (self.Memory, "memory")):
            self._check_quantity(value, flag)

    def after_build(self) -> None:
        """pkg/training/submit_*.go, between the build and workflow.SubmitJob."""
        if self.kind == "pytorchjob":
            # "the master is also considered as a worker" (training/submit_pytorchjob.go:47)
            self.WorkerCount = self.WorkerCount - 1
        if self.kind in ("tfjob", "pytorchjob"):
            # CompatibleJobCRD(<crd>, "runPolicy"): the cluster's CRD declares spec.runPolicy
            self.TrainingOperatorCRD = self.state.training_operator_crd

    # ------------------------------------------------------------------------------------------ values
    def values(self) -> dict[str, Any]:
        """The struct marshalled by gopkg.in/yaml.v3 (pkg/util/helm/util.go, toYaml), key for key."""
        common = {
            # CommonSubmitArgs (Name, Namespace, HelmOptions: yaml:"-")
            "trainingType": self.TrainingType,
            "nodeSelectors": self.NodeSelectors,
            "configFiles": self.ConfigFiles,
            "tolerations": self.Tolerations,
            "image": self.Image,
            "imagePullPolicy": self.ImagePullPolicy,
            "gpuCount": self.GPUCount,
            "devices": self.Devices,
            "envs": self.Envs,
            "workingDir": self.WorkingDir,
            "shell": self.Shell,
            "command": self.Command,
            "mode": self.Mode,
            "workers": self.WorkerCount,
            "retry": self.Retry,
            "dataset": self.DataSet,
            "dataDirs": self.DataDirs,
            "enableRDMA": self.EnableRDMA,
            "enableQueue": self.EnableQueue,
            "useENI": self.UseENI,
            "annotations": self.Annotations,
            "labels": self.Labels,
            "isNonRoot": self.IsNonRoot,
            "podSecurityContext": self.PodSecurityContext,
            "priorityClassName": self.PriorityClassName,
            "coscheduling": self.Coscheduling,  # no yaml tag: the lower-cased field name
            "podGroupName": self.PodGroupName,
            "podGroupMinAvailable": self.PodGroupMinAvailable,
            "imagePullSecrets": self.ImagePullSecrets,
            "enableSpotInstance": self.EnableSpotInstance,
            "maxWaitTime": self.MaxWaitTime,
            "schedulerName": self.SchedulerName,
            "useHostNetwork": self.UseHostNetwork,
            "useHostPID": self.UseHostPID,
            "useHostIPC": self.UseHostIPC,
            "modelName": self.ModelName,
            "modelSource": self.ModelSource,
        }
        # SubmitTensorboardArgs (inline)
        tensorboard: dict[str, Any] = {"useTensorboard": self.UseTensorboard}
        if self.TensorboardImage:  # omitempty
            tensorboard["tensorboardImage"] = self.TensorboardImage
        tensorboard.update(trainingLogdir=self.TrainingLogdir, hostLogPath=self.HostLogPath,
                           isLocalLogging=self.IsLocalLogging)
        # SubmitSyncCodeArgs (inline)
        sync: dict[str, Any] = {"syncMode": self.SyncMode, "syncSource": self.SyncSource}
        if self.SyncImage:  # omitempty
            sync["syncImage"] = self.SyncImage
        if self.SyncGitProjectName:  # omitempty
            sync["syncGitProjectName"] = self.SyncGitProjectName
        if self.kind == "tfjob":
            own: dict[str, Any] = {
                "tfNodeSelectors": self.TFNodeSelectors,
                "port": self.Port,
                "workerImage": self.WorkerImage,
                "workerPort": self.WorkerPort,
                "psPort": self.PSPort,
                "ps": self.PSCount,
                "psImage": self.PSImage,
                "workerCPU": self.WorkerCpu,
                "workerCPULimit": self.WorkerCpuLimit,
                "workerMemory": self.WorkerMemory,
                "workerMemoryLimit": self.WorkerMemoryLimit,
                "psCPU": self.PSCpu,
                "psCPULimit": self.PSCpuLimit,
                "psGPU": self.PSGpu,
                "psMemory": self.PSMemory,
                "psMemoryLimit": self.PSMemoryLimit,
                "successPolicy": self.SuccessPolicy,
                "psAffinityPolicy": self.PSAffinityPolicy,
                "psAffinityConstraint": self.PSAffinityConstraint,
                "workerAffinityPolicy": self.WorkerAffinityPolicy,
                "workerAffinityConstraint": self.WorkerAffinityConstraint,
                "cleanPodPolicy": self.CleanPodPolicy,
            }
            if self.UseChief:  # yaml:",omitempty": key "usechief"
                own["usechief"] = True
            own["chief"] = self.ChiefCount
            if self.UseEvaluator:  # key "useevaluator"
                own["useevaluator"] = True
            own.update({
                "chiefPort": self.ChiefPort,
                "chiefCPU": self.ChiefCpu,
                "chiefCPULimit": self.ChiefCpuLimit,
                "chiefMemory": self.ChiefMemory,
                "chiefMemoryLimit": self.ChiefMemoryLimit,
                "evaluatorCPU": self.EvaluatorCpu,
                "evaluatorCPULimit": self.EvaluatorCpuLimit,
                "evaluatorMemory": self.EvaluatorMemory,
                "evaluatorMemoryLimit": self.EvaluatorMemoryLimit,
                "evaluator": self.EvaluatorCount,
                "hasGangScheduler": self.HasGangScheduler,
            })
            for key, value in (("activeDeadlineSeconds", self.ActiveDeadlineSeconds),
                               ("startingDeadlineSeconds", self.StartingDeadlineSeconds),
                               ("ttlSecondsAfterFinished", self.TTLSecondsAfterFinished)):
                if value:  # omitempty
                    own[key] = value
            own["shareMemory"] = self.ShareMemory
            tail: dict[str, Any] = {}
            if self.TrainingOperatorCRD:  # omitempty
                tail["trainingOperatorCRD"] = True
            return {**own, **common, **tensorboard, **sync, **tail}
        if self.kind == "pytorchjob":
            own = {"cpu": self.Cpu, "memory": self.Memory}
            tail = {"cleanPodPolicy": self.CleanPodPolicy}
            if self.ActiveDeadlineSeconds:
                tail["activeDeadlineSeconds"] = self.ActiveDeadlineSeconds
            if self.TTLSecondsAfterFinished:
                tail["ttlSecondsAfterFinished"] = self.TTLSecondsAfterFinished
            if self.TrainingOperatorCRD:
                tail["trainingOperatorCRD"] = True
            tail["shareMemory"] = self.ShareMemory
            if self.NprocPerNode:
                tail["nprocPerNode"] = self.NprocPerNode
            return {**own, **common, **tensorboard, **sync, **tail}
        own = {"cpu": self.Cpu, "memory": self.Memory}
        tail = {"gputopology": self.GPUTopology, "gputopologyreplica": self.GPUTopologyReplica,
                "mountsOnLauncher": self.MountsOnLauncher, "cleanPodPolicy": self.CleanPodPolicy}
        return {**own, **common, **tensorboard, **sync, **tail}
