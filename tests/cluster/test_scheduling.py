"""`get`'s pending reason and `top node` against the real kube-scheduler (1.37): it decides where every pod
goes and writes every FailedScheduling message asserted here; nothing here binds a pod or writes a
scheduler message by hand. The pods are the real training-operator's, run by kwok once bound. Each test
starts from a cluster holding only the nodes it adds."""

from __future__ import annotations

import json
import re

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from typer.testing import CliRunner
from waits import wait_for, wait_job_pods

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()


class Cli:
    def __init__(self, helm_bin, cluster, namespace):
        self.base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]

    def __call__(self, *args):
        cmd = list(args)
        if "--" in cmd:  # options go before a submit's command words
            i = cmd.index("--")
            cmd = cmd[:i] + self.base + cmd[i:]
        else:
            cmd = cmd + self.base
        return runner.invoke(app, cmd)

    def ok(self, *args) -> str:
        res = self(*args)
        assert res.exit_code == 0, res.output
        return res.stdout


@pytest.fixture
def cli(helm_bin, cluster, namespace):
    return Cli(helm_bin, cluster, namespace)


@pytest.fixture
def only_my_nodes(cluster, kubelet, namespace):
    """No node but the ones this test adds (so the scheduler's "0/N nodes" counts are exact)."""
    core = client.CoreV1Api(cluster.api_client())
    for node in core.list_node().items:
        kubelet.remove_node(node.metadata.name)
    added: list[str] = []

    def add(name: str, **kw) -> str:
        kubelet.add_node(name, pool=namespace, **kw)
        added.append(name)
        return name

    yield add
    for name in added:
        kubelet.remove_node(name)


def rows(table: str) -> list[list[str]]:
    return [line.split() for line in table.strip().splitlines()]


def node_row(cli, node: str) -> list[str]:
    """`top node`'s row for ``node``: NAME IPADDRESS ROLE STATUS GPU(Total) GPU(Allocated) ..."""
    out = cli.ok("top", "node")
    return next(r for r in rows(out) if r and r[0] == node)


def pending_line(cli, job: str) -> str:
    out = cli.ok("get", job)
    return next(line for line in out.splitlines() if line.startswith("Pending:")).split(None, 1)[1]


def job_pods(kubelet, namespace: str, job: str, count: int = 1) -> list[str]:
    """The pods the real operator makes for ``job``."""
    return wait_job_pods(client.CoreV1Api(kubelet.api_client), namespace, job, count=count)


def test_not_enough_gpus(cli, kubelet, only_my_nodes, namespace):
    node = only_my_nodes(f"{namespace}-gpu", gpus=2, labels={"node-role.kubernetes.io/gpu": ""})
    cli.ok("submit", "tf", "--name", "big", "--image", "tf:2", "--gpus", "4", "--", "python", "x.py")
    (pod,) = job_pods(kubelet, namespace, "big")
    verdict = kubelet.wait_unschedulable(namespace, pod)
    # what preemption found follows ("No preemption victims found ..." or "Preemption is not helpful ...")
    assert re.fullmatch(r"0/1 nodes are available: 1 Insufficient nvidia\.com/gpu\. preemption: 0/1 nodes are "
                        r"available: 1 (No preemption victims found for incoming pod|Preemption is not helpful "
                        r"for scheduling)\.", verdict), verdict
    assert pending_line(cli, "big") == f"pod big-chief-0 cannot be scheduled: not enough GPUs ({verdict})"
    assert node_row(cli, node)[:6] == [node, "127.0.0.1", "gpu", "Ready", "2", "0"]

    # a job that fits is placed by the scheduler on that node, and top node counts its GPUs
    cli.ok("submit", "tf", "--name", "small", "--image", "tf:2", "--gpus", "2", "--", "python", "x.py")
    (small,) = job_pods(kubelet, namespace, "small")
    assert kubelet.run_pod(namespace, small) == node
    assert node_row(cli, node)[:6] == [node, "127.0.0.1", "gpu", "Ready", "2", "2"]
    assert json.loads(cli.ok("get", "small", "-o", "json"))["allocatedGPUs"] == 2
    # the big job still waits, now with both GPUs taken
    assert pending_line(cli, "big").startswith("pod big-chief-0 cannot be scheduled: not enough GPUs (")


def test_a_selector_no_node_matches(cli, kubelet, only_my_nodes, namespace):
    node = only_my_nodes(f"{namespace}-v100", gpus=4, labels={"accelerator": "v100"})
    cli.ok("submit", "tf", "--name", "picky", "--image", "tf:2", "--gpus", "1", "--selector", "accelerator=a100",
           "--", "python", "x.py")
    (pod,) = job_pods(kubelet, namespace, "picky")
    verdict = kubelet.wait_unschedulable(namespace, pod)
    assert verdict == ("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: "
                       "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    assert pending_line(cli, "picky") == (
        f"pod picky-chief-0 cannot be scheduled: no node matches its node selector or affinity ({verdict})")
    assert node_row(cli, node)[4:6] == ["4", "0"]
    # once a node carries the label, the scheduler (woken by the node update) places the pod there
    client.CoreV1Api(kubelet.api_client).patch_node(node, {"metadata": {"labels": {"accelerator": "a100"}}})
    assert kubelet.run_pod(namespace, pod) == node
    assert node_row(cli, node)[4:6] == ["4", "1"]


def test_an_untolerated_taint(cli, kubelet, only_my_nodes, namespace):
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    node = only_my_nodes(f"{namespace}-tainted", gpus=4, taints=[taint])
    cli.ok("submit", "tf", "--name", "plain", "--image", "tf:2", "--gpus", "1", "--", "python", "x.py")
    (pod,) = job_pods(kubelet, namespace, "plain")
    verdict = kubelet.wait_unschedulable(namespace, pod)
    assert verdict == ("0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are "
                       "available: 1 Preemption is not helpful for scheduling.")
    # the taint's key names a GPU, but the reason is the taint, not the GPUs
    assert pending_line(cli, "plain") == (
        f"pod plain-chief-0 cannot be scheduled: a node taint it does not tolerate ({verdict})")

    cli.ok("submit", "tf", "--name", "tolerant", "--image", "tf:2", "--gpus", "1", "--toleration",
           "nvidia.com/gpu=present:NoSchedule", "--", "python", "x.py")
    (tolerant,) = job_pods(kubelet, namespace, "tolerant")
    assert kubelet.run_pod(namespace, tolerant) == node
    assert node_row(cli, node)[4:6] == ["4", "1"]
    assert pending_line(cli, "plain").endswith(f"({verdict})")


@pytest.fixture
def priority_classes(cluster):
    sched = client.SchedulingV1Api(cluster.api_client())
    names = []
    for name, value in (("arena-low", 100), ("arena-high", 1000)):
        try:
            sched.create_priority_class({"metadata": {"name": name}, "value": value})
        except ApiException as exc:
            if exc.status != 409:
                raise
        names.append(name)
    yield names
    for name in names:
        sched.delete_priority_class(name)


def test_preemption_by_a_higher_priority(cli, kubelet, only_my_nodes, priority_classes, cluster, namespace):
    node = only_my_nodes(f"{namespace}-gpu", gpus=4)
    cli.ok("submit", "tf", "--name", "low", "--image", "tf:2", "--gpus", "4", "-p", "arena-low", "--",
           "python", "x.py")
    (low,) = job_pods(kubelet, namespace, "low")
    assert kubelet.run_pod(namespace, low) == node
    wait_for(lambda: json.loads(cli.ok("get", "low", "-o", "json"))["status"] == "RUNNING", "low RUNNING")
    core = client.CoreV1Api(cluster.api_client())

    cli.ok("submit", "tf", "--name", "high", "--image", "tf:2", "--gpus", "4", "-p", "arena-high", "--",
           "python", "x.py")
    (high,) = job_pods(kubelet, namespace, "high")
    # the scheduler evicts the low-priority pod (kwok confirms the deletion) and binds
    assert kubelet.run_pod(namespace, high) == node
    assert node_row(cli, node)[4:6] == ["4", "4"]
    details = re.sub(" +", " ", cli.ok("top", "node", node, "-d"))
    assert f"{namespace} {high} 4" in details and low not in details

    # what training-operator v1.9.3 does with the preempted chief (restartPolicy Never, as arena-helm's chart sets
    # it) depends on what it saw of the pod before the deletion: the pod's Failed phase -> the job fails; only
    # its disappearance -> it makes the pod again, which now waits for the GPUs the high-priority job holds
    def outcome():
        if json.loads(cli.ok("get", "low", "-o", "json"))["status"] == "FAILED":
            return "failed"
        again = [p for p in core.list_namespaced_pod(namespace).items if p.metadata.name == low
                 and not p.spec.node_name and not p.metadata.deletion_timestamp]
        return "made again" if again else None

    seen = wait_for(outcome, "low FAILED or its chief made again")
    got = cli.ok("get", "low", "-e")
    if seen == "failed":
        assert [p.metadata.name for p in core.list_namespaced_pod(namespace).items] == [high]
        assert (f"Reason:      TFJobFailed: TFJob {namespace}/low has failed because 1 Chief replica(s) "
                "failed.\n") in got
        assert "Instances:   none (the job's pods are gone)" in got
    else:
        verdict = kubelet.wait_unschedulable(namespace, low)
        assert re.fullmatch(r"0/1 nodes are available: 1 Insufficient nvidia\.com/gpu\. preemption: 0/1 nodes "
                            r"are available: 1 No preemption victims found for incoming pod\.", verdict), verdict
        got = cli.ok("get", "low", "-e")
        assert f"Pending:     pod {low} cannot be scheduled: not enough GPUs ({verdict})" in got
    # the scheduler's own record of the preemption, on the evicted pod (`get -e` lists the events of the
    # job and of its pods that still exist: this pod is gone); 1.37 names the preemptor by its UID
    # (pkg/scheduler/framework/preemption/executor.go)
    high_uid = core.read_namespaced_pod(high, namespace).metadata.uid
    preempted = [(e.type, e.reason, e.message) for e in core.list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={low}").items if e.reason == "Preempted"]
    assert preempted == [("Normal", "Preempted", f"Preempted by pod {high_uid} on node {node}")]
    assert json.loads(cli.ok("get", "high", "-o", "json"))["priority"] == "arena-high"


def test_a_missing_priority_class_is_refused_before_anything_is_installed(cli, cluster, namespace):
    res = cli("submit", "tf", "--name", "vip", "--image", "tf:2", "-p", "no-such-class", "--", "python", "x.py")
    assert res.exit_code == 2
    assert res.stderr == ("error: --priority no-such-class: the cluster has no PriorityClass named no-such-class "
                          "(kubectl get priorityclasses lists them)\n")
    core = client.CoreV1Api(cluster.api_client())
    assert [s.metadata.name for s in core.list_namespaced_secret(namespace).items
            if s.metadata.name.startswith("sh.helm")] == []
    custom = client.CustomObjectsApi(cluster.api_client())
    assert custom.list_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs")["items"] == []


def test_a_priority_class_the_documented_role_cannot_read_is_not_checked_and_says_so(helm_bin, cluster):
    """PriorityClasses are cluster-wide: with the documented Role only (alice in her namespace) the check cannot
    be made; the submit goes on (the Priority admission still decides) and a note says so."""
    from kubecluster import LIMITED_NAMESPACE, LIMITED_USER

    ns = LIMITED_NAMESPACE
    base = ["--kubeconfig", str(cluster.users[LIMITED_USER].kubeconfig), "--helm-binary", str(helm_bin), "-n", ns]
    res = runner.invoke(app, ["submit", "tf", "--name", "unchecked", "--image", "tf:2", "-p", "no-such-class",
                              *base, "--", "python", "x.py"])
    try:
        assert res.exit_code == 0, res.output
        assert res.stderr == ("note: --priority no-such-class is not checked: you may not read PriorityClasses "
                              "(cluster-wide; the ClusterRole of docs/rbac/arena-helm-user.yaml can); if the cluster "
                              "has none of that name, the job's pods are refused (arena-helm get says why)\n")
        tfjob = client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
            "kubeflow.org", "v1", ns, "tfjobs", "unchecked")
        assert {t["template"]["spec"]["priorityClassName"] for t in tfjob["spec"]["tfReplicaSpecs"].values()} == {
            "no-such-class"}
    finally:
        runner.invoke(app, ["delete", "unchecked", *base])


def test_the_priority_admission_refuses_the_pods_of_a_job_made_elsewhere(cli, cluster, namespace):
    """A job not submitted by arena-helm (here: created through the API) names a missing PriorityClass: the
    API server's Priority admission refuses its pods, and `get` says so from the operator's event."""
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.create_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "elsewhere"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
            "priorityClassName": "no-such-class", "containers": [{"name": "tensorflow", "image": "tf:2"}]}}}}}})
    core = client.CoreV1Api(cluster.api_client())
    wait_for(lambda: any(e.reason == "FailedCreatePod" for e in core.list_namespaced_event(
        namespace, field_selector="involvedObject.name=elsewhere").items), "the operator's refused pod")
    assert core.list_namespaced_pod(namespace).items == []
    assert pending_line(cli, "elsewhere") == (
        'elsewhere: FailedCreatePod: Error creating: pods "elsewhere-worker-0" is forbidden: '
        "no PriorityClass with name no-such-class was found")


# ---- fit / submit --check: the answer before the submit, then the real scheduler's -----------------------
POOL = "node.kubernetes.io/instance-type"  # the pool label fit groups nodes by (its first present)


def fit_json(cli, *args: str) -> tuple[int, dict]:
    res = cli("fit", "pytorch", *args, "-o", "json")
    assert res.exit_code in (0, 4, 5), res.output
    doc = json.loads(res.stdout)
    assert doc["exitCode"] == res.exit_code
    return res.exit_code, doc


def test_fit_answers_0_4_and_5_on_four_8_gpu_nodes_and_the_scheduler_agrees(cli, kubelet, only_my_nodes, cluster,
                                                                            namespace):
    nodes = [only_my_nodes(f"{namespace}-p{i}", gpus=8, labels={POOL: "p8"}) for i in range(4)]
    # a larger node of another pool: the namespace's node selector (PodNodeSelector) keeps the pods off it
    other = f"{namespace}-other"
    kubelet.add_node(other, pool=f"{namespace}-x", gpus=16, labels={POOL: "p16"})
    try:
        # 0: four pods of 8 GPUs fit the empty pool at once, one per node
        code, doc = fit_json(cli, "--workers", "4", "--gpus", "8")
        assert (code, doc["verdict"], doc["gangFitsNow"], doc["gangFitsEver"]) == (0, "fits", True, True)
        assert doc["name"] == "fit" and doc["namespace"] == namespace and doc["kind"] == "PyTorchJob"
        assert sorted(doc["placement"]["master"] + doc["placement"]["worker"]) == nodes
        assert [(g["name"], g["count"], g["requests"], g["pools"]) for g in doc["groups"]] == [
            ("master", 1, {"nvidia.com/gpu": "8"}, {"p16": {"now": 0, "ever": 0}, "p8": {"now": 4, "ever": 4}}),
            ("worker", 3, {"nvidia.com/gpu": "8"}, {"p16": {"now": 0, "ever": 0}, "p8": {"now": 4, "ever": 4}})]
        assert doc["groups"][0]["blockers"] == ["1 node: node(s) didn't match Pod's node affinity/selector"]
        assert doc["quota"] is None

        # two nodes taken by a job the scheduler places
        cli.ok("submit", "pytorch", "--name", "a", "--image", "pt:2", "--workers", "2", "--gpus", "8",
               "--", "torchrun", "train.py")
        used = {kubelet.run_pod(namespace, p) for p in job_pods(kubelet, namespace, "a", count=2)}
        assert len(used) == 2 and used < set(nodes)

        # 4: the same four pods now wait for the two busy nodes
        code, doc = fit_json(cli, "--workers", "4", "--gpus", "8")
        assert (code, doc["verdict"], doc["gangFitsNow"], doc["gangFitsEver"]) == (4, "busy", False, True)
        assert doc["reason"] == "waits: 16 nvidia.com/gpu free now on eligible nodes, the job needs 32 at once"
        assert doc["placement"] == {}

        # 0 again for two pods, on the two free nodes: submit --check says where, the scheduler puts them there
        res = cli("submit", "pytorch", "--name", "b", "--image", "pt:2", "--workers", "2", "--gpus", "8", "--check",
                  "--", "torchrun", "train.py")
        assert res.exit_code == 0, res.output
        free = sorted(set(nodes) - used)
        lines = res.stdout.splitlines()
        assert lines[0] == f"PyTorchJob b in namespace {namespace}:"
        assert rows("\n".join(lines[1:6])) == [
            ["GROUP", "REPLICAS", "REQUESTS", "POOL", "NODES(NOW)", "NODES(EVER)"],
            ["master", "1", "nvidia.com/gpu", "8", "p16", "0", "0"], ["p8", "2", "4"],
            ["worker", "1", "nvidia.com/gpu", "8", "p16", "0", "0"], ["p8", "2", "4"]]
        assert lines[6:] == [
            "Blockers (master): 2 nodes: Insufficient nvidia.com/gpu; 1 node: node(s) didn't match Pod's node "
            "affinity/selector",
            "Blockers (worker): 2 nodes: Insufficient nvidia.com/gpu; 1 node: node(s) didn't match Pod's node "
            "affinity/selector",
            "Gang: fits now",
            f"Verdict: fits now: 1 master pod, 1 worker pod on nodes {', '.join(free)}"]
        assert "b" not in cli.ok("list").split()  # a check installs nothing
        cli.ok("submit", "pytorch", "--name", "b", "--image", "pt:2", "--workers", "2", "--gpus", "8",
               "--", "torchrun", "train.py")
        assert sorted(kubelet.run_pod(namespace, p) for p in job_pods(kubelet, namespace, "b", count=2)) == free

        # 5: one pod of 16 GPUs: no node of the pool is that large (the 16-GPU node is another pool's) ...
        code, doc = fit_json(cli, "--workers", "1", "--gpus", "16")
        assert (code, doc["verdict"], doc["gangFitsEver"]) == (5, "never", False)
        assert doc["reason"] == "master: 16 nvidia.com/gpu per pod, the largest eligible node has 8 allocatable"
        # ... and five pods of 8 are more than the pool holds
        code, doc = fit_json(cli, "--workers", "5", "--gpus", "8")
        assert (code, doc["reason"]) == (
            5, "the job needs 40 nvidia.com/gpu at once, the eligible nodes have 32 allocatable in all")
        # the scheduler agrees: the 16-GPU pod is placed nowhere, for want of GPUs on the nodes it may use
        cli.ok("submit", "pytorch", "--name", "c", "--image", "pt:2", "--gpus", "16", "--", "torchrun", "train.py")
        (pod,) = job_pods(kubelet, namespace, "c")
        verdict = kubelet.wait_unschedulable(namespace, pod)
        assert verdict.startswith("0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                                  "4 Insufficient nvidia.com/gpu."), verdict
        # the table form says the same in one line, with exit code 5
        res = cli("fit", "pytorch", "--gpus", "16")
        assert res.exit_code == 5, res.output
        assert res.stdout.splitlines()[-1] == (
            "Verdict: master: 16 nvidia.com/gpu per pod, the largest eligible node has 8 allocatable")
    finally:
        kubelet.remove_node(other)
