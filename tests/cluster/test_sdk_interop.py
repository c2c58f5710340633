"""Kubeflow's own training SDK (kubeflow-training 1.9.4, in a virtualenv of its own made by
scripts/sdk-venv.sh, with the kubernetes client it pins) reads every kind of job arena-helm submits, and a
job the SDK creates is read by arena-helm. The SDK runs as a separate process (tests/support/sdk_driver.py)
against the test API server through a kubeconfig this test writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from edgetools import with_flags
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
REPO = Path(__file__).resolve().parents[3]
DRIVER = REPO / "tests" / "support" / "sdk_driver.py"
CONTAINER = {"TFJob": "tensorflow", "PyTorchJob": "pytorch", "MPIJob": "mpi"}


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


@pytest.fixture
def mpi_v1(cluster):
    """The SDK reads kubeflow.org/v1 only: serve the training-operator's MPIJob v1 for this test."""
    cluster.swap_mpi_crd("v1")
    yield
    cluster.swap_mpi_crd("v2beta1")


def arena(helm_bin, cluster, namespace, *args: str):
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
    res = runner.invoke(app, with_flags(args, base))
    assert res.exit_code == 0, res.output
    return res.stdout


def cond(kind, ctype, status, reason, message):
    return [ctype, status, f"{kind}{reason}", message]


def test_the_kubeflow_sdk_reads_every_kind_arena_helm_submits(helm_bin, cluster, namespace, operator, kubelet,
                                                              mpi_v1, sdk):
    ns = namespace
    kubelet.add_node(f"{ns}-gpu", pool=ns, gpus=8)
    try:
        _read_every_kind(helm_bin, cluster, ns, operator, kubelet, sdk)
    finally:
        kubelet.remove_node(f"{ns}-gpu")


def _read_every_kind(helm_bin, cluster, ns, operator, kubelet, sdk):
    jobs = {"TFJob": "tf-sdk", "PyTorchJob": "pt-sdk", "MPIJob": "mpi-sdk"}
    arena(helm_bin, cluster, ns, "submit", "tf", "--name", "tf-sdk", "--image", "tf:2", "--workers", "2",
          "--gpus", "1", "--", "python", "train.py")
    # the master restarts OnFailure here (Arena's default is Never, with backoffLimit --retry): helm's --set
    arena(helm_bin, cluster, ns, "submit", "pytorch", "--name", "pt-sdk", "--image", "pt:2", "--workers", "2",
          "--gpus", "1", "--retry", "3", "--set", "master.restartPolicy=OnFailure", "--", "torchrun", "train.py")
    arena(helm_bin, cluster, ns, "submit", "mpi", "--name", "mpi-sdk", "--image", "mpi:1", "--workers", "2",
          "--gpus", "1", "--mpi-api", "v1", "--", "mpirun", "train")
    masters = {"TFJob": "tf-sdk-worker-0", "PyTorchJob": "pt-sdk-master-0", "MPIJob": "mpi-sdk-launcher"}
    for kind, name in jobs.items():
        for pod in operator.create_pods(kind, ns, name):
            kubelet.run_pod(ns, pod)
        kubelet.write_log(ns, masters[kind], CONTAINER[kind], f"{name} epoch 1\n{name} epoch 2")
        operator.reconcile(kind, ns, name)

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
                                 cond("MPIJob", "Running", "True", "Running", f"MPIJob {ns}/mpi-sdk is running.")]
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
    assert mpi["worker_0"] == []  # training-operator v1.9.0 gives MPIJob v1 workers no replica-index label
    for kind, name in jobs.items():
        job = seen["jobs"][f"{kind}:{name}"]
        assert job["logs"] == {masters[kind]: f"{name} epoch 1\n{name} epoch 2\n"}
        # arena-helm reads the same job the same way
        view = json.loads(arena(helm_bin, cluster, ns, "get", name, "-o", "json"))
        assert (view["status"], view["chiefName"]) == ("RUNNING", masters[kind])

    # the TFJob succeeds, the PyTorchJob's master fails and restarts (OnFailure), the MPIJob's launcher fails
    for pod in ("tf-sdk-worker-0", "tf-sdk-worker-1"):
        kubelet.set_pod_state(ns, pod, "Succeeded")
    kubelet.set_pod_state(ns, "pt-sdk-master-0", "Failed", exit_code=1)
    kubelet.set_pod_state(ns, "mpi-sdk-launcher", "Failed", exit_code=1)
    for kind, name in jobs.items():
        operator.reconcile(kind, ns, name)
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
    assert pt["pods"] == ["pt-sdk-worker-0"]  # the failed master was deleted, to be created again
    assert (mpi["running"], mpi["succeeded"], mpi["failed"], mpi["restarting"]) == (False, False, True, False)
    assert mpi["conditions"][-1] == cond("MPIJob", "Failed", "True", "Failed", f"MPIJob {ns}/mpi-sdk has failed")
    statuses = {n: json.loads(arena(helm_bin, cluster, ns, "get", n, "-o", "json"))["status"] for n in jobs.values()}
    assert statuses == {"tf-sdk": "SUCCEEDED", "pt-sdk": "RESTARTING", "mpi-sdk": "FAILED"}


def test_a_job_the_sdk_creates_is_read_by_arena_helm(helm_bin, cluster, namespace, operator, kubelet, sdk):
    ns = namespace
    made = sdk("create-tfjob", "sdk-made", "tf:2")
    assert made == {"name": "sdk-made", "replicas": {"Worker": 2}}
    kubelet.add_node(f"{ns}-cpu", pool=ns)
    try:
        pods = operator.create_pods("TFJob", ns, "sdk-made")
        assert pods == ["sdk-made-worker-0", "sdk-made-worker-1"]
        for pod in pods:
            kubelet.run_pod(ns, pod)
        operator.reconcile("TFJob", ns, "sdk-made")
        kubelet.write_log(ns, "sdk-made-worker-0", "tensorflow", "made by the SDK")
        view = json.loads(arena(helm_bin, cluster, ns, "get", "sdk-made", "-o", "json"))
        assert (view["name"], view["trainer"], view["status"], view["chiefName"]) == (
            "sdk-made", "tfjob", "RUNNING", "sdk-made-worker-0")
        assert sorted(i["name"] for i in view["instances"]) == pods
        assert arena(helm_bin, cluster, ns, "logs", "sdk-made") == "made by the SDK\n"
        print("list shows:", arena(helm_bin, cluster, ns, "list", "-o", "json"), file=sys.stderr)
    finally:
        kubelet.remove_node(f"{ns}-cpu")
