"""``serve distributed``: a model served by a group of pods, a leader and its workers, as a LeaderWorkerSet
(Arena's distributed serving; charts/distributed-serving).

The chart renders one ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet named as the release: ``--replicas`` groups
of one leader and ``--workers`` workers (the group's size is 1 + workers), the group recreated when one of its
pods restarts, and a Service on the leaders' ports. The LeaderWorkerSet controller makes a StatefulSet of leaders
and one of workers per leader, a headless Service a group named as its leader (subdomain policy
UniquePerReplica: the Service named as the release is the serving's), and gives each pod the leader's address
(``LWS_LEADER_ADDRESS``, ``<leader>.<leader>.<namespace>``); as Arena's chart
(kubeflow/arena charts/distributed-serving/templates/distributed.yaml), each container also gets ``MASTER_ADDR``
(that address), ``WORLD_SIZE`` (the group's size), ``POD_INDEX`` (0 for the leader), ``GROUP_INDEX``, ``ROLE``
(master or worker) and ``GPU_COUNT``. Each pod's resources are the common ``--gpus``/``--cpu``/``--memory``
unless ``--leader-*``/``--worker-*`` say otherwise.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from ...core.grammars import Image, Quantity
from ...workload.chart_values import Empty, ValuesModel
from ...workload.spec import JobSpec, opt
from ..servings import ServeSpec, ServingValues, _shared, desired_replicas
from .custom import ServingPorts

WORDS = "The command of the leader and the workers, unless --leader-command/--worker-command (joined with spaces)."
PORTS = (("port", "grpc"), ("restful_port", "restful"), ("metrics_port", "metrics"))  # flag field, port name
ROLES = ("leader", "worker")


STATEFULSET_MAX = 52  # 63 (a label value) - 1 - 10 (the revision hash)


class DistributedServeSpec(ServeSpec):
    """A distributed serving: --replicas groups of a leader and --workers workers (a LeaderWorkerSet), the
    Service on the leaders' ports. Each field is the flag of the same name."""

    KIND: ClassVar[str] = "distributed"
    IMAGE_REQUIRED: ClassVar[bool] = True

    command: str = Field("", description="The command of every pod, run as [SHELL, -c, COMMAND] byte for byte (the "
                         "words after the flags).", json_schema_extra={"flag": {"cli": False}})
    shell: str = _shared(JobSpec, "shell")
    workers: int = opt("Workers in each group, beside its leader (the group's size is 1 + workers).", 1, ge=0,
                       le=1000, hidden=("--worker-num",))
    leader_command: str | None = opt("The leader's command (default: the command after the flags).")
    worker_command: str | None = opt("The workers' command (default: the command after the flags).")
    leader_gpus: int | None = opt("GPUs of the leader (default: --gpus).", ge=0)
    worker_gpus: int | None = opt("GPUs of each worker (default: --gpus).", ge=0)
    leader_cpu: Quantity | None = opt("CPU of the leader (default: --cpu).")
    worker_cpu: Quantity | None = opt("CPU of each worker (default: --cpu).")
    leader_memory: Quantity | None = opt("Memory of the leader (default: --memory).")
    worker_memory: Quantity | None = opt("Memory of each worker (default: --memory).")
    port: int = opt("gRPC port of the leader (0: none): the Service's port grpc.", 0, ge=0, le=65535)
    restful_port: int = opt("HTTP (REST) port of the leader (0: none): the Service's port restful.", 0, ge=0,
                            le=65535)
    metrics_port: int = opt("Metrics port of the leader (0: none): the Service's port metrics.", 0, ge=0, le=65535)

    @model_validator(mode="after")
    def _distributed(self) -> DistributedServeSpec:
        for role in ROLES:
            if not (getattr(self, f"{role}_command") or self.command):
                raise ValueError(f"--{role}-command: give the {role}'s command (or one command for every pod after "
                                 f"the flags)")
        # A StatefulSet's pods carry controller-revision-hash = <its name>-<a hash of up to 10 characters>
        # (kubernetes pkg/controller/history ControllerRevisionName), a label value: 63 at most, so a name of 52 at
        # most. LWS names the leaders' StatefulSet as the LeaderWorkerSet (the release) and each group's workers'
        # as its leader pod, <release>-<group index>.
        longest = f"{self.release}-{self.replicas - 1}" if self.workers and self.replicas else self.release
        if len(longest) > STATEFULSET_MAX:
            raise ValueError(f"--name/--version: the StatefulSet {longest!r} would be {len(longest)} characters; its "
                             f"pods' controller-revision-hash label allows {STATEFULSET_MAX}: shorten the name or the "
                             f"version")
        ports = [getattr(self, f) for f, _ in PORTS if getattr(self, f)]
        if len(set(ports)) < len(ports):
            raise ValueError("--port/--restful-port/--metrics-port: two of them are the same port: give each its own")
        return self


class RoleValues(ValuesModel):
    """What the leader or the workers have of their own."""

    command: str = Field("", description="Its command, run as [shell, -c, command]; \"\" = command.")
    gpus: int | None = Field(None, ge=0, description="Its nvidia.com/gpu; null = gpus.")
    cpu: Empty | Quantity = Field("", description="Its CPU (request = limit); \"\" = resources'.")
    memory: Empty | Quantity = Field("", description="Its memory (request = limit); \"\" = resources'.")


class DistributedServingValues(ServingValues):
    """The values of the distributed-serving chart (replicas: the number of groups)."""

    image: Empty | Image = Field("", description="Image of the leader and the workers (required).")
    command: str = Field("", description="The command of every pod, run as [shell, -c, command] byte for byte; "
                         "\"\" = each role's own (leader.command, worker.command).")
    shell: str = Field("sh", min_length=1, description="Shell that runs the commands.")
    workers: int = Field(1, ge=0, description="Workers in each group beside its leader (size = 1 + workers).")
    leader: RoleValues = Field(default_factory=RoleValues, description="The leader's own command and resources.")
    worker: RoleValues = Field(default_factory=RoleValues, description="The workers' own command and resources.")
    ports: ServingPorts = Field(default_factory=ServingPorts, description="The leader's ports; the Service has one "
                                "port per port set (none set: no Service).")
    restart_policy: str = Field("RecreateGroupOnPodRestart",
                                pattern="^(RecreateGroupOnPodRestart|RecreateGroupAfterStart|None)$",
                                description="What a pod's failure does to its group (LeaderWorkerSet's restartPolicy): "
                                "RecreateGroupOnPodRestart (the whole group, as Arena's), RecreateGroupAfterStart or "
                                "None.")


SPEC, VALUES = DistributedServeSpec, DistributedServingValues
PLACEHOLDERS = {"image": "placeholder.invalid/image:0", "command": "placeholder"}  # for serve update's patch
UPDATES = {"command": ("command", "shell"), "shell": ("command", "shell"), "workers": ("workers",),
           **{f"{role}_{key}": (f"{role}.{key}",) for role in ROLES for key in ("command", "gpus", "cpu", "memory")},
           "port": ("ports.grpc",), "restful_port": ("ports.restful",), "metrics_port": ("ports.metrics",)}


def values(spec: DistributedServeSpec) -> dict[str, Any]:
    """What a distributed serving adds to the common values: the commands, the group, each role's resources,
    the leader's ports. Pure."""
    out: dict[str, Any] = {}
    if spec.command:
        out["command"] = spec.command
    if spec.shell != "sh":
        out["shell"] = spec.shell
    if spec.workers != 1:
        out["workers"] = spec.workers
    for role in ROLES:
        own = {key: getattr(spec, f"{role}_{key}") for key in ("command", "gpus", "cpu", "memory")}
        own = {k: v for k, v in own.items() if v is not None and v != ""}
        if own:
            out[role] = own
    ports = {name: getattr(spec, f) for f, name in PORTS if getattr(spec, f)}
    if ports:
        out["ports"] = ports
    return out


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: the command of every pod, joined with spaces (as submit's)."""
    return {"command": " ".join(words)} if words else {}


def _gpus(containers: list[dict]) -> int:
    return sum(int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0) or 0) for c in containers)


def workload_view(lws: dict, view) -> dict[str, Any]:
    """A serving's replicas are the LeaderWorkerSet's groups (status.readyReplicas: groups whose every pod is
    ready); its GPUs per replica, a group's (the leader's and its workers')."""
    meta, status = lws.get("metadata") or {}, lws.get("status") or {}
    desired, group, _ = workload_shape(lws)
    ready, updated = int(status.get("readyReplicas", 0) or 0), int(status.get("updatedReplicas", 0) or 0)
    labels = meta.get("labels") or {}
    return {"name": labels.get("servingName") or view.name, "version": labels.get("servingVersion", view.version),
            "type": labels.get("servingType") or view.type, "desired": desired, "ready": ready, "available": ready,
            "updated": updated, "gpus": sum(_gpus(containers) for containers in group),
            "created": meta.get("creationTimestamp", ""),
            "rolled_out": (int(status.get("observedGeneration", meta.get("generation", 0)) or 0)
                           >= int(meta.get("generation", 0) or 0)
                           and updated >= desired and ready >= desired
                           and int(status.get("replicas", 0) or 0) <= desired)}


def workload_shape(lws: dict) -> tuple[int, list[list[dict]], dict]:
    """top job's shape of a LeaderWorkerSet: its groups, the containers of a group's pods (the leader, then each
    worker), the leader's pod spec."""
    spec = lws.get("spec") or {}
    template = spec.get("leaderWorkerTemplate") or {}
    worker = ((template.get("workerTemplate") or {}).get("spec")) or {}
    leader = ((template.get("leaderTemplate") or {}).get("spec")) or worker
    size = int(template.get("size", 1) or 1)
    return desired_replicas(spec), [leader.get("containers") or []] + [worker.get("containers") or []] * (size - 1), leader
