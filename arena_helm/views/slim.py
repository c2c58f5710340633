"""Objects of a LIST cut down to what ``list``/``top``/``prune`` read, as each page arrives. Pure.

A TFJob or a pod as the API returns it carries managedFields, the whole pod template (commands, env,
volumes, images), annotations such as kubectl's last-applied-configuration and container statuses with
image IDs: several KB each, none of which a job row shows. Keeping only the fields below bounds the
memory of ``list -A`` to a few hundred bytes per object plus one page. ``get`` of one job reads it whole.
"""

from __future__ import annotations

import sys

from ..core.jobkinds import KINDS
from .jobs import MODEL_NAME_LABEL, MODEL_VERSION_LABEL, POD_LABELS, REPLICA_KEYS, USER_NAME_ANNOTATION
from .queueing import QUEUE_LABEL
from .release_index import CHART_LABEL, RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION

NODES_KEYS = tuple(dict.fromkeys(k.nodes_key for k in KINDS if k.nodes_key))
RUNTIME_KEYS = tuple(dict.fromkeys(k.runtime_key for k in KINDS if k.runtime_key))

_intern = sys.intern
_KEEP_ANNOTATIONS = (RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION, "modelSource",  # views' model source
                     USER_NAME_ANNOTATION)  # the submitting user (top's idle summary, by user)
# the labels the views read: of a job its chart, Kueue queue and Arena's model labels; of a pod its job, role
# and index (a job's or pod's other labels, often a dozen, are left out)
JOB_LABELS = frozenset((CHART_LABEL, QUEUE_LABEL, MODEL_NAME_LABEL, MODEL_VERSION_LABEL))


def _labels(labels: dict | None, keep: frozenset[str]) -> dict:
    # keys and values repeat across thousands of objects: share one string object for each
    return {_intern(k): _intern(v) for k, v in (labels or {}).items() if k in keep}


def _shared(value):
    """A small block (runPolicy, a condition) with its strings shared: the same few keys and values (policy
    names, condition types, a scheduler's message) recur in every object."""
    if isinstance(value, str):
        return _intern(value)
    if isinstance(value, dict):
        return {_intern(k): _shared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v) for v in value]
    return value


def _meta(meta: dict, *, job: bool) -> dict:
    out = {
        "name": meta.get("name", ""),
        "namespace": _intern(meta.get("namespace", "")),
        "labels": _labels(meta.get("labels"), JOB_LABELS if job else POD_LABELS),
        "creationTimestamp": meta.get("creationTimestamp", ""),
    }
    if job and meta.get("uid"):  # Arena's ``uuid`` of a job
        out["uid"] = meta["uid"]
    if job and meta.get("resourceVersion"):  # the order of jobs made in the same second
        out["resourceVersion"] = meta["resourceVersion"]
    if meta.get("deletionTimestamp"):
        out["deletionTimestamp"] = meta["deletionTimestamp"]
    given = meta.get("annotations") or {}
    ann = {k: _intern(given[k]) for k in (_KEEP_ANNOTATIONS if job else (USER_NAME_ANNOTATION,)) if k in given}
    if ann:
        out["annotations"] = ann
    return out


def _containers(containers: list | None) -> list[dict]:
    out = []
    for c in containers or []:
        kept = {"name": _intern(c.get("name", ""))}
        if c.get("image"):  # what a failing pull names
            kept["image"] = _intern(c["image"])
        res = c.get("resources")
        if res:
            kept["resources"] = {k: _shared(res[k]) for k in ("requests", "limits") if res.get(k)}
        out.append(kept)
    return out


def slim_job(job: dict) -> dict:
    """A TFJob/PyTorchJob/MPIJob: metadata (name, namespace, labels, helm's release annotations, times),
    the whole status (conditions, replica statuses, start/completion times) and of the spec only what
    requests resources: replicas, priority class and the containers' resources, and runPolicy."""
    spec = job.get("spec") or {}
    out_spec: dict = {}
    for key in REPLICA_KEYS:
        if key not in spec:
            continue
        replicas = {}
        for rtype, rspec in (spec.get(key) or {}).items():
            rspec = rspec or {}
            pod_spec = ((rspec.get("template") or {}).get("spec")) or {}
            kept_pod = {"containers": _containers(pod_spec.get("containers"))}
            if pod_spec.get("priorityClassName"):
                kept_pod["priorityClassName"] = pod_spec["priorityClassName"]
            kept = {"template": {"spec": kept_pod}}
            if "replicas" in rspec:
                kept["replicas"] = rspec["replicas"]
            replicas[_intern(rtype)] = kept
        out_spec[key] = replicas
    for key in ("runPolicy", "slotsPerWorker", "suspend", *RUNTIME_KEYS):  # small: what says a job is held
        if key in spec:
            out_spec[key] = _shared(spec[key])
    for key in NODES_KEYS:  # a TrainJob's trainer block: what it requests
        if key in spec:
            out_spec[key] = {k: v for k, v in (spec[key] or {}).items()
                             if k in ("numNodes", "numProcPerNode", "resourcesPerNode")}
    out = {"metadata": _meta(job.get("metadata") or {}, job=True), "spec": out_spec,
           "status": job.get("status") or {}}
    for key in ("apiVersion", "kind"):
        if key in job:
            out[key] = _intern(job[key])
    return out


def _state(state: dict) -> dict:
    """A container state: reason, exit code, times; the message only where it says why it failed (a non-zero
    exit, a container that cannot start: what ``reasons.failure_of`` reads)."""
    slim_state = {}
    for phase, detail in state.items():
        detail = detail or {}
        kept = {k: detail[k] for k in ("reason", "exitCode", "startedAt", "finishedAt") if k in detail}
        if detail.get("message") and (detail.get("exitCode") or phase == "waiting"):
            kept["message"] = _intern(detail["message"])
        slim_state[phase] = kept
    return slim_state


def _container_status(cs: dict) -> dict:
    kept = {"name": _intern(cs.get("name", ""))}
    state = cs.get("state") or {}
    if state:
        kept["state"] = _state(state)
    last = (cs.get("lastState") or {}).get("terminated") or {}
    if last.get("exitCode"):  # a restart after a failure: why it failed
        kept["lastState"] = _state({"terminated": last})
    for key in ("ready", "restartCount"):
        if key in cs:
            kept[key] = cs[key]
    return kept


def slim_pod(pod: dict) -> dict:
    """A pod: metadata (name, namespace, labels, times), node, containers' resources and names, and the
    status fields the STATUS column, the GPU counts and Arena's instance keys read (phase, host and pod IP,
    start time, conditions, container states)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    out_spec: dict = {"containers": _containers(spec.get("containers"))}
    if spec.get("nodeName"):
        out_spec["nodeName"] = _intern(spec["nodeName"])
    if spec.get("initContainers"):
        out_spec["initContainers"] = _containers(spec["initContainers"])
    out_status: dict = {}
    for key in ("phase", "hostIP", "reason"):
        if status.get(key):
            out_status[key] = _intern(status[key])
    for key in ("podIP", "startTime"):  # Arena's instance ``ip`` and the start of its ``age``
        if status.get(key):
            out_status[key] = status[key]
    if status.get("reason") == "Evicted" and status.get("message"):  # the node's reason
        out_status["message"] = _intern(status["message"])
    if status.get("conditions"):
        out_status["conditions"] = [{k: _shared(c[k]) for k in ("type", "status", "reason", "message") if k in c}
                                    for c in status["conditions"]]
    for key in ("initContainerStatuses", "containerStatuses"):
        if status.get(key):
            out_status[key] = [_container_status(cs) for cs in status[key]]
    return {"metadata": _meta(pod.get("metadata") or {}, job=False), "spec": out_spec,
            "status": out_status}


def slim_pod_requests(pod: dict) -> dict:
    """What a pod takes of its node, for the fit check: its node, the resources of its containers and init
    containers (a sidecar's restartPolicy), its overhead and its phase."""
    spec = pod.get("spec") or {}
    out_spec: dict = {"containers": [{"resources": c["resources"]} for c in spec.get("containers") or []
                                     if c.get("resources")]}
    if spec.get("nodeName"):
        out_spec["nodeName"] = _intern(spec["nodeName"])
    if spec.get("initContainers"):
        out_spec["initContainers"] = [{k: c[k] for k in ("resources", "restartPolicy") if c.get(k)}
                                      for c in spec["initContainers"]]
    if spec.get("overhead"):
        out_spec["overhead"] = spec["overhead"]
    phase = (pod.get("status") or {}).get("phase")
    return {"spec": out_spec, "status": {"phase": _intern(phase)} if phase else {}}
