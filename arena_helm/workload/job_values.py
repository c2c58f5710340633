"""From a validated spec to the chart's values (what its ``values.schema.json`` accepts). Pure.

The user's own ``-f/--values``, ``--set``, ``--set-string`` and ``--set-file`` are not applied here: they go
to helm after these generated values, so helm's own merge and type rules apply (see ``helm.ValueSources``).
"""

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from ..core.enums import AffinityPolicy, SyncMode
from ..core.errors import UsageError
from ..core.grammars import parse_quantity
from ..core.jobkinds import BY_KEY, JobKindModule
from .spec import GIT_REF_ENV, JobSpec, Replica

# Arena's keys (kubeflow/arena pkg/apis/types/const.go, training.go; pkg/argsbuilder/const.go)
USER_ID_LABEL = "arena.kubeflow.org/uid"
USER_NAME_ANNOTATION = "arena.kubeflow.org/username"
KUBE_QUEUE_SUSPEND = "scheduling.x-k8s.io/suspend"
POD_GROUP_NAME = "pod-group.scheduling.sigs.k8s.io/name"
POD_GROUP_MIN = "pod-group.scheduling.sigs.k8s.io/min-available"
DISABLE_TF_CONFIG = "arena.kubeflow.org/disable-tf-config"  # submit_tfjob.go disableTFConfigAnnotation
# Arena's job info env (submit.go setJobInfoToEnv): the job charts set it, with the annotation
# requestGPUsOfJobOwner, from the values they render ("<chart>.jobInfo", charts/arena-common/templates/_jobinfo.tpl)
JOB_INFO_ENV = ("workers", "gpus")
RDMA_RESOURCE = "rdma/hca"
RSYNC_IMAGE = "registry.cn-zhangjiakou.aliyuncs.com/acs/rsync:v3.1.0-aliyun"  # Arena's charts/*/values.yaml rsyncImage


def resources(r: Replica) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", r.cpu), ("memory", r.memory)) if v}
    limits = {k: v for k, v in (("cpu", r.cpu_limit), ("memory", r.memory_limit)) if v}
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def replica_values(r: Replica, spec: JobSpec) -> dict[str, Any]:
    v: dict[str, Any] = {"replicas": r.replicas, "gpus": r.gpus}
    if r.image:
        v["image"] = r.image
    devices = dict(spec.device) if r.devices else {}
    if spec.rdma:
        devices[RDMA_RESOURCE] = 1  # Arena's charts: rdma/hca "1" in requests and limits of every pod
    if devices:
        v["devices"] = devices
    res = resources(r)
    if res:
        v["resources"] = res
    if r.selector:
        v["nodeSelector"] = dict(r.selector)
    if r.annotations:
        v["annotations"] = dict(r.annotations)
    if r.port:
        v["port"] = r.port
    return v


def block_values(spec: JobSpec, name: str) -> dict[str, Any]:
    """The values block of replica ``name`` of the job, ``{"replicas": 0}`` when the job has none."""
    reps = spec.replicas()
    return replica_values(reps[name], spec) if name in reps else {"replicas": 0}


def values_models(build: Callable[[], Iterable[type]], *names: str) -> Callable[[str], type]:
    """The module ``__getattr__`` (PEP 562) of a job kind's module, which holds its chart's values model:
    ``build`` defines the model's classes (named ``names``), run once, when one of them is first asked for
    (``JobKindInfo.values_class``: schema generation, the tests, --rdma's default security context). A submit
    renders values without validating them (helm checks them against the chart's values.schema.json), so it
    does not pay for defining the values classes of every shared block."""
    built: dict[str, type] = {}

    def __getattr__(name: str) -> type:
        if name not in names:
            raise AttributeError(name)
        if not built:
            built.update((c.__name__, c) for c in build())
            if set(built) != set(names):
                raise RuntimeError(f"the values models built are {sorted(built)}, not {sorted(names)}")
        return built[name]

    return __getattr__


def kind_module(spec: JobSpec) -> JobKindModule:
    """The module of the spec's job kind: its spec-to-values hooks (``arena_helm.core.jobkinds.JobKindModule``)."""
    return BY_KEY[spec.kind].module()


def no_extra(spec: JobSpec) -> dict[str, str]:
    """A kind's ``extra_env`` or ``extra_annotations`` that adds none."""
    return {}


def arena_env(spec: JobSpec) -> list[dict[str, str]]:
    """The user's env, then the kind's own (``extra_env``, set over the user's). Arena's job info (``workers``,
    ``gpus``) is not here: the chart sets it from the values it renders, over a variable of the same name."""
    own = {e.name: e.value for e in spec.env}
    own.update(kind_module(spec).extra_env(spec))
    return [{"name": k, "value": v} for k, v in own.items()]


def secret_env(spec: JobSpec, own: Iterable[str]) -> list[dict[str, Any]]:
    """The ``--env-from-secret`` variables (``valueFrom.secretKeyRef``: names only, never a Secret's data); a
    name arena-helm sets itself (``own``: the values' env, and Arena's job info, which the chart sets) is
    refused."""
    own = set(own)
    for e in spec.env_from_secret:
        if e.name in own:
            raise UsageError(f"--env-from-secret {e.name}: arena-helm sets {e.name} itself (Arena's job info): "
                             "name the variable differently")
    return [e.to_values() for e in spec.env_from_secret]


def user_id(user: str) -> str:
    """Arena's user id: the md5 of the user name (pkg/apis/config/arenaconfig.go, util.Md5)."""
    return hashlib.md5(user.encode(), usedforsecurity=False).hexdigest()


def arena_metadata(spec: JobSpec) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """The labels and annotations Arena puts on a job and its pods (besides the chart's own: requestGPUsOfJobOwner
    is the chart's, from the values it renders), and the labels it puts on the pods only."""
    # the user's first: Arena sets its own over them (submit.go: setUserNameAndUserId runs after
    # setLabels/setAnnotations)
    labels: dict[str, str] = dict(spec.label)
    annotations: dict[str, str] = dict(spec.annotation)
    if spec.user:
        labels[USER_ID_LABEL] = user_id(spec.user)
        annotations[USER_NAME_ANNOTATION] = spec.user
    if spec.queue:
        annotations[KUBE_QUEUE_SUSPEND] = "true"
    pod_labels: dict[str, str] = {}
    if spec.gang:  # on the pods only, as Arena's charts
        reps = spec.replicas()
        pod_labels[POD_GROUP_NAME] = f"{spec.kind}-{spec.name}"
        # submit.go addPodGroupLabel: the workers (MPI: not the launcher); TF's: all its roles
        counted = [r for name, r in reps.items() if name != "launcher"]
        pod_labels[POD_GROUP_MIN] = str(sum(r.replicas for r in counted))
    if spec.model_name:
        labels["modelName"] = spec.model_name
        annotations["modelSource"] = spec.model_source or ""
    annotations.update(kind_module(spec).extra_annotations(spec))
    return labels, annotations, pod_labels


def _code_sync(spec: JobSpec) -> dict[str, Any]:
    """The code-sync init container: Arena's layout (the code at <working dir>/code/<repo name>), the ref
    (``spec.code_sync_ref``), and the user's env in it as in Arena (so GIT_SYNC_USERNAME and GIT_SYNC_PASSWORD
    reach git-sync v4, which reads them), but for the ref's own variables, which git-sync v4 would let override
    its --ref."""
    env = {e.name: e.value for e in spec.env}
    ref = spec.code_sync_ref
    out: dict[str, Any] = {"enabled": True, "repo": spec.sync_source,
                           "root": f"{spec.working_dir.rstrip('/')}/code"}
    if spec.code_sync_mode is SyncMode.rsync:
        out["mode"] = "rsync"
        if not spec.sync_image:
            out["image"] = RSYNC_IMAGE
    if ref:
        out["ref"] = ref
    passed = [{"name": k, "value": v} for k, v in env.items() if k not in GIT_REF_ENV]
    if passed:
        out["env"] = passed
    return out


def build_values(spec: JobSpec) -> dict[str, Any]:
    """The chart values for ``spec``: only what the spec sets; the chart's defaults do the rest."""
    values = spec.declared_values()
    values["command"] = spec.command
    if spec.share_memory is not None and parse_quantity(spec.share_memory) == 0:
        values["shmSize"] = ""  # --share-memory 0: no memory-backed /dev/shm
    kind = kind_module(spec)
    if not BY_KEY[spec.kind].arena_metadata:
        if spec.env or spec.env_from_secret:
            values["env"] = [e.to_values() for e in spec.env] + secret_env(spec, ())
    else:
        env = arena_env(spec)
        env += secret_env(spec, [*(e["name"] for e in env), *JOB_INFO_ENV])
        if env:
            values["env"] = env
        labels, annotations, pod_labels = arena_metadata(spec)
        if labels:
            values["labels"] = labels
        if pod_labels:
            values["podLabels"] = pod_labels
        if annotations:
            values["annotations"] = annotations
    if spec.env_from:
        values["envFrom"] = [e.to_values() for e in spec.env_from]
    if spec.secret:
        values["secretVolumes"] = [v.to_values() for v in spec.secret]
    if spec.rdma:
        values["securityContext"] = rdma_security_context(spec)
    if spec.config_file:
        values["configFiles"] = [{"mountPath": c.mount_path, "content": c.content} for c in spec.config_file]
    if spec.data:
        values["data"] = [
            {"claimName": d.claim_name, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data
        ]
    if spec.data_dir:
        values["hostPaths"] = [
            {"path": d.path, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data_dir
        ]
    if spec.sync_source:
        values["codeSync"] = {**_code_sync(spec), **values.get("codeSync", {})}
    if spec.toleration:
        values["tolerations"] = [t.to_values() for t in spec.toleration]
    if spec.tensorboard:
        values["tensorboard"] = tensorboard_values(spec)
        values.update(logdir_mount_values(spec, values.get("hostPaths", [])))
    values.update(kind.kind_values(spec))
    return values


def tensorboard_values(spec: JobSpec) -> dict[str, Any]:
    """The job's TensorBoard, as in Arena. ``--logdir`` under a ``--data`` mount: TensorBoard reads that PVC
    (read-only). Another absolute ``--logdir`` (Arena's local logging): TensorBoard mounts the node directory
    the training containers write to (``spec.logdir_host_path()``, read-only) and must run on the node of the
    pod that writes the logs (a required podAffinity). A URL: TensorBoard reads it itself, with the job's env
    (``-e``, ``--env-from-secret``, ``--env-from``: the storage's endpoint and credentials the training writes
    with; HOME is the chart's). The image is pulled as the job's (``--image-pull-policy``, Always by default:
    Arena's TensorBoard always pulls; ``--image-pull-secret``), and the pod tolerates the job's taints
    (``--toleration``: local logging puts it on the node of the pod that writes) at the job's ``--priority``."""
    out: dict[str, Any] = {"enabled": True, "logDir": spec.logdir, "imagePullPolicy": spec.image_pull_policy.value,
                           "service": {"type": spec.tensorboard_service_type.value}}
    volume = spec.logdir_volume()
    host = spec.logdir_host_path()
    if volume is not None:
        out["pvc"] = {"claimName": volume.claim_name, "mountPath": volume.mount_path}
    elif host is not None:
        out["hostPath"] = {"enabled": True, "path": host.path, "mountPath": host.mount_path}
        out["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": log_writer_selector(spec)},
             "topologyKey": "kubernetes.io/hostname"}]}}
    if "://" in spec.logdir:
        env = [e.to_values() for e in [*spec.env, *spec.env_from_secret] if e.name != "HOME"]
        if env:
            out["env"] = env
        if spec.env_from:
            out["envFrom"] = [e.to_values() for e in spec.env_from]
    if spec.tensorboard_image:
        out["image"] = spec.tensorboard_image
    # where the job's pods may run and pull from, TensorBoard may too (Arena's tensorboard templates): the same
    # values the pod-flags mapping gives the job's pods
    pod = spec.pod_values()
    out.update({key: pod[key] for key in TENSORBOARD_POD_KEYS if key in pod})
    return out


TENSORBOARD_POD_KEYS = ("tolerations", "priorityClassName", "imagePullSecrets")


def logdir_mount_values(spec: JobSpec, host_paths: list[dict[str, Any]]) -> dict[str, Any]:
    """Local logging: the job's own log directory of the node, mounted at ``--logdir`` in every training
    container (appended to ``hostPaths``); nothing when a ``--data-dir`` (or a PVC) already holds it."""
    host = spec.logdir_host_path()
    if host is None or host in spec.data_dir:
        return {}
    return {"hostPaths": [*host_paths, {"path": host.path, "mountPath": host.mount_path, "readOnly": False}]}


def log_writer_selector(spec: JobSpec) -> list[dict[str, Any]]:
    """The pod that writes the logs: the first pod of the first of the kind's main roles the job has (Arena:
    TF chief, else worker 0; PyTorch master 0; a PaddleJob's worker 0), or the kind's own hook, as the
    matchExpressions of the operators' pod labels (``arena_helm.core.jobkinds``)."""
    own = kind_module(spec).log_writer_selector
    if own is not None:
        return own(spec)
    info = BY_KEY[spec.kind]
    reps = spec.replicas()
    role = next((r for r in info.main_types if r in reps), next(iter(reps)))
    return [{"key": info.pod_job_label, "operator": "In", "values": [spec.name]},
            {"key": info.pod_role_label, "operator": "In", "values": [role]},
            {"key": info.pod_index_label, "operator": "In", "values": ["0"]}]


def rdma_security_context(spec: JobSpec) -> dict[str, Any]:
    """The chart's default container securityContext plus IPC_LOCK (Arena's --rdma): the values replace the
    default as a whole, so it is read from the chart's values model rather than copied."""
    model = BY_KEY[spec.kind].values_class()
    default = model.model_fields["security_context"].default_factory()  # type: ignore[misc]
    out = default.model_dump(by_alias=True, exclude_none=True, mode="json")
    out.setdefault("capabilities", {})["add"] = ["IPC_LOCK"]
    return out


def role_affinity(spec: JobSpec, role: str, policy: AffinityPolicy, constraint: str) -> dict[str, Any]:
    """Arena's --<role>-affinity-policy: spread keeps the role's pods on different nodes (pod anti-affinity),
    binpack puts them together (pod affinity); preferred or required."""
    info = BY_KEY[spec.kind]
    term = {"labelSelector": {"matchLabels": {info.pod_job_label: spec.name,
                                              info.pod_role_label: role}},
            "topologyKey": "kubernetes.io/hostname"}
    kind = "podAntiAffinity" if policy is AffinityPolicy.spread else "podAffinity"
    if constraint == "required":
        return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]}}
