"""The read side: join helm releases, job objects and pods into views (list, get, top). Deleting and pruning
jobs is in ``deletion.py``, TensorBoard URLs in ``tensorboard_urls.py``.

``list`` (and ``top job``, ``prune``, completion) reads no release payload and starts no helm: the release
index comes from a metadata-only LIST of helm's storage records (``workload.gateway.Cluster.index``), then the API discovery of
kubeflow.org, a LIST per served job kind, one of the jobs' pods and one of TensorBoard services; every
LIST is paged (``kube.PAGE_SIZE``) and cut down as it arrives (``slim.py``), so requests grow with the
number of pages only and memory with what the rows keep. ``get`` and ``delete`` read one release in full.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.errors import ForbiddenError, NamespaceNotFoundError, NotAJobError, NotFoundError, UsageError
from ..core.jobkinds import BY_KIND, KINDS, lookup
from ..views.jobs import JobView, chart_kind, job_view, no_instances, pod_job_name, pod_job_selector
from ..views.nodes import NodeView, node_view
from ..views.queueing import owned_workload, pending_positions, place, queue_info
from ..views.reasons import Failure, pending_reason, state_reason
from ..views.release_index import (
    ReleaseMeta,
    job_release_key,
    join,
    needs_full_read,
    sort_key,
)
from ..views.slim import slim_job, slim_pod
from ..workload.gateway import Cluster
from .tensorboard_urls import tensorboard_urls

log = logging.getLogger(__name__)


def kind_of_type(value: str | None) -> str | None:
    """``-T/--type`` (a kind's CLI name or alias) -> its Kubernetes kind."""
    return None if value is None else lookup(value).kind


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# ---- list ----------------------------------------------------------------------------------------
@dataclass
class Row:
    release: ReleaseMeta | None
    job: dict | None
    kind: str


def _concurrently(calls: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run independent LISTs side by side (the API server, not this process, is what they wait for)."""
    if len(calls) <= 1:
        return {key: fn() for key, fn in calls.items()}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(calls), 4), thread_name_prefix="arena-helm-list") as pool:
        futures = {key: pool.submit(fn) for key, fn in calls.items()}
        return {key: f.result() for key, f in futures.items()}


def job_rows(c: Cluster, namespace: str, all_namespaces: bool = False, kind: str | None = None, *,
             extra: dict[str, Callable[[], Any]] | None = None) -> tuple[list[Row], dict[str, Any]]:
    """Every training job in view, newest first: each job object (made by helm or not) with its release,
    and the releases of arena-helm's job charts whose job object is missing. ``extra`` LISTs (pods, ...)
    run alongside the job LISTs; their results come back as the second value.

    The release index is read before the job objects: a job uninstalled meanwhile then shows with its
    release (uninstalling, JOB-MISSING) rather than as a job without one; a job whose release was
    installed meanwhile is looked up again.
    """
    ns = None if all_namespaces else namespace
    index = c.index(namespace, all_namespaces)
    served = c.kube.served_job_versions()
    calls: dict[str, Callable[[], Any]] = {}
    for k, versions in served.items():
        if kind in (None, k):
            calls[f"kind:{k}"] = functools.partial(_list_kind, c, k, versions[0], ns)
    calls.update(extra or {})
    c.kube.connect()  # the API client, built once before the threads share it
    results = _concurrently(calls)
    listed = [results.pop(key) for key in calls if key.startswith("kind:")]
    denied = [r for r in listed if isinstance(r, ForbiddenError)]
    if denied and (kind is not None or len(denied) == len(listed)):
        raise denied[0]  # a kind this user may not read is skipped, unless it is all there is or was asked for
    jobs: list[dict] = [job for r in listed if not isinstance(r, ForbiddenError) for job in r]
    joined = join(index, jobs)
    if joined.orphans:
        index.update(c.recheck(joined.orphans))
        joined = join(index, jobs)
    rows = [Row(rel, job, job.get("kind", "")) for rel, job in joined.pairs]
    for rel in joined.unjoined:
        if needs_full_read(rel):
            item = c.find(rel.namespace, rel.name)
            if item is None:  # uninstalled since the index was read
                continue
            rel = dataclasses.replace(rel, chart=item.get("chart", ""), status=item.get("status", rel.status))
        k = chart_kind({"chart": rel.chart})
        if k is not None and kind in (None, k):
            rows.append(Row(rel, None, k))
    rows.sort(key=lambda r: sort_key(r.release, r.job), reverse=True)
    return rows, results


def _list_kind(c: Cluster, kind: str, version: str, ns: str | None) -> list[dict] | ForbiddenError:
    try:
        return c.kube.list_jobs(kind, version, ns, selector="", slim=slim_job)
    except ForbiddenError as exc:  # e.g. a user with no TrainJob rights: their other jobs are still listed
        return exc


def _list_job_pods(c: Cluster, ns: str | None, kind: str | None) -> list[dict]:
    """The pods of training jobs: one LIST per job-name label of the kinds in view (the training operators'
    and JobSet's)."""
    labels = dict.fromkeys(k.pod_job_label for k in KINDS if kind in (None, k.kind))
    return [pod for label in labels for pod in c.kube.list_pods(ns, selector=label, slim=slim_pod)]


def list_jobs(c: Cluster, namespace: str, all_namespaces: bool = False, kind: str | None = None) -> list[JobView]:
    ns = None if all_namespaces else namespace
    rows, extra = job_rows(c, namespace, all_namespaces, kind, extra={
        "pods": functools.partial(_list_job_pods, c, ns, kind),
        "tensorboards": functools.partial(tensorboard_urls, c.kube, ns),
    })
    wanted = {(meta.get("namespace", ""), meta.get("name", "")) for meta in
              ((r.job or {}).get("metadata") or {} for r in rows if r.job)}
    pods: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for pod in extra["pods"]:
        meta = pod["metadata"]
        key = (meta["namespace"], pod_job_name(pod))
        if key in wanted:
            pods[key].append(pod)
    del extra["pods"]
    tb = extra["tensorboards"]
    now = now_utc()
    views = []
    keys = [_row_key(r) for r in rows]
    uses = Counter(keys)
    for i, r in enumerate(rows):
        rows[i] = None  # each row's objects go once its view is built: the views and the rows are not all held
        key = keys[i]
        uses[key] -= 1
        job_pods = pods.get(key, []) if uses[key] else pods.pop(key, [])  # a job's pods, kept for its last row
        rname = r.release.name if r.release else key[1]
        views.append(job_view(release=r.release.item() if r.release else None, job=r.job, pods=job_pods, now=now,
                              kind=r.kind, tensorboard=tb.get((key[0], rname), "")))
    queue_positions(c, views)
    return views


def queue_positions(c: Cluster, views: list[JobView]) -> None:
    """The queue positions of the QUEUED jobs: one request to Kueue's visibility API per LocalQueue that
    holds one (not per job)."""
    queued = [v for v in views if v.status == "QUEUED" and v.queue is not None]
    answers: dict[tuple[str, str], dict | None] = {}
    for v in queued:
        key = (v.namespace, v.queue.local_queue)
        if key not in answers:
            items = c.kube.pending_workloads(*key)
            answers[key] = None if items is None else pending_positions(items)
        place(v.queue, v.uid, answers[key])


def _row_key(r: Row) -> tuple[str, str]:
    """(namespace, name) of a row's job: its pods' key."""
    meta = (r.job or {}).get("metadata") or {}
    return meta.get("namespace") or r.release.namespace, meta.get("name") or r.release.name


def job_names(c: Cluster, namespace: str) -> list[str]:
    """The names ``list`` would show in ``namespace`` (shell completion): no pods, no services read."""
    rows, _ = job_rows(c, namespace)
    return sorted({(r.job or {}).get("metadata", {}).get("name") or r.release.name for r in rows})


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
    log_tail: list[str] | None = None  # the last lines of view.failure's container's log (None: not read)
    image_digests: dict[str, str] = dataclasses.field(default_factory=dict)  # image -> the digest its pods ran


def jobs_named(c: Cluster, namespace: str, name: str, kind: str | None = None) -> dict[str, tuple[str, dict]]:
    """kind -> (version, job object) of every served kind having a job ``name`` in ``namespace``."""
    found: dict[str, tuple[str, dict]] = {}
    for k, versions in c.kube.served_job_versions().items():
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
    return found


def find_job(c: Cluster, namespace: str, name: str, kind: str | None = None) -> tuple[str, str, dict | None, dict | None]:
    """(kind, version, job object, release) of the job ``name``; clear errors for none or several kinds.

    The release is read in full (that release's records only); a job object is paired with it only when
    helm's annotations say the release made it (a job made with kubectl has no release, whatever its name).
    """
    found = jobs_named(c, namespace, name, kind)
    if len(found) > 1:
        raise UsageError(f"{name} exists as {' and '.join(sorted(found))} in namespace {namespace}: "
                         "pick one with -T/--type")
    if found:
        k, (version, job) = next(iter(found.items()))
        key = job_release_key(job)
        release = c.find(key[0], key[1]) if key else None
        return k, version, job, release
    release = c.find(namespace, name)
    rkind = chart_kind(release) if release else None
    if release and not rkind:
        raise NotAJobError(name, namespace, str(release.get("chart")))
    if rkind and kind in (None, rkind):
        versions = c.kube.served_job_versions().get(rkind) or list(BY_KIND[rkind].versions)
        return rkind, versions[0], None, release
    what = f"{kind} " if kind else "job "
    raise NotFoundError(f"no {what}named {name} in namespace {namespace} (see arena-helm list)")


def get_job(c: Cluster, namespace: str, name: str, kind: str | None = None, events: bool = False,
            tail: int = 0) -> JobDetail:
    """One job in full; for a failed or restarting one (``view.failure``) the last ``tail`` lines of the
    failing container's log (one more request)."""
    k, version, job, release = find_job(c, namespace, name, kind)
    pods = c.kube.list_pods(namespace, selector=pod_job_selector(k, name))
    tb = tensorboard_urls(c.kube, namespace).get((namespace, name), "")
    view = job_view(release=release, job=job, pods=pods, now=now_utc(), kind=k, tensorboard=tb)
    explain_state(c, view, job, k, release)
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
    log_tail = None
    failure = view.failure
    if failure is not None and failure.container and failure.exit_code is not None and tail > 0:
        log_tail = _log_tail(c, namespace, failure, tail)
    return JobDetail(view, k, version, job, pods, evs if events else [], pending, log_tail,
                     record_digests(c, k, version, job, pods))


def check_listed_namespace(c: Cluster, namespace: str) -> None:
    """For a list that found nothing in ``namespace``: a namespace that does not exist is said (a mistyped
    ``-n`` reads as an empty namespace otherwise); one GET of it, made only then. A user who may not read
    namespaces gets the empty answer."""
    try:
        found = c.kube.get_namespace(namespace)
    except ForbiddenError:
        return
    if found is None:
        raise NamespaceNotFoundError(f"namespace {namespace} does not exist (kubectl get namespaces lists them): "
                                     "give another with -n NAMESPACE, or -A for every namespace")


def no_pods(c: Cluster, namespace: str, name: str, kind: str, job: dict | None,
            release: dict | None) -> NotFoundError:
    """The error of a command that reads a job's pods (``logs``) when it has none: the job's state and its
    reason, and why it has no pods, as ``get`` tells them."""
    view = job_view(release=release, job=job, pods=[], now=now_utc(), kind=kind)
    explain_state(c, view, job, kind, release)
    reason = f": {view.reason}" if view.reason else ""
    return NotFoundError(f"job {name} is {view.status}{reason}; its pods: {no_instances(view)}")


def record_digests(c: Cluster, kind: str, version: str, job: dict | None, pods: list[dict]) -> dict[str, str]:
    """The image digests of the job: those recorded on it, with what its pods report now added to the job's
    annotation (one patch, only when something is new; a user who may not patch the job just sees them)."""
    from ..core.errors import ArenaHelmError
    from ..workload.provenance import DIGESTS_ANNOTATION, digests_to_record, recorded_digests

    if job is None:
        return {}
    new = digests_to_record(job, pods)
    if new is None:
        return recorded_digests(job)
    meta = job["metadata"]
    try:
        c.kube.annotate_job(kind, version, meta["namespace"], meta["name"],
                            {DIGESTS_ANNOTATION: json.dumps(new, separators=(",", ":"))},
                            f"recording the image digests of {kind} {meta['name']}")
    except ArenaHelmError as exc:
        log.debug("get: the image digests stay unrecorded: %s", exc)
    return new


def _log_tail(c: Cluster, namespace: str, failure: Failure, tail: int) -> list[str] | None:
    """The last ``tail`` lines of the failing container's log (of the run that failed); None if the log is
    gone or not readable (get still shows the rest)."""
    from ..core.errors import ArenaHelmError

    try:
        data = b"".join(c.kube.stream_log(namespace, failure.pod, container=failure.container, tail=tail,
                                          previous=failure.previous))
    except ArenaHelmError as exc:
        log.debug("get: the log of %s/%s: %s", failure.pod, failure.container, exc)
        return None
    return data.decode(errors="replace").splitlines()


def explain_state(c: Cluster, view: JobView, job: dict | None, kind: str, release: dict | None) -> None:
    """What ``get`` adds to a view's reason: helm's reason for a failed release (the description of its
    latest revision, read with the release); for a job of a Kueue LocalQueue, its Workload, the LocalQueue
    (its ClusterQueue) and, while it waits, its positions (three more requests)."""
    if view.status == "RELEASE-FAILED":
        description = " ".join(str((release or {}).get("description") or "").split())
        view.reason = state_reason(view.status, job=job, kind=kind, name=view.name, namespace=view.namespace,
                                   release_description=description)
    elif view.queue is not None:  # a job of a Kueue LocalQueue (its queue-name label)
        try:
            workloads = c.kube.list_kueue_workloads(view.namespace)
            local_queue = c.kube.get_local_queue(view.namespace, view.queue.local_queue)
        except (NotFoundError, ForbiddenError):  # Kueue's CRDs not served here, or not readable by this user
            workloads, local_queue = [], None
        view.queue = queue_info(job, workload=owned_workload(job, workloads), local_queue=local_queue,
                                pending=view.status == "QUEUED")
        if view.status == "QUEUED":
            queue_positions(c, [view])
            view.reason = state_reason(view.status, job=job, kind=kind, name=view.name,
                                       namespace=view.namespace, queue=view.queue)


# ---- top -----------------------------------------------------------------------------------------
def top_nodes(c: Cluster, names: list[str] | None = None) -> list[NodeView]:
    return top_nodes_and_pods(c, names)[0]


def top_nodes_and_pods(c: Cluster, names: list[str] | None = None) -> tuple[list[NodeView], list[dict]]:
    """The node views and the unfinished pods of the cluster (for joining usage with nodes)."""
    nodes = c.kube.list_nodes()
    if names:
        missing = sorted(set(names) - {n["metadata"]["name"] for n in nodes})
        if missing:
            raise NotFoundError(f"no node named {missing[0]}")
        nodes = [n for n in nodes if n["metadata"]["name"] in names]
    pods = c.kube.list_pods(None, selector="", field_selector="status.phase!=Succeeded,status.phase!=Failed",
                            slim=slim_pod)
    return [node_view(n, pods) for n in sorted(nodes, key=lambda n: n["metadata"]["name"])], pods


__all__ = ["get_job", "job_names", "job_rows", "list_jobs", "top_nodes"]
