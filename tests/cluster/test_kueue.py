"""arena-helm with Kueue v0.17.0 (and training-operator v1.9.3, kwok for the nodes): ``submit pytorch
--queue-name <LocalQueue>`` labels the job ``kueue.x-k8s.io/queue-name``; Kueue's webhook suspends it at
creation and admits it when its ClusterQueue has quota. A job over the free quota waits: ``list``/``get`` show
it QUEUED with its positions in the LocalQueue and ClusterQueue (Kueue's visibility API, served through the API
server's aggregation layer as the release serves it), ``get`` gives Kueue's reason (its Workload's QuotaReserved
message); once the first job is deleted and its quota freed, Kueue admits the second one and it runs, showing
when it was admitted, and the third moves up to position 1, then runs in turn."""

from __future__ import annotations

import datetime as dt
import json
import re
import time

import pytest
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_for

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
KUEUE = ("kueue.x-k8s.io", "v1beta2")
KUBEFLOW = ("kubeflow.org", "v1")
GPU = "nvidia.com/gpu"
TICKING = re.compile(r"(?<=\s)\d+(s|m|h|d|y|h\d+m)(?=\s|$)", re.M)


def mask(text: str) -> str:
    return re.sub(r" +", " ", TICKING.sub("<t>", text))


def condition(obj: dict, ctype: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), None)


@pytest.fixture
def queue(controllers, cluster, namespace):
    """ResourceFlavor + ClusterQueue (4 GPUs, this namespace only) + LocalQueue, named after the test's namespace;
    removed afterwards while Kueue still runs (it holds them with its resource-in-use finalizer)."""
    controllers.require("kueue", "training-operator")
    custom = client.CustomObjectsApi(cluster.api_client())
    flavor, cq, lq = f"rf-{namespace}", f"cq-{namespace}", f"lq-{namespace}"
    custom.create_cluster_custom_object(*KUEUE, "resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": flavor}})
    custom.create_cluster_custom_object(*KUEUE, "clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cq},
        "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                 "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU], "flavors": [{
                     "name": flavor, "resources": [{"name": "cpu", "nominalQuota": "8"},
                                                   {"name": "memory", "nominalQuota": "32Gi"},
                                                   {"name": GPU, "nominalQuota": "4"}]}]}]}})
    custom.create_namespaced_custom_object(*KUEUE, namespace, "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": lq},
        "spec": {"clusterQueue": cq}})
    wait_for(lambda: (condition(custom.get_cluster_custom_object(*KUEUE, "clusterqueues", cq), "Active") or {})
             .get("status") == "True", "the ClusterQueue Active")
    try:
        yield {"flavor": flavor, "cluster_queue": cq, "local_queue": lq}
    finally:
        for j in custom.list_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs")["items"]:
            custom.delete_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs", j["metadata"]["name"])
        custom.delete_namespaced_custom_object(*KUEUE, namespace, "localqueues", lq)
        custom.delete_cluster_custom_object(*KUEUE, "clusterqueues", cq)
        custom.delete_cluster_custom_object(*KUEUE, "resourceflavors", flavor)


class Arena:
    def __init__(self, helm_bin, cluster, namespace):
        self.base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]

    def __call__(self, *args: str) -> str:
        cmd = list(args)
        if cmd[0] == "submit":  # options go before a submit's command words
            i = cmd.index("--")
            cmd = cmd[:i] + self.base + cmd[i:]
        else:
            cmd += self.base
        res = runner.invoke(app, cmd)
        assert res.exit_code == 0, res.output
        return res.stdout

    def status(self, name: str) -> str:
        return json.loads(self("get", name, "-o", "json"))["status"]


def test_a_job_over_the_free_quota_waits_suspended_until_the_quota_frees(helm_bin, cluster, kubelet, namespace,
                                                                          queue):
    ns, lq = namespace, queue["local_queue"]
    arena = Arena(helm_bin, cluster, ns)
    custom = client.CustomObjectsApi(cluster.api_client())
    node = f"kueue-gpu-{ns}"
    kubelet.add_node(node, pool=ns, gpus=8)  # the node has room for both: only the quota (4) holds one back
    try:
        # 4 GPUs (master + 1 worker, 2 each): all of the quota
        arena("submit", "pytorch", "--name", "first", "--image", "pt:2", "--workers", "2", "--gpus", "2",
              "--queue-name", lq, "--", "torchrun", "train.py")
        job = custom.get_namespaced_custom_object(*KUBEFLOW, ns, "pytorchjobs", "first")
        assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == lq
        wait_for(lambda: arena.status("first") == "RUNNING", "first RUNNING (admitted, pods running)")

        # 2 more GPUs: over the quota, Kueue keeps it suspended
        arena("submit", "pytorch", "--name", "second", "--image", "pt:2", "--workers", "2", "--gpus", "1",
              "--queue-name", lq, "--", "torchrun", "train.py")
        second = custom.get_namespaced_custom_object(*KUBEFLOW, ns, "pytorchjobs", "second")
        assert second["spec"]["runPolicy"]["suspend"] is True  # Kueue's mutating webhook, at creation
        uid = second["metadata"]["uid"]

        def pending_workload():
            items = custom.list_namespaced_custom_object(
                *KUEUE, ns, "workloads", label_selector=f"kueue.x-k8s.io/job-uid={uid}")["items"]
            return items[0] if items and (condition(items[0], "QuotaReserved") or {}).get("status") == "False" \
                else None

        wl = wait_for(pending_workload, "the second job's Workload without quota")
        wname = wl["metadata"]["name"]
        assert wname.startswith("pytorchjob-second-")
        message = " ".join(condition(wl, "QuotaReserved")["message"].split())
        # one clause per pod set: the master's 1 GPU, then the worker's counted after it
        assert message == (f"couldn't assign flavors to pod set master: insufficient unused quota for {GPU} in "
                           f"flavor {queue['flavor']}, 1 more needed; couldn't assign flavors to pod set worker: "
                           f"insufficient unused quota for {GPU} in flavor {queue['flavor']}, 2 more needed"), message

        # a third, of 4 GPUs, queues behind the second. Kueue orders equal priorities by their Workloads'
        # creationTimestamp, whole seconds: the third's Workload must come a second later to be behind.
        created = dt.datetime.fromisoformat(wl["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        time.sleep(max(0.0, (created + dt.timedelta(seconds=1.2) - dt.datetime.now(dt.UTC)).total_seconds()))
        arena("submit", "pytorch", "--name", "third", "--image", "pt:2", "--workers", "2", "--gpus", "2",
              "--queue-name", lq, "--", "torchrun", "train.py")
        third_uid = custom.get_namespaced_custom_object(*KUBEFLOW, ns, "pytorchjobs", "third")["metadata"]["uid"]

        def pending_in_order():  # Kueue's own view: the visibility API, read with the admin's client
            data = client.ApiClient.call_api(
                cluster.api_client(), f"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/{ns}/localqueues/{lq}"
                "/pendingworkloads", "GET", auth_settings=["BearerToken"], _preload_content=False,
                _return_http_data_only=True).data
            items = json.loads(data)["items"]
            return [(i["metadata"]["ownerReferences"][0]["uid"], i["positionInLocalQueue"],
                     i["positionInClusterQueue"]) for i in items]

        wait_for(lambda: len(pending_in_order()) == 2, "the second and third pending")
        assert pending_in_order() == [(uid, 0, 0), (third_uid, 1, 1)]
        assert mask(arena("list")) == mask(
            "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE QUEUE POS(LocalQueue) "
            "POS(ClusterQueue)\n"
            f"third QUEUED PYTORCHJOB 0s 4 0 N/A {lq} 2 2\n"
            f"second QUEUED PYTORCHJOB 0s 2 0 N/A {lq} 1 1\n"
            f"first RUNNING PYTORCHJOB 0s 4 4 {node} - - -\n")
        out = arena("get", "second")
        assert "Status:      QUEUED\n" in out, out
        assert f"Reason:      held by Kueue: waiting in queue {lq} (workload {wname}: {message})\n" in out, out
        cq = queue["cluster_queue"]
        assert (f"Queue:       {lq} (cluster queue {cq}): position 1 in local queue {lq}, 1 in cluster queue "
                f"{cq}\n") in out, out
        assert "Instances:   none yet (Kueue creates them when it admits the job)" in out
        data = json.loads(arena("get", "third", "-o", "json"))
        assert data["status"] == "QUEUED"
        assert data["queue"] == {"localQueue": lq, "clusterQueue": cq, "workload": data["queue"]["workload"],
                                 "pending": True, "positionInLocalQueue": 2, "positionInClusterQueue": 2,
                                 "message": data["queue"]["message"], "admittedAt": ""}
        assert data["queue"]["workload"].startswith("pytorchjob-third-")
        assert f"insufficient unused quota for {GPU} in flavor {queue['flavor']}" in data["queue"]["message"]
        listed = {j["name"]: j.get("queue") for j in json.loads(arena("list", "-o", "json"))}
        assert (listed["second"]["positionInLocalQueue"], listed["third"]["positionInLocalQueue"]) == (1, 2)
        assert listed["first"] == {"localQueue": lq, "clusterQueue": "", "workload": "", "pending": False,
                                   "positionInLocalQueue": None, "positionInClusterQueue": None, "message": "",
                                   "admittedAt": ""}
        assert not client.CoreV1Api(cluster.api_client()).list_namespaced_pod(
            ns, label_selector="training.kubeflow.org/job-name=second").items

        # the first job deleted: Kueue frees its quota and admits the second, which runs; the third (4 GPUs,
        # 2 free) moves up to position 1
        arena("delete", "first")
        wait_for(lambda: arena.status("second") == "RUNNING", "second RUNNING after the quota freed", timeout=90)
        second = custom.get_namespaced_custom_object(*KUBEFLOW, ns, "pytorchjobs", "second")
        assert second["spec"]["runPolicy"]["suspend"] is False
        wl = custom.get_namespaced_custom_object(*KUEUE, ns, "workloads", wname)
        admitted = condition(wl, "Admitted")
        assert (admitted or {}).get("status") == "True"
        out = arena("get", "second")
        assert "Reason:" not in out
        assert f"Queue:       {lq} (cluster queue {cq}), admitted {admitted['lastTransitionTime']}\n" in out, out
        wait_for(lambda: len(pending_in_order()) == 1, "the third alone in the queue")
        assert pending_in_order() == [(third_uid, 0, 0)]
        assert "Queue:       " + f"{lq} (cluster queue {cq}): position 1 in local queue {lq}, 1 in cluster queue " \
            f"{cq}\n" in arena("get", "third")

        # the second deleted: the third runs
        arena("delete", "second")
        wait_for(lambda: arena.status("third") == "RUNNING", "third RUNNING after the second", timeout=90)
        assert "QUEUE" not in arena("list")
    finally:
        kubelet.remove_node(node)


def test_a_workspace_of_a_queue_is_queued_until_kueue_admits_it(helm_bin, cluster, kubelet, namespace, queue):
    """A workspace is a Job, and Kueue's batch/job integration holds a Job of a LocalQueue suspended until its
    ClusterQueue has quota: QUEUED (its reason says Kueue), then admitted by real Kueue and RUNNING."""
    ns, lq = namespace, queue["local_queue"]
    arena = Arena(helm_bin, cluster, ns)
    batch = client.BatchV1Api(cluster.api_client())
    core = client.CoreV1Api(cluster.api_client())
    node = f"kueue-ws-{ns}"
    kubelet.add_node(node, pool=ns, gpus=8)
    try:
        arena("submit", "pytorch", "--name", "big", "--image", "pt:2", "--workers", "2", "--gpus", "2",
              "--queue-name", lq, "--", "torchrun", "train.py")  # all 4 GPUs of the quota
        wait_for(lambda: arena.status("big") == "RUNNING", "big RUNNING")
        arena("workspace", "start", "nb", "--gpus", "2", "--queue-name", lq)
        assert batch.read_namespaced_job("nb-1", ns).spec.suspend is True  # Kueue's mutating webhook
        view = json.loads(arena("workspace", "get", "nb", "-o", "json"))
        assert (view["status"], view["reason"]) == ("QUEUED", "suspended until Kueue admits it")
        assert not core.list_namespaced_pod(ns, label_selector="job-name=nb-1").items

        arena("delete", "big")  # the quota frees: Kueue admits the workspace's Job, whose pod then runs
        wait_for(lambda: batch.read_namespaced_job("nb-1", ns).spec.suspend is False, "Kueue admitting nb-1",
                 timeout=90)
        pod = wait_for(lambda: next((p.metadata.name for p in core.list_namespaced_pod(
            ns, label_selector="job-name=nb-1").items), None), "the workspace's pod")
        assert kubelet.run_pod(ns, pod) == node
        wait_for(lambda: json.loads(arena("workspace", "get", "nb", "-o", "json"))["status"] == "RUNNING",
                 "nb RUNNING once admitted")
        workloads = client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
            *KUEUE, ns, "workloads")["items"]
        (wl,) = [w for w in workloads if w["metadata"]["ownerReferences"][0]["kind"] == "Job"]
        assert (condition(wl, "Admitted") or {}).get("status") == "True"
        arena("workspace", "delete", "nb")
    finally:
        kubelet.remove_node(node)


def test_fit_with_a_queue_weighs_the_cluster_queues_free_quota_as_kueue_admits(helm_bin, cluster, kubelet, namespace,
                                                                               queue):
    """fit --queue-name: the nodes have room for all (8 GPUs), the ClusterQueue's 4 GPUs decide; Kueue then
    does what fit said."""
    ns, lq, cq, flavor = namespace, queue["local_queue"], queue["cluster_queue"], queue["flavor"]
    arena = Arena(helm_bin, cluster, ns)
    node = f"kueue-fit-{ns}"
    kubelet.add_node(node, pool=ns, gpus=8)

    def fit(*args: str) -> tuple[int, dict]:
        res = runner.invoke(app, ["fit", "pytorch", *args, "--queue-name", lq, "-o", "json", *arena.base])
        assert res.exit_code in (0, 4, 5), res.output
        return res.exit_code, json.loads(res.stdout)

    try:
        code, doc = fit("--workers", "2", "--gpus", "2")
        assert (code, doc["verdict"]) == (0, "fits"), doc
        assert doc["quota"] == {"clusterQueue": cq, "localQueue": lq, "fits": True, "ever": True, "resources": {
            GPU: {"flavor": flavor, "nominal": "4", "used": "0", "free": "4", "needed": "4"}}}
        assert doc["reason"].endswith(f", within the free quota of cluster queue {cq}")
        # more than the quota, ever: 5 though the node has 8 GPUs free
        code, doc = fit("--workers", "1", "--gpus", "8")
        assert (code, doc["gangFitsNow"]) == (5, True)
        assert doc["reason"] == (f"cluster queue {cq} can never admit the job: its {GPU} quota is 4 (flavor {flavor}), "
                                 "the job needs 8")
        # the quota taken by a running job: 4 for the next one, which Kueue indeed holds
        arena("submit", "pytorch", "--name", "first", "--image", "pt:2", "--workers", "2", "--gpus", "2",
              "--queue-name", lq, "--", "torchrun", "train.py")
        wait_for(lambda: arena.status("first") == "RUNNING", "first RUNNING (admitted, pods running)")
        custom = client.CustomObjectsApi(cluster.api_client())

        def reserved() -> list:  # Kueue writes a ClusterQueue's status in batches, a second after the admission
            status = custom.get_cluster_custom_object(*KUEUE, "clusterqueues", cq).get("status") or {}
            return [r["total"] for f in status.get("flavorsReservation") or [] for r in f["resources"]
                    if r["name"] == GPU]

        wait_for(lambda: reserved() == ["4"], "the ClusterQueue's status counting the first job's 4 GPUs")
        code, doc = fit("--workers", "2", "--gpus", "1")
        assert (code, doc["gangFitsNow"]) == (4, True)
        assert doc["reason"] == f"waits: cluster queue {cq} has 0 of 4 {GPU} free (flavor {flavor}), the job needs 2"
        assert doc["quota"]["resources"][GPU]["used"] == "4"
        arena("submit", "pytorch", "--name", "second", "--image", "pt:2", "--workers", "2", "--gpus", "1",
              "--queue-name", lq, "--", "torchrun", "train.py")
        wait_for(lambda: arena.status("second") == "QUEUED", "second QUEUED by Kueue")
        # a LocalQueue that does not exist: Kueue would never admit the job
        res = runner.invoke(app, ["fit", "pytorch", "--queue-name", "nosuch", *arena.base])
        assert res.exit_code == 5, res.output
        assert res.stdout.splitlines()[-1] == (f"Verdict: local queue nosuch does not exist in namespace {ns}: Kueue "
                                               f"admits no job of it (kubectl get localqueues -n {ns})")
    finally:
        kubelet.remove_node(node)


@pytest.mark.parametrize("command", [
    ["submit", "pytorch", "--name", "lost", "--image", "pt:2", "--queue-name", "no-such-queue", "--", "python", "t.py"],
    ["workspace", "start", "lost", "--queue-name", "no-such-queue"],
], ids=["submit", "workspace start"])
def test_a_local_queue_that_does_not_exist_is_refused_before_anything_is_installed(helm_bin, cluster, controllers,
                                                                                 command):
    """Kueue would hold a job (or a workspace's Job) of a LocalQueue that does not exist suspended for ever: the
    LocalQueue is read first, with the documented Role only (alice in her namespace), and nothing is installed."""
    from kubecluster import LIMITED_NAMESPACE, LIMITED_USER

    controllers.require("kueue")
    ns = LIMITED_NAMESPACE
    i = command.index("--") if "--" in command else len(command)
    base = ["--kubeconfig", str(cluster.users[LIMITED_USER].kubeconfig), "--helm-binary", str(helm_bin), "-n", ns]
    res = runner.invoke(app, [*command[:i], *base, *command[i:]])
    assert (res.exit_code, res.stdout) == (2, ""), res.output
    assert res.stderr == (f"error: --queue-name no-such-queue: namespace {ns} has no Kueue LocalQueue named "
                          f"no-such-queue, so Kueue would hold it for ever (kubectl get localqueues -n {ns} lists "
                          "them)\n")
    core = client.CoreV1Api(cluster.api_client())
    assert [s.metadata.name for s in core.list_namespaced_secret(ns).items if ".lost." in s.metadata.name
            or s.metadata.name.startswith("lost")] == []
    assert [c.metadata.name for c in core.list_namespaced_persistent_volume_claim(ns).items
            if c.metadata.name.startswith("lost")] == []
