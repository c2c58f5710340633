"""Bounded waits for what the real controllers and kwok do in the background (no sleeps as synchronisation):
the tests of tests/cluster/ wait for an outcome instead of stepping a stand-in."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
JOB_NAME_LABEL = "training.kubeflow.org/job-name"


def wait_for(fn: Callable[[], T], what: str, timeout: float = 60.0, interval: float = 0.2) -> T:
    """Poll ``fn`` until it returns something truthy, and return that; fail after ``timeout`` seconds, naming
    ``what`` and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout}s (last: {last!r})")
        time.sleep(interval)


def live_pods(core, namespace: str, selector: str) -> list:
    """The pods matching ``selector`` that are not being deleted, by name."""
    pods = core.list_namespaced_pod(namespace, label_selector=selector).items
    return sorted((p for p in pods if not p.metadata.deletion_timestamp), key=lambda p: p.metadata.name)


def wait_pods(core, namespace: str, selector: str, names: list[str] | None = None, count: int | None = None,
              timeout: float = 60.0) -> list[str]:
    """Until the controllers made the pods ``selector`` matches: exactly ``names`` (sorted), or ``count`` of
    them; returns their names."""

    def got():
        have = [p.metadata.name for p in live_pods(core, namespace, selector)]
        if names is not None:
            return have if have == sorted(names) else None
        return have if count is not None and len(have) == count else None

    return wait_for(got, f"pods {selector} in {namespace} ({names or count})", timeout)


def wait_job_pods(core, namespace: str, job: str, names: list[str] | None = None, count: int | None = None,
                  timeout: float = 60.0) -> list[str]:
    """``wait_pods`` for the pods a training-operator or mpi-operator job owns (its job-name label)."""
    return wait_pods(core, namespace, f"{JOB_NAME_LABEL}={job}", names, count, timeout)


def wait_gone(core, namespace: str, selector: str, timeout: float = 60.0) -> None:
    """Until no pod matches ``selector`` (deleted by their controller, confirmed by kwok)."""
    wait_for(lambda: not core.list_namespaced_pod(namespace, label_selector=selector).items,
             f"pods {selector} in {namespace} gone", timeout)


def conditions(job: dict) -> list[tuple[str, str, str, str]]:
    """A job object's conditions as (type, status, reason, message)."""
    return [(c["type"], c["status"], c.get("reason", ""), c.get("message", ""))
            for c in (job.get("status") or {}).get("conditions") or []]


def wait_condition(read: Callable[[], dict], ctype: str, status: str = "True", timeout: float = 60.0) -> dict:
    """Until the object ``read()`` returns has condition ``ctype`` with ``status``; returns the object."""

    def got():
        obj = read()
        return obj if any(c[0] == ctype and c[1] == status for c in conditions(obj)) else None

    return wait_for(got, f"condition {ctype}={status}", timeout)


def create_quota(core, namespace: str, name: str, hard: dict[str, str], timeout: float = 60.0) -> dict[str, str]:
    """A ResourceQuota ``hard`` in ``namespace``, once the real ResourceQuota controller has counted what the
    namespace holds (its status names every resource of ``hard`` with its use: until then the quota admission
    refuses everything the quota covers with "status unknown"); returns that use."""
    core.create_namespaced_resource_quota(namespace, {"metadata": {"name": name}, "spec": {"hard": hard}})

    def counted():
        status = core.read_namespaced_resource_quota(name, namespace).status
        used = (status.used or {}) if status else {}
        return dict(used) if status and dict(status.hard or {}) == hard and set(used) == set(hard) else None

    return wait_for(counted, f"the ResourceQuota controller's count of {namespace}/{name}", timeout)
