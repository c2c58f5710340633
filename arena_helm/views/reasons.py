"""Why a job waits or stopped, in one line: the scheduler's verdict on its pods, image pulls, a missing PVC
(``pending_reason``), and the reason of a state that does not explain itself: failed, restarting, suspended
or held by Kueue, a missing job object, a failed release (``state_reason``), and why a job failed or restarts in
its pods' own words: the failing container's exit code and reason (``failure_of``). Pure (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from .queueing import QueueInfo


def job_condition(job: dict | None, ctype: str) -> dict:
    """The job's condition of that type when it is true, else {}."""
    for c in ((job or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return c
    return {}


def state_reason(status: str, *, job: dict | None, kind: str, name: str, namespace: str,
                 release_description: str = "", queue: QueueInfo | None = None) -> str:
    """One line explaining a state that is not self-explanatory (empty for the others). Pure."""
    if status == "JOB-MISSING":
        return (f"the {kind} object is gone (deleted outside arena-helm) but its release {name} remains: remove "
                f"the release with arena-helm delete {name} -n {namespace}")
    if status == "RELEASE-FAILED":
        return f"helm: {release_description}" if release_description else "helm marked the release failed"
    if status == "FAILED":
        c = job_condition(job, "Failed")
        return ": ".join(x for x in (c.get("reason"), " ".join(str(c.get("message") or "").split())) if x)
    if status == "RESTARTING":
        c = job_condition(job, "Restarting")
        return " ".join(str(c.get("message") or c.get("reason") or "the operator is restarting failed replicas").split())
    if status == "QUEUED":
        text = f"held by Kueue: waiting in queue {queue.local_queue}" if queue else "held by Kueue"
        if queue is not None and queue.workload:
            text += f" (workload {queue.workload}: {queue.message})"
        return text
    if status == "SUSPENDED":
        c = job_condition(job, "Suspended")
        msg = " ".join(str(c.get("message") or "").split())
        spec = (job or {}).get("spec") or {}  # where the job keeps its switch: a TrainJob's spec.suspend
        switch = f"spec.{'runPolicy.' if 'suspend' in (spec.get('runPolicy') or {}) else ''}suspend is true"
        return f"{msg} ({switch})" if msg else switch
    return ""


# What the kube-scheduler's FailedScheduling message says per node, and how ``get`` words it
# (kubernetes pkg/scheduler/framework/plugins: noderesources/fit.go, nodeaffinity/node_affinity.go,
# tainttoleration/taint_toleration.go, volumebinding/volume_binding.go; 1.20's words and 1.37's).
SCHEDULER_VERDICTS = (
    ("Insufficient ", "gpu", "not enough GPUs"),
    ("didn't match node selector", "", "no node matches its node selector or affinity"),
    ("didn't match Pod's node affinity", "", "no node matches its node selector or affinity"),  # 1.37: "/selector"
    ("had taint", "", "a node taint it does not tolerate"),  # 1.20
    ("had untolerated taint", "", "a node taint it does not tolerate"),  # 1.25+
    ("persistentvolumeclaim", "", "a PVC is missing or unbound"),
)
# Since 1.24 the message goes on with what preemption found (pkg/scheduler/framework/preemption):
# "... preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
PREEMPTION_PART = ". preemption: "


def scheduler_verdict(msg: str) -> str:
    """'not enough GPUs', 'no node matches its node selector', ... for each reason the message gives."""
    found = []
    for part in msg.split(PREEMPTION_PART, 1)[0].split(":", 1)[-1].split(","):
        for marker, also, words in SCHEDULER_VERDICTS:
            if marker in part and also in part.lower() and words not in found:
                found.append(words)
    return "; ".join(found)


def pod_status(pod: dict) -> str:
    """kubectl's STATUS column, close enough: a waiting reason (ImagePullBackOff, Init:...) or the phase."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    if meta.get("deletionTimestamp"):
        return "Terminating"
    for cs in status.get("initContainerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason") not in (None, "PodInitializing"):
            return f"Init:{waiting['reason']}"
        if (cs.get("state") or {}).get("running"):
            return "Init:Running"
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason") and waiting["reason"] != "ContainerCreating":
            return waiting["reason"]
    return status.get("phase") or "Pending"


def pending_reason(pods: list[dict], events: list[dict]) -> str:
    """One line saying why a job waits: unschedulable (e.g. not enough GPUs), image pulls, a missing PVC."""
    for pod in pods:
        status = pod.get("status") or {}
        name = pod["metadata"]["name"]
        if status.get("nominatedNodeName") and not (pod.get("spec") or {}).get("nodeName"):
            return f"pod {name} is preempting lower-priority pods on node {status['nominatedNodeName']}"
        for cond in status.get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                msg = cond.get("message") or cond.get("reason") or "unschedulable"
                verdict = scheduler_verdict(msg)
                if verdict:
                    return f"pod {name} cannot be scheduled: {verdict} ({msg})"
                return f"pod {name} cannot be scheduled: {msg}"
    for pod in pods:
        status = pod_status(pod)
        if status in ("ImagePullBackOff", "ErrImagePull", "Init:ImagePullBackOff", "Init:ErrImagePull",
                      "InvalidImageName"):
            image = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("image", "?")
            return f"pod {pod['metadata']['name']} cannot pull its image {image} ({status})"
    for ev in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "", reverse=True):
        if ev.get("type") == "Warning":
            msg = ev.get("message", "")
            obj = (ev.get("involvedObject") or {}).get("name", "")
            if "persistentvolumeclaim" in msg.lower():
                return f"{obj}: a PVC is missing: {msg}"
            return f"{obj}: {ev.get('reason', '')}: {msg}"
    return ""


# ---- why a job failed or restarts: its pods' own word ----------------------------------------------------------
@dataclass
class Failure:
    """The first failing container of a job's pods (chief first), from the pod's status: an eviction, a
    container that exited non-zero (now, or before its last restart), or one that cannot start."""

    pod: str
    container: str = ""
    reason: str = ""  # OOMKilled, Error, ContainerCannotRun, Evicted, ImagePullBackOff, ...
    exit_code: int | None = None
    message: str = ""
    memory_limit: str = ""  # of the container, for OOMKilled
    image: str = ""  # of the container, for a pull that fails
    restarts: int = 0
    previous: bool = False  # what failed is the container before its last restart (its log: previous=true)

    def text(self) -> str:
        where = f"pod {self.pod}" + (f" container {self.container}" if self.container else "")
        if self.reason == "Evicted":
            return f"{where}: evicted by its node: {self.message}" if self.message else f"{where}: evicted by its node"
        if self.exit_code is None:  # cannot start
            text = f"{where}: {self.reason}" + (f" of image {self.image}" if self.image else "")
            return text + (f": {self.message}" if self.message else "")
        text = f"{where}: {self.reason or 'exited'} (exit code {self.exit_code})"
        if self.reason == "OOMKilled":
            text += f", memory limit {self.memory_limit}" if self.memory_limit else ", no memory limit (the node ran out)"
        if self.restarts:
            text += f", restarted {self.restarts} time{'s' if self.restarts != 1 else ''}"
        return text + (f": {self.message}" if self.message else "")

    def to_json(self) -> dict:
        return {"instance": self.pod, "container": self.container, "reason": self.reason, "exitCode": self.exit_code,
                "message": self.message, "memoryLimit": self.memory_limit, "image": self.image,
                "restarts": self.restarts}


CANNOT_START = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError",
                "CreateContainerError", "RunContainerError")


def failure_of(pods: list[dict]) -> Failure | None:
    """Why the job's pods failed, from the first pod (in the given order) that says so; None if none does."""
    for pod in pods:
        found = _pod_failure(pod)
        if found is not None:
            return found
    return None


def _pod_failure(pod: dict) -> Failure | None:
    name = pod["metadata"]["name"]
    status = pod.get("status") or {}
    if status.get("reason") == "Evicted":
        return Failure(name, reason="Evicted", message=" ".join(str(status.get("message") or "").split()))
    spec = {c.get("name"): c for c in ((pod.get("spec") or {}).get("initContainers") or [])
            + ((pod.get("spec") or {}).get("containers") or [])}
    statuses = (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])
    found = None
    for cs in statuses:
        cname = cs.get("name", "")
        restarts = int(cs.get("restartCount") or 0)
        state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated") or {}
        ended = state.get("terminated") or {}
        waiting = state.get("waiting") or {}
        if ended and int(ended.get("exitCode") or 0) != 0:
            found = _ended(name, cname, ended, spec.get(cname) or {}, restarts, previous=False)
        elif last and int(last.get("exitCode") or 0) != 0:  # restarted (CrashLoopBackOff, or running again)
            found = _ended(name, cname, last, spec.get(cname) or {}, restarts, previous=True)
        elif waiting.get("reason") in CANNOT_START:
            found = Failure(name, cname, waiting["reason"], message=" ".join(str(waiting.get("message") or "").split()),
                            image=(spec.get(cname) or {}).get("image", ""))
        if found is not None:
            return found
    return None


def _ended(pod: str, container: str, ended: dict, spec: dict, restarts: int, *, previous: bool) -> Failure:
    limits = (spec.get("resources") or {}).get("limits") or {}
    reason = ended.get("reason") or ""
    return Failure(pod, container, reason, int(ended.get("exitCode") or 0),
                   " ".join(str(ended.get("message") or "").split()),
                   memory_limit=str(limits.get("memory", "")) if reason == "OOMKilled" else "",
                   restarts=restarts, previous=previous)
