"""The values of every chart, as typed pydantic models: the one source of the charts' values contract. The
blocks every job chart shares are here (``JobValues``, a replica, runPolicy, ...), each kind's own model in its
module of ``arena_helm.core.jobkinds`` (``arena_helm.workload.chart_registry.CHART_VALUES`` gathers every chart's).

- The specs build these models (``TFJobValues(image=..., worker=TFReplica(replicas=2))``, snake_case
  names); ``model_dump(by_alias=True, exclude_unset=True, mode="json")`` is what is sent to helm.
- ``scripts/gen-chart-schemas.py`` writes each chart's ``values.schema.json`` from ``model_json_schema``;
  ``scripts/gen-chart-values-yaml.py`` writes each ``values.yaml`` (the defaults below, each key under a
  comment that is its description here); ``scripts/gen-chart-readme.py`` the README tables.
- Every grammar is a type of :mod:`arena_helm.core.grammars`, so the CLI's checks and the charts' schemas agree.

Keys are the camelCase ones the chart templates read (``alias_generator=to_camel`` plus a few explicit
aliases: ``global``, ``arena-common``, ``hostPID``, ``hostIPC``, ``ephemeral-storage``). Unknown keys are
refused (``extra="forbid"``), as the schemas refuse them.

Two kinds of objects:
- a chart's own blocks (codeSync, runPolicy, a replica, pvc, service...) list every key with its default in
  values.yaml;
- pass-through Kubernetes objects (:class:`Sparse`: resources, security contexts, schedulingPolicy...) hold
  only what is set: an unset key is absent from the values (never ``null``), so Kubernetes' defaults apply.
"""


import functools
import typing
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_serializer, model_validator
from pydantic.alias_generators import to_camel

from ..core.grammars import (
    AbsPath,
    ConfigKey,
    DNS1035Label,
    DNSSubdomain,
    EnvName,
    FileName,
    Image,
    LabelKey,
    LabelValue,
    Quantity,
    QueueName,
    SyncSource,
)

__all__ = [
    "Affinity", "AppArmorProfile", "ArenaCommonValues", "Capabilities", "CodeSync", "ContainerSecurityContext",
    "Count", "DataVolume", "Empty", "EnvFromSource", "EnvVar", "HostPathVolume", "JobValues", "PodSecurityContext",
    "ConfigFile", "Replica", "ResourceList", "Resources", "RunPolicy", "SELinuxOptions", "SchedulingPolicy", "SeccompProfile",
    "SecretNames", "SecretVolume", "Sparse", "Sysctl", "TensorBoardHostPath", "TensorBoardPvc",
    "TensorBoardService", "TensorBoardValues", "Toleration", "ValuesModel", "WindowsOptions", "arena_common_field",
    "global_field",
]

Empty = Literal[""]
Count = Annotated[int, Field(ge=0)]


def _unique(items: list[str]) -> list[str]:
    seen = [i for n, i in enumerate(items) if i in items[:n]]
    if seen:
        raise ValueError(f"{seen[0]!r} is listed twice")
    return items


# Names of image pull Secrets: DNS subdomains, each once.
SecretNames = Annotated[list[DNSSubdomain], AfterValidator(_unique), Field(json_schema_extra={"uniqueItems": True})]
PullPolicy = Literal["Always", "IfNotPresent", "Never"]
RestartPolicy = Literal["", "Always", "OnFailure", "Never", "ExitCode"]


def _restart_policy(default: str, of: str, note: str) -> Any:
    """A replica block's restartPolicy field, its default and what the default means."""
    return Field(default, description=f"restartPolicy of {of} (Always, OnFailure, Never, ExitCode); {note}")


def _retry_restart_policy(with_retry: str, of: str, source: str) -> Any:
    """The restartPolicy field of a replica block that restarts only with --retry (``PodJobSpec.restart_policy``):
    Never by default, as ``submit`` renders it without --retry."""
    return _restart_policy("Never", of, f"Never by default: no pod restarts, the first that fails fails the job and "
                           f"is kept (submit's --retry 0); {with_retry}, as {source}, with runPolicy.backoffLimit N "
                           "(--retry N).")

GLOBAL_DESCRIPTION = ("Helm's global values, shared with every subchart. Unused by this chart; allowed because "
                      "helm passes them to every chart.")


def global_field() -> Any:
    """The ``global`` field every chart's values take (helm passes it to every chart)."""
    return Field(None, alias="global", description=GLOBAL_DESCRIPTION)


def arena_common_field() -> Any:
    """The ``arena-common`` field of every chart that uses the arena-common library chart (helm adds that key)."""
    return Field(None, alias="arena-common", description="Values of the arena-common library chart: it has none; "
                 "helm adds this key (holding global) itself. Leave it unset.")


class ValuesModel(BaseModel):
    """A block of chart values: camelCase keys, unknown keys refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid",
                              defer_build=True)  # built on first use: the CLI validates no values model
    # values.yaml lists only the keys set in a Sparse default (all keys of any other model)
    SPARSE: ClassVar[bool] = False

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler):
        # A field that cannot be null but defaults to None (global, arena-common, readOnly...) is absent
        # until set: left out of a dump, never written as null. A Sparse object leaves out every None.
        out = handler(self)
        if not isinstance(out, dict):
            return out
        absent = _absent_keys(type(self))
        return {k: v for k, v in out.items() if v is not None or (k not in absent and not self.SPARSE)}


def _nullable(annotation) -> bool:
    return annotation is type(None) or type(None) in typing.get_args(annotation)


@functools.cache
def _absent_keys(cls: type[BaseModel]) -> frozenset[str]:
    """Keys (aliases) of the fields of ``cls`` that default to None but do not take null."""
    return frozenset(f.alias or name for name, f in cls.model_fields.items()
                     if f.default is None and not _nullable(f.annotation))


class Sparse(ValuesModel):
    """A pass-through Kubernetes object: only the keys that are set; an unset key is left out (never null)."""

    SPARSE: ClassVar[bool] = True


# ---------------------------------------------------------------- shared Kubernetes objects
class ResourceList(Sparse):
    cpu: Quantity = Field(None, description="CPU, e.g. 4 or \"500m\".")
    memory: Quantity = Field(None, description="Memory, e.g. \"16Gi\".")
    ephemeral_storage: Quantity = Field(None, alias="ephemeral-storage",
                                        description="Local ephemeral storage, e.g. \"20Gi\".")


class Resources(Sparse):
    requests: ResourceList = Field(None, description="What the scheduler reserves for the container.")
    limits: ResourceList = Field(None, description="The most the container may use.")


class Toleration(Sparse):
    key: Empty | LabelKey = Field(None, description="Taint key the toleration applies to (empty matches every "
                                  "key, with Exists).")
    operator: Literal["Exists", "Equal"] = Field(None, description="Exists or Equal (the default).")
    value: LabelValue = Field(None, description="Taint value to match (with Equal).")
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        None, description="Taint effect to match; empty matches all.")
    toleration_seconds: int | None = Field(None, description="How long a NoExecute taint is tolerated.")


class Affinity(Sparse):
    node_affinity: dict[str, Any] = Field(None, description="Kubernetes NodeAffinity, passed through.")
    pod_affinity: dict[str, Any] = Field(None, description="Kubernetes PodAffinity, passed through.")
    pod_anti_affinity: dict[str, Any] = Field(None, description="Kubernetes PodAntiAffinity, passed through.")


class SeccompProfile(Sparse):
    type: Literal["RuntimeDefault", "Localhost", "Unconfined"] = Field(
        None, description="RuntimeDefault, Localhost or Unconfined.")
    localhost_profile: str = Field(None, description="Profile file on the node (with type Localhost).")


class AppArmorProfile(Sparse):
    type: Literal["RuntimeDefault", "Localhost", "Unconfined"] = Field(
        None, description="RuntimeDefault, Localhost or Unconfined.")
    localhost_profile: str = Field(None, description="Profile loaded on the node (with type Localhost).")


class SELinuxOptions(Sparse):
    user: str = Field(None, description="SELinux user label.")
    role: str = Field(None, description="SELinux role label.")
    type: str = Field(None, description="SELinux type label.")
    level: str = Field(None, description="SELinux level label.")


class WindowsOptions(Sparse):
    gmsa_credential_spec_name: str = Field(None, description="Name of the GMSA credential spec.")
    gmsa_credential_spec: str = Field(None, description="Content of the GMSA credential spec.")
    run_as_user_name: str = Field(None, description="User name of the container process.")
    host_process: bool = Field(None, description="Run as a Windows HostProcess container.")


class Sysctl(ValuesModel):
    name: str = Field(description="Sysctl name, e.g. net.core.somaxconn.")
    value: str = Field(description="Sysctl value.")


class PodSecurityContext(Sparse):
    run_as_user: int | None = Field(None, ge=0, description="UID the containers run as.")
    run_as_group: int | None = Field(None, ge=0, description="GID the containers run as.")
    run_as_non_root: bool | None = Field(None, description="Refuse to start a container as UID 0.")
    fs_group: int | None = Field(None, ge=0, description="Group that owns the pod's volumes.")
    fs_group_change_policy: Literal["OnRootMismatch", "Always"] = Field(None, description="OnRootMismatch or Always.")
    supplemental_groups: list[int] = Field(None, description="Extra groups of the first process.")
    supplemental_groups_policy: Literal["Merge", "Strict"] = Field(None, description="Merge or Strict.")
    seccomp_profile: SeccompProfile = Field(None, description="Seccomp profile of the containers.")
    app_armor_profile: AppArmorProfile = Field(None, description="AppArmor profile of the containers.")
    se_linux_options: SELinuxOptions = Field(None, description="SELinux context of the containers.")
    se_linux_change_policy: Literal["MountOption", "Recursive"] = Field(None, description="SELinux relabelling policy.")
    sysctls: list[Sysctl] = Field(None, description="Namespaced sysctls.")
    windows_options: WindowsOptions = Field(None, description="Windows-specific settings.")


class Capabilities(Sparse):
    add: list[str] = Field(None, description="Capabilities to add, e.g. IPC_LOCK for RDMA.")
    drop: list[str] = Field(None, description="Capabilities to drop, e.g. ALL.")


class HTTPGetAction(Sparse):
    path: str = Field(None, description="Path to request, e.g. /healthz.")
    port: Annotated[int, Field(ge=1, le=65535)] | str = Field(None, description="Port number or name (required).")
    host: str = Field(None, description="Host to connect to (default: the pod's IP).")
    scheme: Literal["HTTP", "HTTPS"] = Field(None, description="HTTP or HTTPS.")


class TCPSocketAction(Sparse):
    port: Annotated[int, Field(ge=1, le=65535)] | str = Field(None, description="Port number or name (required).")
    host: str = Field(None, description="Host to connect to (default: the pod's IP).")


class GRPCAction(Sparse):
    port: int = Field(None, ge=1, le=65535, description="Port number (required).")
    service: str = Field(None, description="gRPC health service name.")


class ExecAction(Sparse):
    command: list[str] = Field(None, description="Command run in the container; exit 0 = healthy.")


class Probe(Sparse):
    """A container probe (one action and its timing)."""

    http_get: HTTPGetAction = Field(None, description="An HTTP GET; 2xx/3xx = healthy.")
    tcp_socket: TCPSocketAction = Field(None, description="A TCP connection.")
    grpc: GRPCAction = Field(None, description="A gRPC health check.")
    exec_: ExecAction = Field(None, alias="exec", description="A command in the container.")
    initial_delay_seconds: int = Field(None, ge=0, description="Seconds before the first probe.")
    period_seconds: int = Field(None, ge=1, description="Seconds between probes.")
    timeout_seconds: int = Field(None, ge=1, description="Seconds a probe may take.")
    success_threshold: int = Field(None, ge=1, description="Successes in a row that count as healthy.")
    failure_threshold: int = Field(None, ge=1, description="Failures in a row that count as unhealthy.")
    termination_grace_period_seconds: int = Field(None, ge=1, description="Grace period of a kill on failure.")


class Probes(Sparse):
    liveness_probe: Probe = Field(None, description="Restart the container when it fails.")
    readiness_probe: Probe = Field(None, description="Take the pod out of the Service while it fails.")
    startup_probe: Probe = Field(None, description="Hold the other probes until it succeeds.")


class ContainerSecurityContext(Sparse):
    allow_privilege_escalation: bool | None = Field(
        None, description="Whether a process can gain more privileges than its parent (setuid binaries).")
    privileged: bool | None = Field(None, description="Run the container privileged.")
    read_only_root_filesystem: bool | None = Field(None, description="Mount the root filesystem read-only.")
    run_as_user: int | None = Field(None, ge=0, description="UID of the container process.")
    run_as_group: int | None = Field(None, ge=0, description="GID of the container process.")
    run_as_non_root: bool | None = Field(None, description="Refuse to start as UID 0.")
    capabilities: Capabilities = Field(None, description="Linux capabilities to add or drop.")
    proc_mount: Literal["Default", "Unmasked"] = Field(None, description="Default or Unmasked.")
    seccomp_profile: SeccompProfile = Field(None, description="Seccomp profile.")
    app_armor_profile: AppArmorProfile = Field(None, description="AppArmor profile.")
    se_linux_options: SELinuxOptions = Field(None, description="SELinux context.")
    windows_options: WindowsOptions = Field(None, description="Windows-specific settings.")


# ---------------------------------------------------------------- environment and Secrets
class KeyRef(ValuesModel):
    name: DNSSubdomain = Field(description="Name of the Secret or ConfigMap (in the job's namespace).")
    key: ConfigKey = Field(description="Its key.")
    optional: bool = Field(None, description="Start the container even when the Secret/ConfigMap or the key is "
                           "missing (the variable is then unset).")


class FieldRef(ValuesModel):
    field_path: str = Field(min_length=1, description="A field of the pod, e.g. metadata.name, status.podIP or "
                            "spec.nodeName.")
    api_version: str = Field(None, description="Version of the schema the path is in (default v1).")


def _one_of(*keys: str) -> dict[str, Any]:
    """A JSON schema that takes exactly one of ``keys`` (what a model validator checks on the Python side)."""
    return {"oneOf": [{"required": [k]} for k in keys]}


def _exactly_one(model: BaseModel, *fields: str) -> None:
    given = [f for f in fields if getattr(model, f) is not None]
    if len(given) != 1:
        names = ", ".join(type(model).model_fields[f].alias or f for f in fields)
        raise ValueError(f"give exactly one of {names}")


class EnvVarSource(Sparse):
    model_config = ConfigDict(json_schema_extra=_one_of("secretKeyRef", "configMapKeyRef", "fieldRef"))

    secret_key_ref: KeyRef = Field(None, description="A key of a Secret (its data never passes through the "
                                   "values).")
    config_map_key_ref: KeyRef = Field(None, description="A key of a ConfigMap.")
    field_ref: FieldRef = Field(None, description="A field of the pod (the downward API).")

    @model_validator(mode="after")
    def _one(self) -> "EnvVarSource":
        _exactly_one(self, "secret_key_ref", "config_map_key_ref", "field_ref")
        return self


class EnvVar(ValuesModel):
    """An environment variable: a value, or valueFrom a Secret's or ConfigMap's key or a field of the pod."""

    model_config = ConfigDict(json_schema_extra=_one_of("value", "valueFrom"))

    name: EnvName = Field(description="Variable name.")
    value: str = Field(None, description="Value, passed byte for byte.")
    value_from: EnvVarSource = Field(None, description="Where the value comes from instead (Kubernetes' "
                                     "valueFrom).")

    @model_validator(mode="after")
    def _one(self) -> "EnvVar":
        _exactly_one(self, "value", "value_from")
        return self


class EnvFromRef(ValuesModel):
    name: DNSSubdomain = Field(description="Name of the Secret or ConfigMap (in the job's namespace).")
    optional: bool = Field(None, description="Start the container even when it is missing.")


class EnvFromSource(Sparse):
    """Every key of a Secret or ConfigMap as a variable (Kubernetes' envFrom)."""

    model_config = ConfigDict(json_schema_extra=_one_of("secretRef", "configMapRef"))

    secret_ref: EnvFromRef = Field(None, description="A Secret: each key becomes a variable.")
    config_map_ref: EnvFromRef = Field(None, description="A ConfigMap: each key becomes a variable.")
    prefix: str = Field(None, description="Put before every variable name.")

    @model_validator(mode="after")
    def _one(self) -> "EnvFromSource":
        _exactly_one(self, "secret_ref", "config_map_ref")
        return self


class SecretVolume(ValuesModel):
    secret_name: DNSSubdomain = Field(description="Name of the Secret (in the job's namespace).")
    mount_path: AbsPath = Field(description="Directory in the container: one file per key, read-only.")
    default_mode: int = Field(None, ge=0, le=0o777, description="Permission bits of the files (e.g. 256 = "
                              "0400); default 0644.")
    optional: bool = Field(None, description="Start the container even when the Secret is missing.")


# ---------------------------------------------------------------- tensorboard
class TensorBoardPvc(ValuesModel):
    claim_name: Empty | DNSSubdomain = Field("", description="Name of the PVC holding the logs; \"\" mounts none.")
    mount_path: AbsPath = Field("/logs", description="Where the PVC is mounted (read-only) in the container.")


class TensorBoardHostPath(ValuesModel):
    enabled: bool = Field(False, description="Mount hostPath.path (set explicitly: host paths tie the pod to "
                          "one node's files).")
    path: Empty | AbsPath = Field("", description="Directory on the node.")
    mount_path: AbsPath = Field("/logs", description="Where the directory is mounted (read-only) in the container.")


class TensorBoardService(ValuesModel):
    type: Literal["ClusterIP", "NodePort", "LoadBalancer"] = Field(
        "ClusterIP", description="Service type: ClusterIP (reach it with kubectl port-forward), NodePort or "
        "LoadBalancer. A job chart's TensorBoard is NodePort by default, as in Arena.")
    port: int = Field(6006, ge=1, le=65535, description="Service port (the container listens on 6006).")
    node_port: int | None = Field(None, ge=1, le=65535, description="Fixed node port for NodePort/LoadBalancer "
                                  "(30000-32767 by default); null lets Kubernetes choose.")


class TensorBoardValues(ValuesModel):
    """Values of the tensorboard chart (and of the ``tensorboard`` block of a job chart)."""

    global_: dict[str, Any] = global_field()
    enabled: bool = Field(True, description="Render TensorBoard. In a job chart this is also the dependency "
                          "condition tensorboard.enabled (off there).")
    in_job_chart: bool = Field(False, description="Set by an arena-helm job chart whose subchart this is (its "
                               "values.yaml): the job chart checks these values with its own, in one failure, and "
                               "the app label is the job chart's name. Alone (or under another chart): false.")
    name_override: Empty | DNS1035Label = Field(
        "", max_length=51, json_schema_extra={"maxLength": 51},
        description="Base name: objects are named <nameOverride or release name>-tensorboard. In a job chart it "
        "must equal the job chart's nameOverride (the job chart checks it).")
    image: Image = Field("tensorflow/tensorflow:2.15.0",
                         description="TensorBoard image; it must provide the tensorboard command.")
    image_pull_policy: PullPolicy = Field("IfNotPresent", description="Image pull policy of the TensorBoard "
                                          "container.")
    image_pull_secrets: SecretNames = Field([], description="Names of image pull Secrets for the TensorBoard pod.")
    log_dir: str = Field("/logs", min_length=1, description="The --logdir: an absolute path inside pvc.mountPath "
                         "or hostPath.mountPath, or a URL TensorBoard understands (gs://, s3://, hdfs://).")
    pvc: TensorBoardPvc = Field(default_factory=TensorBoardPvc,
                                description="Read the logs from a PersistentVolumeClaim, mounted read-only.")
    host_path: TensorBoardHostPath = Field(
        default_factory=TensorBoardHostPath,
        description="Read the logs from a directory of the node, mounted read-only. Off unless enabled explicitly.")
    service: TensorBoardService = Field(default_factory=TensorBoardService,
                                        description="The Service in front of TensorBoard.")
    resources: Resources = Field(
        default_factory=lambda: Resources(requests=ResourceList(cpu="100m", memory="256Mi"),
                                          limits=ResourceList(cpu="1", memory="2Gi")),
        description="CPU/memory requests and limits of the TensorBoard container.")
    node_selector: dict[LabelKey, LabelValue] = Field({}, description="Node labels the TensorBoard pod must match.")
    tolerations: list[Toleration] = Field([], description="Tolerations of the TensorBoard pod.")
    priority_class_name: Empty | DNSSubdomain = Field("", description="PriorityClass of the TensorBoard pod; \"\" = "
                                                      "none.")
    affinity: Affinity = Field(default_factory=Affinity, description="Affinity of the TensorBoard pod.")
    pod_security_context: PodSecurityContext = Field(
        default_factory=lambda: PodSecurityContext(run_as_non_root=True, run_as_user=10001, run_as_group=10001,
                                                   seccomp_profile=SeccompProfile(type="RuntimeDefault")),
        description="Pod-level securityContext of the TensorBoard pod (by default: no root, an unprivileged "
        "UID and GID, the runtime's default seccomp profile).")
    security_context: ContainerSecurityContext = Field(
        default_factory=lambda: ContainerSecurityContext(allow_privilege_escalation=False,
                                                         read_only_root_filesystem=True,
                                                         capabilities=Capabilities(drop=["ALL"])),
        description="securityContext of the TensorBoard container (by default: no privilege escalation, a "
        "read-only root filesystem (TensorBoard writes only to an emptyDir /tmp), no capabilities).")
    env: list[EnvVar] = Field([], description="Environment variables of the TensorBoard container besides HOME (e.g. "
                              "the credentials and endpoint of an s3:// logDir, valueFrom a Secret).")
    env_from: list[EnvFromSource] = Field([], description="Secrets and ConfigMaps whose every key becomes an "
                                          "environment variable of the TensorBoard container.")
    labels: dict[LabelKey, LabelValue] = Field({}, description="Extra labels on the Deployment, its pod and the "
                                               "Service.")
    annotations: dict[LabelKey, str] = Field({}, description="Extra annotations on the Deployment, its pod and the "
                                             "Service.")


# ---------------------------------------------------------------- job charts: shared blocks
class ConfigFile(ValuesModel):
    mount_path: AbsPath = Field(description="Path of the file in the container.")
    content: str = Field(description="Content of the file (UTF-8 text).")


class DataVolume(ValuesModel):
    claim_name: DNSSubdomain = Field(description="Name of the PersistentVolumeClaim.")
    mount_path: AbsPath = Field(description="Mount path in the container.")
    read_only: bool = Field(None, description="Mount read-only.")
    sub_path: str = Field(None, description="Sub-path of the volume to mount (\"\" = its root).")


class HostPathVolume(ValuesModel):
    path: AbsPath = Field(description="Directory on the node.")
    mount_path: AbsPath = Field(description="Mount path in the container.")
    read_only: bool = Field(None, description="Mount read-only.")


class CodeSync(ValuesModel):
    enabled: bool = Field(False, description="Add the code-sync init container (and the code-sync volume).")
    mode: Literal["git", "rsync"] = Field("git", description="git (git-sync v4 clones repo) or rsync (rsync -avP "
                                          "<repo> <root>, with an image that has rsync: set image).")
    repo: Empty | SyncSource = Field("", description="Repository URL for git (https://, ssh://, git@host:path, git:// or file://; "
                      "never put credentials in it: use secretName), or the rsync source.")
    ref: str = Field("", description="Branch, tag or commit to check out; \"\" = the remote HEAD.")
    root: AbsPath = Field("/code", description="Mount path of the code volume (in git-sync and in the training "
                          "container); the code is at <root>/<linkName>.")
    link_name: Empty | FileName = Field("", description="Name of the checkout under root; \"\" = the repository "
                                        "name (URL basename without .git).")
    image: Image = Field("registry.k8s.io/git-sync/git-sync:v4.4.0", description="git-sync v4 image.")
    secret_name: Empty | DNSSubdomain = Field(
        "", description="Secret with keys username and password (passed as GITSYNC_USERNAME / GITSYNC_PASSWORD); "
        "\"\" for a public repository.")
    depth: int = Field(1, ge=0, description="Clone depth (--depth); 0 = the full history.")
    env: list[EnvVar] = Field([], description="Environment variables of the sync container (Arena passes the job's "
                              "env: GIT_SYNC_USERNAME and GIT_SYNC_PASSWORD reach git-sync this way).")
    resources: Resources = Field(
        default_factory=lambda: Resources(requests=ResourceList(cpu="100m", memory="128Mi"),
                                          limits=ResourceList(cpu="1", memory="1Gi")),
        description="CPU/memory requests and limits of the git-sync container.")


class SchedulingPolicy(Sparse):
    min_available: int = Field(None, ge=0, description="Minimal number of pods to schedule together.")
    queue: str = Field(None, description="Volcano queue of the PodGroup.")
    priority_class: Empty | DNSSubdomain = Field(None, description="PriorityClass of the PodGroup.")
    min_resources: dict[LabelKey, Quantity] = Field(
        None, description="Minimal resources of the PodGroup, resource name to quantity.")
    schedule_timeout_seconds: int = Field(None, ge=0, description="How long the PodGroup waits to be scheduled.")


class RunPolicy(ValuesModel):
    clean_pod_policy: Literal["None", "Running", "All"] = Field(
        "Running", description="Pods to delete when the job finishes: None, Running or All.")
    backoff_limit: int | None = Field(None, ge=0, description="Retries before the job fails; null = the "
                                      "operator's default.")
    ttl_seconds_after_finished: int | None = Field(None, ge=0, description="Delete the job this many seconds "
                                                   "after it finishes; null = keep it.")
    active_deadline_seconds: int | None = Field(None, ge=1, description="Fail the job after this many seconds of "
                                                "running (1 or more); null = no deadline.")
    suspend: bool | None = Field(None, description="Suspend the job: the operator deletes its pods (true) and "
                                 "recreates them (false); arena-helm suspend/resume set it through a helm upgrade. "
                                 "null = not set (not suspended).")
    scheduling_policy: SchedulingPolicy = Field(
        default_factory=SchedulingPolicy,
        description="Gang-scheduling (Volcano / scheduler-plugins): minAvailable, queue, priorityClass, "
        "minResources, scheduleTimeoutSeconds.")


class Replica(ValuesModel):
    """A replica block (one replica type of the job)."""

    replicas: int = Field(0, ge=0, description="Number of pods of this replica type; 0 leaves it out of the job.")
    image: Empty | Image = Field("", description="Image of these pods; \"\" = the top-level image.")
    command: str = Field("", description="Command of these pods (run with <shell> -c); \"\" = the top-level "
                         "command.")
    gpus: int = Field(0, ge=0, description="nvidia.com/gpu per pod, in requests and limits; with 0, "
                      "NVIDIA_VISIBLE_DEVICES=void hides the node's GPUs.")
    devices: dict[LabelKey, Count] = Field(
        {}, description="Other extended resources per pod, name to count (e.g. amd.com/gpu: 1), in requests and "
        "limits.")
    resources: Resources = Field(default_factory=Resources, description="CPU/memory requests and limits per pod "
                                 "(GPUs and devices are added to them).")
    node_selector: dict[LabelKey, LabelValue] = Field({}, description="Node labels for these pods, merged over the "
                                                      "top-level nodeSelector.")
    annotations: dict[LabelKey, str] = Field({}, description="Annotations of these pods only, over the top-level "
                                             "annotations.")
    restart_policy: RestartPolicy = _restart_policy("", "these replicas", "\"\" = the operator's default.")
    affinity: Affinity = Field(default_factory=Affinity, description="Affinity of these pods; when set it replaces "
                               "the top-level affinity for them.")


class Provenance(ValuesModel):
    """What made the job (arena_helm.workload.provenance): read back by rerun and export."""

    version: str = Field("", description="The arena-helm version that submitted the job (the job's annotation "
                         "arena-helm.kubeflow.org/version); \"\" = not submitted by arena-helm.")
    command_line: list[str] = Field([], description="The submit's command line, word by word (the job's annotation "
                                    "arena-helm.kubeflow.org/command-line, as JSON); a --notify URL is masked.")
    submit_line: list[str] = Field([], description="A rerun's only: the submit command line it is equivalent to "
                                   "(the original's, with the rerun's flags in place of its own), word by word; "
                                   "what arena-helm export prints.")
    git_commit: str = Field("", description="The commit --sync-branch named at submit (git ls-remote; the job's "
                            "annotation arena-helm.kubeflow.org/git-commit); \"\" = unknown or no git sync.")
    spec: dict[str, Any] = Field({}, description="The submit's spec fields that were set (JSON), without name "
                                 "and namespace: what arena-helm rerun starts from.")
    preset: str = Field("", description="The preset of the kind it was submitted as (e.g. deepspeedjob, whose "
                        "defaults differ from the kind's): what arena-helm rerun rebuilds the spec as; \"\" = the "
                        "kind itself.")


def provenance_field() -> Any:
    return Field(default_factory=Provenance, description="What made the job: arena-helm's version, command line "
                 "and spec (set by arena-helm submit; rerun and export read it).")


class PodLevelValues(ValuesModel):
    """The pod-level values every family's pods take and every pod spec renders alike (arena-common's
    podLevel: a job's replicas, a TrainJob's runtime patch, a serving's and a workspace's pods): where the
    pods may run and how long they get to stop (the values of spec.PodLevelFlags that every pod spec can
    carry). A pod-level value every family takes is declared here, once."""

    node_selector: dict[LabelKey, LabelValue] = Field({}, description="Node labels the pods must match (a job "
                                                      "replica's own nodeSelector is merged over it).")
    tolerations: list[Toleration] = Field([], description="Tolerations of the pods.")
    affinity: Affinity = Field(default_factory=Affinity, description="Affinity of the pods (nodeAffinity, "
                               "podAffinity, podAntiAffinity; a job replica's own replaces it).")
    termination_grace_period_seconds: int | None = Field(None, ge=0, description="Seconds the pods get to stop "
                                                         "between SIGTERM and SIGKILL; null = Kubernetes' 30.")


class ArenaCommonValues(ValuesModel):
    global_: dict[str, Any] = global_field()


class JobValues(PodLevelValues):
    """The values every job chart (tfjob, pytorchjob, mpijob) shares."""

    global_: dict[str, Any] = global_field()
    arena_common: ArenaCommonValues = arena_common_field()
    name_override: Empty | DNS1035Label = Field(
        "", description="Name of the job; \"\" = the release name. Lower-case letters, digits and '-', starting "
        "with a letter (its pods' Services are named <name>-<type>-<index>).")
    image: Empty | Image = Field("", description="Default image of every replica (a replica's own image overrides "
                                 "it). Required once a replica has no image of its own.")
    image_pull_policy: PullPolicy = Field("Always", description="Pull policy of the training containers (and of "
                                          "git-sync): Always (Arena's default), IfNotPresent or Never.")
    image_pull_secrets: SecretNames = Field(
        [], description="Names of image pull Secrets (kubernetes.io/dockerconfigjson) in the job's namespace.")
    command: str = Field("", description="The training command, run as [<shell>, \"-c\", <command>] byte for "
                         "byte; \"\" runs the image's entrypoint.")
    shell: str = Field("sh", min_length=1, description="Shell that runs the command.")
    working_dir: Empty | AbsPath = Field("/root", description="Working directory of the training containers "
                                         "(Arena's /root; synced code is under <workingDir>/code); \"\" = the "
                                         "image's, as when there is no command (the image's entrypoint runs).")
    env: list[EnvVar] = Field([], description="Environment variables of every training container (a value, or "
                              "valueFrom a Secret's key: its data never passes through the values). The chart "
                              "adds Arena's job info, workers and gpus, from the replicas it renders (over an "
                              "entry of the same name).")
    env_from: list[EnvFromSource] = Field([], description="Secrets and ConfigMaps whose every key becomes an "
                                          "environment variable of every training container.")
    secret_volumes: list[SecretVolume] = Field([], description="Secrets mounted read-only into every training "
                                               "container (volumes secret-0, secret-1, ...).")
    shm_size: Empty | Quantity = Field("2Gi", description="Size of the memory-backed /dev/shm (Arena's 2Gi; NCCL "
                                       "and data loaders need more than the runtime's 64Mi); \"\" = the runtime's "
                                       "default.")
    config_files: list[ConfigFile] = Field([], description="Files mounted into every training container, from a "
                                           "ConfigMap of the job (<job name>-config).")
    data: list[DataVolume] = Field([], description="PersistentVolumeClaims mounted into every training container.")
    host_paths: list[HostPathVolume] = Field([], description="Node directories mounted into every training "
                                             "container.")
    code_sync: CodeSync = Field(default_factory=CodeSync, description="Clone a git repository into every pod "
                                "before training, with a git-sync v4 init container.")
    priority_class_name: Empty | DNSSubdomain = Field("", description="PriorityClass of the pods; \"\" = none.")
    scheduler_name: Empty | DNSSubdomain = Field("", description="Scheduler of the pods (e.g. volcano); \"\" = the "
                                                 "default scheduler.")
    service_account_name: Empty | DNSSubdomain = Field(
        "", description="ServiceAccount of the pods; \"\" = the namespace's default one, whose token is then not "
        "mounted.")
    pod_security_context: PodSecurityContext = Field(
        default_factory=PodSecurityContext,
        description="Pod-level securityContext of every pod (e.g. runAsUser, fsGroup, seccompProfile).")
    security_context: ContainerSecurityContext = Field(
        default_factory=lambda: ContainerSecurityContext(allow_privilege_escalation=False,
                                                         capabilities=Capabilities(drop=["NET_RAW"])),
        description="securityContext of the training containers, never privileged unless set here (by default: "
        "no privilege escalation, no NET_RAW: raw sockets are never needed for training).")
    host_network: bool = Field(False, description="Use the node's network namespace (e.g. for RDMA); sets "
                               "dnsPolicy ClusterFirstWithHostNet.")
    host_pid: bool = Field(False, alias="hostPID", description="Use the node's PID namespace.")
    host_ipc: bool = Field(False, alias="hostIPC", description="Use the node's IPC namespace.")
    labels: dict[LabelKey, LabelValue] = Field({}, description="Extra labels on the job and on every pod.")
    pod_labels: dict[LabelKey, LabelValue] = Field({}, description="Extra labels on every pod only (e.g. the "
                                                   "coscheduling pod-group labels of --gang).")
    annotations: dict[LabelKey, str] = Field({}, description="Extra annotations on the job and on every pod. The "
                                             "chart adds Arena's requestGPUsOfJobOwner, the GPUs of the pods it "
                                             "renders that train (over an entry of the same name).")
    queue: Empty | QueueName = Field("", description="Kueue LocalQueue; \"\" = none. Sets the label "
                                     "kueue.x-k8s.io/queue-name on the job.")
    provenance: Provenance = provenance_field()
    run_policy: RunPolicy = Field(default_factory=RunPolicy, description="The job's runPolicy (common to the "
                                  "Kubeflow training operators).")
    tensorboard: TensorBoardValues = Field(
        default_factory=lambda: TensorBoardValues(enabled=False, in_job_chart=True,
                                                  service=TensorBoardService(type="NodePort")),
        description="Values of the tensorboard subchart (see charts/tensorboard); enabled turns it on (a "
        "Deployment and a Service named <job name>-tensorboard; the Service is NodePort, as in Arena).")


class PodChartValues(PodLevelValues):
    """The values every one-pod-template chart that arena-helm fills from the pod flags shares (the workspace and
    the serving charts: arena_helm.workload.spec.PodFlags.pod_values): the pod's image pulling, resources, volumes, env,
    scheduling, security and metadata. Each chart's model adds its own keys after these."""

    global_: dict[str, Any] = global_field()
    arena_common: ArenaCommonValues = arena_common_field()
    name_override: Empty | DNS1035Label = Field("", description="Name of the chart's objects; \"\" = the release "
                                                "name.")
    image_pull_policy: PullPolicy = Field("IfNotPresent", description="Pull policy of the main container.")
    image_pull_secrets: SecretNames = Field([], description="Names of image pull Secrets.")
    gpus: int = Field(0, ge=0, description="nvidia.com/gpu of each pod, in requests and limits; with 0, "
                      "NVIDIA_VISIBLE_DEVICES=void hides the node's GPUs.")
    resources: Resources = Field(default_factory=Resources, description="CPU/memory requests and limits of each "
                                 "pod's main container (GPUs are added to them).")
    data: list[DataVolume] = Field([], description="PersistentVolumeClaims mounted into the main container.")
    host_paths: list[HostPathVolume] = Field([], description="Node directories mounted into the main container.")
    secret_volumes: list[SecretVolume] = Field([], description="Secrets mounted read-only (volumes secret-0, ...).")
    env: list[EnvVar] = Field([], description="Environment variables (a value, or valueFrom a Secret's key).")
    env_from: list[EnvFromSource] = Field([], description="Secrets and ConfigMaps whose every key becomes an "
                                          "environment variable.")
    priority_class_name: Empty | DNSSubdomain = Field("", description="PriorityClass of the pods; \"\" = none.")
    security_context: ContainerSecurityContext = Field(
        default_factory=lambda: ContainerSecurityContext(allow_privilege_escalation=False,
                                                         capabilities=Capabilities(drop=["NET_RAW"])),
        description="securityContext of the main container (by default: no privilege escalation, no NET_RAW).")
    labels: dict[LabelKey, LabelValue] = Field({}, description="Extra labels on every object and pod.")
    annotations: dict[LabelKey, str] = Field({}, description="Extra annotations on the workload and its pods.")


# blocks of a job chart's values.yaml that list only their set keys (the subchart documents the rest)
SUBCHART_KEYS = ("tensorboard",)
