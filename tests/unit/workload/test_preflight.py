"""The checks before a submit (workload/preflight.py) over a fake API adapter."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import ClusterError, ForbiddenError, NotFoundError, UsageError
from arena_helm.workload.preflight import check_local_queue, check_priority_class


class Kube:
    """``get_json`` and ``get_local_queue`` answer ``found`` (an object, None) or raise it (an error)."""

    def __init__(self, found):
        self.found = found
        self.asked: list[str] = []

    def _answer(self, what: str):
        self.asked.append(what)
        if isinstance(self.found, Exception):
            raise self.found
        return self.found

    def get_json(self, path: str, action: str):
        return self._answer(path)

    def get_local_queue(self, namespace: str, name: str):
        return self._answer(f"{namespace}/{name}")


def test_a_priority_class_is_checked_only_when_named_and_refused_when_missing():
    notes: list[str] = []
    check_priority_class(Kube({"metadata": {"name": "high"}}), "high", notes.append)
    kube = Kube(None)
    check_priority_class(kube, None, notes.append)
    assert kube.asked == [] and notes == []
    for missing in (None, NotFoundError("not found")):
        with pytest.raises(UsageError) as err:
            check_priority_class(Kube(missing), "vip", notes.append)
        assert str(err.value) == ("--priority vip: the cluster has no PriorityClass named vip (kubectl get "
                                  "priorityclasses lists them)")
    assert notes == []


def test_a_priority_class_the_user_may_not_read_goes_on_with_a_note_and_an_unreachable_one_silently():
    notes: list[str] = []
    check_priority_class(Kube(ForbiddenError("reading PriorityClass vip: forbidden")), "vip", notes.append)
    assert notes == ["--priority vip is not checked: you may not read PriorityClasses (cluster-wide; the ClusterRole "
                     "of docs/rbac/arena-helm-user.yaml can); if the cluster has none of that name, the job's pods "
                     "are refused (arena-helm get says why)"]
    check_priority_class(Kube(ClusterError("reading PriorityClass vip: connection refused")), "vip", notes.append)
    assert len(notes) == 1  # the install that follows says what is wrong with the cluster


def test_a_local_queue_that_is_missing_is_refused_and_one_not_readable_is_left_to_kueue():
    with pytest.raises(UsageError, match=r"^--queue-name q: namespace team has no Kueue LocalQueue named q, "):
        check_local_queue(Kube(None), "team", "q")
    check_local_queue(Kube(ForbiddenError("forbidden")), "team", "q")
    check_local_queue(Kube({"metadata": {"name": "q"}}), "team", "q")
