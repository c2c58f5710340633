"""suspend and resume through the CLI against the real API server and the real operators (training-operator
v1.9.3, mpi-operator v0.8.0) with kwok's nodes, with both helm versions: a helm upgrade of the job's release
(the revision shows in get, the other values are kept), the operator removing and recreating the pods (an
MPIJob's launcher batch Job is suspended, not deleted), SUSPENDED in list and get, and the bad cases (unknown,
finished, already suspended, not suspended, no release, a CRD without suspend); and one job's whole life: a
worker restarted in place, success, the clean-pod policy and ttlSecondsAfterFinished as the operator applies
them."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_for, wait_gone, wait_job_pods

from arena_helm.cli import app
from arena_helm.core.jobkinds import names_hint

pytestmark = pytest.mark.cluster
runner = CliRunner()
TICKING = re.compile(r"(?<=\s)\d+(s|m|h|d|y|h\d+m)(?=\s|$)", re.M)

KINDS = {  # submit alias -> (kind, plural, API version, the pods the operator creates)
    "tf": ("TFJob", "tfjobs", "v1", ["train-ps-0", "train-worker-0", "train-worker-1"]),
    "pytorch": ("PyTorchJob", "pytorchjobs", "v1", ["train-master-0", "train-worker-0"]),
    "mpi": ("MPIJob", "mpijobs", "v2beta1", None),  # the launcher Job's pod has a generated name
}
JOB_NAME = "training.kubeflow.org/job-name"
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
    kubelet.remove_node(name)


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


def wait_pods_gone(cluster, ns, name="train", timeout=60.0) -> None:
    """Until the job's pods are gone (deleted by the operator, confirmed by kwok)."""
    core = client.CoreV1Api(cluster.api_client())
    selector = f"training.kubeflow.org/job-name={name}"
    try:
        wait_gone(core, ns, selector, timeout)
    except AssertionError as e:
        left = [(p.metadata.name, p.status.phase, bool(p.metadata.deletion_timestamp),
                 [s.restart_count for s in p.status.container_statuses or []])
                for p in core.list_namespaced_pod(ns, label_selector=selector).items]
        raise AssertionError(f"{e}; left (name, phase, deleting, restarts): {left}") from None


def wait_suspended(cluster, ns, alias, want: bool, name="train", timeout=60.0) -> dict:
    """Until the operator's Suspended condition is ``want``; returns the job's status."""
    def got():
        st = job_of(cluster, ns, alias, name).get("status") or {}
        return st if suspended(st) is want else None

    return wait_for(got, f"{alias} {name}: Suspended={want}", timeout)


def wait_status(ctx, want: str, name="train", timeout=60.0) -> dict:
    """Until ``arena-helm get NAME -o json`` says ``want``; returns the view."""
    seen = []

    def got():
        data = json.loads(ok(ctx("get", name, "-o", "json")))
        seen.append(data["status"])
        return data if data["status"] == want else None

    try:
        return wait_for(got, f"arena-helm get {name}: {want}", timeout)
    except AssertionError as e:
        raise AssertionError(f"{e}; statuses seen {sorted(set(seen))}") from None


def pod_names(cluster, ns, name="train"):
    pods = client.CoreV1Api(cluster.api_client()).list_namespaced_pod(
        ns, label_selector=f"training.kubeflow.org/job-name={name}").items
    return sorted(p.metadata.name for p in pods)


def conds_of(cluster, ns, name, alias="pytorch"):
    return [(c["type"], c["status"], c.get("reason", ""), c.get("message", ""))
            for c in (job_of(cluster, ns, alias, name).get("status") or {}).get("conditions") or []]


def core_of(cluster):
    return client.CoreV1Api(cluster.api_client())


def launcher_job(cluster, ns, name="train"):
    """The launcher batch Job mpi-operator v0.8.0 made for the MPIJob (None: none)."""
    jobs = client.BatchV1Api(cluster.api_client()).list_namespaced_job(ns).items
    return next((j for j in jobs if j.metadata.name == f"{name}-launcher"), None)


def test_suspend_and_resume_an_mpijob_v2beta1(ctx, cluster, controllers, kubelet, node):
    """MPIJob v2beta1: the launcher is a batch Job (mpi-operator v0.8.0); on suspend the operator deletes the
    workers and suspends that Job (spec.suspend, the job controller deletes its pod), on resume it unsuspends the
    same Job (the job controller makes a new launcher pod)."""
    controllers.require("mpi-operator")
    ns = ctx.ns
    core = core_of(cluster)
    ok(ctx("submit", "mpi", "--name", "train", "--image", "img:1", "--gpus", "1", *SUBMIT_ARGS["mpi"], "--",
           "mpirun", "python", "train.py"))
    pods = wait_job_pods(core, ns, "train", count=3)
    (launcher,) = [p for p in pods if p.startswith("train-launcher-")]
    assert pods == sorted([launcher, "train-worker-0", "train-worker-1"])
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    wait_status(ctx, "RUNNING")
    uid = launcher_job(cluster, ns).metadata.uid

    assert ok(ctx("suspend", "train")) == ("mpijob/train suspended: the operator deletes its pods (release train "
                                           f"revision 2, namespace {ns})\n")
    assert job_of(cluster, ns, "mpi")["spec"]["runPolicy"]["suspend"] is True
    wait_suspended(cluster, ns, "mpi", True)
    wait_pods_gone(cluster, ns)
    job = launcher_job(cluster, ns)
    assert (job.metadata.uid, job.spec.suspend) == (uid, True)  # suspended, not deleted
    conds = {c["type"]: (c["status"], c["reason"]) for c in job_of(cluster, ns, "mpi")["status"]["conditions"]}
    assert conds["Suspended"] == ("True", "MPIJobSuspended") and conds["Running"] == ("False", "MPIJobSuspended")
    data = json.loads(ok(ctx("get", "train", "-o", "json")))
    assert (data["status"], data["release"]["revision"]) == ("SUSPENDED", 2)

    assert ok(ctx("resume", "train")) == ("mpijob/train resumed: the operator recreates its pods (release train "
                                          f"revision 3, namespace {ns})\n")
    assert job_of(cluster, ns, "mpi")["spec"]["runPolicy"]["suspend"] is False
    wait_suspended(cluster, ns, "mpi", False)
    job = wait_for(lambda: (j := launcher_job(cluster, ns)) is not None and j.spec.suspend is False and j,
                   "the launcher Job unsuspended")
    assert job.metadata.uid == uid
    again = wait_job_pods(core, ns, "train", count=3)
    assert [p for p in again if not p.startswith("train-launcher-")] == ["train-worker-0", "train-worker-1"]
    assert launcher not in again
    assert json.loads(ok(ctx("get", "train", "-o", "json")))["release"]["revision"] == 3


def start(ctx, kubelet, node, alias):
    kind, _, version, pods = KINDS[alias]
    ok(ctx("submit", alias, "--name", "train", "--image", "img:1", "--gpus", "1", "-e", "A=b c",
           *SUBMIT_ARGS[alias], "--", "python", "train.py", "--lr", "0.1"))
    assert wait_job_pods(core_of(ctx.cluster), ctx.ns, "train", pods) == pods
    for pod in pods:
        kubelet.run_pod(ctx.ns, pod, node)
    wait_status(ctx, "RUNNING")
    return kind, version, pods


@pytest.mark.parametrize("alias", ["tf", "pytorch"])
def test_suspend_and_resume_go_through_the_release(ctx, cluster, kubelet, node, alias):
    ns = ctx.ns
    kind, version, pods = start(ctx, kubelet, node, alias)
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

    wait_suspended(cluster, ns, alias, True)
    wait_pods_gone(cluster, ns)
    conds = {c["type"]: (c["status"], c["reason"]) for c in job_of(cluster, ns, alias)["status"]["conditions"]}
    assert conds["Suspended"] == ("True", f"{kind}Suspended") and conds["Running"] == ("False", f"{kind}Suspended")
    got = ok(ctx("get", "train"))
    assert "Status:      SUSPENDED\n" in got
    assert f"Release:     train revision 2 ({kind.lower()}-0.1.0, deployed)\n" in got
    assert got.endswith("Instances:   none (the job is suspended; arena-helm resume train recreates them)\n")
    # logs has no pod to read: it says why, as get does (the operator's condition, the switch, what recreates them)
    said = next(c["message"] for c in job_of(cluster, ns, alias)["status"]["conditions"] if c["type"] == "Suspended")
    why = (f"job train is SUSPENDED: {' '.join(said.split())} (spec.runPolicy.suspend is true); its pods: none (the "
           "job is suspended; arena-helm resume train recreates them)")
    fails(ctx("logs", "train"), 1, why)
    fails(ctx("logs", "train", "--all"), 1, why)
    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        f"train SUSPENDED {trainer} 0s 2 0 N/A\n")

    fails(ctx("suspend", "train"), 1, f"{kind.lower()}/train is already suspended")

    out = ok(ctx("resume", "train"))
    assert out == f"{kind.lower()}/train resumed: the operator recreates its pods (release train revision 3, " \
                  f"namespace {ns})\n"
    assert job_of(cluster, ns, alias)["spec"]["runPolicy"]["suspend"] is False
    assert ctx.helm_values("train", 3) == {**before, "runPolicy": {**before.get("runPolicy", {}), "suspend": False}}
    wait_suspended(cluster, ns, alias, False)
    assert wait_job_pods(core_of(cluster), ns, "train", pods) == pods
    conds = {c["type"]: (c["status"], c["reason"]) for c in job_of(cluster, ns, alias)["status"]["conditions"]}
    assert conds["Suspended"] == ("False", f"{kind}Resumed")
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    data = wait_status(ctx, "RUNNING")
    assert (data["status"], data["release"]["revision"], len(data["instances"])) == ("RUNNING", 3, len(pods))
    fails(ctx("resume", "train"), 1, f"{kind.lower()}/train is not suspended")


def test_suspend_refuses_unknown_finished_and_foreign_jobs(ctx, cluster, kubelet, node, namespace):
    ns = namespace
    core = core_of(cluster)
    fails(ctx("suspend", "nope"), 1, f"no job named nope in namespace {ns} (see arena-helm list)")
    fails(ctx("resume", "nope"), 1, f"no job named nope in namespace {ns} (see arena-helm list)")
    fails(ctx("suspend", "nope", "-T", "caffe"), 2,
          f"-T/--type 'caffe': use {names_hint()}")  # the list itself: tests/unit/test_kinds.py

    ok(ctx("submit", "tf", "--name", "done", "--image", "img:1", "--", "true"))
    (pod,) = wait_job_pods(core, ns, "done", ["done-chief-0"])  # one worker: a Chief, as Arena
    kubelet.run_pod(ns, pod, node)
    kubelet.finish_pod(ns, pod, 0)
    wait_status(ctx, "SUCCEEDED", "done")
    fails(ctx("suspend", "done"), 1, "tfjob/done already succeeded: only a pending or running job can be suspended")
    ok(ctx("submit", "pytorch", "--name", "bad", "--image", "img:1", "--", "false"))
    (pod,) = wait_job_pods(core, ns, "bad", ["bad-master-0"])
    kubelet.run_pod(ns, pod, node)
    # the master's restartPolicy is Never: its exit 1 fails the job (--retry 0: no backoffLimit, the pod is kept)
    kubelet.annotate(ns, pod, {"arena-helm.test/exit-code": "1"})
    wait_status(ctx, "FAILED", "bad")
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

    from arena_helm.adapters.charts import assemble_chart

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
    # a pending job (its pod unschedulable) can be suspended
    ok(ctx("submit", "tf", "--name", "queued", "--image", "img:1", "--selector", "pool=none", "--", "true"))
    (pod,) = wait_job_pods(core, ns, "queued", ["queued-chief-0"])
    kubelet.wait_unschedulable(ns, pod)
    assert json.loads(ok(ctx("get", "queued", "-o", "json")))["status"] == "PENDING"
    assert ok(ctx("suspend", "queued")).startswith("tfjob/queued suspended")
    assert json.loads(ok(ctx("get", "queued", "-o", "json")))["status"] == "SUSPENDED"


def test_suspend_needs_a_crd_with_run_policy_suspend(ctx, cluster, controllers, tmp_path, namespace):
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
    # the running mpi-operator lost its CRD for a while: it must act on MPIJobs again for the tests after this one
    if "mpi-operator" in controllers.running:
        ok(ctx("submit", "mpi", "--name", "again", "--image", "img:1", "--workers", "1", "--", "mpirun", "x"))
        wait_job_pods(core_of(cluster), namespace, "again", count=2, timeout=120)


def test_a_namespace_limited_user_can_suspend_and_resume(helm_bin, cluster):
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
        wait_suspended(cluster, ns, "tf", True, name)
        res = runner.invoke(app, ["list", "-o", "json", *base])
        assert {j["name"]: j["status"] for j in json.loads(res.stdout)}[name] == "SUSPENDED"
        res = runner.invoke(app, ["resume", name, *base])
        assert res.exit_code == 0 and "revision 3" in res.stdout, res.output
    finally:
        assert runner.invoke(app, ["delete", name, *base]).exit_code == 0


def test_a_pytorchjob_lives_through_a_restart_to_success_and_its_ttl(ctx, cluster, kubelet, node):
    """One PyTorchJob's whole life through the real training-operator: submitted by arena-helm (1 master + 1
    worker, --retry 2, --ttl-after-finished), run by kwok, its worker's container fails once and is restarted in
    place by the kubelet (restartPolicy OnFailure: the pod stays Running, no Restarting condition: RUNNING), then
    both pods succeed: SUCCEEDED. The clean-pod policy Running (the default) keeps the finished pods;
    ttlSecondsAfterFinished makes the operator delete the PyTorchJob (and the garbage collector its pods).
    training-operator counts the in-place restarts against backoffLimit (restarts >= backoffLimit fails the job):
    with --retry 1 the same restart fails the job at once and the operator deletes every pod, whatever
    --clean-task-policy says (None here); a job with --clean-task-policy All loses its pods as it succeeds."""
    ns = ctx.ns
    core = core_of(cluster)
    ok(ctx("submit", "pytorch", "--name", "life", "--image", "img:1", "--gpus", "1", "--workers", "2", "--retry", "2",
           "--ttl-after-finished", "15s", "--", "torchrun", "train.py"))
    run_policy = job_of(cluster, ns, "pytorch", "life")["spec"]["runPolicy"]
    assert {k: run_policy.get(k) for k in ("backoffLimit", "ttlSecondsAfterFinished", "cleanPodPolicy")} == \
        {"backoffLimit": 2, "ttlSecondsAfterFinished": 15, "cleanPodPolicy": "Running"}
    specs = job_of(cluster, ns, "pytorch", "life")["spec"]["pytorchReplicaSpecs"]
    assert (specs["Master"]["restartPolicy"], specs["Worker"]["restartPolicy"]) == ("Never", "OnFailure")
    pods = wait_job_pods(core, ns, "life", ["life-master-0", "life-worker-0"])
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    wait_status(ctx, "RUNNING", "life")

    restarted = kubelet.restart_container(ns, "life-worker-0", 1)
    assert restarted.status.phase == "Running"
    assert [s.restart_count for s in restarted.status.container_statuses] == [1]
    # the phase never became Failed: the operator sees an active worker, no Restarting condition
    assert [c[:3] for c in conds_of(cluster, ns, "life")] == [
        ("Created", "True", "PyTorchJobCreated"), ("Running", "True", "PyTorchJobRunning")]
    view = json.loads(ok(ctx("get", "life", "-o", "json")))
    assert (view["status"], view["statusReason"]) == ("RUNNING", "")
    assert [(i["name"], i["status"]) for i in view["instances"]] == [("life-master-0", "Running"),
                                                                      ("life-worker-0", "Running")]

    kubelet.finish_pod(ns, "life-worker-0", 0)
    kubelet.finish_pod(ns, "life-master-0", 0)
    view = wait_status(ctx, "SUCCEEDED", "life")
    assert conds_of(cluster, ns, "life") == [
        ("Created", "True", "PyTorchJobCreated", "PyTorchJob life is created."),
        ("Running", "False", "PyTorchJobRunning", "PyTorchJob life is running."),
        ("Succeeded", "True", "PyTorchJobSucceeded", "PyTorchJob life is successfully completed.")]
    assert [(i["name"], i["status"]) for i in view["instances"]] == [("life-master-0", "Succeeded"),
                                                                      ("life-worker-0", "Succeeded")]
    # cleanPodPolicy Running: the finished pods stay
    assert pod_names(cluster, ns, "life") == ["life-master-0", "life-worker-0"]

    wait_for(lambda: not [j for j in client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kubeflow.org", "v1", ns, "pytorchjobs")["items"] if j["metadata"]["name"] == "life"],
        "the operator deletes the PyTorchJob after its TTL", 90)
    wait_pods_gone(cluster, ns, "life")
    # the TTL deleted the job, not only its pods: the release remains and arena-helm shows JOB-MISSING
    view = json.loads(ok(ctx("get", "life", "-o", "json")))
    assert (view["status"], view["instances"], view["release"]["revision"]) == ("JOB-MISSING", [], 1)
    assert view["statusReason"] == ("the PyTorchJob object is gone (deleted outside arena-helm) but its release life "
                                    f"remains: remove the release with arena-helm delete life -n {ns}")
    assert mask(ok(ctx("list"))) == mask("NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
                                         "life JOB-MISSING PYTORCHJOB N/A 0 0 N/A\n")

    # --retry 1 (backoffLimit 1): the first restart in place fails the job, its running pods are deleted
    ok(ctx("submit", "pytorch", "--name", "fragile", "--image", "img:1", "--workers", "2", "--clean-task-policy",
           "None", "--retry", "1", "--", "torchrun", "x.py"))
    for pod in wait_job_pods(core, ns, "fragile", ["fragile-master-0", "fragile-worker-0"]):
        kubelet.run_pod(ns, pod, node)
    first = {p.metadata.uid for p in core.list_namespaced_pod(ns, label_selector=f"{JOB_NAME}=fragile").items}
    wait_status(ctx, "RUNNING", "fragile")
    # a restart in place (the pod may be gone before kwok's helper sees it restarted: ask, then wait for the job)
    kubelet.annotate(ns, "fragile-worker-0", {"arena-helm.test/restart-count": "1",
                                              "arena-helm.test/restart-exit-code": "1"})
    view = wait_status(ctx, "FAILED", "fragile")
    assert view["statusReason"] == \
        "PyTorchJobFailed: Job fragile has failed because it has reached the specified backoff limit"
    assert conds_of(cluster, ns, "fragile")[-1] == (
        "Failed", "True", "PyTorchJobFailed", "Job fragile has failed because it has reached the specified backoff limit")
    # cleanPodPolicy None, and yet the operator deletes every pod before it sets Failed. (A reconcile from its
    # stale cache may then make fresh pods, which stay Running under the Failed job: seen, not always.)
    wait_for(lambda: not {p.metadata.uid for p in core.list_namespaced_pod(
        ns, label_selector=f"{JOB_NAME}=fragile").items} & first, "the first pods of fragile deleted")

    ok(ctx("submit", "pytorch", "--name", "tidy", "--image", "img:1", "--workers", "2", "--clean-task-policy", "All",
           "--", "torchrun", "train.py"))
    pods = wait_job_pods(core, ns, "tidy", ["tidy-master-0", "tidy-worker-0"])
    for pod in pods:
        kubelet.run_pod(ns, pod, node)
    kubelet.finish_pod(ns, "tidy-worker-0", 0)
    kubelet.annotate(ns, "tidy-master-0", {"arena-helm.test/exit-code": "0"})  # gone as soon as the job succeeds
    view = wait_status(ctx, "SUCCEEDED", "tidy")
    wait_pods_gone(cluster, ns, "tidy")
    assert json.loads(ok(ctx("get", "tidy", "-o", "json")))["instances"] == []
