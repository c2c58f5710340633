"""Load: 5 users (the namespace-limited one among them) each run 40 cycles of submit -> get -> delete at the
same time, with Helm 3 and Helm 4 users side by side, while ``list -A`` runs in a loop, against the real
API server. The real training-operator and mpi-operator make every job's pods and Services as jobs appear
(no node: the pods stay Pending; so deletes have pods to garbage-collect) and the kube-controller-manager's
garbage collector removes them.

Afterwards nothing of any cycle is left (release, job object, pod, service, secret), every command exited 0
(or with one of the documented one-line errors below), and no ``list`` failed, although jobs were
installed and deleted while it read.

Each user is a process of its own (``tests/support/loaduser.py``) running the real CLI in-process, so no
state is shared between threads. ``ARENA_HELM_LOAD_CYCLES`` changes the number of cycles (default 40).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helmtools import HELM_VERSIONS, helm_path
from kubecluster import LIMITED_NAMESPACE, LIMITED_USER
from kubernetes import client

pytestmark = pytest.mark.cluster
SUPPORT = Path(__file__).resolve().parents[1] / "support"
REPO = Path(__file__).resolve().parents[2]
USERS = 5
CYCLES = int(os.environ.get("ARENA_HELM_LOAD_CYCLES", "40"))
KINDS = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs"}
VERSIONS = {"TFJob": "v1", "PyTorchJob": "v1", "MPIJob": "v2beta1"}
# One-line errors a command may end with under load and still count as handled (none is expected).
DOCUMENTED_ERRORS = (
    "the API server expired the LIST twice (410 Gone); try again",
)


class PodCounter:
    """Counts (does not make) the pods the operators create in ``namespaces`` for the jobs of ``prefixes``."""

    def __init__(self, cluster, namespaces: list[str], prefixes: list[str]):
        self.core = client.CoreV1Api(cluster.api_client())
        self.namespaces = namespaces
        self.prefixes = prefixes
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    @property
    def pods(self) -> int:
        return len(self.seen)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.thread.join(30)

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            for ns in self.namespaces:
                try:
                    items = self.core.list_namespaced_pod(ns, _request_timeout=10).items
                except Exception:  # noqa: BLE001 - best effort: it only counts
                    continue
                self.seen.update(p.metadata.uid for p in items
                                 if any(p.metadata.name.startswith(f"{x}-") for x in self.prefixes))


def leftovers(cluster, namespaces: list[str], prefixes: list[str]) -> dict[str, list[str]]:
    api = cluster.api_client()
    core, apps, custom = client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)

    def ours(name: str) -> bool:
        return any(name.startswith(f"{p}-") or name.startswith(f"sh.helm.release.v1.{p}-") for p in prefixes)

    found: dict[str, list[str]] = collections.defaultdict(list)
    for ns in namespaces:
        for kind, plural in KINDS.items():
            found["jobs"] += [f"{ns}/{j['metadata']['name']}" for j in custom.list_namespaced_custom_object(
                "kubeflow.org", VERSIONS[kind], ns, plural)["items"] if ours(j["metadata"]["name"])]
        found["releases"] += [f"{ns}/{s.metadata.name}" for s in core.list_namespaced_secret(
            ns, label_selector="owner=helm").items if ours(s.metadata.labels.get("name", ""))]
        found["secrets"] += [f"{ns}/{s.metadata.name}" for s in core.list_namespaced_secret(ns).items
                             if ours(s.metadata.name)]
        found["pods"] += [f"{ns}/{p.metadata.name}" for p in core.list_namespaced_pod(ns).items if ours(p.metadata.name)]
        found["services"] += [f"{ns}/{s.metadata.name}" for s in core.list_namespaced_service(ns).items
                              if ours(s.metadata.name)]
        found["deployments"] += [f"{ns}/{d.metadata.name}" for d in apps.list_namespaced_deployment(ns).items
                                 if ours(d.metadata.name)]
    return {k: v for k, v in found.items() if v}


def records(proc: subprocess.Popen, what: str) -> list[dict]:
    out, err = proc.communicate()
    assert proc.returncode == 0, f"{what} crashed (exit {proc.returncode}): {err.decode()[-3000:]}"
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def handled(rec: dict) -> bool:
    """Exit 0, or exactly one documented ``error:`` line."""
    if rec["exit"] == 0:
        return True
    lines = rec["stderr"].strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("error: ") and any(d in lines[0] for d in DOCUMENTED_ERRORS)


def test_five_users_submit_get_delete_while_list_runs(cluster, controllers, namespace, tmp_path):
    namespaces = [namespace] + [f"{namespace}-u{i}" for i in range(1, USERS - 1)]
    for ns in namespaces[1:]:
        cluster.create_namespace(ns)
    users = [(f"u{i}", ns, "admin") for i, ns in enumerate(namespaces)] + [(f"u{USERS - 1}", LIMITED_NAMESPACE,
                                                                           LIMITED_USER)]
    all_namespaces = [ns for _, ns, _ in users]
    prefixes = [f"{prefix}x{os.getpid() % 10000}" for prefix, _, _ in users]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(SUPPORT)]))
    env.pop("ARENA_HELM_STATS", None)
    stop = tmp_path / "stop"
    python = sys.executable
    start = time.monotonic()
    try:
        with PodCounter(cluster, all_namespaces, prefixes) as op:
            lister = subprocess.Popen(
                [python, str(SUPPORT / "loaduser.py"), "lister", "--kubeconfig", str(cluster.admin.kubeconfig),
                 "--helm-binary", str(helm_path(HELM_VERSIONS[0])), "--stop", str(stop)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            procs = []
            for i, ((_, ns, user), prefix) in enumerate(zip(users, prefixes, strict=True)):
                helm = helm_path(HELM_VERSIONS[i % len(HELM_VERSIONS)])  # helm 3 and helm 4 users side by side
                procs.append(subprocess.Popen(
                    [python, str(SUPPORT / "loaduser.py"), "user", "--kubeconfig", str(cluster.users[user].kubeconfig),
                     "--helm-binary", str(helm), "-n", ns, "--prefix", prefix, "--cycles", str(CYCLES)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
            results = [records(p, f"user {prefixes[i]}") for i, p in enumerate(procs)]
            stop.write_text("stop")
            lists = records(lister, "lister")
        elapsed = time.monotonic() - start

        # nothing left: the garbage collector removes the pods of deleted jobs a moment later
        deadline = time.monotonic() + 90
        left = leftovers(cluster, all_namespaces, prefixes)
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = leftovers(cluster, all_namespaces, prefixes)
    finally:
        for ns in namespaces[1:]:
            client.CoreV1Api(cluster.api_client()).delete_namespace(ns)

    commands = [r for rs in results for r in rs]
    by_step = collections.Counter(r["step"] for r in commands)
    exits = collections.Counter((r["step"], r["exit"]) for r in commands + lists)
    slow = {step: max(r["seconds"] for r in commands + lists if r["step"] == step) for step in
            ("submit", "get", "delete", "list")}
    print(f"\nload: {USERS} users x {CYCLES} cycles in {elapsed:.0f} s: {dict(by_step)} commands, {len(lists)} "
          f"list -A runs (up to {max((r.get('jobs') or 0) for r in lists)} jobs each), {op.pods} pods created by "
          f"the operators; exits {dict(exits)}; slowest {slow}")

    assert left == {}, left
    if "training-operator" in controllers.running:  # the deletes had the operator's pods to garbage-collect
        assert op.pods > 0
    assert by_step == {"submit": USERS * CYCLES, "get": USERS * CYCLES, "delete": USERS * CYCLES}
    bad = [r for r in commands if not handled(r)]
    assert bad == [], json.dumps(bad[:4], indent=1)
    failed_lists = [r for r in lists if r["exit"] != 0]
    assert failed_lists == [], failed_lists[:5]
    assert len(lists) >= 2 and all(isinstance(r.get("jobs"), int) for r in lists)
    # every get saw its own job, of the kind it was submitted as
    for r in commands:
        if r["step"] == "get" and r["exit"] == 0:
            assert r["got"][0] == r["name"] and r["got"][2] in ("tfjob", "pytorchjob", "mpijob"), r
    # and the deletes said what they deleted
    assert all(r["exit"] == 0 and r["stderr"] == "" for r in commands if r["step"] == "delete"), \
        [r for r in commands if r["step"] == "delete" and r["stderr"]][:3]
