"""Job and pod views: what ``list``, ``get`` and ``top job`` show, computed from plain API dicts. Pure (no I/O).
A node's view (``top node``) is in :mod:`arena_helm.views.nodes`; why a job waits or stopped, in
:mod:`arena_helm.views.reasons`.

A view joins a helm release, its job object (TFJob/PyTorchJob/MPIJob) and the job's pods. The JSON form
carries the keys of Arena's ``TrainingJobInfo`` and ``TrainingJobInstance`` (kubeflow/arena
``pkg/apis/types/training.go``), with the values Arena's ``BuildJobInfo`` (``pkg/training/get_advanced.go``)
gives them, so that scripts parsing ``arena list/get -o json`` keep working; arena-helm's own keys sit beside
them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ..core.catalog import Family
from ..core.grammars import parse_time, quantity_float
from ..core.jobkinds import BY_CHART, BY_KIND, KINDS, POD_JOB_LABELS, REPLICA_KEYS
from .queueing import QueueInfo, queue_info
from .reasons import Failure, failure_of, pod_status, state_reason

# roles whose first pod is the chief, in order, for a pod of an unknown kind: every kind's main roles
MAIN_TYPES = tuple(dict.fromkeys(t for k in KINDS for t in k.main_types))
FINISHED_PODS = ("Succeeded", "Failed")
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
ROLE_LABELS = tuple(dict.fromkeys(k.pod_role_label for k in KINDS))  # the replica type (role) of a pod
INDEX_LABELS = tuple(dict.fromkeys(k.pod_index_label for k in KINDS))  # its index within the role
POD_LABELS = frozenset((*POD_JOB_LABELS, *ROLE_LABELS, JOB_ROLE_LABEL, *INDEX_LABELS))  # every pod label a view reads


def pod_job_name(pod: dict) -> str:
    """The name of the job a pod belongs to, from the job-name label of any kind (empty if none)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return next((labels[k] for k in POD_JOB_LABELS if labels.get(k)), "")


def pod_job_selector(kind: str | None, name: str) -> str:
    """The label selector of the pods of job ``name`` of ``kind`` (the training operators' label if unknown)."""
    info = BY_KIND.get(kind or "")
    return f"{info.pod_job_label if info else JOB_NAME_LABEL}={name}"


def short_duration(seconds: float | None) -> str:
    """kubectl's short human duration: 45s, 12m, 5h, 3d, 2y."""
    if seconds is None:
        return "N/A"
    s = max(int(seconds), 0)
    if s < 120:
        return f"{s}s"
    if s < 3600 * 2:
        return f"{s // 60}m"
    if s < 86400 * 2:
        h, m = divmod(s // 60, 60)
        return f"{h}h{m}m" if m and h < 8 else f"{h}h"
    if s < 86400 * 365 * 2:
        return f"{s // 86400}d"
    return f"{s // (86400 * 365)}y"


def is_gpu_resource(name: str) -> bool:
    """nvidia.com/gpu and other vendors' */gpu device resources."""
    return name == "nvidia.com/gpu" or name.endswith("/gpu")


def count_of(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def container_gpus(containers: list[dict]) -> int:
    total = 0
    for c in containers or []:
        res = c.get("resources") or {}
        limits = res.get("limits") or {}
        requests = res.get("requests") or {}
        for key in set(limits) | set(requests):
            if is_gpu_resource(key):
                total += count_of(limits.get(key, requests.get(key, 0)))
    return total




def container_requests(containers: list[dict], resource: str) -> float:
    total = 0.0
    for c in containers or []:
        res = c.get("resources") or {}
        value = (res.get("requests") or {}).get(resource, (res.get("limits") or {}).get(resource))
        if value is not None:
            total += quantity_float(value)
    return total


def fmt_cpu(cores: float) -> str:
    if cores == 0:
        return "0"
    return f"{cores:g}" if cores >= 1 and cores == int(cores) else f"{int(round(cores * 1000))}m"


def fmt_mem(nbytes: float) -> str:
    if nbytes == 0:
        return "0"
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if nbytes >= size:
            v = nbytes / size
            return f"{v:.0f}{unit}" if v == int(v) or v >= 10 else f"{v:.1f}{unit}"
    return f"{nbytes:.0f}"


# ---- pods -------------------------------------------------------------------------------------------
def pod_is_scheduled(pod: dict) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def pod_gpus(pod: dict) -> int:
    return container_gpus((pod.get("spec") or {}).get("containers") or [])


def pod_allocates(pod: dict) -> bool:
    """A pod holds its GPUs while it is bound to a node and not finished."""
    return pod_is_scheduled(pod) and (pod.get("status") or {}).get("phase") not in FINISHED_PODS


def pod_replica_type(pod: dict) -> str:
    """The replica type (role) label of any kind; the mpi-operator (MPIJob v2beta1, v0.8.0) sets none and puts
    the replica type in the job-role label instead (``launcher`` or ``worker``)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    role = next((labels[k] for k in ROLE_LABELS if labels.get(k)), "")
    if role:
        return role
    role = labels.get(JOB_ROLE_LABEL, "")
    return role if role in ("launcher", "worker") else ""


def chief_first(instances: list[Instance], pods: list[dict], kind: str | None = None) -> list[Instance]:
    """The chief first: the first pod (index 0) of the first of the kind's main roles the job has (a TFJob's
    chief, else its master, else worker 0; a PaddleJob's worker 0, not its parameter servers), else of any
    kind's main roles (an MPIJob's worker 0 before its launcher exists); the chief is marked ``is_chief``."""
    info = BY_KIND.get(kind or "")
    labels = {p["metadata"]["name"]: p["metadata"].get("labels") or {} for p in pods}
    index = {name: next((lab[k] for k in INDEX_LABELS if k in lab), "") for name, lab in labels.items()}
    for role in dict.fromkeys((*(info.main_types if info else ()), *MAIN_TYPES)):
        ranked = sorted((i for i in instances if i.replica_type == role), key=lambda i: (index.get(i.name) != "0",
                                                                                         i.name))
        if ranked:
            ranked[0].is_chief = True
            break
    return sorted(instances, key=lambda i: (not i.is_chief, i.name))


@dataclass
class Instance:
    name: str
    status: str
    age: str
    is_chief: bool
    gpus: int
    node: str
    node_ip: str
    replica_type: str
    ip: str = ""  # the pod's IP (status.podIP)
    age_seconds: int = 0  # Arena's instance age: how long the pod has been pending, else running
    created_ts: int = 0  # the pod's metadata.creationTimestamp, Unix seconds

    def to_json(self) -> dict[str, Any]:
        # Arena's TrainingJobInstance keys (pkg/apis/types/training.go), valued as Arena's BuildJobInfo
        # (pkg/training/get_advanced.go): age "<seconds>s", gpuMetrics a map (filled by usage.add_job_json),
        # creationTimestamp the pod's, in Unix seconds; replicaType is arena-helm's
        return {"name": self.name, "status": self.status, "age": f"{self.age_seconds}s", "node": self.node,
                "nodeIP": self.node_ip, "chief": self.is_chief, "requestGPUs": self.gpus,
                "replicaType": self.replica_type, "ip": self.ip, "gpuMetrics": {},
                "creationTimestamp": self.created_ts}


def unix_seconds(value: str | None) -> int:
    """An RFC 3339 time as whole Unix seconds (Go's ``Time.Unix()``); 0 when there is none."""
    t = parse_time(value)
    return int(t.timestamp()) if t else 0


def pod_duration_seconds(pod: dict, now: dt.datetime) -> int:
    """Arena's age of an instance (pkg/apis/utils/pods.go ``GetDurationOfPod``): a Pending pod, the time since
    its creation; an Unknown one, 0; else its running time, from its containers' earliest start (or the pod's
    ``status.startTime``, or its creation) to now while it runs or has no finished container, else to its
    containers' latest finish. Whole seconds, never negative."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    phase = status.get("phase") or ""
    created = parse_time(meta.get("creationTimestamp"))
    if phase == "Pending":
        return max(int((now - created).total_seconds()), 0) if created else 0
    if phase == "Unknown":
        return 0
    starts: list[dt.datetime] = []
    ends: list[dt.datetime] = []
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        state = cs.get("state") or {}
        if state.get("running"):
            t = parse_time(state["running"].get("startedAt"))
            starts += [t] if t else []
        elif state.get("terminated"):
            t, e = parse_time(state["terminated"].get("startedAt")), parse_time(state["terminated"].get("finishedAt"))
            starts += [t] if t else []
            ends += [e] if e else []
    start = min(starts) if starts else parse_time(status.get("startTime")) or created
    if start is None:
        return 0
    end = now if phase == "Running" or not ends else max(ends)
    return max(int((end - start).total_seconds()), 0)


def instance_of(pod: dict, now: dt.datetime) -> Instance:
    meta, status, spec = pod.get("metadata") or {}, pod.get("status") or {}, pod.get("spec") or {}
    created = parse_time(meta.get("creationTimestamp"))
    rtype = pod_replica_type(pod)
    return Instance(
        name=meta.get("name", ""),
        status=pod_status(pod),
        age=short_duration((now - created).total_seconds()) if created else "N/A",
        is_chief=False,  # chief_first marks the chief
        gpus=pod_gpus(pod),
        node=spec.get("nodeName") or "N/A",
        node_ip=status.get("hostIP") or "N/A",
        replica_type=rtype,
        ip=status.get("podIP") or "",
        age_seconds=pod_duration_seconds(pod, now),
        created_ts=unix_seconds(meta.get("creationTimestamp")),
    )


# ---- jobs -------------------------------------------------------------------------------------------
def _info(job: dict):
    return BY_KIND.get(job.get("kind") or "") or KINDS[0]


def job_phase(job: dict) -> str:
    """The job's phase from its conditions, in the kind's order (``JobKindInfo.conditions``). The Kubeflow
    training operator (v1.9.0, pkg/util/status.go ``filterOutCondition`` and pkg/controller.v1/common/job.go)
    writes Created, Running, Restarting, Succeeded, Failed, Suspended: Restarting replaces Running (and back);
    Succeeded and Failed set Running false; suspending sets Suspended true and Running false. So: Succeeded,
    then Failed, then Suspended (or ``runPolicy.suspend`` set before the operator saw it), then Restarting,
    then Running. A TrainJob (Trainer v2.3.0) has Complete, Failed and Suspended, and is Running while a
    Job of its JobSet is active. Else Pending (created or queued)."""
    info = _info(job)
    status = job.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    for ctype, phase in info.conditions:
        if conds.get(ctype) == "True":
            return phase
    spec = job.get("spec") or {}
    if (spec.get("runPolicy") or {}).get("suspend") is True or spec.get("suspend") is True:
        return "Suspended"
    if any(int(j.get("active") or 0) > 0 for j in status.get("jobsStatus") or []):
        return "Running"
    return "Pending"


def restarts_from_pods(job: dict, pods: list[dict]) -> bool:
    """Whether a job whose operator writes no Restarting condition (a TrainJob: Trainer v2.3.0 has Complete,
    Failed and Suspended; its JobSet's Jobs retry failed pods under their backoffLimit) is restarting: a pod of it
    failed (the Job controller keeps a failed pod and makes another) or crashed and waits to run again
    (restartPolicy OnFailure: restarts in place, CrashLoopBackOff), and fewer of its pods run than it asks for.
    When they all run again it is Running, as a training-operator job's Restarting turns back to Running."""
    if _info(job).writes_restarting:
        return False  # the operator says it
    failing = running = 0
    for pod in pods:
        status = pod.get("status") or {}
        restarted = any(int(cs.get("restartCount") or 0) > 0 for cs in status.get("containerStatuses") or [])
        now = pod_status(pod)
        running += now == "Running"
        failing += status.get("phase") == "Failed" or (restarted and now != "Running")
    wanted = sum(n for _, n, _ in pod_templates(job))
    return failing > 0 and running < wanted


def job_suspended(job: dict) -> bool:
    """Whether the job is suspended: its kind's suspend switch when set (``spec.runPolicy.suspend``, a
    TrainJob's ``spec.suspend``: the intent, which ``arena-helm suspend/resume`` set), else the operator's
    ``Suspended`` condition (training-operator v1.9.0 sets it, and sets ``Running`` to False, once it has
    deleted the pods)."""
    suspend = _info(job).suspend_of(job.get("spec") or {})
    if isinstance(suspend, bool):
        return suspend
    conds = {c.get("type"): c.get("status") for c in (job.get("status") or {}).get("conditions") or []}
    return conds.get("Suspended") == "True"


def job_ended(job: dict) -> str:
    """When the job ended: its completionTime, else when its finishing condition (Complete/Failed) became True."""
    status = job.get("status") or {}
    if status.get("completionTime"):
        return status["completionTime"]
    finishing = {c for c, phase in _info(job).conditions if phase in ("Succeeded", "Failed")}
    for c in status.get("conditions") or []:
        if c.get("type") in finishing and c.get("status") == "True":
            return c.get("lastTransitionTime") or ""
    return ""


def job_runtime(job: dict) -> str:
    """The training runtime a TrainJob runs on, ``NAME (KIND)``; empty for the other kinds."""
    key = _info(job).runtime_key
    ref = ((job.get("spec") or {}).get(key) or {}) if key else {}
    if not ref.get("name"):
        return ""
    return f"{ref['name']} ({ref.get('kind') or 'ClusterTrainingRuntime'})"


def pod_templates(job: dict) -> list[tuple[str, int, dict]]:
    """(group name, pod count, pod spec) of each group of identical pods the job asks for: a replica type's
    template (name in lower case), or a TrainJob's ``node`` pods (numNodes x resourcesPerNode; the runtime's
    numNodes is 1 when the job sets none)."""
    spec = job.get("spec") or {}
    key = _info(job).nodes_key
    if key:
        trainer = spec.get(key) or {}
        return [("node", int(trainer.get("numNodes") or 1),
                 {"containers": [{"name": "node", "resources": trainer.get("resourcesPerNode") or {}}]})]
    return [(str(rtype).lower(), int((rspec or {}).get("replicas", 1) or 0),
             ((rspec or {}).get("template") or {}).get("spec") or {})
            for rtype, rspec in replica_specs(job).items()]


def _node_pods(job: dict) -> list[tuple[int, list[dict]]]:
    """(pod count, containers) of each group of identical pods the job asks for."""
    return [(n, pod_spec.get("containers") or []) for _, n, pod_spec in pod_templates(job)]


def replica_specs(job: dict) -> dict[str, dict]:
    spec = job.get("spec") or {}
    for key in REPLICA_KEYS:
        if key in spec:
            return spec[key] or {}
    return {}


def job_requested_gpus(job: dict) -> int:
    """replicas x per-pod GPUs, summed over every replica type (a TrainJob: numNodes x per-node GPUs)."""
    return sum(n * container_gpus(containers) for n, containers in _node_pods(job))


def job_requests(job: dict, resource: str) -> float:
    return sum(n * container_requests(containers, resource) for n, containers in _node_pods(job))


def job_priority(job: dict) -> str:
    for rspec in replica_specs(job).values():
        p = (((rspec or {}).get("template") or {}).get("spec") or {}).get("priorityClassName")
        if p:
            return p
    return "N/A"


@dataclass(frozen=True)
class Elastic:
    """An elastic job's worker count (``JobKindInfo.elastic_key``/``scale_type``): its bounds, the count its spec
    asks for (what scaleout/scalein change) and the operator's count of active pods."""

    min_workers: int
    max_workers: int
    workers: int
    active: int

    def text(self) -> str:
        return f"{self.workers} ({self.active} active), elastic {self.min_workers} to {self.max_workers}"

    def to_json(self) -> dict[str, int]:
        return {"minWorkers": self.min_workers, "maxWorkers": self.max_workers, "workers": self.workers,
                "activeWorkers": self.active}


def elastic_of(job: dict | None) -> Elastic | None:
    """The worker count of an elastic job (its kind's elastic bounds set in its spec), else None."""
    info = BY_KIND.get((job or {}).get("kind") or "")
    spec = (job or {}).get("spec") or {}
    policy = spec.get(info.elastic_key) if info is not None and info.elastic_key else None
    if not isinstance(policy, dict) or policy.get("minReplicas") is None or policy.get("maxReplicas") is None:
        return None
    replicas = ((spec.get(info.replica_key) or {}).get(info.scale_type) or {}).get("replicas")
    status = (((job or {}).get("status") or {}).get("replicaStatuses") or {}).get(info.scale_type) or {}
    return Elastic(int(policy["minReplicas"]), int(policy["maxReplicas"]), int(replicas or 0),
                   int(status.get("active") or 0))


@dataclass
class JobView:
    name: str
    namespace: str
    trainer: str
    status: str
    duration: str
    created: str
    ended: str
    requested_gpus: int
    allocated_gpus: int | None  # None once the job finished (N/A)
    requested_cpu: float
    requested_memory: float
    node: str
    chief_name: str
    priority: str
    instances: list[Instance] = field(default_factory=list)
    release: dict[str, Any] = field(default_factory=dict)
    tensorboard: str = ""
    created_ts: float = 0.0
    reason: str = ""  # why it is in its state, when that needs saying (state_reason)
    runtime: str = ""  # a TrainJob's training runtime, NAME (KIND)
    uid: str = ""  # the job object's metadata.uid (empty without a job object)
    duration_seconds: int = 0  # what ``duration`` says, in whole seconds
    start_ts: int = 0  # when the duration counts from (status.startTime, else creation), Unix seconds
    model_name: str = ""  # the job's modelName label (Arena's --model-name)
    model_version: str = ""  # the job's modelVersion label (Arena sets it after registering the model)
    model_source: str = ""  # the job's modelSource annotation (arena-helm's --model-source)
    failure: Failure | None = None  # of a FAILED or RESTARTING job: its failing container (reasons.failure_of)
    user: str = ""  # the submitting user Arena records (annotation arena.kubeflow.org/username); top's idle summary
    queue: QueueInfo | None = None  # of a job submitted to a Kueue LocalQueue (--queue-name)
    family: Family = Family.TRAINING  # what the row is among the jobs (top job's groups): set by who makes it
    elastic: Elastic | None = None  # of an elastic job: its worker count and bounds

    @property
    def finished(self) -> bool:
        return self.status in ("SUCCEEDED", "FAILED")

    def to_json(self) -> dict[str, Any]:
        """Arena's TrainingJobInfo keys first (kubeflow/arena pkg/apis/types/training.go), valued as its
        BuildJobInfo (pkg/training/get_advanced.go): ``duration`` "<seconds>s" since the job started,
        ``creationTimestamp`` the start in Unix seconds (so that start + duration is the end, as Arena's
        ``get`` computes EndTime), model keys from the job's labels (pkg/apis/arenaclient/model_client.go
        ``searchModelVersionByJobLabels``). Then arena-helm's own keys."""
        return {
            "uuid": self.uid,  # the job object's UID (pkg/training/trainer_tensorflow.go Uid())
            "name": self.name,
            "namespace": self.namespace,
            "duration": f"{self.duration_seconds}s",  # fmt.Sprintf("%vs", int(job.Duration().Seconds()))
            "status": self.status,  # RUNNING with a pending pod is PENDING (get_advanced.go GetJobRealStatus)
            "trainer": self.trainer,
            "tensorboard": self.tensorboard,
            "chiefName": self.chief_name,
            "instances": [i.to_json() for i in self.instances],
            "priority": self.priority,
            "requestGPUs": self.requested_gpus,
            "allocatedGPUs": self.allocated_gpus if self.allocated_gpus is not None else 0,
            "creationTimestamp": self.start_ts,  # job.StartTime().Unix()
            "modelName": self.model_name,
            "modelVersion": self.model_version,
            # Arena reads it from MLflow's model version; arena-helm's submit keeps --model-source on the job
            "modelSource": self.model_source,
            "createdAt": self.created,
            "endedAt": self.ended,
            "requestCPU": fmt_cpu(self.requested_cpu),
            "requestMemory": fmt_mem(self.requested_memory),
            "release": self.release,
            **({"runtime": self.runtime} if self.runtime else {}),
            **({"queue": self.queue.to_json()} if self.queue else {}),
            **({"elastic": self.elastic.to_json()} if self.elastic else {}),
        }


# Arena's model labels of a training job: ``--model-name`` sets ``modelName`` (pkg/argsbuilder/submit.go
# ``setModelName``); after registering the model in MLflow, submit adds ``modelVersion``
# (pkg/commands/training/submit_*.go, ``kubectl.AddTrainingJobLabel``).
MODEL_NAME_LABEL = "modelName"
MODEL_VERSION_LABEL = "modelVersion"
MODEL_SOURCE_ANNOTATION = "modelSource"  # written by arena-helm's submit --model-source (values.arena_metadata)
USER_NAME_ANNOTATION = "arena.kubeflow.org/username"  # Arena's submitting user, on the job and its pods (values.py)
# Arena's YAML (gopkg.in/yaml.v2) names the fields without a yaml tag by their lowercased Go name.
ARENA_YAML_ALIASES = {"modelName": "modelname", "modelVersion": "modelversion", "modelSource": "modelsource"}


def arena_yaml_form(data: dict[str, Any]) -> dict[str, Any]:
    """A job's JSON dict for ``-o yaml``: Arena's YAML spellings of the model keys added after each camelCase
    one (TrainingJobInfo's ModelName, ModelVersion, ModelSource have json tags only)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key in ARENA_YAML_ALIASES:
            out[ARENA_YAML_ALIASES[key]] = value
    return out


def release_info(release: dict | None) -> dict[str, Any]:
    """``helm list -o json`` item -> revision, chart, chart version, status."""
    if not release:
        return {}
    chart = release.get("chart", "")
    name, _, version = chart.rpartition("-")
    return {"name": release.get("name"), "revision": int(release.get("revision", 0) or 0),
            "chart": name or chart, "chartVersion": version, "status": release.get("status", ""),
            "updated": release.get("updated", "")}


def chart_kind(release: dict) -> str | None:
    """The job kind a release's chart makes, or None when it is not one of our job charts."""
    info = BY_CHART.get(release_info(release).get("chart", ""))
    return info.kind if info else None


def no_instances(v: JobView) -> str:
    """Why a job has no pods, as ``get``'s Instances line and ``logs`` say it: ``none (why)`` or ``none yet
    (why)``."""
    if v.status in ("JOB-MISSING", "RELEASE-FAILED"):
        return "none (there is no job object)"
    if v.status == "SUSPENDED":
        return f"none (the job is suspended; arena-helm resume {v.name} recreates them)"
    if v.status == "QUEUED":
        return "none yet (Kueue creates them when it admits the job)"
    if v.finished:
        return "none (the job's pods are gone)"
    return "none yet (the operator has not created the pods)"


def job_view(*, release: dict | None, job: dict | None, pods: list[dict], now: dt.datetime,
             kind: str | None = None, tensorboard: str = "") -> JobView:
    """Join a release, its job object and its pods. Either of release and job may be missing."""
    rinfo = release_info(release)
    meta = (job or {}).get("metadata") or {}
    name = meta.get("name") or rinfo.get("name") or ""
    namespace = meta.get("namespace") or (release or {}).get("namespace", "")
    info = BY_KIND.get((job or {}).get("kind") or kind or "")
    trainer = info.key if info else "unknown"
    instances = chief_first([instance_of(p, now) for p in pods], pods, info.kind if info else None)
    created = parse_time(meta.get("creationTimestamp"))
    status_obj = (job or {}).get("status") or {}
    started = parse_time(status_obj.get("startTime"))
    completed = parse_time(job_ended(job) if job else None)
    if job is None:
        status = "RELEASE-FAILED" if rinfo.get("status") in ("failed", "pending-install") else "JOB-MISSING"
    else:
        phase = job_phase(job)
        status = phase.upper()
        if phase in ("Running", "Pending") and restarts_from_pods(job, pods):
            status = "RESTARTING"
        elif phase == "Running" and any(p.status.startswith(("Pending", "Init:")) or p.status in (
                "ContainerCreating", "ImagePullBackOff", "ErrImagePull") for p in instances):
            status = "PENDING"
        if phase not in ("Succeeded", "Failed") and job_suspended(job):
            # Kueue's webhook suspends a job of a LocalQueue at creation and unsuspends it on admission
            status = "QUEUED" if queue_info(job) else "SUSPENDED"
        if rinfo.get("status") == "failed":
            status = "RELEASE-FAILED"
    finished = status in ("SUCCEEDED", "FAILED")
    if completed and (started or created):
        seconds = (completed - (started or created)).total_seconds()
    elif started:
        seconds = (now - started).total_seconds()
    elif created:
        seconds = (now - created).total_seconds()
    else:
        seconds = None
    base = started or created
    chief = next((i for i in instances if i.is_chief), instances[0] if instances else None)
    labels = meta.get("labels") or {}
    allocated = None if finished else sum(pod_gpus(p) for p in pods if pod_allocates(p))
    queue = queue_info(job, pending=status == "QUEUED")
    reason = state_reason(status, job=job, kind=(job or {}).get("kind") or kind or "job", name=name,
                          namespace=namespace, queue=queue)
    failure = None
    if status in ("FAILED", "RESTARTING"):  # the failing container of its pods, the chief's first
        order = {inst.name: n for n, inst in enumerate(instances)}
        failure = failure_of(sorted(pods, key=lambda p: order.get(p["metadata"]["name"], len(order))))
    return JobView(
        name=name,
        namespace=namespace,
        trainer=trainer,
        status=status,
        duration=short_duration(seconds),
        created=meta.get("creationTimestamp", ""),
        ended=job_ended(job) if job else "",
        requested_gpus=job_requested_gpus(job) if job else 0,
        allocated_gpus=allocated,
        requested_cpu=job_requests(job, "cpu") if job else 0.0,
        requested_memory=job_requests(job, "memory") if job else 0.0,
        node=chief.node if chief else "N/A",
        chief_name=chief.name if chief else "",
        priority=job_priority(job) if job else "N/A",
        instances=instances,
        release=rinfo,
        tensorboard=tensorboard,
        created_ts=created.timestamp() if created else 0.0,
        reason=reason,
        runtime=job_runtime(job) if job else "",
        uid=meta.get("uid") or "",
        duration_seconds=max(int(seconds), 0) if seconds is not None else 0,
        start_ts=int(base.timestamp()) if base else 0,
        model_name=labels.get(MODEL_NAME_LABEL, ""),
        model_version=labels.get(MODEL_VERSION_LABEL, ""),
        model_source=(meta.get("annotations") or {}).get(MODEL_SOURCE_ANNOTATION, ""),
        failure=failure,
        user=(meta.get("annotations") or {}).get(USER_NAME_ANNOTATION, ""),
        queue=queue,
        family=Family.TRAINING,
        elastic=elastic_of(job),
    )
