"""suspend and resume through the CLI against the real API server, with both helm versions: a helm upgrade of
the job's release (the revision shows in get, the other values are kept), the operator stand-in's suspend
branch (``TrainingOperatorSim.reconcile`` in tests/support/simulators.py) removing and recreating the pods,
SUSPENDED in list and get, and the bad cases (unknown, finished, already suspended, not suspended, no release,
a CRD without suspend)."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
import yaml
from kubernetes import client
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
TICKING = re.compile(r"(?<=\s)\d+(s|m|h|d|y|h\d+m)(?=\s|$)", re.M)

KINDS = {  # submit alias -> (kind, plural, API version, replica types the operator stand-in creates)
    "tf": ("TFJob", "tfjobs", "v1", ["train-ps-0", "train-worker-0", "train-worker-1"]),
    "pytorch": ("PyTorchJob", "pytorchjobs", "v1", ["train-master-0", "train-worker-0"]),
    "mpi": ("MPIJob", "mpijobs", "v2beta1", ["train-launcher-0", "train-worker-0", "train-worker-1"]),
}
SUBMIT_ARGS = {"tf": ["--workers", "2", "--ps", "1"], "pytorch": ["--workers", "2"], "mpi": ["--workers", "2"]}


def mask(text: str) -> str:
    return re.sub(r" +", " ", TICKING.sub("<t>", text))


class Ctx:
    def __init__(self, helm_bin, cluster, namespace):
        self.helm_bin, self.cluster = helm_bin, cluster
        self.base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
        self.ns = namespace

    def __call__(self, *args):
        cmd = list(args)
        if cmd[0] == "submit":
            i = cmd.index("--")
            return runner.invoke(app, cmd[:i] + self.base + cmd[i:])
        return runner.invoke(app, cmd + self.base)

    def helm_values(self, release: str, revision: int) -> dict:
        out = subprocess.run([str(self.helm_bin), "get", "values", release, "-n", self.ns, "--revision",
                              str(revision), "-o", "json", "--kubeconfig", str(self.cluster.admin.kubeconfig)],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)


@pytest.fixture
def ctx(helm_bin, cluster, namespace):
    return Ctx(helm_bin, cluster, namespace)


@pytest.fixture
def node(kubelet, namespace):
    name = f"node-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=4)
    yield name
    client.CoreV1Api(kubelet.api_client).delete_node(name)
    kubelet.nodes.discard(name)


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


def fails(res, code: int, line: str):
    assert (res.exit_code, res.stderr) == (code, f"error: {line}\n"), res.output


def job_of(cluster, ns, alias, name="train"):
    kind, plural, version, _ = KINDS[alias]
    return client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", version, ns, plural, name)


def suspended(status: dict) -> bool | None:
    """The operator's Suspended condition in a job status (None: none yet)."""
    cond = {c["type"]: c["status"] for c in status.get("conditions") or []}.get("Suspended")
    return None if cond is None else cond == "True"


def wait_pods_gone(cluster, ns, name="train", timeout=20.0) -> None:
    """Until the job's pods are gone (the kubelet stand-in confirms the deletion of bound pods)."""
    deadline = time.monotonic() + timeout
    while pod_names(cluster, ns, name):
        assert time.monotonic() < deadline, f"pods of {name} still there after {timeout}s"
        time.sleep(0.1)


def pod_names(cluster, ns, name="train"):
    pods = client.CoreV1Api(cluster.api_client()).list_namespaced_pod(
        ns, label_selector=f"training.kubeflow.org/job-name={name}").items
    return sorted(p.metadata.name for p in pods)


def test_suspend_and_resume_an_mpijob_v2beta1(ctx, cluster, operator, kubelet, node):
    """MPIJob v2beta1: the launcher is a batch Job (mpi-operator v0.8.0); the operator stand-in deletes it on
    suspend and makes it again on resume (tests/support/simulators.py ``reconcile``)."""
    ns = ctx.ns
    ok(ctx("submit", "mpi", "--name", "train", "--image", "img:1", "--gpus", "1", *SUBMIT_ARGS["mpi"], "--",
           "mpirun", "python", "train.py"))
    pods = operator.create_pods("MPIJob", ns, "train", "v2beta1")
    launcher = operator.launcher_pod(ns, "train")
    assert sorted(pods) == sorted([launcher, "train-worker-0", "train-worker-1"])
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    operator.set_condition("MPIJob", ns, "train", "Running", version="v2beta1")
    assert json.loads(ok(ctx("get", "train", "-o", "json")))["status"] == "RUNNING"

    assert ok(ctx("suspend", "train")) == ("mpijob/train suspended: the operator deletes its pods (release train "
                                           f"revision 2, namespace {ns})\n")
    assert job_of(cluster, ns, "mpi")["spec"]["runPolicy"]["suspend"] is True
    operator.reconcile("MPIJob", ns, "train", "v2beta1")
    assert operator.launcher_job(ns, "train") is None
    conds = {c["type"]: (c["status"], c["reason"]) for c in job_of(cluster, ns, "mpi")["status"]["conditions"]}
    assert conds["Suspended"] == ("True", "MPIJobSuspended") and conds["Running"] == ("False", "MPIJobSuspended")
    data = json.loads(ok(ctx("get", "train", "-o", "json")))
    assert (data["status"], data["release"]["revision"]) == ("SUSPENDED", 2)

    assert ok(ctx("resume", "train")) == ("mpijob/train resumed: the operator recreates its pods (release train "
                                          f"revision 3, namespace {ns})\n")
    assert job_of(cluster, ns, "mpi")["spec"]["runPolicy"]["suspend"] is False
    operator.reconcile("MPIJob", ns, "train", "v2beta1")
    assert operator.launcher_job(ns, "train") is not None
    assert json.loads(ok(ctx("get", "train", "-o", "json")))["release"]["revision"] == 3


def start(ctx, operator, kubelet, node, alias):
    kind, _, version, pods = KINDS[alias]
    ok(ctx("submit", alias, "--name", "train", "--image", "img:1", "--gpus", "1", "-e", "A=b c",
           *SUBMIT_ARGS[alias], "--", "python", "train.py", "--lr", "0.1"))
    assert sorted(operator.create_pods(kind, ctx.ns, "train", version)) == pods
    for pod in pods:
        kubelet.run_pod(ctx.ns, pod, node)
    operator.set_condition(kind, ctx.ns, "train", "Running", version=version)
    return kind, version, pods


@pytest.mark.parametrize("alias", ["tf", "pytorch"])
def test_suspend_and_resume_go_through_the_release(ctx, cluster, operator, kubelet, node, alias):
    ns = ctx.ns
    kind, version, pods = start(ctx, operator, kubelet, node, alias)
    trainer = kind.upper()
    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        f"train RUNNING {trainer} 0s 2 2 {node}\n")
    assert json.loads(ok(ctx("get", "train", "-o", "json")))["status"] == "RUNNING"

    out = ok(ctx("suspend", "train"))
    assert out == f"{kind.lower()}/train suspended: the operator deletes its pods (release train revision 2, " \
                  f"namespace {ns})\n"
    assert job_of(cluster, ns, alias)["spec"]["runPolicy"]["suspend"] is True
    # helm's record: revision 2 holds the same values plus the switch
    before, after = ctx.helm_values("train", 1), ctx.helm_values("train", 2)
    assert after == {**before, "runPolicy": {**before.get("runPolicy", {}), "suspend": True}}
    # the intent shows at once, before the operator acts
    data = json.loads(ok(ctx("get", "train", "-o", "json")))
    assert (data["status"], data["release"]["revision"]) == ("SUSPENDED", 2)

    assert suspended(operator.reconcile(kind, ns, "train", version)) is True
    wait_pods_gone(cluster, ns)
    conds = {c["type"]: (c["status"], c["reason"]) for c in job_of(cluster, ns, alias)["status"]["conditions"]}
    assert conds["Suspended"] == ("True", f"{kind}Suspended") and conds["Running"] == ("False", f"{kind}Suspended")
    got = ok(ctx("get", "train"))
    assert "Status:      SUSPENDED\n" in got
    assert f"Release:     train revision 2 ({kind.lower()}-0.1.0, deployed)\n" in got
    assert got.endswith("Instances:   none (the job is suspended; arena-helm resume train recreates them)\n")
    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        f"train SUSPENDED {trainer} 0s 2 0 N/A\n")

    fails(ctx("suspend", "train"), 1, f"{kind.lower()}/train is already suspended")

    out = ok(ctx("resume", "train"))
    assert out == f"{kind.lower()}/train resumed: the operator recreates its pods (release train revision 3, " \
                  f"namespace {ns})\n"
    assert job_of(cluster, ns, alias)["spec"]["runPolicy"]["suspend"] is False
    assert ctx.helm_values("train", 3) == {**before, "runPolicy": {**before.get("runPolicy", {}), "suspend": False}}
    assert suspended(operator.reconcile(kind, ns, "train", version)) is False
    assert pod_names(cluster, ns) == pods
    conds = {c["type"]: (c["status"], c["reason"]) for c in job_of(cluster, ns, alias)["status"]["conditions"]}
    assert conds["Suspended"] == ("False", f"{kind}Resumed")
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    operator.set_condition(kind, ns, "train", "Running", version=version)
    data = json.loads(ok(ctx("get", "train", "-o", "json")))
    assert (data["status"], data["release"]["revision"], len(data["instances"])) == ("RUNNING", 3, len(pods))
    fails(ctx("resume", "train"), 1, f"{kind.lower()}/train is not suspended")


def test_suspend_refuses_unknown_finished_and_foreign_jobs(ctx, cluster, operator, namespace):
    ns = namespace
    fails(ctx("suspend", "nope"), 1, f"no job named nope in namespace {ns} (see arena-helm list)")
    fails(ctx("resume", "nope"), 1, f"no job named nope in namespace {ns} (see arena-helm list)")
    fails(ctx("suspend", "nope", "-T", "caffe"), 2,
          "-T/--type 'caffe': use tfjob, pytorchjob, mpijob, trainjob (or tf, pytorch, py, mpi, tj)")

    ok(ctx("submit", "tf", "--name", "done", "--image", "img:1", "--", "true"))
    operator.set_condition("TFJob", ns, "done", "Succeeded")
    fails(ctx("suspend", "done"), 1, "tfjob/done already succeeded: only a pending or running job can be suspended")
    ok(ctx("submit", "pytorch", "--name", "bad", "--image", "img:1", "--", "false"))
    operator.set_condition("PyTorchJob", ns, "bad", "Failed")
    fails(ctx("resume", "bad"), 1, "pytorchjob/bad already failed: only a pending or running job can be resumed")
    # still revision 1: nothing was upgraded
    assert [j["release"]["revision"] for j in json.loads(ok(ctx("list", "-o", "json")))] == [1, 1]

    # a job made without arena-helm has no release to upgrade
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.create_namespaced_custom_object("kubeflow.org", "v1", ns, "tfjobs", {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "handmade"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "tensorflow", "image": "img:1"}]}}}}}})
    fails(ctx("suspend", "handmade"), 1, f"tfjob/handmade in namespace {ns} has no helm release (it was not "
          "submitted by arena-helm): set spec.runPolicy.suspend on it with kubectl patch instead")
    # a release of another version of the chart (installed with plain helm): the upgrade would change the chart
    import tempfile
    from pathlib import Path

    from arena_helm.charts import assemble_chart

    with tempfile.TemporaryDirectory() as tmp:
        chart = assemble_chart("tfjob", Path(tmp))
        meta = yaml.safe_load((chart / "Chart.yaml").read_text())
        shipped = meta["version"]
        meta["version"] = "0.0.9"
        (chart / "Chart.yaml").write_text(yaml.safe_dump(meta))
        subprocess.run([str(ctx.helm_bin), "install", "older", str(chart), "-n", ns, "--values", "-", "--kubeconfig",
                        str(cluster.admin.kubeconfig)], input=json.dumps({"image": "img:1"}), text=True, check=True,
                       capture_output=True)
    fails(ctx("suspend", "older"), 1, f"release older uses chart tfjob-0.0.9 and this arena-helm ships tfjob-{shipped}: "
          "suspend would also change the chart; use the arena-helm that submitted it, or helm upgrade older "
          "--reuse-values --set runPolicy.suspend=true with that chart")
    assert "suspend" not in job_of(cluster, ns, "tf", "older")["spec"]["runPolicy"] or \
        job_of(cluster, ns, "tf", "older")["spec"]["runPolicy"]["suspend"] is False
    # a pending job (no pods yet) can be suspended
    ok(ctx("submit", "tf", "--name", "queued", "--image", "img:1", "--", "true"))
    assert ok(ctx("suspend", "queued")).startswith("tfjob/queued suspended")
    assert json.loads(ok(ctx("get", "queued", "-o", "json")))["status"] == "SUSPENDED"


def test_suspend_needs_a_crd_with_run_policy_suspend(ctx, cluster, tmp_path, namespace):
    """An mpi-operator older than v0.4 serves MPIJob without runPolicy.suspend: the API server prunes the field,
    which the dry run finds before any upgrade."""
    crd = yaml.safe_load(cluster.mpi_crd_file("v2beta1").read_text())
    for version in crd["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        del spec["runPolicy"]["properties"]["suspend"]
    old = tmp_path / "mpijobs-without-suspend.yaml"
    old.write_text(yaml.safe_dump(crd))
    cluster.delete_crd("mpijobs.kubeflow.org")
    cluster.create_crd(old)
    try:
        ok(ctx("submit", "mpi", "--name", "hvd", "--image", "img:1", "--", "mpirun", "x"))
        fails(ctx("suspend", "hvd"), 1, "the cluster's MPIJob (kubeflow.org/v2beta1) has no runPolicy.suspend: "
              "install the Kubeflow mpi-operator (v0.4+, kubeflow.org/v2beta1) or the training operator "
              "(kubeflow.org/v1) to suspend jobs")
        assert json.loads(ok(ctx("get", "hvd", "-o", "json")))["release"]["revision"] == 1
    finally:
        cluster.swap_mpi_crd("v2beta1")


def test_a_namespace_limited_user_can_suspend_and_resume(helm_bin, cluster, operator):
    """The dry run and the upgrade need only the namespace's permissions (no CRD read, nothing cluster-wide)."""
    import uuid

    ns = cluster.limited.namespace
    name = f"mine-{uuid.uuid4().hex[:6]}"
    base = ["--kubeconfig", str(cluster.limited.kubeconfig), "--helm-binary", str(helm_bin)]
    res = runner.invoke(app, ["submit", "tf", "--name", name, "--image", "img:1", *base, "--", "true"])
    assert res.exit_code == 0, res.output
    try:
        res = runner.invoke(app, ["suspend", name, *base])
        assert res.stdout == f"tfjob/{name} suspended: the operator deletes its pods (release {name} revision 2, " \
                             f"namespace {ns})\n", res.output
        assert suspended(operator.reconcile("TFJob", ns, name)) is True
        res = runner.invoke(app, ["list", "-o", "json", *base])
        assert {j["name"]: j["status"] for j in json.loads(res.stdout)}[name] == "SUSPENDED"
        res = runner.invoke(app, ["resume", name, *base])
        assert res.exit_code == 0 and "revision 3" in res.stdout, res.output
    finally:
        assert runner.invoke(app, ["delete", name, *base]).exit_code == 0
