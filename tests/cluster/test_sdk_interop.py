"""Kubeflow's own training SDK (kubeflow-training 1.9.4, in a virtualenv of its own made by
scripts/sdk-venv.sh, with the kubernetes client it pins) reads every kind of job arena-helm submits, and a
job the SDK creates is read by arena-helm. The jobs are the real training-operator v1.9.3's (pods, Services,
conditions), their pods kwok's. The SDK reads kubeflow.org/v1 only: this module stops the session's controllers,
serves training-operator's MPIJob v1 CRD and runs training-operator with its MPIJob v1 controller, and puts the
session's controllers (mpi-operator and MPIJob v2beta1) back afterwards. The SDK runs as a separate process
(tests/support/sdk_driver.py) against the test API server through a kubeconfig this test writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from controllers import ALL, Controllers
from edgetools import with_flags
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_condition, wait_for, wait_job_pods

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "tests" / "support" / "sdk_driver.py"
CONTAINER = {"TFJob": "tensorflow", "PyTorchJob": "pytorch", "MPIJob": "mpi"}
PLURAL = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs"}


@pytest.fixture(scope="session")
def sdk_python() -> str:
    proc = subprocess.run(["bash", str(REPO / "scripts" / "sdk-venv.sh")], stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "scripts/sdk-venv.sh failed"
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture
def sdk(sdk_python, cluster, namespace, tmp_path):
    kubeconfig = tmp_path / "sdk.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sdk",
        "clusters": [{"name": "test", "cluster": {"server": cluster.server,
                                                  "certificate-authority": str(cluster.ca_file)}}],
        "users": [{"name": "sdk", "user": {"token": cluster.admin.token}}],
        "contexts": [{"name": "sdk", "context": {"cluster": "test", "user": "sdk", "namespace": namespace}}],
    }))

    def run(*args: str) -> dict:
        proc = subprocess.run([sdk_python, str(DRIVER), str(kubeconfig), namespace, *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)

    return run


@pytest.fixture(scope="module")
def v1_operator(cluster):
    """training-operator with its MPIJob v1 controller on the v1 CRD (the SDK reads kubeflow.org/v1 only), for
    this module; the session's controllers are stopped meanwhile and started again afterwards."""
    session = cluster.controllers
    session.require("training-operator")
    # (a namespace still Terminating holds pods the garbage collector and kwok remove without the operators:
    # no need to wait the default minute for it)
    session.stop(namespace_timeout=10)
    try:
        cluster.swap_mpi_crd("v1")
        ctl = Controllers(cluster, mpi="v1").start(("training-operator",))
        try:
            ctl.require("training-operator")
            yield ctl
        finally:
            ctl.stop(namespace_timeout=10)
    finally:
        cluster.swap_mpi_crd("v2beta1")
        session.start(ALL)


def arena(helm_bin, cluster, namespace, *args: str):
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
    res = runner.invoke(app, with_flags(args, base))
    assert res.exit_code == 0, res.output
    return res.stdout


def cond(kind, ctype, status, reason, message):
    return [ctype, status, f"{kind}{reason}", message]


def test_the_kubeflow_sdk_reads_every_kind_arena_helm_submits(helm_bin, cluster, namespace, v1_operator, kubelet,
                                                              sdk):
    ns = namespace
    # training-operator's MPIJob v1 launcher has a kubectl-delivery init container that requests
    # ephemeral-storage: a kwok node has none unless given some
    kubelet.add_node(f"{ns}-gpu", pool=ns, gpus=8, extra_resources={"ephemeral-storage": "100Gi"})
    try:
        _read_every_kind(helm_bin, cluster, ns, kubelet, sdk)
    finally:
        kubelet.remove_node(f"{ns}-gpu")


def _job(custom, ns: str, kind: str, name: str) -> dict:
    return custom.get_namespaced_custom_object("kubeflow.org", "v1", ns, PLURAL[kind], name)


def _read_every_kind(helm_bin, cluster, ns, kubelet, sdk):
    core, custom = client.CoreV1Api(cluster.api_client()), client.CustomObjectsApi(cluster.api_client())
    jobs = {"TFJob": "tf-sdk", "PyTorchJob": "pt-sdk", "MPIJob": "mpi-sdk"}
    arena(helm_bin, cluster, ns, "submit", "tf", "--name", "tf-sdk", "--image", "tf:2", "--workers", "2",
          "--gpus", "1", "--", "python", "train.py")
    # the master restarts OnFailure here (Arena's default is Never, with backoffLimit --retry): helm's --set
    arena(helm_bin, cluster, ns, "submit", "pytorch", "--name", "pt-sdk", "--image", "pt:2", "--workers", "2",
          "--gpus", "1", "--retry", "3", "--set", "master.restartPolicy=OnFailure", "--", "torchrun", "train.py")
    arena(helm_bin, cluster, ns, "submit", "mpi", "--name", "mpi-sdk", "--image", "mpi:1", "--workers", "2",
          "--gpus", "1", "--mpi-api", "v1", "--", "mpirun", "train")
    masters = {"TFJob": "tf-sdk-worker-0", "PyTorchJob": "pt-sdk-master-0", "MPIJob": "mpi-sdk-launcher"}
    counts = {"TFJob": 2, "PyTorchJob": 2, "MPIJob": 3}
    for kind, name in jobs.items():
        for pod in wait_job_pods(core, ns, name, count=counts[kind], timeout=90):
            kubelet.run_pod(ns, pod)
        kubelet.write_log(ns, masters[kind], CONTAINER[kind], f"{name} epoch 1\n{name} epoch 2")
        wait_condition(lambda k=kind, n=name: _job(custom, ns, k, n), "Running")

    refs = ",".join(f"{k}:{n}" for k, n in jobs.items())
    seen = sdk("read", refs)
    assert seen["list"] == {"TFJob": ["tf-sdk"], "PyTorchJob": ["pt-sdk"], "MPIJob": ["mpi-sdk"]}
    tf, pt, mpi = (seen["jobs"][f"{k}:{n}"] for k, n in jobs.items())
    assert (tf["kind"], tf["apiVersion"], tf["name"], tf["replicas"]) == ("TFJob", "kubeflow.org/v1", "tf-sdk",
                                                                          {"Worker": 2})
    assert (pt["kind"], pt["replicas"]) == ("PyTorchJob", {"Master": 1, "Worker": 1})
    assert (mpi["kind"], mpi["apiVersion"], mpi["replicas"]) == ("MPIJob", "kubeflow.org/v1",
                                                                 {"Launcher": 1, "Worker": 2})
    assert tf["conditions"] == [cond("TFJob", "Created", "True", "Created", "TFJob tf-sdk is created."),
                                cond("TFJob", "Running", "True", "Running", f"TFJob {ns}/tf-sdk is running.")]
    assert pt["conditions"] == [cond("PyTorchJob", "Created", "True", "Created", "PyTorchJob pt-sdk is created."),
                                cond("PyTorchJob", "Running", "True", "Running", "PyTorchJob pt-sdk is running.")]
    assert mpi["conditions"] == [cond("MPIJob", "Created", "True", "Created", "MPIJob mpi-sdk is created."),
                                 cond("MPIJob", "Running", "True", "Running", "MPIJob mpi-sdk is running.")]
    # (the stand-in wrote "MPIJob <ns>/mpi-sdk is running.", the launcher's message; training-operator v1.9.3's
    # UpdateJobStatus then writes the one without the namespace, mpi/mpijob_controller.go)
    for job in (tf, pt, mpi):
        assert (job["running"], job["succeeded"], job["failed"], job["restarting"]) == (True, False, False, False)
    assert tf["pods"] == ["tf-sdk-worker-0", "tf-sdk-worker-1"]
    assert tf["master_pods"] == ["tf-sdk-worker-0"]  # worker 0 of a TFJob without chief is the master
    assert tf["worker_pods"] == tf["pods"] and tf["worker_0"] == ["tf-sdk-worker-0"]
    assert pt["pods"] == ["pt-sdk-master-0", "pt-sdk-worker-0"]
    assert (pt["master_pods"], pt["worker_pods"], pt["worker_0"]) == (
        ["pt-sdk-master-0"], ["pt-sdk-worker-0"], ["pt-sdk-worker-0"])
    assert mpi["pods"] == ["mpi-sdk-launcher", "mpi-sdk-worker-0", "mpi-sdk-worker-1"]
    assert mpi["master_pods"] == ["mpi-sdk-launcher"]
    assert mpi["worker_pods"] == ["mpi-sdk-worker-0", "mpi-sdk-worker-1"]
    # training-operator v1.9.3 labels MPIJob v1 workers with their replica index (the stand-in did not)
    assert mpi["worker_0"] == ["mpi-sdk-worker-0"]
    for kind, name in jobs.items():
        job = seen["jobs"][f"{kind}:{name}"]
        assert job["logs"] == {masters[kind]: f"{name} epoch 1\n{name} epoch 2\n"}
        # arena-helm reads the same job the same way
        view = json.loads(arena(helm_bin, cluster, ns, "get", name, "-o", "json"))
        assert (view["status"], view["chiefName"]) == ("RUNNING", masters[kind])

    # the TFJob succeeds, the PyTorchJob's master fails and restarts (OnFailure), the MPIJob's launcher fails.
    # The real operator deletes the failed master and creates it again at once: the node is cordoned first, so
    # that the new master waits unscheduled and the job stays Restarting (a running master makes it Running)
    core.patch_node(f"{ns}-gpu", {"spec": {"unschedulable": True}})
    old_master = core.read_namespaced_pod("pt-sdk-master-0", ns).metadata.uid
    # worker 1 first: worker 0 done completes a TFJob without chief, and the operator then deletes the pods
    # still running (cleanPodPolicy Running)
    for pod in ("tf-sdk-worker-1", "tf-sdk-worker-0"):
        kubelet.finish_pod(ns, pod, 0)
    kubelet.finish_pod(ns, "pt-sdk-master-0", 1)
    kubelet.finish_pod(ns, "mpi-sdk-launcher", 1)
    wait_condition(lambda: _job(custom, ns, "TFJob", "tf-sdk"), "Succeeded")
    wait_condition(lambda: _job(custom, ns, "PyTorchJob", "pt-sdk"), "Restarting")
    wait_condition(lambda: _job(custom, ns, "MPIJob", "mpi-sdk"), "Failed")
    wait_for(lambda: [p.metadata.uid for p in core.list_namespaced_pod(
        ns, field_selector="metadata.name=pt-sdk-master-0").items if p.metadata.uid != old_master
        and not p.metadata.deletion_timestamp], "the master made again")
    seen = sdk("read", refs)
    tf, pt, mpi = (seen["jobs"][f"{k}:{n}"] for k, n in jobs.items())
    assert (tf["running"], tf["succeeded"], tf["failed"], tf["restarting"]) == (False, True, False, False)
    assert tf["conditions"] == [
        cond("TFJob", "Created", "True", "Created", "TFJob tf-sdk is created."),
        cond("TFJob", "Running", "False", "Running", f"TFJob {ns}/tf-sdk is running."),
        cond("TFJob", "Succeeded", "True", "Succeeded", f"TFJob {ns}/tf-sdk successfully completed.")]
    assert (pt["running"], pt["succeeded"], pt["failed"], pt["restarting"]) == (False, False, False, True)
    assert pt["conditions"] == [
        cond("PyTorchJob", "Created", "True", "Created", "PyTorchJob pt-sdk is created."),
        cond("PyTorchJob", "Restarting", "True", "Restarting",
             "job pt-sdk is restarting because Master replica(s) failed.")]
    # the failed master was deleted and made again (the stand-in left it deleted until its next step)
    assert pt["pods"] == ["pt-sdk-master-0", "pt-sdk-worker-0"]
    assert (mpi["running"], mpi["succeeded"], mpi["failed"], mpi["restarting"]) == (False, False, True, False)
    # training-operator v1.9.3 ends a v1 MPIJob whose launcher failed by one of two paths, whichever reconcile sees
    # the failed launcher first: the backoff limit (pkg/controller.v1/common/job.go:210, reason MPIJobFailed) or
    # the MPI controller's own status update (pkg/controller.v1/mpi/mpijob_controller.go:607-613, whose reason
    # upstream prefixes with the kind twice). Each is the real operator's exact condition.
    assert mpi["conditions"][-1] in (
        cond("MPIJob", "Failed", "True", "Failed",
             "Job mpi-sdk has failed because it has reached the specified backoff limit"),
        cond("MPIJob", "Failed", "True", "MPIJobFailed", "MPIJob mpi-sdk is failed because 1 Launcher replica(s) failed."),
    ), mpi["conditions"]
    statuses = {n: json.loads(arena(helm_bin, cluster, ns, "get", n, "-o", "json"))["status"] for n in jobs.values()}
    assert statuses == {"tf-sdk": "SUCCEEDED", "pt-sdk": "RESTARTING", "mpi-sdk": "FAILED"}


def test_the_kubeflow_sdk_reads_an_elastic_pytorchjob_and_its_scaled_worker_count(helm_bin, cluster, namespace,
                                                                                 v1_operator, kubelet, sdk):
    core = client.CoreV1Api(cluster.api_client())
    arena(helm_bin, cluster, namespace, "submit", "pytorch", "--name", "el-sdk", "--image", "pt:2", "--min-workers",
          "1", "--max-workers", "3", "--max-restarts", "2", "--workers", "2", "--", "torchrun", "train.py")
    assert wait_job_pods(core, namespace, "el-sdk", ["el-sdk-worker-0", "el-sdk-worker-1"]) == [
        "el-sdk-worker-0", "el-sdk-worker-1"]
    job = sdk("read", "PyTorchJob:el-sdk")["jobs"]["PyTorchJob:el-sdk"]
    assert (job["replicas"], job["pods"], job["worker_0"]) == (
        {"Worker": 2}, ["el-sdk-worker-0", "el-sdk-worker-1"], ["el-sdk-worker-0"])
    assert job["elastic"] == {"min_replicas": 1, "max_replicas": 3, "rdzv_backend": "c10d", "max_restarts": 2}
    arena(helm_bin, cluster, namespace, "scaleout", "el-sdk")
    wait_job_pods(core, namespace, "el-sdk", ["el-sdk-worker-0", "el-sdk-worker-1", "el-sdk-worker-2"])
    assert sdk("read", "PyTorchJob:el-sdk")["jobs"]["PyTorchJob:el-sdk"]["replicas"] == {"Worker": 3}


def test_a_job_the_sdk_creates_is_read_by_arena_helm(helm_bin, cluster, namespace, v1_operator, kubelet, sdk):
    ns = namespace
    core = client.CoreV1Api(cluster.api_client())
    made = sdk("create-tfjob", "sdk-made", "tf:2")
    assert made == {"name": "sdk-made", "replicas": {"Worker": 2}}
    kubelet.add_node(f"{ns}-cpu", pool=ns)
    try:
        pods = wait_job_pods(core, ns, "sdk-made", count=2)
        assert pods == ["sdk-made-worker-0", "sdk-made-worker-1"]
        for pod in pods:
            kubelet.run_pod(ns, pod)
        wait_condition(lambda: _job(client.CustomObjectsApi(cluster.api_client()), ns, "TFJob", "sdk-made"),
                       "Running")
        kubelet.write_log(ns, "sdk-made-worker-0", "tensorflow", "made by the SDK")
        view = json.loads(arena(helm_bin, cluster, ns, "get", "sdk-made", "-o", "json"))
        assert (view["name"], view["trainer"], view["status"], view["chiefName"]) == (
            "sdk-made", "tfjob", "RUNNING", "sdk-made-worker-0")
        assert sorted(i["name"] for i in view["instances"]) == pods
        assert arena(helm_bin, cluster, ns, "logs", "sdk-made") == "made by the SDK\n"
        print("list shows:", arena(helm_bin, cluster, ns, "list", "-o", "json"), file=sys.stderr)
    finally:
        kubelet.remove_node(f"{ns}-cpu")
