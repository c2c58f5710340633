"""arena-helm's jobs under the real operators (training-operator v1.9.3, mpi-operator v0.8.0; see
tests/support/controllers.py) and kwok's nodes: labels and the job-role master, conditions with the operators'
reasons and messages, suspend and resume, the MPIJob v2beta1 launcher as a batch Job run by the real job
controller (suspended, not deleted, when the MPIJob is), and a TensorBoard Deployment that the real deployment
controller gives a pod. Pods are placed by the real scheduler and run by kwok."""

from __future__ import annotations

import json

import pytest
from edgetools import with_flags
from kubernetes import client
from typer.testing import CliRunner
from waits import conditions, wait_for, wait_gone, wait_job_pods

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
JOB_ROLE = "training.kubeflow.org/job-role"
JOB_NAME = "training.kubeflow.org/job-name"


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
    pods = core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME}={job}").items
    return {p.metadata.name: {k: v for k, v in p.metadata.labels.items() if k.startswith("training.kubeflow.org/")}
            for p in pods if not p.metadata.deletion_timestamp}


def get_job(cluster, kind: str, namespace: str, name: str, version: str = "v1") -> dict:
    plural = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs"}[kind]
    return client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", version, namespace, plural, name)


def conds(cluster, kind: str, namespace: str, name: str, version: str = "v1") -> list[tuple]:
    return conditions(get_job(cluster, kind, namespace, name, version))


def wait_conds(cluster, kind, namespace, name, check, what, version="v1", timeout=60.0) -> list[tuple]:
    """Until the job's conditions satisfy ``check``; returns them."""
    def got():
        c = conds(cluster, kind, namespace, name, version)
        return c if check(c) else None

    return wait_for(got, f"{kind} {name}: {what}", timeout)


def status_of(cli, name: str) -> dict:
    return json.loads(cli("get", name, "-o", "json"))


def wait_status(cli, name: str, want: str, timeout: float = 60.0) -> dict:
    """Until ``arena-helm get NAME -o json`` says ``want``; returns the view."""
    last = {}

    def got():
        nonlocal last
        last = status_of(cli, name)
        return last if last["status"] == want else None

    try:
        return wait_for(got, f"arena-helm get {name}: {want}", timeout)
    except AssertionError as e:
        raise AssertionError(f"{e}; last status {last.get('status')!r}") from None


def test_tfjob_labels_and_master_role_follow_the_operator(cli, cluster, namespace):
    core = client.CoreV1Api(cluster.api_client())
    cli("submit", "tf", "--name", "plain", "--image", "tf:2", "--workers", "2", "--ps", "1", "--", "python", "x.py")
    cli("submit", "tf", "--name", "chiefed", "--image", "tf:2", "--workers", "2", "--chief", "--", "python", "x.py")
    wait_job_pods(core, namespace, "plain", ["plain-ps-0", "plain-worker-0", "plain-worker-1"])
    wait_job_pods(core, namespace, "chiefed", ["chiefed-chief-0", "chiefed-worker-0", "chiefed-worker-1"])
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
    # no node: the pods stay Pending and the job Created
    assert conds(cluster, "TFJob", namespace, "plain") == [
        ("Created", "True", "TFJobCreated", "TFJob plain is created.")]
    assert status_of(cli, "plain")["chiefName"] == "plain-worker-0"
    assert status_of(cli, "chiefed")["chiefName"] == "chiefed-chief-0"


def test_suspend_removes_the_pods_and_resume_creates_them_again(cli, kubelet, node, cluster, namespace):
    ns = namespace
    core = client.CoreV1Api(cluster.api_client())
    cli("submit", "pytorch", "--name", "pause", "--image", "pt:2", "--workers", "2", "--", "torchrun", "x.py")
    pods = wait_job_pods(core, ns, "pause", ["pause-master-0", "pause-worker-0"])
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    wait_status(cli, "pause", "RUNNING")

    custom = client.CustomObjectsApi(cluster.api_client())

    def suspend(flag: bool) -> None:  # what `helm upgrade` with runPolicy.suspend does to the object
        custom.patch_namespaced_custom_object("kubeflow.org", "v1", ns, "pytorchjobs", "pause",
                                              {"spec": {"runPolicy": {"suspend": flag}}})

    suspend(True)
    wait_gone(core, ns, f"{JOB_NAME}=pause")  # deleted by the operator, confirmed by kwok
    got = wait_conds(cluster, "PyTorchJob", ns, "pause", lambda c: ("Suspended", "True") in [x[:2] for x in c],
                     "Suspended")
    assert got == [
        ("Created", "True", "PyTorchJobCreated", "PyTorchJob pause is created."),
        ("Running", "False", "PyTorchJobSuspended", "PyTorchJob pause is suspended."),
        ("Suspended", "True", "PyTorchJobSuspended", "PyTorchJob pause is suspended."),
    ]
    status = get_job(cluster, "PyTorchJob", ns, "pause")["status"]
    # training-operator v1.9.3 sets active to 0, which its JSON omits (omitempty)
    assert {k: v.get("active", 0) for k, v in status["replicaStatuses"].items()} == {"Master": 0, "Worker": 0}
    view = status_of(cli, "pause")
    assert view["allocatedGPUs"] == 0 and view["instances"] == []

    suspend(False)
    wait_job_pods(core, ns, "pause", ["pause-master-0", "pause-worker-0"])
    got = wait_conds(cluster, "PyTorchJob", ns, "pause", lambda c: ("Suspended", "False") in [x[:2] for x in c],
                     "Suspended=False")
    # (the operator may have added Running after it by now: kwok runs the new pods as soon as they are bound)
    assert [c for c in got if c[0] == "Suspended"] == [
        ("Suspended", "False", "PyTorchJobResumed", "PyTorchJob pause is resumed.")]
    for pod in ("pause-master-0", "pause-worker-0"):
        kubelet.run_pod(ns, pod, node)
    got = wait_conds(cluster, "PyTorchJob", ns, "pause", lambda c: ("Running", "True") in [x[:2] for x in c],
                     "Running again")
    assert got[-1] == ("Running", "True", "PyTorchJobRunning", "PyTorchJob pause is running.")
    assert status_of(cli, "pause")["status"] == "RUNNING"


def test_mpijob_v2beta1_launcher_is_a_batch_job_run_by_the_job_controller(cli, controllers, kubelet, node, cluster,
                                                                         namespace):
    controllers.require("mpi-operator")
    ns = namespace
    core = client.CoreV1Api(cluster.api_client())
    batch = client.BatchV1Api(cluster.api_client())
    cli("submit", "mpi", "--name", "hvd", "--image", "mpi:1", "--workers", "2", "--gpus", "1", "--", "mpirun", "x")
    pods = wait_job_pods(core, ns, "hvd", count=3)
    (launcher,) = [p for p in pods if p.startswith("hvd-launcher-")]
    assert pods == sorted([launcher, "hvd-worker-0", "hvd-worker-1"])
    job = batch.read_namespaced_job("hvd-launcher", ns)
    assert job.metadata.owner_references[0].kind == "MPIJob"
    # arena-helm's launcher restartPolicy Never and --retry 0 (backoffLimit 0), which mpi-operator copies to the Job
    # (its own defaults, OnFailure and 6, are for an MPIJob that sets neither)
    assert (job.spec.template.spec.restart_policy, job.spec.backoff_limit) == ("Never", 0)
    base = {"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": "hvd"}
    assert labels(cluster, ns, "hvd") == {  # mpi-operator v0.8.0: job-role, no replica-type
        launcher: {**base, JOB_ROLE: "launcher"},
        "hvd-worker-0": {**base, JOB_ROLE: "worker", "training.kubeflow.org/replica-index": "0"},
        "hvd-worker-1": {**base, JOB_ROLE: "worker", "training.kubeflow.org/replica-index": "1"},
    }
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    got = wait_conds(cluster, "MPIJob", ns, "hvd", lambda c: ("Running", "True") in [x[:2] for x in c], "Running",
                     "v2beta1")
    assert got == [
        ("Created", "True", "MPIJobCreated", f"MPIJob {ns}/hvd is created."),
        ("Running", "True", "MPIJobRunning", f"MPIJob {ns}/hvd is running."),
    ]
    view = status_of(cli, "hvd")
    assert (view["status"], view["chiefName"], view["allocatedGPUs"]) == ("RUNNING", launcher, 2)

    # the launcher's pod ends well: the job controller completes the Job, the operator the MPIJob
    kubelet.finish_pod(ns, launcher, 0)
    wait_for(lambda: any(c.type == "Complete" and c.status == "True"
                         for c in batch.read_namespaced_job("hvd-launcher", ns).status.conditions or []),
             "the job controller completes the launcher Job", 30)
    got = wait_conds(cluster, "MPIJob", ns, "hvd", lambda c: ("Succeeded", "True") in [x[:2] for x in c],
                     "Succeeded", "v2beta1")
    assert got[-1] == ("Succeeded", "True", "MPIJobSucceeded", f"MPIJob {ns}/hvd successfully completed.")
    assert status_of(cli, "hvd")["status"] == "SUCCEEDED"


def test_mpijob_v2beta1_suspend_suspends_the_launcher_job(cli, controllers, kubelet, node, cluster, namespace):
    """mpi-operator v0.8.0 deletes the workers of a suspended MPIJob and sets spec.suspend on its launcher Job
    (whose pod the job controller then deletes); resuming unsuspends that same Job."""
    controllers.require("mpi-operator")
    ns = namespace
    core = client.CoreV1Api(cluster.api_client())
    batch = client.BatchV1Api(cluster.api_client())
    cli("submit", "mpi", "--name", "nap", "--image", "mpi:1", "--workers", "1", "--", "mpirun", "x")
    for pod in wait_job_pods(core, ns, "nap", count=2):
        kubelet.run_pod(ns, pod, node)
    uid = batch.read_namespaced_job("nap-launcher", ns).metadata.uid
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.patch_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", "nap",
                                          {"spec": {"runPolicy": {"suspend": True}}})
    wait_gone(core, ns, f"{JOB_NAME}=nap")
    launcher = batch.read_namespaced_job("nap-launcher", ns)
    assert (launcher.metadata.uid, launcher.spec.suspend) == (uid, True)
    got = wait_conds(cluster, "MPIJob", ns, "nap", lambda c: ("Suspended", "True") in [x[:2] for x in c],
                     "Suspended", "v2beta1")
    assert got[1:] == [
        ("Suspended", "True", "MPIJobSuspended", "MPIJob suspended"),
        ("Running", "False", "MPIJobSuspended", f"MPIJob {ns}/nap is suspended."),
    ]
    custom.patch_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", "nap",
                                          {"spec": {"runPolicy": {"suspend": False}}})
    pods = wait_job_pods(core, ns, "nap", count=2)
    assert "nap-worker-0" in pods
    launcher = batch.read_namespaced_job("nap-launcher", ns)
    assert (launcher.metadata.uid, launcher.spec.suspend) == (uid, False)
    got = wait_conds(cluster, "MPIJob", ns, "nap", lambda c: ("Suspended", "False") in [x[:2] for x in c],
                     "Suspended=False", "v2beta1")
    assert ("Suspended", "False", "MPIJobResumed", "MPIJob resumed") in got


def test_a_tensorboard_gets_a_pod_from_the_deployment_controller(cli, kubelet, node, cluster, namespace):
    core = client.CoreV1Api(cluster.api_client())
    pv = f"{namespace}-logs"
    core.create_persistent_volume({"metadata": {"name": pv}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
        "hostPath": {"path": "/srv/arena-helm-test-logs"}, "persistentVolumeReclaimPolicy": "Retain"}})
    try:
        core.create_namespaced_persistent_volume_claim(namespace, {"metadata": {"name": "logs"}, "spec": {
            "accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": pv,
            "resources": {"requests": {"storage": "1Gi"}}}})
        wait_for(lambda: core.read_namespaced_persistent_volume_claim("logs", namespace).status.phase == "Bound",
                 "the PV binder binds the claim", 30)
        cli("submit", "tf", "--name", "viz", "--image", "tf:2", "-d", "logs:/logs", "--tensorboard", "--logdir",
            "/logs/viz", "--", "python", "x.py")
        pods = wait_for(lambda: [p for p in core.list_namespaced_pod(
            namespace, label_selector="app.kubernetes.io/instance=viz").items
            if p.metadata.owner_references and p.metadata.owner_references[0].kind == "ReplicaSet"],
            "the deployment controller makes a TensorBoard pod", 30)
        (pod,) = pods
        assert kubelet.run_pod(namespace, pod.metadata.name) == node
        apps = client.AppsV1Api(cluster.api_client())
        wait_for(lambda: (apps.read_namespaced_deployment("viz-tensorboard", namespace).status.available_replicas
                          or 0) >= 1, "the deployment becomes available", 30)
    finally:
        core.delete_persistent_volume(pv)
