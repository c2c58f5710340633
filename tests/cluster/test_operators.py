"""The training-operator stand-in against arena-helm's jobs, as the real operators behave (training-operator
v1.9.0, mpi-operator v0.8.0; see tests/support/simulators.py): labels and the job-role master, conditions
with the operators' reasons and messages, suspend and resume, the MPIJob v2beta1 launcher as a batch Job
run by the real job controller, and a TensorBoard Deployment that the real deployment controller gives a
pod. Pods are placed by the real scheduler."""

from __future__ import annotations

import json
import time

import pytest
from edgetools import with_flags
from kubernetes import client
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
JOB_ROLE = "training.kubeflow.org/job-role"


@pytest.fixture
def cli(helm_bin, cluster, namespace):
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]

    def run(*args: str) -> str:
        res = runner.invoke(app, with_flags(args, base))
        assert res.exit_code == 0, res.output
        return res.stdout

    return run


@pytest.fixture
def node(kubelet, namespace):
    name = f"{namespace}-gpu"
    kubelet.add_node(name, pool=namespace, gpus=8)
    yield name
    kubelet.remove_node(name)


def labels(cluster, namespace: str, job: str) -> dict[str, dict]:
    core = client.CoreV1Api(cluster.api_client())
    pods = core.list_namespaced_pod(namespace, label_selector=f"training.kubeflow.org/job-name={job}").items
    return {p.metadata.name: {k: v for k, v in p.metadata.labels.items() if k.startswith("training.kubeflow.org/")}
            for p in pods if not p.metadata.deletion_timestamp}


def conditions(operator, kind: str, namespace: str, name: str, version: str = "v1") -> list[tuple]:
    job = operator.get_job(kind, namespace, name, version)
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in job["status"]["conditions"]]


def wait_gone(cluster, namespace: str, job: str, timeout: float = 30.0) -> None:
    core = client.CoreV1Api(cluster.api_client())
    deadline = time.monotonic() + timeout
    while core.list_namespaced_pod(namespace, label_selector=f"training.kubeflow.org/job-name={job}").items:
        assert time.monotonic() < deadline, f"pods of {job} still there"
        time.sleep(0.1)


def test_tfjob_labels_and_master_role_follow_the_operator(cli, operator, cluster, namespace):
    cli("submit", "tf", "--name", "plain", "--image", "tf:2", "--workers", "2", "--ps", "1", "--", "python", "x.py")
    cli("submit", "tf", "--name", "chiefed", "--image", "tf:2", "--workers", "2", "--chief", "--", "python", "x.py")
    operator.create_pods("TFJob", namespace, "plain")
    operator.create_pods("TFJob", namespace, "chiefed")
    base = {"training.kubeflow.org/operator-name": "tfjob-controller"}

    def want(job, rtype, index, master=False):
        got = {**base, "training.kubeflow.org/job-name": job, "training.kubeflow.org/replica-type": rtype,
               "training.kubeflow.org/replica-index": str(index)}
        return {**got, JOB_ROLE: "master"} if master else got

    # no Chief or Master: worker 0 is the master (tfjob_controller.go IsMasterRole)
    assert labels(cluster, namespace, "plain") == {
        "plain-ps-0": want("plain", "ps", 0), "plain-worker-0": want("plain", "worker", 0, master=True),
        "plain-worker-1": want("plain", "worker", 1)}
    assert labels(cluster, namespace, "chiefed") == {
        "chiefed-chief-0": want("chiefed", "chief", 0, master=True), "chiefed-worker-0": want("chiefed", "worker", 0),
        "chiefed-worker-1": want("chiefed", "worker", 1)}
    assert conditions(operator, "TFJob", namespace, "plain") == [
        ("Created", "True", "TFJobCreated", "TFJob plain is created.")]
    assert json.loads(cli("get", "plain", "-o", "json"))["chiefName"] == "plain-worker-0"
    assert json.loads(cli("get", "chiefed", "-o", "json"))["chiefName"] == "chiefed-chief-0"


def test_suspend_removes_the_pods_and_resume_creates_them_again(cli, operator, kubelet, node, cluster, namespace):
    ns = namespace
    cli("submit", "pytorch", "--name", "pause", "--image", "pt:2", "--workers", "2", "--", "torchrun", "x.py")
    for pod in operator.create_pods("PyTorchJob", ns, "pause"):
        kubelet.run_pod(ns, pod, node)
    operator.reconcile("PyTorchJob", ns, "pause")
    assert json.loads(cli("get", "pause", "-o", "json"))["status"] == "RUNNING"

    custom = client.CustomObjectsApi(cluster.api_client())

    def suspend(flag: bool) -> None:  # what `helm upgrade` with runPolicy.suspend does to the object
        custom.patch_namespaced_custom_object("kubeflow.org", "v1", ns, "pytorchjobs", "pause",
                                              {"spec": {"runPolicy": {"suspend": flag}}})

    suspend(True)
    status = operator.reconcile("PyTorchJob", ns, "pause")
    wait_gone(cluster, ns, "pause")  # deleted by the operator, confirmed by the kubelet stand-in
    assert conditions(operator, "PyTorchJob", ns, "pause") == [
        ("Created", "True", "PyTorchJobCreated", "PyTorchJob pause is created."),
        ("Running", "False", "PyTorchJobSuspended", "PyTorchJob pause is suspended."),
        ("Suspended", "True", "PyTorchJobSuspended", "PyTorchJob pause is suspended."),
    ]
    assert {k: v["active"] for k, v in status["replicaStatuses"].items()} == {"Master": 0, "Worker": 0}
    view = json.loads(cli("get", "pause", "-o", "json"))
    assert view["allocatedGPUs"] == 0 and view["instances"] == []

    suspend(False)
    operator.reconcile("PyTorchJob", ns, "pause")
    assert sorted(labels(cluster, ns, "pause")) == ["pause-master-0", "pause-worker-0"]
    conds = conditions(operator, "PyTorchJob", ns, "pause")
    assert conds[-1] == ("Suspended", "False", "PyTorchJobResumed", "PyTorchJob pause is resumed.")
    for pod in ("pause-master-0", "pause-worker-0"):
        kubelet.run_pod(ns, pod, node)
    operator.reconcile("PyTorchJob", ns, "pause")
    assert conditions(operator, "PyTorchJob", ns, "pause")[-1] == (
        "Running", "True", "PyTorchJobRunning", "PyTorchJob pause is running.")
    assert json.loads(cli("get", "pause", "-o", "json"))["status"] == "RUNNING"


def test_mpijob_v2beta1_launcher_is_a_batch_job_run_by_the_job_controller(cli, operator, kubelet, node, cluster,
                                                                         namespace):
    ns = namespace
    cli("submit", "mpi", "--name", "hvd", "--image", "mpi:1", "--workers", "2", "--gpus", "1", "--", "mpirun", "x")
    pods = operator.create_pods("MPIJob", ns, "hvd", version="v2beta1")
    launcher = operator.launcher_pod(ns, "hvd")
    assert launcher.startswith("hvd-launcher-") and pods == sorted([launcher, "hvd-worker-0", "hvd-worker-1"])
    batch = client.BatchV1Api(cluster.api_client())
    job = batch.read_namespaced_job("hvd-launcher", ns)
    assert job.metadata.owner_references[0].kind == "MPIJob" and job.metadata.labels == {"app": "hvd"}
    base = {"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": "hvd"}
    assert labels(cluster, ns, "hvd") == {  # mpi-operator v0.8.0: job-role, no replica-type
        launcher: {**base, JOB_ROLE: "launcher"},
        "hvd-worker-0": {**base, JOB_ROLE: "worker", "training.kubeflow.org/replica-index": "0"},
        "hvd-worker-1": {**base, JOB_ROLE: "worker", "training.kubeflow.org/replica-index": "1"},
    }
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    operator.reconcile("MPIJob", ns, "hvd", version="v2beta1")
    assert conditions(operator, "MPIJob", ns, "hvd", "v2beta1") == [
        ("Created", "True", "MPIJobCreated", f"MPIJob {ns}/hvd is created."),
        ("Running", "True", "MPIJobRunning", f"MPIJob {ns}/hvd is running."),
    ]
    view = json.loads(cli("get", "hvd", "-o", "json"))
    assert (view["status"], view["chiefName"], view["allocatedGPUs"]) == ("RUNNING", launcher, 2)

    # the launcher's pod ends well: the job controller completes the Job, the operator the MPIJob
    kubelet.set_pod_state(ns, launcher, "Succeeded")
    deadline = time.monotonic() + 30
    while not any(c.type == "Complete" and c.status == "True"
                  for c in batch.read_namespaced_job("hvd-launcher", ns).status.conditions or []):
        assert time.monotonic() < deadline, "the job controller did not complete the launcher Job"
        time.sleep(0.1)
    operator.reconcile("MPIJob", ns, "hvd", version="v2beta1")
    assert conditions(operator, "MPIJob", ns, "hvd", "v2beta1")[-1] == (
        "Succeeded", "True", "MPIJobSucceeded", f"MPIJob {ns}/hvd successfully completed.")
    assert json.loads(cli("get", "hvd", "-o", "json"))["status"] == "SUCCEEDED"


def test_mpijob_v2beta1_suspend_and_resume(cli, operator, kubelet, node, cluster, namespace):
    ns = namespace
    cli("submit", "mpi", "--name", "nap", "--image", "mpi:1", "--workers", "1", "--", "mpirun", "x")
    for pod in operator.create_pods("MPIJob", ns, "nap", version="v2beta1"):
        kubelet.run_pod(ns, pod, node)
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.patch_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", "nap",
                                          {"spec": {"runPolicy": {"suspend": True}}})
    operator.reconcile("MPIJob", ns, "nap", version="v2beta1")
    wait_gone(cluster, ns, "nap")
    assert operator.launcher_job(ns, "nap") is None
    assert conditions(operator, "MPIJob", ns, "nap", "v2beta1")[1:] == [
        ("Suspended", "True", "MPIJobSuspended", "MPIJob suspended"),
        ("Running", "False", "MPIJobSuspended", f"MPIJob {ns}/nap is suspended."),
    ]
    custom.patch_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", "nap",
                                          {"spec": {"runPolicy": {"suspend": False}}})
    pods = operator.create_pods("MPIJob", ns, "nap", version="v2beta1")
    assert len(pods) == 2 and "nap-worker-0" in pods
    assert ("Suspended", "False", "MPIJobResumed", "MPIJob resumed") in conditions(operator, "MPIJob", ns, "nap",
                                                                                    "v2beta1")


def test_a_tensorboard_gets_a_pod_from_the_deployment_controller(cli, kubelet, node, cluster, namespace):
    core = client.CoreV1Api(cluster.api_client())
    pv = f"{namespace}-logs"
    core.create_persistent_volume({"metadata": {"name": pv}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
        "hostPath": {"path": "/tmp/arena-helm-test-logs"}, "persistentVolumeReclaimPolicy": "Retain"}})
    try:
        core.create_namespaced_persistent_volume_claim(namespace, {"metadata": {"name": "logs"}, "spec": {
            "accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": pv,
            "resources": {"requests": {"storage": "1Gi"}}}})
        deadline = time.monotonic() + 30
        while core.read_namespaced_persistent_volume_claim("logs", namespace).status.phase != "Bound":
            assert time.monotonic() < deadline, "the PV binder did not bind the claim"
            time.sleep(0.2)
        cli("submit", "tf", "--name", "viz", "--image", "tf:2", "-d", "logs:/logs", "--tensorboard", "--logdir",
            "/logs/viz", "--", "python", "x.py")
        deadline = time.monotonic() + 30
        while not (pods := core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/instance=viz").items):
            assert time.monotonic() < deadline, "the deployment controller made no TensorBoard pod"
            time.sleep(0.2)
        (pod,) = [p for p in pods if p.metadata.owner_references[0].kind == "ReplicaSet"]
        assert kubelet.run_pod(namespace, pod.metadata.name) == node
        apps = client.AppsV1Api(cluster.api_client())
        deadline = time.monotonic() + 30
        while (apps.read_namespaced_deployment("viz-tensorboard", namespace).status.available_replicas or 0) < 1:
            assert time.monotonic() < deadline, "the deployment never became available"
            time.sleep(0.2)
    finally:
        core.delete_persistent_volume(pv)
