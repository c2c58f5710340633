"""Suspend and resume a job, and scale an elastic one, through its Helm release.

``suspend`` is a ``helm upgrade --reuse-values`` of the job's release with ``runPolicy.suspend: true``
(``resume``: false), with the chart arena-helm ships: helm's record stays the truth (``get`` shows the new
revision, ``helm rollback`` works) and the operator does the rest (training-operator v1.7+ and
mpi-operator v0.4+ delete the pods of a suspended job and recreate them on resume).

Like ``kubectl rollout pause`` / ``resume``, suspending a suspended job (or resuming one that is not) is an
error, not a silent no-op; so is a finished job, a job without a release and a cluster whose CRD has no
``runPolicy.suspend`` (found by a server-side dry-run patch, which needs no cluster-wide permission).

``scaleout``/``scalein`` (Arena's, for its etjob) are the same kind of upgrade of an elastic job's release: its
scaled replica block's ``replicas`` (``JobKindInfo.scale_type``), kept within the bounds its spec holds; the
operator creates or deletes the pods (training-operator v1.9.3 reconciles a PyTorchJob's Worker replicas).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import yaml

from ..core.errors import ArenaHelmError, ClusterError, NotAJobError, UsageError
from ..core.jobkinds import BY_KIND
from ..views.jobs import chart_kind, elastic_of, job_phase, job_suspended, release_info
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


def _changeable(c: Cluster, namespace: str, name: str, kind: str | None, done: str, by_hand: Callable[[str], str]):
    """The job ``name`` and its release, when a helm upgrade of the release may change it (``done``: what the job
    would be, for the messages; ``by_hand(kind)``: what to do instead to a job without a release)."""
    k, version, job, release = find_job(c, namespace, name, kind)
    ref = f"{k.lower()}/{name}"
    if release is None:
        raise LifecycleError(f"{ref} in namespace {namespace} has no helm release (it was not submitted by "
                             f"arena-helm): {by_hand(k)} instead")
    if not chart_kind(release):
        raise NotAJobError(name, namespace, str(release.get("chart")))
    if job is None:
        raise LifecycleError(f"{ref}: the release exists but its {k} is missing from namespace {namespace} "
                             f"(see arena-helm get {name} -n {namespace})")
    phase = job_phase(job)
    if phase in ("Succeeded", "Failed"):
        raise LifecycleError(f"{ref} already {phase.lower()}: only a pending or running job can be {done}")
    return k, version, job, release


def _upgrade(c: Cluster, namespace: str, name: str, k: str, release: dict, patch: dict, verb: str,
             set_flag: str) -> SuspendResult:
    """A ``helm upgrade --reuse-values`` of the job's release with ``patch``, with the chart this arena-helm ships
    (refused when the release's chart is another version: the upgrade would change it too)."""
    chart = BY_KIND[k].chart
    info = release_info(release)
    shipped = shipped_chart_version(chart)
    if info.get("chartVersion") != shipped:
        raise LifecycleError(
            f"release {name} uses chart {chart}-{info.get('chartVersion')} and this arena-helm ships "
            f"{chart}-{shipped}: {verb} would also change the chart; use the arena-helm that submitted it, or "
            f"helm upgrade {name} --reuse-values --set {set_flag} with that chart")
    out = c.upgrade(chart, namespace, name, patch, reuse_values=True)
    return SuspendResult(k, name, namespace, int(out.get("version", 0) or 0))


def set_suspend(c: Cluster, namespace: str, name: str, suspend: bool, kind: str | None = None) -> SuspendResult:
    """Suspend (``suspend=True``) or resume the job ``name`` through a helm upgrade of its release."""
    verb, done = ("suspend", "suspended") if suspend else ("resume", "resumed")
    k, version, job, release = _changeable(
        c, namespace, name, kind, done, lambda k: f"set spec.{BY_KIND[k].suspend_key} on it with kubectl patch")
    ref = f"{k.lower()}/{name}"
    if job_suspended(job) == suspend:
        raise LifecycleError(f"{ref} is already suspended" if suspend else f"{ref} is not suspended")
    if suspend and not _dry_run_suspend(c, k, version, namespace, name):
        raise ClusterError(f"the cluster's {k} ({BY_KIND[k].group}/{version}) has no {BY_KIND[k].suspend_key}: install "
                           f"{BY_KIND[k].operator} to suspend jobs")
    return _upgrade(c, namespace, name, k, release, BY_KIND[k].suspend_patch(suspend), verb,
                    f"{BY_KIND[k].suspend_key}={str(suspend).lower()}")


@dataclass
class ScaleResult(SuspendResult):
    workers: int = 0  # the count asked for now
    before: int = 0


def scale_workers(c: Cluster, namespace: str, name: str, count: int, kind: str | None = None) -> ScaleResult:
    """Add ``count`` workers to the elastic job ``name`` (a negative count removes them) through a helm upgrade
    of its release, within the bounds of its spec (``--count`` is refused past them)."""
    verb = "scaleout" if count > 0 else "scalein"
    k, _, job, release = _changeable(c, namespace, name, kind, "scaled",
                                     lambda k: f"kubectl scale {BY_KIND[k].plural}/{name} --replicas N" if
                                     BY_KIND[k].scale_type else "scale only an elastic job arena-helm submitted")
    info = BY_KIND[k]
    elastic = elastic_of(job)
    ref = f"{k.lower()}/{name}"
    if elastic is None:
        hint = ("submit it with --min-workers/--max-workers to make it elastic" if info.elastic_key
                else f"arena-helm has no elastic {k}")
        raise LifecycleError(f"{ref} is not elastic (its spec has no {info.elastic_key or 'elastic bounds'}): {hint}")
    want = elastic.workers + count
    if not elastic.min_workers <= want <= elastic.max_workers:
        room = (elastic.max_workers - elastic.workers) if count > 0 else (elastic.workers - elastic.min_workers)
        bound = f"at most {elastic.max_workers}" if count > 0 else f"at least {elastic.min_workers}"
        has = f"{elastic.workers} worker{'' if elastic.workers == 1 else 's'}"
        raise UsageError(f"--count {abs(count)}: {ref} has {has} and keeps {bound}: {verb} by {room} or fewer"
                         if room else f"--count {abs(count)}: {ref} already has {has}, its "
                         f"{'maximum' if count > 0 else 'minimum'}")
    block = info.scale_type.lower()
    out = _upgrade(c, namespace, name, k, release, {block: {"replicas": want}}, verb, f"{block}.replicas={want}")
    return ScaleResult(out.kind, out.name, out.namespace, out.revision, want, elastic.workers)
