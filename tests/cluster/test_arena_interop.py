"""Arena v1's own CLI (github.com/kubeflow/arena v0.15.5, built from its module by scripts/build-cluster.sh) and
arena-helm on one cluster, both ways: what ``arena list/get/top job/delete`` make of the jobs arena-helm submitted,
and what ``arena-helm list/get`` make of a job ``arena submit`` made. Arena runs as its installer sets it up:
its helm on PATH as ``arena-helm`` (the real helm 3 binary), its kubectl as ``arena-kubectl``, its charts in
``$HOME/charts`` (the module's own). docs/compatibility.md ("Arena's CLI on arena-helm's jobs") lists what this
shows."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from controllers import source_dir
from helmtools import helm_path
from kubecluster import kube_bin_dir
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_for, wait_job_pods

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
TICKING = re.compile(r"(?<=\s)\d+[smhd](\d+[sm])?(?=\s|$)", re.M)


def mask(text: str) -> str:
    """Durations tick; columns are squeezed."""
    return re.sub(r" +", " ", TICKING.sub("<t>", text)).strip()


@pytest.fixture(scope="module")
def arena_home(tmp_path_factory) -> tuple[Path, Path]:
    """(HOME with Arena's charts, PATH folder with arena, arena-helm (helm) and arena-kubectl (kubectl))."""
    home, bin_dir = tmp_path_factory.mktemp("arena-home"), tmp_path_factory.mktemp("arena-bin")
    (home / "charts").symlink_to(source_dir("arena") / "charts")
    shutil.copy(kube_bin_dir(("arena",)) / "arena", bin_dir / "arena")
    shutil.copy(helm_path("3.17.3"), bin_dir / "arena-helm")
    shutil.copy(helm_path("3.17.3").parent / "kubectl", bin_dir / "arena-kubectl")
    return home, bin_dir


@pytest.fixture
def arena(arena_home, cluster, namespace):
    home, bin_dir = arena_home

    def run(*args):
        return subprocess.run([str(bin_dir / "arena"), *args, "-n", namespace], capture_output=True, text=True,
                              env={"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin",
                                   "KUBECONFIG": str(cluster.admin.kubeconfig)}, check=False)
    return run


@pytest.fixture
def ours(cluster, namespace):
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_path("4.1.4")), "-n", namespace]

    def run(*args):
        i = args.index("--") if "--" in args else len(args)
        res = runner.invoke(app, [*args[:i], *base, *args[i:]])
        assert res.exit_code == 0, res.output
        return res.stdout
    return run


def test_arena_reads_arena_helm_s_tfjobs_and_pytorchjobs_not_its_mpijobs(arena, ours, cluster, namespace, gpu_node):
    ours("submit", "tf", "--name", "tf1", "--image", "tf:2", "--workers", "2", "--gpus", "1", "--", "python", "x.py")
    ours("submit", "pytorch", "--name", "pt1", "--image", "pt:2", "--workers", "2", "--", "python", "x.py")
    ours("submit", "mpi", "--name", "mpi1", "--image", "mpi:2", "--workers", "2", "--", "mpirun", "python", "x.py")
    core = client.CoreV1Api(cluster.api_client())
    wait_job_pods(core, namespace, "tf1", ["tf1-worker-0", "tf1-worker-1"])
    wait_job_pods(core, namespace, "pt1", ["pt1-master-0", "pt1-worker-0"])
    wait_for(lambda: mask(ours("list")).count(" RUNNING ") >= 2, "tf1 and pt1 RUNNING")
    listed = mask(ours("list")).splitlines()
    assert [ln for ln in listed if not ln.startswith("mpi1 ")] == [
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE",
        f"pt1 RUNNING PYTORCHJOB <t> 0 0 {gpu_node}",
        f"tf1 RUNNING TFJOB <t> 2 2 {gpu_node}"]
    assert [ln.split()[2] for ln in listed if ln.startswith("mpi1 ")] == ["MPIJOB"]  # running or not yet
    # Arena lists the training operator's kinds alike; its NODE is the pod's host IP; the MPIJob (mpi-operator's
    # v2beta1) is not among its kinds' objects: left out, without a word
    # (Arena orders jobs of the same second as it finds them: the rows are compared sorted)
    res = arena("list")
    assert res.returncode == 0 and res.stderr == "", res
    header, *rows = mask(res.stdout).splitlines()
    assert (header, sorted(rows)) == ("NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE", [
        "pt1 RUNNING PYTORCHJOB <t> 0 0 127.0.0.1",
        "tf1 RUNNING TFJOB <t> 2 2 127.0.0.1"])
    res = arena("top", "job")
    assert res.returncode == 0, res
    header, *rows, total = [ln for ln in mask(res.stdout).splitlines() if ln]
    assert (header, sorted(rows), total) == ("NAME STATUS TRAINER AGE GPU(Requested) GPU(Allocated) NODE", [
        "pt1 RUNNING PYTORCHJOB <t> 0 0 127.0.0.1",
        "tf1 RUNNING TFJOB <t> 2 2 127.0.0.1"], "Total Allocated/Requested GPUs of Training Jobs: 2/2")
    res = arena("get", "tf1")
    assert res.returncode == 0, res
    lines = [ln.strip() for ln in mask(res.stdout).splitlines()]
    assert [ln for ln in lines if ln.startswith(("Name:", "Status:", "Trainer:", "tf1-"))] == [
        "Name: tf1", "Status: RUNNING", "Trainer: TFJOB",
        f"tf1-worker-0 Running <t> true 1 {gpu_node}", f"tf1-worker-1 Running <t> false 1 {gpu_node}"]
    res = arena("get", "mpi1")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.splitlines()[-1].endswith(
        f'msg="Not found training job mpi1 in namespace {namespace},please use \'arena submit\' to create it."')
    # arena delete looks for the ConfigMap <name>-<type> its own submit makes: none here, so it deletes nothing
    res = arena("delete", "tf1")
    assert res.returncode == 0 and res.stderr.rstrip().endswith(
        "msg=\"The training job 'tf1' does not exist,skip to delete it\""), res
    assert "tf1 RUNNING TFJOB" in mask(ours("list"))


def test_arena_helm_reads_a_job_arena_submitted(arena, ours, cluster, namespace, gpu_node):
    res = arena("submit", "tf", "--name", "atf", "--image", "tf:2", "--workers", "1", "python x.py")
    assert res.returncode == 0 and res.stdout == "tfjob.kubeflow.org/atf created\n", res
    # one worker and no PS: a single chief, as Arena's tfjob chart makes it
    wait_job_pods(client.CoreV1Api(cluster.api_client()), namespace, "atf", ["atf-chief-0"])
    wait_for(lambda: "RUNNING" in ours("list"), "atf RUNNING")
    assert mask(ours("list")).splitlines() == [
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE RELEASE",
        f"atf RUNNING TFJOB <t> 0 0 {gpu_node} -"]
    got = mask(ours("get", "atf")).splitlines()
    assert [ln for ln in got if ln.startswith(("Name:", "Status:", "Trainer:", "Release:"))] == [
        "Name: atf", "Status: RUNNING", "Trainer: TFJOB", "Release: N/A (the job has no helm release)"]
    rows = mask(ours("top", "job")).splitlines()
    assert rows[1].split()[:5] == ["atf", "RUNNING", "TFJOB", "0", "0"], rows
    # arena-helm delete leaves a job it has no release of to its maker, and says how to remove it
    res = runner.invoke(app, ["delete", "atf", "--kubeconfig", str(cluster.admin.kubeconfig), "-n", namespace,
                              "--helm-binary", str(helm_path("4.1.4"))])
    assert (res.exit_code, res.stderr) == (2, (
        f"error: tfjob/atf in namespace {namespace} has no helm release (it was made without helm, e.g. with kubectl "
        f"or the Kubeflow SDK): delete the job object with 'arena-helm delete atf --object -n {namespace}' or "
        f"'kubectl delete tfjobs.kubeflow.org atf -n {namespace}'\n"))
    # and Arena still manages its own job: its get and delete (its ConfigMap atf-tfjob)
    assert arena("get", "atf").returncode == 0
    res = arena("delete", "atf")
    assert res.returncode == 0, res
    wait_for(lambda: "atf" not in ours("list"), "atf gone")
