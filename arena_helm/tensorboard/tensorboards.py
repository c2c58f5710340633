"""Standalone TensorBoards: values (pure) and the release around them."""

from __future__ import annotations

from typing import Any

from ..core.catalog import FAMILY_CHART, Family, release_chart
from ..core.errors import AlreadyExistsError, NotFoundError, UsageError
from ..core.grammars import DNS1035_LABEL_RX, DNS1123_SUBDOMAIN_RX, matches
from ..releases.tensorboard_urls import TB_SELECTOR, first_node_ip, tensorboard_url
from ..workload.gateway import Cluster
from ..workload.spec import TENSORBOARD_NAME_MAX as NAME_MAX
from ..workload.spec import TENSORBOARD_SUFFIX

CHART = FAMILY_CHART[Family.TENSORBOARD]
MOUNT = "/logs"


def tensorboard_values(name: str, *, logdir: str | None, host_path: str | None, image: str | None,
                       service_type: str) -> dict[str, Any]:
    """Values of the tensorboard chart for ``tensorboard start``. Pure."""
    if not matches(DNS1035_LABEL_RX, name):
        raise UsageError(f"NAME: tensorboard name {name!r} must start with a lowercase letter and hold only a-z, 0-9, "
                         "'-'")
    if len(name) > NAME_MAX:
        raise UsageError(f"NAME: tensorboard name {name!r} is {len(name)} characters; at most {NAME_MAX} (its Service "
                         f"is <name>{TENSORBOARD_SUFFIX})")
    if bool(logdir) == bool(host_path):
        raise UsageError("give exactly one of --logdir PVC:PATH (the logs in a PVC) and --host-path DIR")
    values: dict[str, Any] = {"service": {"type": service_type}}
    if logdir:
        claim, sep, path = logdir.partition(":")
        if not sep or not claim:
            raise UsageError(f"--logdir {logdir!r} is not PVC:PATH (e.g. training-logs:/mnist)")
        if not matches(DNS1123_SUBDOMAIN_RX, claim):
            raise UsageError(f"--logdir: PVC name {claim!r} must be a lowercase DNS subdomain")
        if ".." in path.split("/") or "\n" in path:
            raise UsageError(f"--logdir {logdir!r}: PATH is a folder of the PVC: no '..' and no newline")
        sub = path.strip("/")
        values["pvc"] = {"claimName": claim, "mountPath": MOUNT}
        values["logDir"] = f"{MOUNT}/{sub}" if sub else MOUNT
    else:
        assert host_path is not None
        if not host_path.startswith("/"):
            raise UsageError(f"--host-path {host_path!r} must be absolute")
        values["hostPath"] = {"enabled": True, "path": host_path, "mountPath": MOUNT}
        values["logDir"] = MOUNT
    if image:
        values["image"] = image
    return values


def _is_tensorboard_chart(release: dict) -> bool:
    return release_chart(release) == CHART


def start_tensorboard(c: Cluster, namespace: str, name: str, values: dict[str, Any]) -> str:
    if c.find(namespace, name) is not None:
        raise AlreadyExistsError(f"a release named {name} already exists in namespace {namespace}: pick another name")
    c.install(CHART, namespace, name, values)
    svc = find_service(c, namespace, name)
    if svc is None:
        return f"(no service found for {name}-tensorboard)"
    node_ip = first_node_ip(c.kube) if svc["spec"].get("type") != "ClusterIP" else None
    return tensorboard_url(svc, node_ip)


def stop_tensorboard(c: Cluster, namespace: str, name: str) -> None:
    release = c.find(namespace, name)
    if release is None:
        raise NotFoundError(f"no TensorBoard named {name} in namespace {namespace}")
    if not _is_tensorboard_chart(release):
        raise UsageError(f"release {name} is not a standalone TensorBoard (chart {release.get('chart')}); "
                         f"a job's TensorBoard goes with arena-helm delete {name}")
    c.uninstall(namespace, name)


def find_service(c: Cluster, namespace: str, name: str) -> dict | None:
    for svc in c.kube.list_services(namespace, TB_SELECTOR):
        meta = svc["metadata"]
        if (meta.get("labels") or {}).get("app.kubernetes.io/instance") == name:
            return svc
    return None


def list_tensorboards(c: Cluster, namespace: str, all_namespaces: bool) -> list[dict[str, str]]:
    ns = None if all_namespaces else namespace
    services = c.kube.list_services(ns, TB_SELECTOR)
    node_ip = first_node_ip(c.kube) if any(s["spec"].get("type") != "ClusterIP" for s in services) else None
    charts = {(r["namespace"], r["name"]): r for r in c.listed(namespace, all_namespaces)}
    rows = []
    for svc in sorted(services, key=lambda s: (s["metadata"]["namespace"], s["metadata"]["name"])):
        meta = svc["metadata"]
        release = (meta.get("labels") or {}).get("app.kubernetes.io/instance", "")
        rel = charts.get((meta["namespace"], release))
        owner = "standalone" if rel and _is_tensorboard_chart(rel) else f"job {release}"
        rows.append({"namespace": meta["namespace"], "name": release, "owner": owner,
                     "url": tensorboard_url(svc, node_ip)})
    return rows


def render_tensorboard(helm_binary: str | None, namespace: str, name: str, values: dict[str, Any]) -> str:
    """``tensorboard start --dry-run``: the manifests (``helm template``), no cluster, no kubeconfig."""
    from ..adapters.helm import Helm
    from ..workload.gateway import render

    return render(Helm(helm_binary), CHART, name, values, namespace)


def _pod_running(pod: dict) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and not (pod.get("metadata") or {}).get("deletionTimestamp") and all(
        c.get("ready") for c in status.get("containerStatuses") or [{}])


def wait_for_tensorboard_pod(c: Cluster, namespace: str, name: str, timeout: float, *, poll: float = 1.0,
                             notify=None) -> dict:
    """Until a TensorBoard pod of release ``name`` runs (and is ready); says so once through ``notify`` when
    it has to wait, and gives up after ``timeout`` seconds with the pod's state in one line."""
    import time

    from ..core.errors import WaitTimeoutError
    from ..views.reasons import pod_status

    selector = f"{TB_SELECTOR},app.kubernetes.io/instance={name}"
    deadline = time.monotonic() + timeout
    told = False
    while True:
        pods = c.kube.list_pods(namespace, selector=selector)
        running = [p for p in pods if _pod_running(p)]
        if running:
            return running[0]
        if not told and notify:
            notify(f"waiting for the TensorBoard pod of {name} to run (up to {int(timeout)}s; --timeout)")
            told = True
        if time.monotonic() >= deadline:
            states = ", ".join(f"{p['metadata']['name']} {pod_status(p)}" for p in pods) or "no pod yet"
            raise WaitTimeoutError(
                f"the TensorBoard pod of {name} is not running after {int(timeout)}s ({states}): see "
                f"kubectl get pods -n {namespace} -l app.kubernetes.io/instance={name}"
            )
        time.sleep(poll)
