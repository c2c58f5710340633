"""``delete`` and ``prune``: a job's release uninstalled (job, TensorBoard and all), a job object without a
release deleted (``--object``), and which jobs ended before a cut-off."""

from __future__ import annotations

import datetime as dt

from ..core.catalog import FAMILY_CHART, Family, release_chart
from ..core.errors import NotFoundError, UsageError
from ..core.grammars import parse_time
from ..core.jobkinds import BY_KIND
from ..views.jobs import JobView, chart_kind
from ..views.release_index import job_release_key
from ..workload.gateway import Cluster
from .reader import jobs_named


def no_release_message(kind: str, namespace: str, name: str) -> str:
    """What to do with a job object that has no helm release (made with kubectl or the Kubeflow SDK)."""
    return (f"{kind.lower()}/{name} in namespace {namespace} has no helm release (it was made without helm, "
            f"e.g. with kubectl or the Kubeflow SDK): delete the job object with "
            f"'arena-helm delete {name} --object -n {namespace}' or "
            f"'kubectl delete {BY_KIND[kind].plural}.{BY_KIND[kind].group} {name} -n {namespace}'")


def delete_job(c: Cluster, namespace: str, name: str) -> str:
    """``helm uninstall`` of the job's release (job, TensorBoard and all). Returns the chart kind."""
    release = c.find(namespace, name)
    if release is None:
        found = jobs_named(c, namespace, name)
        if found:
            raise UsageError(no_release_message(sorted(found)[0], namespace, name))
        raise NotFoundError(f"no job named {name} in namespace {namespace}")
    kind = chart_kind(release)
    if not kind and release_chart(release) == FAMILY_CHART[Family.TENSORBOARD]:
        raise UsageError(f"{name} in namespace {namespace} is a standalone TensorBoard, not a job: stop it with "
                         f"arena-helm tensorboard stop {name} -n {namespace}")
    if not kind:
        raise UsageError(f"release {name} in namespace {namespace} is not an arena-helm job "
                         f"(chart {release.get('chart')}); use helm uninstall for it")
    c.uninstall(namespace, name)
    return kind


def delete_object(c: Cluster, namespace: str, name: str, kind: str | None = None) -> str:
    """Delete a job object that has no helm release (its pods go with it). Returns its kind."""
    found = jobs_named(c, namespace, name, kind)
    if not found:
        what = f"{kind} " if kind else "job object "
        raise NotFoundError(f"no {what}named {name} in namespace {namespace}")
    if len(found) > 1:
        raise UsageError(f"{name} exists as {' and '.join(sorted(found))} in namespace {namespace}: "
                         "pick one with -T/--type")
    k, (version, job) = next(iter(found.items()))
    key = job_release_key(job)
    if key and c.find(key[0], key[1]) is not None:
        raise UsageError(f"{k.lower()}/{name} belongs to helm release {key[1]}: delete it without --object "
                         f"(arena-helm delete {key[1]} -n {key[0]} uninstalls the release and all it made)")
    try:
        c.kube.delete_job(k, version, namespace, name)
    except NotFoundError:
        raise NotFoundError(f"no {k} named {name} in namespace {namespace} (deleted meanwhile)") from None
    return k


def finished_before(views: list[JobView], cutoff: dt.datetime) -> list[JobView]:
    """The jobs that ended (succeeded or failed) before ``cutoff``; never running or pending ones."""
    out = []
    for v in views:
        if not v.finished or not v.ended:
            continue
        ended = parse_time(v.ended)
        if ended is not None and ended < cutoff:
            out.append(v)
    return out


__all__ = ["delete_job", "delete_object", "finished_before", "no_release_message"]
