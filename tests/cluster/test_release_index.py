"""list/top/prune from helm's release metadata, paged LISTs, and every training job in view (jobs made with
kubectl have no release: listed with RELEASE -, deleted with --object), against the real API server with the
real helm 3 and 4 and kubectl. Tables are asserted exactly; durations and ages are masked."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helmtools import kubectl_path
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_for, wait_job_pods

from arena_helm.adapters import kube as kube_mod
from arena_helm.cli import app
from arena_helm.core import stats
from arena_helm.workload.gateway import Cluster

pytestmark = pytest.mark.cluster
runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def mask(text: str) -> str:
    import re

    return re.sub(r" +", " ", re.sub(r"(?<=\s)\d+(s|m|h|d|y|h\d+m)(?=\s|$)", "<t>", text, flags=re.M))


class Ctx:
    def __init__(self, helm_bin, cluster, namespace):
        self.base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
        self.ns = namespace

    def __call__(self, *args, env=None):
        cmd = list(args)
        if cmd[0] == "submit":
            i = cmd.index("--")
            cmd = cmd[:i] + self.base + cmd[i:]
        else:
            cmd = cmd + self.base
        return runner.invoke(app, cmd, env=env)


@pytest.fixture
def ctx(helm_bin, cluster, namespace):
    return Ctx(helm_bin, cluster, namespace)


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


def kubectl_tfjob(name: str, workers: int, gpus: int) -> str:
    """A TFJob as a user writes it for ``kubectl apply`` (or the Kubeflow SDK creates it): no helm."""
    return json.dumps({
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name, "labels": {"team": "nlp"}},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": workers, "template": {"spec": {"containers": [
            {"name": "tensorflow", "image": "tf:2", "command": ["python", "train.py"],
             "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}},
    })


def kubectl(cluster, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run([str(kubectl_path()), "--kubeconfig", str(cluster.admin.kubeconfig), *args], input=stdin,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def wait_status(ctx, name: str, status: str) -> dict:
    """Until arena-helm reads the job as ``status`` (what the real operator derived from the pods)."""
    return wait_for(lambda: (j := json.loads(ok(ctx("get", name, "-o", "json"))))["status"] == status and j,
                    f"job {name} {status}")


def test_jobs_made_without_helm_are_in_view_and_deleted_as_objects(ctx, cluster, kubelet, gpu_node, namespace):
    ns = namespace
    ok(ctx("submit", "tf", "--name", "viahelm", "--image", "tf:2", "--workers", "2", "--gpus", "1", "--",
           "python", "x.py"))
    kubectl(cluster, "apply", "-n", ns, "-f", "-", stdin=kubectl_tfjob("viakubectl", 2, 2))
    core = client.CoreV1Api(cluster.api_client())
    for job in ("viahelm", "viakubectl"):
        for pod in wait_job_pods(core, ns, job, [f"{job}-worker-0", f"{job}-worker-1"]):
            kubelet.run_pod(ns, pod, gpu_node)
        wait_status(ctx, job, "RUNNING")  # the training operator's Running condition, all pods running

    assert mask(ok(ctx("list"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE RELEASE\n"
        f"viakubectl RUNNING TFJOB 0s 4 4 {gpu_node} -\n"
        f"viahelm RUNNING TFJOB 0s 2 2 {gpu_node} viahelm\n"
    )
    assert mask(ok(ctx("top", "job"))) == mask(
        "NAME STATUS TRAINER GPU(Requested) GPU(Allocated) GPU(Util) GPU_MEMORY(Used/Total) CPU(Requested) "
        "CPU(Usage) MEMORY(Requested) MEMORY(Usage) NODE RELEASE\n"  # no Prometheus here: the metrics read N/A
        f"viakubectl RUNNING TFJOB 4 4 N/A N/A 0 N/A 0 N/A {gpu_node} -\n"
        f"viahelm RUNNING TFJOB 2 2 N/A N/A 0 N/A 0 N/A {gpu_node} viahelm\n\n"
        "Total Allocated/Requested GPUs of Training Jobs: 6/6\n"
    )
    # top node counts the same pods: the node's allocated GPUs are the jobs' allocated GPUs
    nodes = {n["name"]: n for n in json.loads(ok(ctx("top", "node", "-o", "json")))["nodes"]}
    assert nodes[gpu_node]["allocatedGPUs"] == 6
    assert sorted((p["name"], p["gpus"]) for p in nodes[gpu_node]["gpuPods"]) == [
        ("viahelm-worker-0", 1), ("viahelm-worker-1", 1), ("viakubectl-worker-0", 2), ("viakubectl-worker-1", 2)]
    data = {j["name"]: j for j in json.loads(ok(ctx("list", "-o", "json")))}
    assert data["viakubectl"]["release"] == {} and data["viahelm"]["release"]["chart"] == "tfjob"
    got = ok(ctx("get", "viakubectl"))
    assert "Release:     N/A (the job has no helm release)" in got

    # delete explains itself and names both ways to delete the object
    res = ctx("delete", "viakubectl")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (
        f"error: tfjob/viakubectl in namespace {ns} has no helm release (it was made without helm, e.g. with kubectl "
        f"or the Kubeflow SDK): delete the job object with 'arena-helm delete viakubectl --object -n {ns}' or "
        f"'kubectl delete tfjobs.kubeflow.org viakubectl -n {ns}'\n")
    res = ctx("delete", "viahelm", "--object")
    assert res.exit_code == 2 and res.stderr == (
        f"error: tfjob/viahelm belongs to helm release viahelm: delete it without --object (arena-helm delete "
        f"viahelm -n {ns} uninstalls the release and all it made)\n")
    res = ctx("delete", "viakubectl", "--object")
    assert res.exit_code == 0, res.output
    assert res.stdout == f"tfjob/viakubectl deleted (the job object, from namespace {ns}; it had no helm release)\n"
    assert [j["metadata"]["name"] for j in client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kubeflow.org", "v1", ns, "tfjobs")["items"]] == ["viahelm"]
    assert ok(ctx("list")).splitlines()[0].split() == [
        "NAME", "STATUS", "TRAINER", "DURATION", "GPU(Requested)", "GPU(Allocated)", "NODE"]
    res = ctx("delete", "viakubectl", "--object")
    assert res.exit_code == 1 and res.stderr == f"error: no job object named viakubectl in namespace {ns}\n"


def corrupt_release_payload(cluster, ns: str, name: str) -> None:
    client.CoreV1Api(cluster.api_client()).patch_namespaced_secret(
        f"sh.helm.release.v1.{name}.v1", ns, {"data": {"release": base64.b64encode(b"not a release").decode()}})


def test_list_reads_release_metadata_only_and_runs_no_helm(ctx, helm_bin, cluster, kubelet, gpu_node, namespace):
    core = client.CoreV1Api(cluster.api_client())
    node = gpu_node
    ok(ctx("submit", "tf", "--name", "first", "--image", "tf:2", "--", "python", "x.py"))
    (pod,) = wait_job_pods(core, namespace, "first", ["first-chief-0"])
    kubelet.run_pod(namespace, pod, node)
    kubelet.finish_pod(namespace, pod, 0)
    wait_status(ctx, "first", "SUCCEEDED")
    core.patch_node(node, {"spec": {"unschedulable": True}})  # second's pod stays Pending
    ok(ctx("submit", "tf", "--name", "second", "--image", "tf:2", "--", "python", "x.py"))
    # A payload helm cannot decode: helm list leaves that release out, arena-helm list never reads it.
    corrupt_release_payload(cluster, namespace, "second")
    proc = subprocess.run([str(helm_bin), "list", "-q", "-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig)],
                          capture_output=True, text=True, check=False)
    assert proc.stdout.split() == ["first"], (proc.stdout, proc.stderr)
    helm_calls = stats.get("helm_calls")
    assert mask(ok(ctx("list", "-o", "wide"))) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE CPU(Requested) MEMORY(Requested) REVISION CHART\n"
        "second PENDING TFJOB <t> 0 0 N/A 0 0 1 tfjob-0.1.0\n"
        f"first SUCCEEDED TFJOB 0s 0 N/A {node} 0 0 1 tfjob-0.1.0\n"  # its pod ran there
    )
    (job,) = [j for j in json.loads(ok(ctx("top", "job", "-o", "json"))) if j["name"] == "second"]
    assert (job["release"]["status"], job["release"]["revision"]) == ("deployed", 1)
    assert stats.get("helm_calls") == helm_calls  # list and top job started no helm


def test_helm_driver_configmap_is_read_like_helm_reads_it(ctx, helm_bin, cluster, namespace):
    cm = {"HELM_DRIVER": "configmap"}
    ok(ctx("submit", "tf", "--name", "incm", "--image", "tf:2", "--", "python", "x.py", env=cm))
    core = client.CoreV1Api(cluster.api_client())
    assert [c.metadata.name for c in core.list_namespaced_config_map(namespace, label_selector="owner=helm").items] == [
        "sh.helm.release.v1.incm.v1"]
    assert [(j["name"], j["release"].get("status")) for j in json.loads(ok(ctx("list", "-o", "json", env=cm)))] == [
        ("incm", "deployed")]
    # with the default (Secret) driver, helm sees no release: the job shows without one, as helm would
    assert [(j["name"], j["release"]) for j in json.loads(ok(ctx("list", "-o", "json")))] == [("incm", {})]
    assert json.loads(ok(ctx("get", "incm", "-o", "json", env=cm)))["release"]["chart"] == "tfjob"
    assert ok(ctx("delete", "incm", env=cm)) == f"tfjob/incm deleted (release incm uninstalled from namespace {namespace})\n"
    assert core.list_namespaced_config_map(namespace, label_selector="owner=helm").items == []


def etcd_compact(cluster) -> None:
    """Compact etcd up to its current revision as another kube-apiserver of an HA control plane does
    (k8s.io/apiserver v0.37 pkg/storage/etcd3/compact.go ``Compact``): bump ``compact_rev_key`` in a
    transaction, then compact. The API server watches that key; its watch cache drops the older list snapshots
    on its next compaction poll (pkg/storage/cacher/compactor.go, every 15 s), after which every continue token
    of an older resourceVersion expires (410 Gone)."""
    url = f"http://127.0.0.1:{cluster.etcd_port}/v3"
    key = base64.b64encode(b"compact_rev_key").decode()

    def post(path: str, body: dict) -> dict:
        req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    got = post("/kv/range", {"key": key})
    revision = int(got["header"]["revision"])
    version = int((got.get("kvs") or [{}])[0].get("version", 0))
    txn = post("/kv/txn", {
        "compare": [{"key": key, "result": "EQUAL", "target": "VERSION", "version": str(version)}],
        "success": [{"requestPut": {"key": key, "value": base64.b64encode(str(revision).encode()).decode()}}]})
    assert txn.get("succeeded"), txn
    post("/kv/compaction", {"revision": str(revision), "physical": True})


def wait_expired(cluster, path: str, params, timeout: float = 60.0) -> None:
    """Until the API server answers this continue token with 410 Gone (its watch cache caught up)."""
    from kubernetes.client.rest import ApiException

    api = cluster.api_client()
    deadline = time.monotonic() + timeout
    while True:
        try:
            api.call_api(path, "GET", query_params=params, auth_settings=["BearerToken"], _preload_content=False,
                         _return_http_data_only=True).release_conn()
        except ApiException as exc:
            if exc.status == 410:
                return
            raise
        assert time.monotonic() < deadline, f"the continue token of {path} did not expire in {timeout}s"
        time.sleep(0.5)


@pytest.mark.parametrize("expiries", [1, 2], ids=["expired-once", "expired-twice"])
def test_paged_lists_start_again_once_when_the_continue_token_expires(ctx, cluster, namespace, monkeypatch, expiries):
    names = [f"p{i}" for i in range(5)]
    core = client.CoreV1Api(cluster.api_client())
    for name in names:
        ok(ctx("submit", "tf", "--name", name, "--image", "tf:2", "--", "python", "x.py"))
    for name in names:  # made by the training operator; no node of the pool: they stay Pending
        wait_job_pods(core, namespace, name, [f"{name}-chief-0"])
    monkeypatch.setattr(kube_mod, "PAGE_SIZE", 2)
    expired = []
    original = kube_mod.KubeReader._get_page

    def get_page(self, path, params, accept, action):
        if path.endswith("/pods") and any(k == "continue" for k, _ in params) and len(expired) < expiries:
            # between two pages of the pods LIST: a write, then etcd compacted past the LIST's snapshot
            client.CoreV1Api(cluster.api_client()).create_namespaced_config_map(
                namespace, {"metadata": {"generateName": "bump-"}})
            etcd_compact(cluster)
            wait_expired(cluster, path, params)
            expired.append(path)
        return original(self, path, params, accept, action)

    monkeypatch.setattr(kube_mod.KubeReader, "_get_page", get_page)
    pages = stats.get("list_pages")
    res = ctx("list", *(["--debug"] if expiries == 1 else []))
    assert len(expired) == expiries
    if expiries == 2:
        assert res.exit_code == 1
        # the compaction expires every paged LIST in flight: the pods LIST, or the TFJobs LIST running beside it
        assert re.fullmatch(r"error: listing (pods|tfjobs): the API server expired the LIST twice \(410 Gone\); "
                            r"try again\n", res.stderr), res.stderr
        return
    assert res.exit_code == 0, res.output
    assert "listing pods: continue token expired (410 Gone); listing again" in res.stderr
    assert [line.split()[:2] for line in res.stdout.splitlines()[1:]] == [[n, "PENDING"] for n in reversed(names)]
    # 5 jobs, 2 a page: releases 3 pages, TFJobs 3, pods 3 (+ the pages before the expiry), and the rest
    assert stats.get("list_pages") - pages >= 9


def test_a_job_installed_or_uninstalled_while_list_reads_is_shown_consistently(ctx, helm_bin, cluster, namespace,
                                                                                monkeypatch):
    ok(ctx("submit", "tf", "--name", "stays", "--image", "tf:2", "--", "python", "x.py"))
    ok(ctx("submit", "tf", "--name", "leaves", "--image", "tf:2", "--", "python", "x.py"))
    original = Cluster.index
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def index_then_change(c, namespace_, all_namespaces=False):
        index = original(c, namespace_, all_namespaces)
        # after the index was read, before the job objects are: one job installed, one uninstalled
        for argv in (["submit", "tf", "--name", "arrives", "--image", "tf:2", *ctx.base, "--", "python", "x.py"],
                     ["delete", "leaves", *ctx.base]):
            proc = subprocess.run([sys.executable, "-m", "arena_helm", *argv], env=env, capture_output=True, text=True,
                                  check=False)
            assert proc.returncode == 0, proc.stderr
        return index

    monkeypatch.setattr(Cluster, "index", index_then_change)
    res = ctx("list", "-o", "json")
    assert res.exit_code == 0, res.output
    # arrives: its job names a release the index had not seen: looked up again, shown with it;
    # leaves: its release was in the index, its job and record are gone: not shown
    assert [(j["name"], j["release"].get("status")) for j in json.loads(res.stdout)] == [
        ("arrives", "deployed"), ("stays", "deployed")]
