"""chart-testing's ``ct install --config ct.yaml`` (ct v3.14.0, built by scripts/build-cluster.sh) against the test
cluster, with helm 3 and with helm 4 as its ``helm``: for each chart this cluster serves the objects of, and each of
its ci/*-values.yaml, ct runs ``helm install --wait``, ``kubectl rollout status`` of its Deployments, ``helm test``
and ``helm uninstall --wait``. Chart users and CI pipelines run ct against their clusters: this is that run.

Left out (LEFT_OUT): arena-common, a library chart (helm installs no library chart: ct v3.14.0 would try, and
fail it); mpijob, whose ci/v1-values.yaml is an MPIJob kubeflow.org/v1, which this cluster does not serve (it runs
mpi-operator: MPIJob v2beta1 only, the two CRDs share one name) and ct installs every ci values file of a chart:
test_ct_install_takes_mpijob_up_to_its_v1_values shows ct takes its three v2beta1 files here and fails on that
one only (tests/cluster/bare/test_chart_install_mpi_v1.py installs it on a cluster with the v1 CRD).

One namespace, not ct's fresh namespace per install: ct's ``--namespace``/``--release-label`` mode, for clusters
whose namespaces are made ready beforehand. The ci values files name what a team's namespace has (PVCs models,
training-data, training-logs, checkpoints and my-home; the ServiceAccount trainer; the TrainingRuntime
team-torch, whose absence Trainer's webhook refuses; the LocalQueue team-a) and the cluster what it has
(PriorityClasses serving, high-priority and high; the StorageClass fast; GPU nodes labelled gpu=a100 and
accelerator=a100). A namespace ct makes fresh has none of it: there the Deployments that claim a PVC never become
ready and Trainer's webhook refuses trainjob's full-values.yaml. The namespace's pods go only to its own kwok
nodes (PodNodeSelector, as in every test namespace). The jobs of the full-values.yaml files that name the queue
team-vision and the volcano scheduler stay held by Kueue (no such LocalQueue) and do not run here, nor does
trainjob's full-values.yaml TrainJob (``suspend: true``).

The workloads become ready here, not merely accepted: a watch records the namespace's Deployments and pods
while ct runs. Every Deployment a chart makes reaches all its replicas ready (helm's --wait and ct's rollout
status wait for these), and each chart's own workload ran: a pod its controller made (training-operator's,
LWS's StatefulSet, KServe's Deployment, JobSet's or the workspace's Job) became Ready. ct waits for none of
these pods (helm 3's --wait reads no custom resource, helm 4's kstatus finds a TFJob's status current at once);
they run within a second or two here, while ct prints the release's events and pods before uninstalling it. A
LoadBalancer Service (tensorboard's hostpath-values.yaml), which helm's --wait waits for until it has an ingress
address, gets one from the real MetalLB controller's pool (tests/support/controllers.py), as on a bare-metal
cluster; the watch records the addresses given.

Timeouts: the workloads are ready within seconds, so ``--helm-extra-args "--timeout 60s"`` instead of ct.yaml's
600s: a workload that never becomes ready fails its chart in a minute. A planted chart whose Deployment can go
to no node and one whose template names a kind no CRD serves show that ct's run fails and names them.

ct runs on a copy of the charts (its ``helm dependency build`` writes into each chart's folder), from a folder
that is not a git checkout: ``ct install`` with ``--all``/``--charts`` reads no git history. ct echoes a
command's stdout, then its stderr, and closes both once the command exits: helm's error message is often lost
(it was, for the missing kind). So the checks read ct's own lines (the installs, ``Deleting release``, the
summary) and the cluster, not helm's messages.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from chartinstall import team_runtime
from charttesting import checkout, ct_folder
from controllers import in_metallb_pool
from helmtools import HELM_VERSIONS, helm_path, kubectl_path
from kubecluster import HOSTPATH_PROVISIONER
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from waits import wait_for

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
LEFT_OUT = {
    "arena-common": "a library chart: helm installs no library chart",
    "mpijob": "ci/v1-values.yaml is an MPIJob kubeflow.org/v1: this cluster serves mpi-operator's v2beta1 only",
}
CHARTS = sorted(p.parent.name for p in (REPO / "charts").glob("*/Chart.yaml") if p.parent.name not in LEFT_OUT)
RELEASE_LABEL = "app.kubernetes.io/instance"
# the controllers of the charts' workloads (mpi-operator's only for mpijob, left out of the main run) and MetalLB's,
# which gives a LoadBalancer Service its address
CONTROLLERS = ("training-operator", "jobset", "trainer", "kueue", "lws", "kserve", "metallb")
HELM_TIMEOUT = "60s"
# what makes the pods of each chart's own workload (the owner of the pod); traffic-split makes routing only
WORKLOAD = {
    "custom-serving": "ReplicaSet", "sglang-serving": "ReplicaSet", "tensorboard": "ReplicaSet",
    "tf-serving": "ReplicaSet", "triton-serving": "ReplicaSet", "vllm-serving": "ReplicaSet",
    "kserve": "ReplicaSet",  # KServe's Deployment (RawDeployment mode)
    "distributed-serving": "StatefulSet",  # LWS's
    "jaxjob": "JAXJob", "paddlejob": "PaddleJob", "pytorchjob": "PyTorchJob", "tfjob": "TFJob",
    "xgboostjob": "XGBoostJob",
    "trainjob": "Job",  # JobSet's, from Trainer's JobSet
    "workspace": "Job",
}
NO_PODS = {"traffic-split"}

# what the ci values files name, made beforehand (see the module docstring)
PRIORITY_CLASSES = ("serving", "high-priority", "high")
STORAGE_CLASS = "fast"  # workspace's full-values.yaml: its home PVC's class
CLAIMS = ("models", "training-data", "training-logs", "checkpoints", "my-home")
SERVICE_ACCOUNT = "trainer"
LOCAL_QUEUE = "team-a"  # workspace's full-values.yaml (helm 4 waits for its Job to start: Kueue must admit it)
KUEUE = ("kueue.x-k8s.io", "v1beta2")
CT_LABEL = "arena-helm.test/ct-install"  # the namespaces the ClusterQueue takes
# distributed-serving's full-values.yaml: 2 groups of a leader and 3 workers, 8 GPUs each; 2 nodes to spare
NODES, NODE_LABELS = 10, {"gpu": "a100", "accelerator": "a100"}

SUMMARY = re.compile(r'^ (✔︎|✖︎) (\S+) => \(version: "([^"]*)", path: "([^"]+)"\)(.*)$', re.M)
VALUES_LINE = re.compile(r'^Installing chart with values file "([^"]+)"\.\.\.$', re.M)
DELETING = re.compile(r'^Deleting release "([^"]+)"\.\.\.$', re.M)


# ---- ct -----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ct_dir() -> Path:
    return ct_folder()


def run_ct(ct_dir: Path, root: Path, helm_version: str, cluster, tmp_path: Path, *args: str):
    """``ct install --config ct.yaml ARGS`` in ``root``, against the test cluster (KUBECONFIG), with ``helm`` the
    given version and ``kubectl`` on PATH."""
    bin_dir = tmp_path / f"bin-{helm_version}"
    bin_dir.mkdir(exist_ok=True)
    for name, target in (("helm", helm_path(helm_version)), ("kubectl", kubectl_path())):
        if not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(target)
    path = os.pathsep.join([str(bin_dir), str(ct_dir), str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return subprocess.run(["ct", "install", "--config", "ct.yaml", *args], cwd=root, capture_output=True, text=True,
                          check=False, timeout=1500,
                          env={"PATH": path, "HOME": str(tmp_path), "KUBECONFIG": str(cluster.admin.kubeconfig),
                               "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
                               "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
                               "HELM_DATA_HOME": str(tmp_path / "helm-data")})


def in_namespace(namespace: str) -> list[str]:
    return ["--namespace", namespace, "--release-label", RELEASE_LABEL, "--helm-extra-args", f"--timeout {HELM_TIMEOUT}"]


def summary(output: str) -> set[str]:
    """ct's summary lines: `` ✔︎ <chart> => (version: "...", path: "...")`` (✖︎ ... > <error> for a failed one)."""
    return {m.group(0) for m in SUMMARY.finditer(output)}


def passed(name: str, version: str, path: str) -> str:
    return f' ✔︎ {name} => (version: "{version}", path: "{path}")'


def failed(name: str, version: str, path: str) -> str:
    return f' ✖︎ {name} => (version: "{version}", path: "{path}") > failed waiting for process: exit status 1'


def chart_yaml(folder: Path) -> dict:
    return yaml.safe_load((folder / "Chart.yaml").read_text())


def installs(output: str) -> dict[str, str | None]:
    """ci values file -> the release ct installed it as (the one its cleanup deletes: ``Deleting release``)."""
    marks = list(VALUES_LINE.finditer(output))
    out = {}
    for mark, after in zip(marks, [*marks[1:], None], strict=True):
        block = output[mark.end():after.start() if after else len(output)]
        deleting = DELETING.search(block)
        out[mark.group(1)] = deleting.group(1) if deleting else None
    return out


def excerpt(res) -> str:
    """What to read when ct failed: its error lines and its summary."""
    lines = [ln for ln in (res.stdout + res.stderr).splitlines()
             if ln.startswith(("Error", " ✖︎", " ✔︎", "Installing chart with values"))]
    return "\n".join(lines)[-6000:]


# ---- what the ci values files name ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster_prereqs(cluster, controllers):
    """The cluster's side: PriorityClasses, the StorageClass fast, a ResourceFlavor and a ClusterQueue for the
    namespaces labelled CT_LABEL. Only what was not there is made, and removed afterwards."""
    controllers.require(*CONTROLLERS)
    api = cluster.api_client()
    sched, storage, custom = client.SchedulingV1Api(api), client.StorageV1Api(api), client.CustomObjectsApi(api)
    made_pcs = [pc for pc in PRIORITY_CLASSES if pc not in {c.metadata.name for c in sched.list_priority_class().items}]
    for pc in made_pcs:
        sched.create_priority_class({"metadata": {"name": pc}, "value": 1000})
    made_sc = STORAGE_CLASS not in {s.metadata.name for s in storage.list_storage_class().items}
    if made_sc:  # the controller-manager's hostPath provisioner, as the default class "standard"
        storage.create_storage_class({"metadata": {"name": STORAGE_CLASS}, "provisioner": HOSTPATH_PROVISIONER,
                                      "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
    flavor = cq = f"ct-install-{os.getpid()}"
    custom.create_cluster_custom_object(*KUEUE, "resourceflavors", {
        "apiVersion": "/".join(KUEUE), "kind": "ResourceFlavor", "metadata": {"name": flavor}})
    custom.create_cluster_custom_object(*KUEUE, "clusterqueues", {
        "apiVersion": "/".join(KUEUE), "kind": "ClusterQueue", "metadata": {"name": cq},
        "spec": {"namespaceSelector": {"matchLabels": {CT_LABEL: "true"}},
                 "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [{
                     "name": flavor, "resources": [{"name": "cpu", "nominalQuota": "1000"},
                                                   {"name": "memory", "nominalQuota": "100Ti"},
                                                   {"name": "nvidia.com/gpu", "nominalQuota": "1000"}]}]}]}})
    wait_for(lambda: any(c["type"] == "Active" and c["status"] == "True" for c in (
        custom.get_cluster_custom_object(*KUEUE, "clusterqueues", cq).get("status") or {}).get("conditions") or []),
        "the ClusterQueue Active")
    try:
        yield cq
    finally:
        custom.delete_cluster_custom_object(*KUEUE, "clusterqueues", cq)
        custom.delete_cluster_custom_object(*KUEUE, "resourceflavors", flavor)
        if made_sc:
            storage.delete_storage_class(STORAGE_CLASS)
        for pc in made_pcs:
            sched.delete_priority_class(pc)


@pytest.fixture
def ct_namespace(cluster, kubelet, namespace, cluster_prereqs):
    """The test's namespace with what the ci values files name, and its own GPU nodes."""
    api = cluster.api_client()
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    core.patch_namespace(namespace, {"metadata": {"labels": {CT_LABEL: "true"}}})
    nodes = [f"ct-{namespace}-{i}" for i in range(NODES)]
    try:
        for node in nodes:
            kubelet.add_node(node, pool=namespace, gpus=8, cpu="64", memory="1Ti", labels=NODE_LABELS)
        for claim in CLAIMS:  # the default StorageClass's provisioner binds them
            core.create_namespaced_persistent_volume_claim(namespace, {
                "metadata": {"name": claim},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
        core.create_namespaced_service_account(namespace, {"metadata": {"name": SERVICE_ACCOUNT}})
        team_runtime(cluster, namespace)  # trainjob's full-values.yaml: TrainingRuntime team-torch
        custom.create_namespaced_custom_object(*KUEUE, namespace, "localqueues", {
            "apiVersion": "/".join(KUEUE), "kind": "LocalQueue", "metadata": {"name": LOCAL_QUEUE},
            "spec": {"clusterQueue": cluster_prereqs}})
        wait_for(lambda: all(p.status.phase == "Bound" for p in core.list_namespaced_persistent_volume_claim(
            namespace).items), "the claims Bound")
        yield namespace
    finally:
        for node in nodes:
            kubelet.remove_node(node)


# ---- what happens in the namespace while ct runs ----------------------------------------------------------
class Recorder:
    """Watches the namespace's Deployments, pods and Services while ct runs: the most ready replicas each
    Deployment had, whether each pod was ever Ready and what made it, the ingress addresses MetalLB gave each
    LoadBalancer Service."""

    def __init__(self, cluster, namespace: str):
        api = cluster.api_client()
        self.core, self.apps = client.CoreV1Api(api), client.AppsV1Api(api)
        self.namespace = namespace
        self.deployments: dict[str, dict] = {}  # uid -> name, release, owned, replicas, ready (the most seen)
        self.pods: dict[str, dict] = {}  # uid -> name, release, owner, ready (ever)
        self.load_balancers: dict[str, set[str]] = {}  # LoadBalancer Service -> the ingress IPs it was given
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._watch, args=(fn, on), daemon=True) for fn, on in (
            (self.apps.list_namespaced_deployment, self._deployment), (self.core.list_namespaced_pod, self._pod),
            (self.core.list_namespaced_service, self._service))]
        self._ready = threading.Barrier(len(self._threads) + 1)

    def __enter__(self) -> Recorder:
        for t in self._threads:
            t.start()
        self._ready.wait(timeout=60)  # each watch listed the namespace and watches from there
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=30)

    def _watch(self, list_fn, on) -> None:
        started = False
        try:
            while not self._stop.is_set():
                listed = list_fn(self.namespace)
                for obj in listed.items:
                    on(obj)
                version = listed.metadata.resource_version
                if not started:
                    started = True
                    self._ready.wait(timeout=60)
                try:
                    while not self._stop.is_set():
                        w = watch.Watch()
                        for event in w.stream(list_fn, self.namespace, resource_version=version, timeout_seconds=2):
                            on(event["object"])
                            version = event["object"].metadata.resource_version
                except ApiException as exc:
                    if exc.status != 410:  # expired: list again
                        raise
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(f"{list_fn.__name__}: {exc!r}")
            if not started:
                self._ready.abort()

    def _deployment(self, d) -> None:
        seen = self.deployments.setdefault(d.metadata.uid, {
            "name": d.metadata.name, "release": (d.metadata.labels or {}).get(RELEASE_LABEL),
            "owned": bool(d.metadata.owner_references), "replicas": d.spec.replicas, "ready": 0})
        seen["ready"] = max(seen["ready"], (d.status.ready_replicas or 0) if d.status else 0)

    def _pod(self, p) -> None:
        seen = self.pods.setdefault(p.metadata.uid, {
            "name": p.metadata.name, "release": (p.metadata.labels or {}).get(RELEASE_LABEL),
            "owner": next((o.kind for o in p.metadata.owner_references or []), None), "ready": False})
        seen["ready"] = seen["ready"] or any(
            c.type == "Ready" and c.status == "True" for c in (p.status.conditions if p.status else None) or [])

    def _service(self, s) -> None:
        if s.spec.type != "LoadBalancer":
            return
        ingress = (s.status.load_balancer.ingress if s.status and s.status.load_balancer else None) or []
        if ingress:
            self.load_balancers.setdefault(s.metadata.name, set()).update(i.ip for i in ingress)


def release_chart(release: str) -> str:
    """ct names a release ``<chart folder>-<10 random characters>``."""
    return release.rsplit("-", 1)[0]


def unready_deployments(rec: Recorder) -> list[str]:
    """The charts' own Deployments (KServe's are its InferenceService's) that never had all replicas ready."""
    return [f"{d['name']} ({d['release']}): {d['ready']}/{d['replicas']} ready" for d in rec.deployments.values()
            if not d["owned"] and not (d["replicas"] and d["ready"] == d["replicas"])]


def workloads_that_ran(rec: Recorder) -> dict[str, set[str]]:
    """chart -> the kinds whose pods became Ready for one of its releases."""
    ran: dict[str, set[str]] = {}
    for p in rec.pods.values():
        if p["release"] and p["ready"]:
            ran.setdefault(release_chart(p["release"]), set()).add(p["owner"])
    return ran


def helm_releases(cluster, namespace: str) -> list[str]:
    """The releases helm (3 or 4) keeps in the namespace, in any state: its Secrets."""
    secrets = client.CoreV1Api(cluster.api_client()).list_namespaced_secret(namespace, label_selector="owner=helm")
    return sorted(s.metadata.name for s in secrets.items)


# ---- the tests ------------------------------------------------------------------------------------------------
def test_the_left_out_charts_are_what_this_cluster_cannot_install(cluster):
    assert chart_yaml(REPO / "charts" / "arena-common")["type"] == "library"
    v1 = yaml.safe_load((REPO / "charts" / "mpijob" / "ci" / "v1-values.yaml").read_text())
    assert v1["mpiApiVersion"] == "v1"
    resp = cluster.api_client().call_api("/apis/kubeflow.org/v1", "GET", auth_settings=["BearerToken"],
                                         _preload_content=False, _return_http_data_only=True)
    kinds = {r["kind"] for r in json.loads(resp.data)["resources"]}
    assert "MPIJob" not in kinds and {"TFJob", "PyTorchJob"} <= kinds
    assert set(CHARTS) == set(WORKLOAD) | NO_PODS


@pytest.mark.parametrize("helm_version", HELM_VERSIONS, ids=[f"helm{v.split('.')[0]}" for v in HELM_VERSIONS])
def test_ct_install_passes_every_chart_this_cluster_serves(ct_dir, helm_version, cluster, ct_namespace, tmp_path):
    root = checkout(tmp_path / "repo")
    with Recorder(cluster, ct_namespace) as rec:
        res = run_ct(ct_dir, root, helm_version, cluster, tmp_path, "--all", "--excluded-charts", ",".join(LEFT_OUT),
                     *in_namespace(ct_namespace))
    assert rec.errors == []
    assert res.returncode == 0, excerpt(res)
    assert res.stdout.rstrip().endswith("All charts installed successfully"), res.stdout[-500:]
    # the whole summary: every chart this cluster serves, passed
    want = set()
    for chart in CHARTS:
        meta = chart_yaml(root / "charts" / chart)
        want.add(passed(meta["name"], meta["version"], f"charts/{chart}"))
    assert summary(res.stdout) == want
    # installed with each of its ci values files, each release then deleted by ct's clean-up
    done = installs(res.stdout)
    assert set(done) == {str(p.relative_to(root)) for c in CHARTS for p in (root / "charts" / c / "ci").glob("*-values.yaml")}
    assert {v: r for v, r in done.items() if not (r and release_chart(r) == v.split("/")[1])} == {}
    assert "Error deleting Helm release" not in res.stdout
    assert helm_releases(cluster, ct_namespace) == []
    # the workloads became ready: every chart's Deployments, every chart's own workload
    assert unready_deployments(rec) == []
    ran = workloads_that_ran(rec)
    assert {c: k for c, k in WORKLOAD.items() if k not in ran.get(c, set())} == {}, ran
    assert set(ran) == set(WORKLOAD)
    # tensorboard's hostpath-values.yaml: a LoadBalancer Service, given an address of MetalLB's pool
    assert rec.load_balancers, "no LoadBalancer Service got an address"
    assert {n: ips for n, ips in rec.load_balancers.items() if not all(map(in_metallb_pool, ips))} == {}


def test_ct_install_takes_mpijob_up_to_its_v1_values(ct_dir, cluster, controllers, ct_namespace, tmp_path):
    """ct installs mpijob's ci values files in order: the three MPIJob v2beta1 ones pass, v1-values.yaml fails
    (no MPIJob v1 here) and fails the chart."""
    controllers.require("mpi-operator")
    root = checkout(tmp_path / "repo")
    res = run_ct(ct_dir, root, HELM_VERSIONS[0], cluster, tmp_path, "--all=false", "--charts", "charts/mpijob",
                 *in_namespace(ct_namespace))
    assert res.returncode == 1, excerpt(res)
    meta = chart_yaml(root / "charts" / "mpijob")
    assert summary(res.stdout) == {failed(meta["name"], meta["version"], "charts/mpijob")}
    done = installs(res.stdout)
    assert sorted(done) == sorted(str(p.relative_to(root)) for p in (root / "charts/mpijob/ci").glob("*-values.yaml"))
    assert list(done)[-1] == "charts/mpijob/ci/v1-values.yaml"
    assert all(done.values())
    assert helm_releases(cluster, ct_namespace) == []


def test_ct_install_fails_the_planted_charts_and_names_them(ct_dir, cluster, kubelet, namespace, tmp_path):
    """Three copies of the tensorboard chart in a chart folder of their own (``--chart-dirs``), each with one ci
    values file: as it is (passes), with a nodeSelector no node has (its Deployment never becomes ready: helm's
    --wait gives up) and with a template of a kind no CRD serves (helm refuses the manifest). ct fails the run and
    the two planted charts, and passes the third."""
    root = checkout(tmp_path / "repo")
    planted = root / "planted"
    source = REPO / "charts" / "tensorboard"
    for name in ("tensorboard", "never-ready", "missing-kind"):
        shutil.copytree(source, planted / name, ignore=shutil.ignore_patterns("ci"))
        (planted / name / "ci").mkdir()
        shutil.copy(source / "ci" / "minimal-values.yaml", planted / name / "ci" / "minimal-values.yaml")
    with (planted / "never-ready" / "ci" / "minimal-values.yaml").open("a") as f:
        f.write('nodeSelector: {"arena-helm.test/nowhere": "true"}\n')
    (planted / "missing-kind" / "templates" / "planted.yaml").write_text(
        "apiVersion: planted.arena-helm.test/v1\nkind: Planted\nmetadata:\n  name: {{ .Release.Name }}\n")
    node = f"ct-{namespace}"
    kubelet.add_node(node, pool=namespace)
    try:
        with Recorder(cluster, namespace) as rec:
            res = run_ct(ct_dir, root, HELM_VERSIONS[0], cluster, tmp_path, "--chart-dirs", "planted",
                         "--namespace", namespace, "--release-label", RELEASE_LABEL, "--helm-extra-args", "--timeout 15s")
    finally:
        kubelet.remove_node(node)
    assert rec.errors == []
    assert res.returncode == 1, excerpt(res)
    meta = chart_yaml(source)
    assert summary(res.stdout) == {
        passed(meta["name"], meta["version"], "planted/tensorboard"),
        failed(meta["name"], meta["version"], "planted/never-ready"),
        failed(meta["name"], meta["version"], "planted/missing-kind"),
    }
    assert "failed installing charts: failed processing charts" in res.stdout + res.stderr
    # why: never-ready's Deployment was made and never had a ready replica; missing-kind made nothing
    by_chart = {release_chart(d["release"]): d for d in rec.deployments.values()}
    assert by_chart["never-ready"]["ready"] == 0 and by_chart["tensorboard"]["ready"] == 1
    assert "missing-kind" not in by_chart
