"""GPU accounting that survives overrides (issue #24), against the real API server and training-operator: a
PyTorchJob whose ``-f``/``--set`` change the flags' replicas and GPUs. The pods the operator makes, the job's
``requestGPUsOfJobOwner`` annotation, the pods' ``workers``/``gpus`` env and every read command's GPU figures
(``list``, ``get``, ``top job``, ``top node`` as JSON) agree."""

from __future__ import annotations

import json

import pytest
from clictx import cli
from kubernetes import client
from waits import wait_for, wait_job_pods

pytestmark = pytest.mark.cluster
JOB_NAME = "training.kubeflow.org/job-name"


@pytest.fixture
def ctx(helm_bin, cluster, namespace, controllers):
    controllers.require("training-operator")
    return cli(helm_bin, cluster, namespace, check=True)


@pytest.fixture
def big_gpu_node(kubelet, namespace):
    name = f"gpu12-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=12)
    yield name
    kubelet.remove_node(name)


def pod_gpus(pod) -> int:
    return sum(int((c.resources.limits or {}).get("nvidia.com/gpu", 0)) for c in pod.spec.containers)


def test_gpu_figures_follow_the_overrides(ctx, kubelet, big_gpu_node, cluster, namespace, tmp_path):
    over = tmp_path / "over.yaml"
    over.write_text("worker:\n  replicas: 4\n", encoding="utf-8")
    out = ctx("submit", "pytorch", "--name", "big", "--image", "pt:2", "--workers", "2", "--gpus", "1",
              "-f", str(over), "--set", "worker.gpus=2", "--", "torchrun", "train.py")
    assert "pytorchjob.kubeflow.org/big created" in out, out
    core = client.CoreV1Api(cluster.api_client())
    names = ["big-master-0", *(f"big-worker-{i}" for i in range(4))]
    assert sorted(wait_job_pods(core, namespace, "big", names)) == names
    for name in names:
        kubelet.run_pod(namespace, name, big_gpu_node)

    # what the operator made: the master's 1 GPU and 4 workers of 2
    pods = {p.metadata.name: p for p in core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME}=big").items}
    gpus = {name: pod_gpus(pod) for name, pod in pods.items()}
    assert gpus == {"big-master-0": 1, **{f"big-worker-{i}": 2 for i in range(4)}}
    assert sum(gpus.values()) == 9
    job = client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "pytorchjobs", "big")
    assert job["metadata"]["annotations"]["requestGPUsOfJobOwner"] == "9"
    for name, pod in pods.items():
        assert pod.metadata.annotations["requestGPUsOfJobOwner"] == "9", name
        (c,) = pod.spec.containers
        env = [(e.name, e.value) for e in c.env if e.name in ("workers", "gpus")]
        assert env == [("workers", "5"), ("gpus", "1")], name  # Arena's --workers counts the master

    def running():
        got = json.loads(ctx("get", "big", "-o", "json"))
        return got if got["status"] == "RUNNING" else None

    want_instances = sorted(gpus.items())
    for view in (wait_for(running, "job big RUNNING"), *json.loads(ctx("list", "-o", "json")),
                 *json.loads(ctx("top", "job", "-o", "json"))):
        assert (view["name"], view["status"], view["requestGPUs"], view["allocatedGPUs"]) == ("big", "RUNNING", 9, 9)
        assert sorted((i["name"], i["requestGPUs"]) for i in view["instances"]) == want_instances
        assert {i["node"] for i in view["instances"]} == {big_gpu_node}

    nodes = {n["name"]: n for n in json.loads(ctx("top", "node", "-o", "json"))["nodes"]}
    node = nodes[big_gpu_node]
    assert (node["totalGPUs"], node["allocatableGPUs"], node["allocatedGPUs"]) == (12, 12, 9)
    assert [(p["namespace"], p["name"], p["gpus"]) for p in node["gpuPods"]] == [
        (namespace, name, n) for name, n in want_instances]
