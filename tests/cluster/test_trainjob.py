"""submit trainjob and the read commands (list, get, logs, top job, delete, prune, suspend, resume) against the
real API server with the real controllers: Kubeflow Trainer v2.3.0 makes the TrainJob's JobSet, JobSet v0.12.0
its Indexed Jobs and kube-controller-manager's job controller their pods, which kwok runs (its ClusterTraining-
Runtimes are the ones of Trainer's release). Tables are asserted exactly (ticking durations masked)."""

from __future__ import annotations

import json
import re
import time

import pytest
from kubecluster import CRD_DIR, make_claim
from kubernetes import client
from kubernetes.client.rest import ApiException
from typer.testing import CliRunner
from waits import wait_for

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
TICKING = re.compile(r"(?<=\s)\d+(s|m|h|d|y|h\d+m)(?=\s|$)", re.M)
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOBSET = ("jobset.x-k8s.io", "v1alpha2")
JS_NAME = "jobset.sigs.k8s.io/jobset-name"


def mask(text: str) -> str:
    """Durations tick between runs: replace them, and squeeze the columns."""
    return re.sub(r" +", " ", TICKING.sub("<t>", text))


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


class Ctx:
    """The CLI in-process against the test cluster (as tests/cluster/test_read.py does)."""

    def __init__(self, helm_bin, cluster, namespace, user="admin"):
        self.base = ["--kubeconfig", str(cluster.users[user].kubeconfig), "--helm-binary", str(helm_bin)]
        self.ns = namespace

    def __call__(self, *args):
        cmd = list(args)
        if cmd[0] == "submit":  # options go before a submit's command words
            i = cmd.index("--")
            return runner.invoke(app, cmd[:i] + self.base + ["-n", self.ns] + cmd[i:])
        return runner.invoke(app, cmd + self.base + ["-n", self.ns])

    def view(self, name: str) -> dict:
        return json.loads(ok(self("get", name, "-o", "json")))

    def wait_status(self, name: str, status: str, timeout: float = 60.0) -> dict:
        """Until ``arena-helm get NAME -o json`` says ``status`` (the controllers work in the background)."""
        return wait_for(lambda: (lambda v: v if v["status"] == status else None)(self.view(name)),
                        f"arena-helm get {name}: {status}", timeout)


@pytest.fixture(scope="session")
def runtimes(controllers):
    """The ClusterTrainingRuntimes of Trainer v2.3.0's release (applied when the controller started)."""
    controllers.require("trainer", "jobset")
    return sorted(controllers.running["trainer"].runtime_names)


@pytest.fixture
def ctx(helm_bin, cluster, namespace, runtimes):
    return Ctx(helm_bin, cluster, namespace)


def pods_of(cluster, ns: str, name: str) -> list:
    pods = client.CoreV1Api(cluster.api_client()).list_namespaced_pod(ns, label_selector=f"{JS_NAME}={name}").items
    return sorted((p for p in pods if not p.metadata.deletion_timestamp),
                  key=lambda p: (p.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"],
                                 int(p.metadata.labels["batch.kubernetes.io/job-completion-index"])))


def wait_pods_of(cluster, ns: str, name: str, count: int, timeout: float = 60.0) -> list:
    """Until the job controller made the ``count`` pods of the TrainJob's JobSet."""
    return wait_for(lambda: (lambda ps: ps if len(ps) == count else None)(pods_of(cluster, ns, name)),
                    f"the {count} pods of {ns}/{name}", timeout)


def wait_gone(fn, timeout: float = 60.0) -> None:
    """Poll until ``fn()`` raises 404 or returns an empty list (the garbage collector works in the background)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if not last:
                return
        except ApiException as exc:
            if exc.status == 404:
                return
            raise
        time.sleep(0.2)
    if isinstance(last, list):
        last = [(p.metadata.name, p.metadata.deletion_timestamp, [o.kind + "/" + o.name for o in
                                                                  p.metadata.owner_references or []]) for p in last]
    raise AssertionError(f"still there after the garbage collector's grace: {last}")


def test_a_trainjob_through_its_life(ctx, cluster, kubelet, namespace):
    ns = namespace
    ok(ctx("submit", "trainjob", "--name", "mnist", "--image", "pytorch/pytorch:2", "--workers", "2", "--gpus", "2",
           "--cpu", "4", "--memory", "8Gi", "-l", "team=vision", "--", "torchrun", "train.py"))
    custom = client.CustomObjectsApi(cluster.api_client())
    tj = custom.get_namespaced_custom_object(*TRAINER, ns, "trainjobs", "mnist")
    assert tj["spec"]["trainer"]["command"] == ["sh", "-c", "torchrun train.py"]
    assert tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0][
        "name"] == "node"  # the torch runtime's only replicated job with the trainer container

    # Trainer makes the JobSet, JobSet its Indexed Job, the job controller the pods: no node yet, they wait
    js = wait_for(lambda: custom.list_namespaced_custom_object(*JOBSET, ns, "jobsets")["items"], "the JobSet")[0]
    assert js["metadata"]["name"] == "mnist"
    assert js["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    node_job = js["spec"]["replicatedJobs"][0]
    assert node_job["template"]["spec"]["parallelism"] == 2
    container = node_job["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "pytorch/pytorch:2"
    # Trainer writes the merged resourcesPerNode as quantities (strings), the stand-in kept the chart's int
    assert container["resources"] == {"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2"},
                                      "limits": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2"}}
    pods = wait_pods_of(cluster, ns, "mnist", 2)
    assert [p.metadata.labels["batch.kubernetes.io/job-name"] for p in pods] == ["mnist-node-0"] * 2
    assert [p.metadata.labels["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    assert all(p.metadata.labels["team"] == "vision" for p in pods)
    # the Job counts its Pending pods active (and so the TrainJob's jobsStatus): arena-helm still says PENDING
    wait_for(lambda: any(int(j.get("active") or 0) for j in (custom.get_namespaced_custom_object(
        *TRAINER, ns, "trainjobs", "mnist").get("status") or {}).get("jobsStatus") or []), "jobsStatus active")
    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        "mnist PENDING TRAINJOB 0s 4 0 N/A\n")

    gpu_node = f"tj-gpu-{ns}"
    kubelet.add_node(gpu_node, pool=ns, gpus=8)
    try:
        _run_and_finish(ctx, cluster, kubelet, custom, ns, gpu_node, [p.metadata.name for p in pods])
    finally:
        kubelet.remove_node(gpu_node)


def _run_and_finish(ctx, cluster, kubelet, custom, ns, gpu_node, names):
    first, second = names
    for p in (first, second):
        kubelet.run_pod(ns, p, gpu_node)
    wait_for(lambda: "mnist RUNNING" in mask(ok(ctx("list"))), "list: mnist RUNNING")
    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        f"mnist RUNNING TRAINJOB 0s 4 4 {gpu_node}\n")
    wide = mask(ok(ctx("list", "-o", "wide")))
    assert wide == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE CPU(Requested) MEMORY(Requested) "
        "REVISION CHART RUNTIME\n"
        f"mnist RUNNING TRAINJOB 0s 4 4 {gpu_node} 8 16Gi 1 trainjob-0.1.0 torch-distributed "
        "(ClusterTrainingRuntime)\n")
    out = ok(ctx("get", "mnist"))
    assert "Trainer:     TRAINJOB\nRuntime:     torch-distributed (ClusterTrainingRuntime)\n" in out
    assert "GPUs:        4 requested, 4 allocated" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("mnist-node-")]
    assert [(r[0], r[1], r[3], r[4], r[5]) for r in rows] == [
        (first, "Running", "true", "2", gpu_node), (second, "Running", "false", "2", gpu_node)]
    data = ctx.view("mnist")
    assert (data["trainer"], data["status"], data["requestGPUs"], data["chiefName"], data["runtime"]) == (
        "trainjob", "RUNNING", 4, first, "torch-distributed (ClusterTrainingRuntime)")
    top = mask(ok(ctx("top", "job")))
    assert top.splitlines()[1].split()[:5] == ["mnist", "RUNNING", "TRAINJOB", "4", "4"]

    kubelet.write_log(ns, first, "node", "rank 0: epoch 1\nrank 0: done\n")
    kubelet.close_log(ns, first, "node")
    assert ok(ctx("logs", "mnist")) == "rank 0: epoch 1\nrank 0: done\n"
    kubelet.write_log(ns, second, "node", "rank 1\n")
    kubelet.close_log(ns, second, "node")
    assert ok(ctx("logs", "mnist", "-i", second)) == "rank 1\n"

    for p in (first, second):
        kubelet.finish_pod(ns, p, 0)
    data = ctx.wait_status("mnist", "SUCCEEDED")  # the Job completes, the JobSet too, Trainer: Complete
    assert data["endedAt"]
    listed = mask(ok(ctx("list")))
    assert listed == mask("NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
                          f"mnist SUCCEEDED TRAINJOB 0s 4 N/A {gpu_node}\n")
    assert "nothing to prune" in ok(ctx("prune", "--since", "1h", "-y"))

    res = ctx("delete", "mnist")
    assert res.exit_code == 0 and res.stdout == f"trainjob/mnist deleted (release mnist uninstalled from namespace {ns})\n"
    wait_gone(lambda: custom.get_namespaced_custom_object(*TRAINER, ns, "trainjobs", "mnist"))
    wait_gone(lambda: custom.get_namespaced_custom_object(*JOBSET, ns, "jobsets", "mnist"))
    wait_gone(lambda: pods_of(cluster, ns, "mnist"))
    assert ok(ctx("list")) == "NAME  STATUS  TRAINER  DURATION  GPU(Requested)  GPU(Allocated)  NODE\n"


def test_prune_removes_a_finished_trainjob(ctx, cluster, kubelet, gpu_node, namespace):
    ns = namespace
    # A failed pod does not fail the TrainJob at once with the real controllers: JobSet defaults the pods to
    # restartPolicy OnFailure and the Job keeps backoffLimit 6 (replacements after 10 s, 20 s, ...). So the
    # TrainJob fails by its deadline (--running-timeout: Trainer's Failed/DeadlineExceeded) instead.
    ok(ctx("submit", "tj", "--name", "old", "--running-timeout", "2s", "--", "python", "t.py"))
    (pod,) = wait_pods_of(cluster, ns, "old", 1)
    kubelet.run_pod(ns, pod.metadata.name, gpu_node)
    ctx.wait_status("old", "FAILED")
    assert "Reason:      DeadlineExceeded: TrainJob exceeded its active deadline\n" in ok(ctx("get", "old"))
    time.sleep(1.1)  # prune compares with whole-second timestamps: let one second pass (nothing to poll)
    out = ok(ctx("prune", "--since", "1s", "-y"))
    assert out.endswith("trainjob/old deleted\n") and f"{ns}/old  FAILED  ended " in out


def test_a_trainjob_whose_pod_fails_is_restarting_until_its_replacement_runs(ctx, cluster, kubelet, gpu_node,
                                                                            namespace):
    """Trainer v2.3.0 writes no Restarting condition: the TrainJob's JobSet's Job keeps a failed pod and makes
    another after its backoff (10 s), under its backoffLimit. Until the replacement runs the job is RESTARTING,
    with the failure said (it read PENDING, the replacement's state); then RUNNING again."""
    ns = namespace
    ok(ctx("submit", "tj", "--name", "flaky", "--", "python", "t.py"))
    (first,) = wait_pods_of(cluster, ns, "flaky", 1)
    kubelet.run_pod(ns, first.metadata.name, gpu_node)
    ctx.wait_status("flaky", "RUNNING")
    kubelet.evict_pod(ns, first.metadata.name, "The node was low on resource: memory.")
    view = ctx.wait_status("flaky", "RESTARTING")
    assert view["statusReason"] == "the operator is restarting failed replicas"
    line = f"pod {first.metadata.name}: evicted by its node: The node was low on resource: memory."
    assert f"Failure:     {line}" in ok(ctx("get", "flaky")).splitlines()
    waited = ctx("wait", "flaky", "--timeout", "1s")  # wait's progress tells it as get does
    assert (waited.exit_code, waited.stdout, waited.stderr.splitlines()) == (3, "", [
        "trainjob/flaky: Restarting",
        "error: trainjob/flaky still Restarting after --timeout 1s (the job keeps running; follow it with arena-helm "
        "get)"])

    def replacement():
        pods = client.CoreV1Api(cluster.api_client()).list_namespaced_pod(
            ns, label_selector=f"{JS_NAME}=flaky").items
        return next((p.metadata.name for p in pods if p.metadata.uid != first.metadata.uid), None)

    kubelet.run_pod(ns, wait_for(replacement, "the Job's replacement pod", 60), gpu_node)  # kwok runs it at once
    view = ctx.wait_status("flaky", "RUNNING")
    assert view["failure"] is None


def test_runtime_is_checked_against_what_the_cluster_serves(ctx, cluster, namespace, runtimes):
    res = ctx("submit", "tj", "--name", "bad", "--runtime", "torch-distributed-x", "--", "python", "t.py")
    assert res.exit_code == 2
    assert res.output == (
        f"error: --runtime torch-distributed-x: no ClusterTrainingRuntime torch-distributed-x in the cluster; the "
        f"cluster serves {', '.join(runtimes)} (ClusterTrainingRuntime)\n")
    assert ok(ctx("list")).count("\n") == 1  # nothing was installed
    res = ctx("submit", "tj", "--name", "bad", "--runtime", "mine", "--runtime-kind", "TrainingRuntime", "--",
              "python")
    assert res.exit_code == 2 and res.output.startswith(
        f"error: --runtime mine: no TrainingRuntime mine in namespace {namespace}; the cluster serves ")


def test_a_namespaced_training_runtime(ctx, cluster, namespace):
    import yaml

    body = yaml.safe_load((CRD_DIR / "trainer-v2.3.0/runtimes/torch_distributed.yaml").read_text())
    body.update(kind="TrainingRuntime", metadata={"name": "team-torch", "namespace": namespace})
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.create_namespaced_custom_object(*TRAINER, namespace, "trainingruntimes", body)
    res = ctx("submit", "tj", "--name", "t1", "--runtime", "team-torch", "--", "python", "t.py")
    assert res.exit_code == 2 and res.output == (
        "error: --runtime team-torch: it is a TrainingRuntime, not a ClusterTrainingRuntime: add --runtime-kind "
        "TrainingRuntime\n")
    ok(ctx("submit", "tj", "--name", "t1", "--runtime", "team-torch", "--runtime-kind", "TrainingRuntime",
           "--workers", "3", "--", "python", "t.py"))
    assert len(wait_pods_of(cluster, namespace, "t1", 3)) == 3
    out = ok(ctx("get", "t1"))
    assert "Runtime:     team-torch (TrainingRuntime)" in out
    assert sum(line.startswith("t1-node-0-") for line in out.splitlines()) == 3  # the instance rows


def test_deepspeed_runtime_patches_node_and_launcher(ctx, cluster, kubelet, gpu_node, namespace):
    ns = namespace
    core = client.CoreV1Api(cluster.api_client())  # the claim -d names, bound by the PV binder
    make_claim(core, ns, "data", modes=["ReadWriteMany"], size="1Gi", storage_class="")
    ok(ctx("submit", "tj", "--name", "ds", "--runtime", "deepspeed-distributed", "--workers", "3", "-d",
           "data:/data", "--termination-grace-period", "2m", "--", "deepspeed", "train.py"))
    custom = client.CustomObjectsApi(cluster.api_client())
    tj = custom.get_namespaced_custom_object(*TRAINER, ns, "trainjobs", "ds")
    patched = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in patched] == ["node", "launcher"]
    # the launcher's Job depends on the nodes being Ready (the runtime's dependsOn): kwok runs them at once
    pods = wait_pods_of(cluster, ns, "ds", 3, timeout=90)
    assert [p.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] for p in pods] == ["launcher", "node", "node"]
    for p in pods:
        node = next(c for c in p.spec.containers if c.name == "node")
        assert [m.mount_path for m in node.volume_mounts or [] if m.name == "data-0"] == ["/data"]
        assert p.spec.termination_grace_period_seconds == 120  # a pod-level flag, through the runtime patch
        kubelet.run_pod(ns, p.metadata.name, gpu_node)
    launcher = pods[0].metadata.name
    assert next(c for c in pods[0].spec.containers if c.name == "node").command == ["sh", "-c", "deepspeed train.py"]
    kubelet.write_log(ns, launcher, "node", "launcher up\n")
    kubelet.close_log(ns, launcher, "node")
    assert ok(ctx("logs", "ds")) == "launcher up\n"  # the launcher is the main instance
    data = ctx.view("ds")
    assert data["chiefName"] == launcher and len(data["instances"]) == 3


def test_a_suspended_trainjob_has_no_pods_until_resumed(ctx, cluster, kubelet, gpu_node, namespace):
    ns = namespace
    ok(ctx("submit", "tj", "--name", "later", "--suspend", "--", "python", "t.py"))
    custom = client.CustomObjectsApi(cluster.api_client())
    # Trainer creates the JobSet suspended (its Jobs too) and sets the TrainJob's Suspended condition
    tj = wait_for(lambda: (lambda j: j if any(c["type"] == "Suspended" and c["status"] == "True" for c in (
        j.get("status") or {}).get("conditions") or []) else None)(custom.get_namespaced_custom_object(
            *TRAINER, ns, "trainjobs", "later")), "the TrainJob Suspended")
    assert tj["spec"]["suspend"] is True
    js = custom.get_namespaced_custom_object(*JOBSET, ns, "jobsets", "later")
    assert js["spec"]["suspend"] is True
    assert pods_of(cluster, ns, "later") == []
    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        "later SUSPENDED TRAINJOB 0s 0 0 N/A\n")
    # the reason names where a TrainJob keeps its switch (its spec.suspend, not the training operators' runPolicy)
    (reason,) = [line for line in ok(ctx("get", "later")).splitlines() if line.startswith("Reason:")]
    # (Trainer v2.3.0 pkg/constants/constants.go TrainJobSuspendedMessage)
    assert reason == "Reason:      TrainJob is suspended (spec.suspend is true)", reason

    # resume through arena-helm (a helm upgrade of the release): the JobSet resumes and its pod runs
    res = ctx("resume", "later")
    assert res.exit_code == 0, res.output
    (pod,) = wait_pods_of(cluster, ns, "later", 1)
    kubelet.run_pod(ns, pod.metadata.name, gpu_node)
    data = ctx.wait_status("later", "RUNNING")
    assert data["chiefName"] == pod.metadata.name

    # suspend again: Trainer suspends the JobSet, whose Jobs' pods are deleted
    res = ctx("suspend", "later")
    assert res.exit_code == 0, res.output
    wait_gone(lambda: pods_of(cluster, ns, "later"))
    ctx.wait_status("later", "SUSPENDED")
    assert custom.get_namespaced_custom_object(*TRAINER, ns, "trainjobs", "later")["spec"]["suspend"] is True
    res = ctx("suspend", "later")
    assert res.exit_code == 1 and res.output == "error: trainjob/later is already suspended\n"


def test_plain_helm_install_prints_the_notes(helm_bin, cluster, namespace, runtimes, tmp_path):
    import subprocess

    from arena_helm.adapters.charts import assemble_chart

    chart = assemble_chart("trainjob", tmp_path)
    proc = subprocess.run([str(helm_bin), "install", "notes", str(chart), "-n", namespace, "--kubeconfig",
                           str(cluster.admin.kubeconfig), "--set", "runtime.name=jax-distributed", "--set",
                           "numNodes=3", "--set", "suspend=true"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.split("NOTES:\n", 1)[1]
    assert notes.startswith(f"Submitted trainjob notes in namespace {namespace}\n"
                            "  runtime: ClusterTrainingRuntime/jax-distributed\n  nodes: 3\n"
                            f"  suspended: resume it with kubectl patch trainjob notes -n {namespace}")
    assert f"kubectl get pods -n {namespace} -l jobset.sigs.k8s.io/jobset-name=notes\n" in notes
    assert notes.rstrip().endswith(f"helm uninstall notes -n {namespace}")
