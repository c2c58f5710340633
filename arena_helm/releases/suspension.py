"""Suspend and resume a job through its Helm release.

``suspend`` is a ``helm upgrade --reuse-values`` of the job's release with ``runPolicy.suspend: true``
(``resume``: false), with the chart arena-helm ships: helm's record stays the truth (``get`` shows the new
revision, ``helm rollback`` works) and the operator does the rest (training-operator v1.7+ and
mpi-operator v0.4+ delete the pods of a suspended job and recreate them on resume).

Like ``kubectl rollout pause`` / ``resume``, suspending a suspended job (or resuming one that is not) is an
error, not a silent no-op; so is a finished job, a job without a release and a cluster whose CRD has no
``runPolicy.suspend`` (found by a server-side dry-run patch, which needs no cluster-wide permission).
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from ..core.errors import ArenaHelmError, ClusterError, NotAJobError
from ..core.jobkinds import BY_KIND
from ..views.jobs import chart_kind, job_phase, job_suspended, release_info
from ..workload.gateway import Cluster
from .reader import find_job


class LifecycleError(ArenaHelmError):
    """The job cannot be suspended or resumed in its present state (exit 1)."""


@dataclass
class SuspendResult:
    kind: str
    name: str
    namespace: str
    revision: int


def shipped_chart_version(chart: str) -> str:
    from ..adapters.charts import chart_source

    meta = yaml.safe_load((chart_source(chart) / "Chart.yaml").read_text(encoding="utf-8")) or {}
    return str(meta.get("version", ""))


def _dry_run_suspend(c: Cluster, kind: str, version: str, namespace: str, name: str) -> bool:
    """Whether the API server keeps the suspend field (a CRD without it prunes the field)."""
    info = BY_KIND[kind]
    kept = c.kube.dry_run_patch_job(kind, version, namespace, name, info.suspend_patch(True),
                                    f"checking that {kind} {name} can be suspended")
    return info.suspend_of(kept.get("spec") or {}) is True


def set_suspend(c: Cluster, namespace: str, name: str, suspend: bool, kind: str | None = None) -> SuspendResult:
    """Suspend (``suspend=True``) or resume the job ``name`` through a helm upgrade of its release."""
    verb, done = ("suspend", "suspended") if suspend else ("resume", "resumed")
    k, version, job, release = find_job(c, namespace, name, kind)
    ref = f"{k.lower()}/{name}"
    if release is None:
        raise LifecycleError(f"{ref} in namespace {namespace} has no helm release (it was not submitted by "
                             f"arena-helm): set spec.{BY_KIND[k].suspend_key} on it with kubectl patch instead")
    if not chart_kind(release):
        raise NotAJobError(name, namespace, str(release.get("chart")))
    if job is None:
        raise LifecycleError(f"{ref}: the release exists but its {k} is missing from namespace {namespace} "
                             f"(see arena-helm get {name} -n {namespace})")
    phase = job_phase(job)
    if phase in ("Succeeded", "Failed"):
        raise LifecycleError(f"{ref} already {phase.lower()}: only a pending or running job can be {done}")
    if job_suspended(job) == suspend:
        raise LifecycleError(f"{ref} is already suspended" if suspend else f"{ref} is not suspended")
    if suspend and not _dry_run_suspend(c, k, version, namespace, name):
        raise ClusterError(f"the cluster's {k} ({BY_KIND[k].group}/{version}) has no {BY_KIND[k].suspend_key}: install "
                           f"{BY_KIND[k].operator} to suspend jobs")
    chart = BY_KIND[k].chart
    info = release_info(release)
    shipped = shipped_chart_version(chart)
    if info.get("chartVersion") != shipped:
        raise LifecycleError(
            f"release {name} uses chart {chart}-{info.get('chartVersion')} and this arena-helm ships "
            f"{chart}-{shipped}: {verb} would also change the chart; use the arena-helm that submitted it, or "
            f"helm upgrade {name} --reuse-values --set {BY_KIND[k].suspend_key}={str(suspend).lower()} with that chart")
    out = c.upgrade(chart, namespace, name, BY_KIND[k].suspend_patch(suspend), reuse_values=True)
    return SuspendResult(k, name, namespace, int(out.get("version", 0) or 0))
