"""Pure pieces of suspend/resume, attach and data list: the SUSPENDED state, the exec status channel, the
handshake error, the claims a job mounts."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from arena_helm.attach import exit_code
from arena_helm.data import claim_view, claims_of_job
from arena_helm.errors import ClusterError, ForbiddenError, NotFoundError
from arena_helm.kube import exec_handshake_error as _handshake_error
from arena_helm.views import job_suspended, job_view

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def tfjob(suspend=None, conditions=()):
    rp = {} if suspend is None else {"suspend": suspend}
    return {"kind": "TFJob", "metadata": {"name": "j", "namespace": "n", "creationTimestamp": "2026-01-02T03:00:00Z"},
            "spec": {"runPolicy": rp, "tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
                "containers": [{"name": "tensorflow"}],
                "volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "data"}}, {"name": "b", "emptyDir": {}}],
            }}}}},
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]}}


@pytest.mark.parametrize(("suspend", "conditions", "expected"), [
    (True, [("Created", "True")], True),                               # the intent, before the operator acts
    (False, [("Suspended", "True")], False),                           # resumed; the operator has not caught up
    (None, [("Suspended", "True"), ("Running", "False")], True),       # set by someone else (e.g. Kueue)
    (None, [("Suspended", "False"), ("Running", "True")], False),
    (None, [], False),
])
def test_job_suspended(suspend, conditions, expected):
    assert job_suspended(tfjob(suspend, conditions)) is expected


def test_a_finished_job_is_never_shown_suspended():
    assert job_view(release=None, job=tfjob(True, [("Running", "True")]), pods=[], now=NOW).status == "SUSPENDED"
    assert job_view(release=None, job=tfjob(True, [("Succeeded", "True")]), pods=[], now=NOW).status == "SUCCEEDED"


def test_exit_code_from_the_status_channel():
    assert exit_code(b'{"metadata":{},"status":"Success"}', "p") == 0
    failure = {"status": "Failure", "reason": "NonZeroExitCode", "message": "command terminated ...",
               "details": {"causes": [{"reason": "ExitCode", "message": "42"}]}}
    assert exit_code(json.dumps(failure).encode(), "p") == 42
    with pytest.raises(ClusterError, match=r"^exec in pod p: Internal error occurred: boom$"):
        exit_code(b'{"status":"Failure","reason":"InternalError","message":"Internal error occurred:\\n boom"}', "p")
    with pytest.raises(ClusterError, match="closed without an exit status"):
        exit_code(b"", "p")
    with pytest.raises(ClusterError, match="^exec in pod p: container not found$"):
        exit_code(b"container not found\n", "p")


def test_handshake_errors_keep_the_api_servers_message():
    class Exc(Exception):
        def __init__(self, reason):
            self.reason = reason

    body = '{"kind":"Status","message":"pods \\"x\\" is forbidden: no","code":403}'
    err = _handshake_error(Exc(f"Handshake status 403 Forbidden -+-+- {{'a': 'b'}} -+-+- {body}"), "x")
    assert isinstance(err, ForbiddenError) and str(err) == 'exec in pod x: forbidden: pods "x" is forbidden: no'
    err = _handshake_error(Exc("Handshake status 404 Not Found -+-+- {} -+-+- not json"), "x")
    assert isinstance(err, NotFoundError) and str(err) == "exec in pod x: Handshake status 404 Not Found -+-+- {} -+-+- not json"


def test_claims_of_a_job_and_a_claim_view():
    assert claims_of_job(tfjob()) == {"data"}
    pvc = {"metadata": {"name": "data", "namespace": "n", "creationTimestamp": "2026-01-02T02:04:05Z",
                        "annotations": {"description": "d"}},
           "spec": {"accessModes": ["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"], "storageClassName": "s"},
           "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
    c = claim_view(pvc, ["tfjob/j"], NOW)
    assert (c.status, c.capacity, c.access_modes, c.storage_class, c.age, c.description, c.used_by) == (
        "Bound", "1Gi", ["RWO", "RWOP"], "s", "60m", "d", ["tfjob/j"])


def test_a_trainjob_is_suspended_through_its_own_spec_suspend():
    from arena_helm.kinds import BY_KIND

    assert BY_KIND["TrainJob"].suspend_patch(True) == {"suspend": True}
    assert BY_KIND["PyTorchJob"].suspend_patch(False) == {"runPolicy": {"suspend": False}}
    assert BY_KIND["TrainJob"].suspend_of({"suspend": True}) is True
    assert BY_KIND["MPIJob"].suspend_of({"runPolicy": {"suspend": False}}) is False
    assert BY_KIND["MPIJob"].suspend_of({"runPolicy": None}) is None
    assert job_suspended({"kind": "TrainJob", "spec": {"suspend": True}}) is True
    assert job_suspended({"kind": "TrainJob", "spec": {"suspend": False},
                          "status": {"conditions": [{"type": "Suspended", "status": "True"}]}}) is False
    assert job_suspended({"kind": "TFJob", "spec": {"suspend": True}}) is False  # not a TFJob's field
