"""The read side: join helm releases, job objects and pods into views (list, get, top), and delete/prune.

Request counts are constant in the number of jobs: ``list`` makes one ``helm list`` call, the API
discovery of kubeflow.org, one LIST per served job kind, one LIST of pods and one of TensorBoard services.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass

from .errors import ArenaHelmError, ForbiddenError, NotFoundError, UsageError
from .helm import Helm
from .kinds import BY_KIND, lookup
from .kube import KubeReader
from .views import (
    JOB_CHARTS,
    JobView,
    NodeView,
    chart_kind,
    job_view,
    node_view,
    pending_reason,
    pod_job_name,
    pod_job_selector,
)

TB_SELECTOR = "app.kubernetes.io/component=tensorboard"
def kind_of_type(value: str | None) -> str | None:
    """``-T/--type`` (a kind's CLI name or alias) -> its Kubernetes kind."""
    return None if value is None else lookup(value).kind


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# ---- TensorBoard URLs ------------------------------------------------------------------------------
def tensorboard_url(svc: dict, node_ip: str | None) -> str:
    meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
    port = (spec.get("ports") or [{}])[0]
    stype = spec.get("type", "ClusterIP")
    if stype == "LoadBalancer":
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        if ingress:
            host = ingress[0].get("ip") or ingress[0].get("hostname")
            return f"http://{host}:{port.get('port')}"
        stype = "NodePort" if port.get("nodePort") else "ClusterIP"
    if stype == "NodePort" and port.get("nodePort"):
        return f"http://{node_ip or '<node-ip>'}:{port['nodePort']}"
    return (f"kubectl port-forward -n {meta.get('namespace')} svc/{meta.get('name')} "
            f"{port.get('port', 6006)}:{port.get('port', 6006)}  # then open http://localhost:{port.get('port', 6006)}")


def first_node_ip(kube: KubeReader) -> str | None:
    try:
        nodes = kube.list_nodes()
    except ArenaHelmError:
        return None
    for node in nodes:
        for addr in (node.get("status") or {}).get("addresses") or []:
            if addr.get("type") in ("ExternalIP", "InternalIP"):
                return addr.get("address")
    return None


def tensorboard_urls(kube: KubeReader, namespace: str | None) -> dict[tuple[str, str], str]:
    """(namespace, release) -> TensorBoard URL or port-forward command."""
    services = kube.list_services(namespace, TB_SELECTOR)
    node_ip = first_node_ip(kube) if any(
        (s.get("spec") or {}).get("type") in ("NodePort", "LoadBalancer") for s in services) else None
    out = {}
    for svc in services:
        meta = svc.get("metadata") or {}
        release = (meta.get("labels") or {}).get("app.kubernetes.io/instance") or meta.get("name", "")
        out[(meta.get("namespace", ""), release)] = tensorboard_url(svc, node_ip)
    return out


# ---- list ----------------------------------------------------------------------------------------
@dataclass
class Cluster:
    helm: Helm
    kube: KubeReader


def our_releases(helm: Helm, namespace: str | None, all_namespaces: bool) -> list[dict]:
    return [r for r in helm.list(namespace, all_namespaces) if chart_kind(r)]


def list_jobs(c: Cluster, namespace: str, all_namespaces: bool = False, kind: str | None = None) -> list[JobView]:
    ns = None if all_namespaces else namespace
    releases = [r for r in our_releases(c.helm, namespace, all_namespaces) if kind in (None, chart_kind(r))]
    served = c.kube.served_job_versions()
    jobs: dict[tuple[str, str, str], dict] = {}
    wanted = [(k, versions) for k, versions in served.items() if kind in (None, k)]
    denied: list[ForbiddenError] = []
    for k, versions in wanted:
        try:
            listed = c.kube.list_jobs(k, versions[0], ns)
        except ForbiddenError as exc:  # a kind this user may not read (e.g. no TrainJob rights): skip it
            denied.append(exc)
            continue
        for job in listed:
            meta = job["metadata"]
            jobs[(meta["namespace"], k, meta["name"])] = job
    if denied and (kind is not None or len(denied) == len(wanted)):
        raise denied[0]
    pods: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for pod in c.kube.list_pods(ns):
        meta = pod["metadata"]
        job_name = pod_job_name(pod)
        if job_name:
            pods[(meta["namespace"], job_name)].append(pod)
    tb = tensorboard_urls(c.kube, ns)
    now = now_utc()
    views = []
    for r in releases:
        k = chart_kind(r)
        rns, name = r["namespace"], r["name"]
        views.append(job_view(release=r, job=jobs.get((rns, k, name)), pods=pods.get((rns, name), []), now=now,
                              kind=k, tensorboard=tb.get((rns, name), "")))
    # newest first: the release time has sub-second precision (object timestamps have whole seconds)
    views.sort(key=lambda v: (_release_ts(v) or v.created_ts, v.created_ts, v.name), reverse=True)
    return views


_HELM_TIME = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?")


def _release_ts(v: JobView) -> float:
    """helm list's "updated" ("2026-01-02 15:04:05.123456789 +0000 UTC") as a UTC timestamp."""
    m = _HELM_TIME.match(str(v.release.get("updated", "")))
    if not m:
        return 0.0
    frac = (m.group(3) or ".0")[:7]
    stamp = dt.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{frac}+00:00")
    return stamp.timestamp()


# ---- get -----------------------------------------------------------------------------------------
@dataclass
class JobDetail:
    view: JobView
    kind: str
    version: str
    job: dict | None
    pods: list[dict]
    events: list[dict]
    pending: str


def find_job(c: Cluster, namespace: str, name: str, kind: str | None = None) -> tuple[str, str, dict | None, dict | None]:
    """(kind, version, job object, release) of the job ``name``; clear errors for none or several kinds."""
    releases = [r for r in c.helm.list(namespace) if r.get("name") == name]
    release = releases[0] if releases else None
    served = c.kube.served_job_versions()
    found: dict[str, tuple[str, dict]] = {}
    for k, versions in served.items():
        if kind not in (None, k):
            continue
        try:
            job = c.kube.get_job(k, versions[0], namespace, name)
        except ForbiddenError:
            if kind is not None:
                raise
            continue  # a kind this user may not read
        if job is not None:
            found[k] = (versions[0], job)
    rkind = chart_kind(release) if release else None
    if release and not rkind and not found:
        raise UsageError(f"release {name} in namespace {namespace} is not an arena-helm job "
                         f"(chart {release.get('chart')})")
    if len(found) > 1:
        raise UsageError(f"{name} exists as {' and '.join(sorted(found))} in namespace {namespace}: "
                         "pick one with -T/--type")
    if found:
        k, (version, job) = next(iter(found.items()))
        return k, version, job, release
    if rkind and kind in (None, rkind):
        versions = served.get(rkind) or list(BY_KIND[rkind].versions)
        return rkind, versions[0], None, release
    what = f"{kind} " if kind else "job "
    raise NotFoundError(f"no {what}named {name} in namespace {namespace} (see arena-helm list)")


def get_job(c: Cluster, namespace: str, name: str, kind: str | None = None, events: bool = False) -> JobDetail:
    k, version, job, release = find_job(c, namespace, name, kind)
    pods = c.kube.list_pods(namespace, selector=pod_job_selector(k, name))
    tb = tensorboard_urls(c.kube, namespace).get((namespace, name), "")
    view = job_view(release=release, job=job, pods=pods, now=now_utc(), kind=k, tensorboard=tb)
    evs: list[dict] = []
    if events or view.status == "PENDING":
        names = {name} | {p["metadata"]["name"] for p in pods}
        try:
            evs = [e for e in c.kube.list_events(namespace)
                   if (e.get("involvedObject") or {}).get("name") in names]
        except ForbiddenError:
            evs = []
        evs.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    pending = pending_reason(pods, evs) if view.status == "PENDING" else ""
    return JobDetail(view, k, version, job, pods, evs if events else [], pending)


# ---- top -----------------------------------------------------------------------------------------
def top_nodes(c: Cluster, names: list[str] | None = None) -> list[NodeView]:
    nodes = c.kube.list_nodes()
    if names:
        missing = sorted(set(names) - {n["metadata"]["name"] for n in nodes})
        if missing:
            raise NotFoundError(f"no node named {missing[0]}")
        nodes = [n for n in nodes if n["metadata"]["name"] in names]
    pods = c.kube.list_pods(None, selector="", field_selector="status.phase!=Succeeded,status.phase!=Failed")
    return [node_view(n, pods) for n in sorted(nodes, key=lambda n: n["metadata"]["name"])]


# ---- delete / prune ------------------------------------------------------------------------------
def delete_job(c: Cluster, namespace: str, name: str) -> str:
    """``helm uninstall`` of the job's release (job, TensorBoard and all). Returns the chart kind."""
    releases = [r for r in c.helm.list(namespace) if r.get("name") == name]
    if not releases:
        raise NotFoundError(f"no job named {name} in namespace {namespace}")
    kind = chart_kind(releases[0])
    if not kind:
        raise UsageError(f"release {name} in namespace {namespace} is not an arena-helm job "
                         f"(chart {releases[0].get('chart')}); use helm uninstall for it")
    c.helm.uninstall(name, namespace)
    return kind


def finished_before(views: list[JobView], cutoff: dt.datetime) -> list[JobView]:
    """The jobs that ended (succeeded or failed) before ``cutoff``; never running or pending ones."""
    out = []
    for v in views:
        if not v.finished or not v.ended:
            continue
        ended = dt.datetime.fromisoformat(v.ended.replace("Z", "+00:00"))
        if ended < cutoff:
            out.append(v)
    return out


__all__ = ["JOB_CHARTS", "Cluster", "delete_job", "finished_before", "get_job", "list_jobs", "top_nodes"]
