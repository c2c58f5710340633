"""PyTorchJobSpec's elastic training (--min-workers/--max-workers/--max-restarts) -> chart values, its values
model, and the read side's worker count of an elastic PyTorchJob (pure: no helm, no API server)."""

from __future__ import annotations

import pytest

from arena_helm import PyTorchJobSpec
from arena_helm.core.errors import UsageError
from arena_helm.training.kinds.pytorchjob import PyTorchJobValues
from arena_helm.views.jobs import Elastic, elastic_of
from arena_helm.workload.job_values import build_values


def test_an_elastic_job_is_workers_only_with_the_operators_elastic_policy():
    spec = PyTorchJobSpec(name="el", image="i", command="torchrun t.py", min_workers=2, max_workers=4,
                          max_restarts=3, gpus=1)
    values = build_values(spec)
    assert values["elasticPolicy"] == {"minReplicas": 2, "maxReplicas": 4, "rdzvBackend": "c10d", "maxRestarts": 3}
    assert values["master"] == {"replicas": 0}
    assert (values["worker"]["replicas"], values["worker"]["gpus"], values["worker"]["restartPolicy"]) == (2, 1, "Never")
    PyTorchJobValues.model_validate(values)  # the chart's contract


@pytest.mark.parametrize(("given", "bounds", "workers"), [
    ({"max_workers": 3}, (1, 3), 1),  # Arena's etjob: --min-workers 1
    ({"min_workers": 2}, (2, 1000), 2),  # and --max-workers 1000; --workers starts at the minimum
    ({"min_workers": 1, "max_workers": 8, "workers": 4}, (1, 8), 4),
])
def test_the_bounds_default_as_arenas_etjob_and_workers_start_at_the_minimum(given, bounds, workers):
    spec = PyTorchJobSpec(name="el", image="i", command="c", **given)
    assert ((spec.min_workers, spec.max_workers), spec.workers) == (bounds, workers)
    assert "maxRestarts" not in build_values(spec)["elasticPolicy"]


def test_a_job_without_bounds_is_not_elastic_and_keeps_its_master():
    values = build_values(PyTorchJobSpec(name="p", image="i", command="c", workers=3))
    assert "elasticPolicy" not in values
    assert (values["master"]["replicas"], values["worker"]["replicas"]) == (1, 2)


@pytest.mark.parametrize(("given", "line"), [
    ({"min_workers": 4, "max_workers": 2},
     "--min-workers 4 is above --max-workers 2: give a range, e.g. --min-workers 2 --max-workers 4"),
    ({"min_workers": 2, "workers": 1}, "--workers 1 is outside --min-workers 2 .. --max-workers 1000: with elastic "
     "training --workers is the Worker pods the job starts with"),
    ({"max_restarts": 2}, "--max-restarts is for elastic training: give --min-workers and/or --max-workers too"),
])
def test_bounds_that_do_not_make_a_range_are_refused_naming_the_flags(given, line):
    with pytest.raises(UsageError) as err:
        PyTorchJobSpec(name="el", image="i", command="c", **given)
    assert str(err.value) == line


def _job(policy: dict | None, replicas: int, active: int | None) -> dict:
    spec: dict = {"pytorchReplicaSpecs": {"Worker": {"replicas": replicas}}}
    if policy is not None:
        spec["elasticPolicy"] = policy
    status = {"replicaStatuses": {"Worker": {"active": active}}} if active is not None else {}
    return {"kind": "PyTorchJob", "metadata": {"name": "el"}, "spec": spec, "status": status}


def test_the_worker_count_of_an_elastic_job_is_its_spec_and_the_operators_active_pods():
    elastic = elastic_of(_job({"minReplicas": 1, "maxReplicas": 4, "rdzvBackend": "c10d"}, 3, 2))
    assert elastic == Elastic(1, 4, 3, 2)
    assert elastic.text() == "3 (2 active), elastic 1 to 4"
    assert elastic.to_json() == {"minWorkers": 1, "maxWorkers": 4, "workers": 3, "activeWorkers": 2}
    assert elastic_of(_job({"minReplicas": 2, "maxReplicas": 2}, 2, None)) == Elastic(2, 2, 2, 0)


@pytest.mark.parametrize("job", [
    _job(None, 2, 2),  # not elastic
    _job({"maxReplicas": 4}, 2, 2),  # the operator needs both bounds
    {**_job({"minReplicas": 1, "maxReplicas": 4}, 2, 2), "kind": "TFJob"},  # a kind with no elastic bounds
    None,
])
def test_a_job_without_both_bounds_has_no_elastic_count(job):
    assert elastic_of(job) is None
