"""list/get/top -o json|yaml carry Arena's TrainingJobInfo and TrainingJobInstance keys (kubeflow/arena
pkg/apis/types/training.go) with the values Arena's BuildJobInfo gives them (pkg/training/get_advanced.go),
beside arena-helm's own keys; top job's total counts RUNNING jobs only (pkg/training/top_job.go). Pure views."""

from __future__ import annotations

import datetime as dt

import pytest

from arena_helm.views.jobs import arena_yaml_form, job_view, pod_duration_seconds
from arena_helm.views.output import as_yaml, job_document, top_jobs_order, top_jobs_table, top_jobs_total
from arena_helm.views.usage import Metrics, add_job_json

NOW = dt.datetime(2026, 1, 2, 4, 0, 0, tzinfo=dt.UTC)
T = "2026-01-02T03:{}Z".format  # T("04:05") -> 2026-01-02T03:04:05Z
UID = "0b7e1f4c-5d7a-4c1e-9f5e-2a1d3c4b5e6f"


def unix(minute_second: str) -> int:
    return int(dt.datetime.fromisoformat(T(minute_second).replace("Z", "+00:00")).timestamp())


def tfjob(conditions=("Running",), *, completion: str | None = None, labels=None) -> dict:
    status = {"conditions": [{"type": c, "status": "True", "lastTransitionTime": T("05:00")} for c in conditions],
              "startTime": T("04:07")}
    if completion:
        status["completionTime"] = completion
    return {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob",
        "metadata": {"name": "train", "namespace": "team", "uid": UID, "creationTimestamp": T("04:05"),
                     "labels": {"app": "tfjob", "release": "train", **(labels or {})}},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {
            "priorityClassName": "high", "containers": [{"name": "tensorflow", "resources": {
                "limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "2", "memory": "4Gi"}}}]}}}}},
        "status": status,
    }


def pod(index: int, phase: str, *, node: str | None = "gpu-1", ip: str | None = None,
        state: dict | None = None) -> dict:
    status: dict = {"phase": phase}
    if node and phase != "Pending":
        status.update(hostIP="10.0.0.1", podIP=ip or f"10.1.0.{index + 10}", startTime=T("04:20"))
    if state is not None:
        status["containerStatuses"] = [{"name": "tensorflow", "ready": phase == "Running", "state": state}]
    return {
        "metadata": {"name": f"train-worker-{index}", "namespace": "team", "creationTimestamp": T(f"04:1{index}"),
                     "labels": {"training.kubeflow.org/job-name": "train",
                                "training.kubeflow.org/replica-type": "worker",
                                "training.kubeflow.org/replica-index": str(index)}},
        "spec": {**({"nodeName": node} if node else {}), "containers": [
            {"name": "tensorflow", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        "status": status,
    }


RELEASE = {"name": "train", "namespace": "team", "revision": "1", "status": "deployed", "chart": "tfjob-0.1.0",
           "updated": "2026-01-02 03:04:05 +0000 UTC"}


def test_get_json_has_arenas_job_and_instance_keys_with_arenas_values():
    job = tfjob(labels={"modelName": "resnet50", "modelVersion": "3"})
    pods = [pod(0, "Running", state={"running": {"startedAt": T("04:30")}}), pod(1, "Pending", node=None)]
    v = job_view(release=RELEASE, job=job, pods=pods, now=NOW)
    started = unix("04:07")
    assert v.to_json() == {
        # Arena's TrainingJobInfo
        "uuid": UID,
        "name": "train",
        "namespace": "team",
        "duration": f"{int(NOW.timestamp()) - started}s",  # since status.startTime, "<seconds>s"
        "status": "PENDING",  # running, one pod pending: Arena's GetJobRealStatus says PENDING too
        "trainer": "tfjob",
        "tensorboard": "",
        "chiefName": "train-worker-0",
        "instances": [
            {"name": "train-worker-0", "status": "Running", "age": f"{int(NOW.timestamp()) - unix('04:30')}s",
             "node": "gpu-1", "nodeIP": "10.0.0.1", "chief": True, "requestGPUs": 1, "replicaType": "worker",
             "ip": "10.1.0.10", "gpuMetrics": {}, "creationTimestamp": unix("04:10")},
            {"name": "train-worker-1", "status": "Pending", "age": f"{int(NOW.timestamp()) - unix('04:11')}s",
             "node": "N/A", "nodeIP": "N/A", "chief": False, "requestGPUs": 1, "replicaType": "worker",
             "ip": "", "gpuMetrics": {}, "creationTimestamp": unix("04:11")},
        ],
        "priority": "high",
        "requestGPUs": 2,
        "allocatedGPUs": 1,
        "creationTimestamp": started,  # Arena: job.StartTime().Unix()
        "modelName": "resnet50",
        "modelVersion": "3",
        "modelSource": "",
        # arena-helm's own
        "createdAt": T("04:05"),
        "endedAt": "",
        "requestCPU": "4",
        "requestMemory": "8Gi",
        "release": {"name": "train", "revision": 1, "chart": "tfjob", "chartVersion": "0.1.0", "status": "deployed",
                    "updated": "2026-01-02 03:04:05 +0000 UTC"},
    }


def test_a_finished_job_lasts_from_its_start_to_its_completion():
    job = tfjob(("Running", "Succeeded"), completion=T("34:07"))
    done = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": T("04:30"), "finishedAt": T("30:30")}}
    v = job_view(release=RELEASE, job=job, pods=[pod(0, "Succeeded", state=done)], now=NOW)
    data = v.to_json()
    assert (data["status"], data["duration"], data["creationTimestamp"], data["allocatedGPUs"]) == (
        "SUCCEEDED", "1800s", unix("04:07"), 0)
    assert data["creationTimestamp"] + int(data["duration"].rstrip("s")) == unix("34:07")  # Arena's EndTime
    (inst,) = data["instances"]
    assert (inst["age"], inst["ip"], inst["chief"]) == ("1560s", "10.1.0.10", True)  # finished - started


def test_a_release_without_its_job_object_has_arenas_zero_values():
    v = job_view(release=RELEASE, job=None, pods=[], now=NOW, kind="TFJob")
    data = v.to_json()
    assert {k: data[k] for k in ("uuid", "duration", "creationTimestamp", "chiefName", "instances", "modelName",
                                 "modelVersion", "modelSource", "priority", "status")} == {
        "uuid": "", "duration": "0s", "creationTimestamp": 0, "chiefName": "", "instances": [], "modelName": "",
        "modelVersion": "", "modelSource": "", "priority": "N/A", "status": "JOB-MISSING"}


@pytest.mark.parametrize(("phase", "state", "start", "expected"), [
    ("Pending", None, None, 3600 - 4 * 60 - 10),  # pending: since creation (03:04:10)
    ("Unknown", {"running": {"startedAt": T("04:30")}}, None, 0),
    ("Running", {"running": {"startedAt": T("04:30")}}, None, 3600 - 4 * 60 - 30),  # since the container start
    ("Running", None, T("04:20"), 3600 - 4 * 60 - 20),  # no container state yet: since status.startTime
    ("Failed", {"terminated": {"exitCode": 1, "startedAt": T("04:30"), "finishedAt": T("05:00")}}, None, 30),
])
def test_instance_age_is_arenas_pod_duration(phase, state, start, expected):
    p = pod(0, phase, state=state)
    if start:
        p["status"]["startTime"] = start
    else:
        p["status"].pop("startTime", None)
    assert pod_duration_seconds(p, NOW) == expected


def test_instance_gpu_metrics_are_an_empty_map_without_prometheus():
    v = job_view(release=RELEASE, job=tfjob(), pods=[pod(0, "Running")], now=NOW)
    assert add_job_json(Metrics(), v, v.to_json())["instances"][0]["gpuMetrics"] == {}


def test_yaml_adds_arenas_lowercase_model_keys():
    v = job_view(release=RELEASE, job=tfjob(labels={"modelName": "resnet50"}), pods=[], now=NOW)
    doc = job_document(v.to_json(), "yaml")
    keys = list(doc)
    i = keys.index("modelName")
    assert keys[i:i + 6] == ["modelName", "modelname", "modelVersion", "modelversion", "modelSource", "modelsource"]
    assert (doc["modelname"], doc["modelversion"], doc["modelsource"]) == ("resnet50", "", "")
    assert "modelname: resnet50" in as_yaml(doc).splitlines()
    assert job_document(v.to_json(), "json") == v.to_json()  # JSON: Arena's json tags only
    assert arena_yaml_form({"name": "x"}) == {"name": "x"}


def test_top_job_total_counts_running_jobs_only():
    running = job_view(release=RELEASE, job=tfjob(), pods=[pod(0, "Running"), pod(1, "Running")], now=NOW)
    half = job_view(release=RELEASE, job=tfjob(), pods=[pod(0, "Running"), pod(1, "Pending", node=None)], now=NOW)
    queued = job_view(release=RELEASE, job=tfjob(()), pods=[], now=NOW)
    done = job_view(release=RELEASE, job=tfjob(("Running", "Succeeded"), completion=T("34:07")), pods=[], now=NOW)
    assert [v.status for v in (running, half, queued, done)] == ["RUNNING", "PENDING", "PENDING", "SUCCEEDED"]
    assert (half.allocated_gpus, half.requested_gpus) == (1, 2)
    assert top_jobs_total([running, half, queued, done]) == (2, 2)  # Arena: jobInfo.Status == "RUNNING"
    assert top_jobs_table([half, queued], all_namespaces=False).endswith(
        "\n\nTotal Allocated/Requested GPUs of Training Jobs: 0/0")


def test_top_job_orders_by_gpus_requested_as_arena():
    small = job_view(release=RELEASE, job=tfjob(), pods=[], now=NOW)
    big = job_view(release=RELEASE, job=tfjob(), pods=[], now=NOW)
    big.name, big.requested_gpus = "big", 8
    assert [v.name for v in top_jobs_order([small, big])] == ["big", "train"]


def test_model_keys_come_from_what_submit_writes():
    """submit --model-name/--model-source write the modelName label and modelSource annotation (values.py):
    the views read them back, also through the slim objects of the list path."""
    from arena_helm.views.slim import slim_job

    job = tfjob(labels={"modelName": "bert", "modelVersion": "3"})
    job["metadata"]["annotations"] = {"modelSource": "pvc://team/models/bert", "other": "x"}
    for obj in (job, slim_job(job)):
        data = job_view(release=RELEASE, job=obj, pods=[], now=NOW).to_json()
        assert (data["modelName"], data["modelVersion"], data["modelSource"]) == ("bert", "3",
                                                                                  "pvc://team/models/bert")
