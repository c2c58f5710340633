"""Why a job waits or stopped, in one line: the scheduler's verdict on its pods, image pulls, a missing PVC
(``pending_reason``), and the reason of a state that does not explain itself: failed, restarting, suspended
or held by Kueue, a missing job object, a failed release (``state_reason``). Pure (no I/O)."""

from __future__ import annotations


def job_condition(job: dict | None, ctype: str) -> dict:
    """The job's condition of that type when it is true, else {}."""
    for c in ((job or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return c
    return {}


QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def kueue_workload(job: dict | None, workloads: list[dict]) -> dict | None:
    """The Kueue Workload whose owner is the job (Kueue's jobframework makes one per job), if any."""
    uid = ((job or {}).get("metadata") or {}).get("uid")
    for w in workloads:
        if any(o.get("uid") == uid for o in (w.get("metadata") or {}).get("ownerReferences") or []):
            return w
    return None


def state_reason(status: str, *, job: dict | None, kind: str, name: str, namespace: str,
                 release_description: str = "", workload: dict | None = None) -> str:
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
    if status == "SUSPENDED":
        queue = (((job or {}).get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL)
        if queue:
            text = f"held by Kueue: waiting in queue {queue}"
            if workload is not None:
                wname = (workload.get("metadata") or {}).get("name", "")
                quota = next((c for c in (workload.get("status") or {}).get("conditions") or []
                              if c.get("type") == "QuotaReserved"), None)
                if quota is None or quota.get("status") != "True":
                    why = " ".join(str((quota or {}).get("message") or "no quota reserved yet").split())
                    text += f" (workload {wname}: {why})"
                else:
                    text += f" (workload {wname}: quota reserved, admission pending)"
            return text
        c = job_condition(job, "Suspended")
        msg = " ".join(str(c.get("message") or "").split())
        return f"{msg} (runPolicy.suspend is true)" if msg else "runPolicy.suspend is true"
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


def pending_reason(pods: list[dict], events: list[dict]) -> str:
    """One line saying why a job waits: unschedulable (e.g. not enough GPUs), image pulls, a missing PVC."""
    from .views import pod_status  # views imports this module (a job view's reason)

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
