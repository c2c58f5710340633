"""TrainJobSpec -> chart values, the values model, and the read side's view of a TrainJob (pure: no helm, no
API server)."""

from __future__ import annotations

import datetime as dt

import pytest

import arena_helm
from arena_helm.core.errors import UsageError
from arena_helm.core.jobkinds import BY_KIND, lookup
from arena_helm.training.kinds.trainjob import TrainJobValues
from arena_helm.views.jobs import job_phase, job_view, pod_job_name, pod_job_selector
from arena_helm.workload.job_values import build_values

NOW = dt.datetime(2026, 1, 2, 12, 0, 0, tzinfo=dt.UTC)


def test_the_python_api_exports_trainjobspec_and_the_registry_knows_it():
    spec = arena_helm.TrainJobSpec(name="mnist", workers=3, gpus=2, cpu="4", memory="16Gi", command="torchrun t.py",
                                   device={"example.com/fpga": 1}, nproc_per_node=2, suspend=True,
                                   runtime="deepspeed-distributed", running_timeout="2h", queue_name="q")
    assert lookup("tj") is lookup("trainjob") is BY_KIND["TrainJob"]
    values = build_values(spec)
    assert values == {
        "shell": "sh", "runtime": {"name": "deepspeed-distributed", "kind": "ClusterTrainingRuntime"},
        "numProcPerNode": 2, "suspend": True, "activeDeadlineSeconds": 7200, "queue": "q",
        "command": "torchrun t.py", "numNodes": 3, "gpus": 2, "devices": {"example.com/fpga": 1},
        "resources": {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"cpu": "4", "memory": "16Gi"}},
    }
    TrainJobValues.model_validate(values)  # the chart's contract


def test_values_have_no_image_when_the_runtime_gives_it():
    values = build_values(arena_helm.TrainJobSpec(name="m", command="python t.py"))
    assert "image" not in values and values["numNodes"] == 1 and values["gpus"] == 0
    assert values["runtime"] == {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"}
    TrainJobValues.model_validate(values)


@pytest.mark.parametrize(("fields", "message"), [
    ({"workers": 0}, "--workers: "),
    ({"nproc_per_node": "auto"}, "--nproc-per-node: 'auto' is not a whole number"),
    ({"runtime_kind": "Runtime"}, "--runtime-kind: 'Runtime': "),
    ({"name": "n" * 60}, "--name: job name 'nnnn"),
])
def test_bad_trainjob_fields_name_their_flag(fields, message):
    with pytest.raises(UsageError) as err:
        arena_helm.TrainJobSpec(**{"name": "m", **fields})
    assert str(err.value).startswith(message), str(err.value)


def trainjob(conditions=(), jobs=(), nodes=2, per_node=None) -> dict:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "mnist", "namespace": "ns", "creationTimestamp": "2026-01-02T11:00:00Z"},
            "spec": {"runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
                     "trainer": {"numNodes": nodes, "resourcesPerNode": per_node or {}}},
            "status": {"conditions": list(conditions), "jobsStatus": list(jobs)}}


def cond(ctype, status="True", at="2026-01-02T11:30:00Z"):
    return {"type": ctype, "status": status, "lastTransitionTime": at, "reason": ctype, "message": ""}


@pytest.mark.parametrize(("conditions", "jobs", "phase"), [
    ((), (), "Pending"),
    ((), ({"name": "node", "active": 1},), "Running"),
    ((cond("Suspended"),), (), "Suspended"),
    ((cond("Suspended", "False"),), ({"name": "node", "active": 2},), "Running"),
    ((cond("Complete"),), ({"name": "node", "active": 0, "succeeded": 1},), "Succeeded"),
    ((cond("Failed"),), (), "Failed"),
])
def test_trainjob_phase_from_its_conditions(conditions, jobs, phase):
    assert job_phase(trainjob(conditions, jobs)) == phase


def test_trainjob_view_gpus_runtime_end_and_chief():
    per_node = {"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": 2},
                "limits": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": 2}}
    job = trainjob([cond("Complete", at="2026-01-02T11:45:00Z")], nodes=3, per_node=per_node)

    def pod(name, index):
        return {"metadata": {"name": name, "creationTimestamp": "2026-01-02T11:00:00Z", "labels": {
            "jobset.sigs.k8s.io/jobset-name": "mnist", "jobset.sigs.k8s.io/replicatedjob-name": "node",
            "batch.kubernetes.io/job-completion-index": str(index)}},
                "spec": {"nodeName": "n1", "containers": [{"name": "node", "resources": per_node}]},
                "status": {"phase": "Succeeded"}}

    pods = [pod("mnist-node-0-2-zzz", 2), pod("mnist-node-0-1-aaa", 1), pod("mnist-node-0-0-mmm", 0)]
    v = job_view(release=None, job=job, pods=pods, now=NOW)
    assert (v.trainer, v.status, v.requested_gpus, v.requested_cpu, v.requested_memory) == (
        "trainjob", "SUCCEEDED", 6, 12.0, 3 * 8 * 2**30)
    assert v.runtime == "torch-distributed (ClusterTrainingRuntime)" and v.to_json()["runtime"] == v.runtime
    assert (v.ended, v.duration, v.chief_name) == ("2026-01-02T11:45:00Z", "45m", "mnist-node-0-0-mmm")
    assert [i.name for i in v.instances][0] == "mnist-node-0-0-mmm"
    assert pod_job_name(pods[0]) == "mnist" and pod_job_selector("TrainJob", "x") == "jobset.sigs.k8s.io/jobset-name=x"
    assert pod_job_selector("TFJob", "x") == "training.kubeflow.org/job-name=x"


def test_other_kinds_show_no_runtime():
    tf = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "a", "namespace": "ns"},
          "spec": {"tfReplicaSpecs": {}}, "status": {"conditions": [cond("Running")]}}
    v = job_view(release=None, job=tf, pods=[], now=NOW)
    assert v.runtime == "" and "runtime" not in v.to_json() and v.status == "RUNNING"


def test_a_trainjob_without_a_command_runs_the_runtimes_but_other_kinds_still_need_one():
    import yaml
    from typer.testing import CliRunner

    from arena_helm.cli import app

    res = CliRunner().invoke(app, ["submit", "tj", "--name", "t", "--dry-run", "-o", "values"])
    assert res.exit_code == 0, res.output
    values = yaml.safe_load(res.stdout)
    assert values["command"] == "" and "image" not in values  # the runtime's command and image
    res = CliRunner().invoke(app, ["submit", "py", "--name", "t", "--image", "i", "--dry-run", "-o", "values"])
    assert res.exit_code == 2 and res.output.startswith("error: no training command")
