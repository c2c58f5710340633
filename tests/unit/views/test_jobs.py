"""arena_helm.views.jobs: a job's phase from the training operator's conditions, and when it is shown SUSPENDED
(the intent in the spec, or the operator's condition; a TrainJob keeps its own ``spec.suspend``)."""

from __future__ import annotations

import datetime as dt

import pytest
from apiobjects import operator_job

from arena_helm.views.jobs import job_phase, job_suspended, job_view, no_instances

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def tfjob(suspend=None, conditions=()):
    rp = {} if suspend is None else {"suspend": suspend}
    return {"kind": "TFJob", "metadata": {"name": "j", "namespace": "n", "creationTimestamp": "2026-01-02T03:00:00Z"},
            "spec": {"runPolicy": rp, "tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
                "containers": [{"name": "tensorflow"}],
                "volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "data"}}, {"name": "b", "emptyDir": {}}],
            }}}}},
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]}}


@pytest.mark.parametrize(("conds", "suspend", "phase"), [
    ([("Created", "True", "", "")], None, "Pending"),
    ([("Created", "True", "", ""), ("Running", "True", "", "")], None, "Running"),
    ([("Created", "True", "", ""), ("Restarting", "True", "", "")], None, "Restarting"),
    ([("Created", "True", "", ""), ("Running", "False", "", ""), ("Suspended", "True", "", "")], True, "Suspended"),
    ([("Created", "True", "", "")], True, "Suspended"),
    ([("Running", "False", "", ""), ("Suspended", "False", "JobResumed", ""), ("Running", "True", "", "")], False,
     "Running"),
    ([("Running", "False", "", ""), ("Failed", "True", "", "")], None, "Failed"),
    ([("Running", "False", "", ""), ("Succeeded", "True", "", "")], None, "Succeeded"),
])
def test_job_phase_follows_the_operators_conditions(conds, suspend, phase):
    assert job_phase(operator_job(*conds, suspend=suspend)) == phase


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


def test_a_trainjob_is_suspended_through_its_own_spec_suspend():
    from arena_helm.core.jobkinds import BY_KIND

    assert BY_KIND["TrainJob"].suspend_patch(True) == {"suspend": True}
    assert BY_KIND["PyTorchJob"].suspend_patch(False) == {"runPolicy": {"suspend": False}}
    assert BY_KIND["TrainJob"].suspend_of({"suspend": True}) is True
    assert BY_KIND["MPIJob"].suspend_of({"runPolicy": {"suspend": False}}) is False
    assert BY_KIND["MPIJob"].suspend_of({"runPolicy": None}) is None
    assert job_suspended({"kind": "TrainJob", "spec": {"suspend": True}}) is True
    assert job_suspended({"kind": "TrainJob", "spec": {"suspend": False},
                          "status": {"conditions": [{"type": "Suspended", "status": "True"}]}}) is False
    assert job_suspended({"kind": "TFJob", "spec": {"suspend": True}}) is False  # not a TFJob's field


@pytest.mark.parametrize(("job", "release", "said"), [
    (tfjob(True, [("Running", "True")]), None, "none (the job is suspended; arena-helm resume j recreates them)"),
    (tfjob(None, [("Failed", "True")]), None, "none (the job's pods are gone)"),
    (tfjob(None, [("Succeeded", "True")]), None, "none (the job's pods are gone)"),
    (tfjob(None, [("Created", "True")]), None, "none yet (the operator has not created the pods)"),
    (None, {"name": "j", "namespace": "n", "chart": "tfjob-0.1.0", "status": "deployed"},
     "none (there is no job object)"),
])
def test_why_a_job_has_no_pods_is_said_by_its_state(job, release, said):
    assert no_instances(job_view(release=release, job=job, pods=[], now=NOW, kind="TFJob")) == said


def trainjob(num_nodes=2, active=0):
    return {"kind": "TrainJob", "metadata": {"name": "tj", "namespace": "n", "creationTimestamp": "2026-01-02T03:00:00Z"},
            "spec": {"trainer": {"numNodes": num_nodes}},
            "status": {"jobsStatus": [{"name": "node", "active": active}]}}


def pod(name, phase, restarts=0, waiting=""):
    cs = {"name": "node", "restartCount": restarts,
          "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}} if phase == "Running" else {}}
    return {"metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/jobset-name": "tj"}},
            "status": {"phase": phase, "containerStatuses": [cs]}}


@pytest.mark.parametrize(("pods", "active", "status"), [
    ([pod("a", "Running"), pod("b", "Running")], 2, "RUNNING"),
    # a failed pod the Job controller keeps, its replacement not yet made or not yet running
    ([pod("a", "Running"), pod("b", "Failed")], 1, "RESTARTING"),
    ([pod("a", "Running"), pod("b", "Failed"), pod("c", "Pending")], 2, "RESTARTING"),
    ([pod("b", "Failed")], 0, "RESTARTING"),
    # the replacement runs: Running again, as a training-operator job's Restarting turns back to Running
    ([pod("a", "Running"), pod("b", "Failed"), pod("c", "Running")], 2, "RUNNING"),
    # restartPolicy OnFailure: a crash restarts in place, CrashLoopBackOff between the runs
    ([pod("a", "Running"), pod("b", "Running", 3, "CrashLoopBackOff")], 2, "RESTARTING"),
    ([pod("a", "Running"), pod("b", "Running", 3)], 2, "RUNNING"),
    # not started yet: no failure, Pending
    ([pod("a", "Pending"), pod("b", "Pending")], 0, "PENDING"),
])
def test_a_trainjob_whose_pods_fail_is_restarting(pods, active, status):
    assert job_view(release=None, job=trainjob(active=active), pods=pods, now=NOW).status == status


def test_a_kind_with_a_restarting_condition_is_told_by_it_only():
    job = tfjob(conditions=[("Created", "True"), ("Running", "True")])
    assert job_view(release=None, job=job, pods=[pod("a", "Failed")], now=NOW).status == "RUNNING"
