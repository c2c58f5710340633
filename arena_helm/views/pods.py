"""Which pod and container of a job a command acts on (``logs``, ``attach``): one picker, pure.

The pod is ``-i/--instance`` when given, else the chief (chief, master or launcher; worker 0 of a job
without one), as Arena's ``logs`` and ``attach`` pick it. The container is ``-c/--container`` when given,
else the pod's first; ``logs`` may also read an init container, and reads the running one of a pod that is
still initialising.
"""

from __future__ import annotations

import datetime as dt

from ..core.errors import NotFoundError, UsageError
from .jobs import chief_first, instance_of


def pick_pod(pods: list[dict], job: str, namespace: str, instance: str | None, now: dt.datetime,
             kind: str | None = None) -> dict:
    """The pod named ``instance`` among the job's ``pods``, else its chief (the first pod of the first of the
    job ``kind``'s main roles it has)."""
    if instance:
        pod = next((p for p in pods if p["metadata"]["name"] == instance), None)
        if pod is None:
            names = ", ".join(sorted(p["metadata"]["name"] for p in pods)) or "none yet"
            raise NotFoundError(f"-i/--instance {instance}: job {job} has no such instance (its pods: {names})")
        return pod
    ranked = chief_first([instance_of(p, now) for p in pods], pods, kind)
    if not ranked:
        raise NotFoundError(f"job {job} has no pods yet (see arena-helm get {job} -n {namespace})")
    return next(p for p in pods if p["metadata"]["name"] == ranked[0].name)


def pick_container(pod: dict, container: str | None, *, init: bool = False) -> str:
    """``container`` if the pod has it (an init container too when ``init``), else the pod's first container."""
    spec = pod.get("spec") or {}
    containers = [x["name"] for x in spec.get("containers") or []]
    inits = [x["name"] for x in spec.get("initContainers") or []] if init else []
    if container and container not in inits + containers:
        raise UsageError(f"-c/--container {container}: pod {pod['metadata']['name']} has "
                         f"{', '.join(inits + containers)}")
    return container or containers[0]


def log_container(pod: dict, container: str | None) -> tuple[str, bool]:
    """The container whose log ``logs`` reads: ``container`` (an init container too), else the init container
    a pod still initialising runs, else the pod's first; and whether it is that initialising one."""
    if container:
        return pick_container(pod, container, init=True), False
    init = initialising_container(pod)
    return (init, True) if init is not None else (pick_container(pod, None), False)


def initialising_container(pod: dict) -> str | None:
    """The init container a scheduled pod still runs (its first), or None once its init containers are done."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    inits = [x["name"] for x in spec.get("initContainers") or []]
    if not inits or status.get("phase") != "Pending" or not spec.get("nodeName"):
        return None
    running = any(not (s.get("state") or {}).get("terminated") for s in status.get("initContainerStatuses") or [{}])
    return inits[0] if running else None
