"""Checks made before a submit only when a flag names a cluster object that the job's own release cannot
vouch for. Each costs one API request and runs only when its flag is given.

``--priority``: the Priority admission plugin refuses every pod naming a PriorityClass that does not
exist, but the job object itself (a TFJob, ...) is admitted, so without this check the release would be
installed and the operator's pods refused later, one "FailedCreatePod" event at a time.

``--queue-name``: Kueue holds a job (or a workspace's Job) whose LocalQueue does not exist suspended for ever,
with no event the user would read; the namespace's LocalQueues are readable with the documented Role.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import ArenaHelmError, ForbiddenError, NotFoundError, UsageError


def _missing(read: Callable[[], object], forbidden: Callable[[], None] = lambda: None) -> bool:
    """Whether the object ``read()`` reads is known not to exist (None, or the API's NotFound); a read that
    fails otherwise (forbidden: the object is cluster-wide or the Role lacks it, and ``forbidden()`` is called;
    unreachable: the install says so) tells nothing, and the admission (or the controller) still decides."""
    try:
        return read() is None
    except NotFoundError:
        return True
    except ForbiddenError:
        forbidden()
        return False
    except ArenaHelmError:
        return False


def check_priority_class(kube, name: str | None, notify: Callable[[str], None] | None = None) -> None:
    """UsageError if the cluster has no PriorityClass ``name``. A user who may not read PriorityClasses (they
    are cluster-wide: the documented Role cannot) is not stopped, the admission still decides; ``notify`` (when
    given) says that the name went unchecked and where a wrong one would show."""
    def unchecked() -> None:
        if notify:
            notify(f"--priority {name} is not checked: you may not read PriorityClasses (cluster-wide; the "
                   "ClusterRole of docs/rbac/arena-helm-user.yaml can); if the cluster has none of that name, the "
                   "job's pods are refused (arena-helm get says why)")

    if name and _missing(lambda: kube.get_json(f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}",
                                               f"reading PriorityClass {name}"), unchecked):
        raise UsageError(f"--priority {name}: the cluster has no PriorityClass named {name} (kubectl get "
                         "priorityclasses lists them)")


def check_local_queue(kube, namespace: str, name: str | None) -> None:
    """UsageError if ``namespace`` has no Kueue LocalQueue ``name``; a user who may not read LocalQueues is not
    stopped here (Kueue still decides)."""
    if name and _missing(lambda: kube.get_local_queue(namespace, name)):
        raise UsageError(
            f"--queue-name {name}: namespace {namespace} has no Kueue LocalQueue named {name}, so Kueue would hold "
            f"it for ever (kubectl get localqueues -n {namespace} lists them)"
        )
