"""Submitting a job, the Python API: spec -> values -> manifests or a release. The CLI only wraps these.

    from arena_helm import TFJobSpec, render, submit
    spec = TFJobSpec(name="mnist", image="tensorflow/tensorflow:2.15.0", workers=2, gpus=1,
                     command="python train.py")
    print(render(spec))                  # what --dry-run prints; no cluster
    result = submit(spec)                # helm install, all or nothing

Every failure is an :class:`~arena_helm.core.errors.ArenaHelmError` (a ``UsageError`` for bad input).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..adapters.helm import NAME_IN_USE, NO_SOURCES, Helm, ValueSources
from ..core.errors import AlreadyExistsError, ArenaHelmError, ClusterError, NotFoundError, WaitTimeoutError
from ..core.grammars import epoch
from ..core.jobkinds import BY_KEY, BY_KIND
from . import gateway
from .job_values import build_values

if TYPE_CHECKING:  # the install path imports these on use: render (--dry-run) needs none of them
    from ..adapters.kube import KubeReader
    from .spec import JobSpec


def job_values(spec: JobSpec, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chart values generated from the spec (the user's -f/--set* go to helm on top of them). Pure.

    They are not validated through the chart's values model here: helm checks them against the chart's
    values.schema.json (generated from that model) on every render and install, and the tests check that
    what every kind builds is valid for its model. Building a values model's validators would cost every
    submit (and --dry-run) more than the rest of the command. ``provenance`` (``provenance.record``) is
    kept as the values block of that name."""
    values = build_values(spec)
    if provenance:
        values["provenance"] = provenance
    return values


def render(spec: JobSpec, helm: Helm | None = None, *, values: dict[str, Any] | None = None,
           sources: ValueSources = NO_SOURCES) -> str:
    """The manifests the job would create (``helm template``): no cluster, no kubeconfig. Without ``values``,
    those ``submit`` would install (generated values and provenance)."""
    if values is None:
        from .provenance import record

        values = job_values(spec, record(spec))
    return gateway.render(helm or Helm(), BY_KEY[spec.kind].chart, spec.name, values, spec.namespace, sources)


@dataclass
class SubmitResult:
    name: str
    namespace: str
    kind: str
    api_version: str
    revision: int
    objects: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, apiVersion, name)


PENDING = ("pending-install", "pending-upgrade", "pending-rollback", "uninstalling")


def pending_grace() -> float:
    """Seconds after which a pending release counts as interrupted (a live helm would have timed out)."""
    import os

    try:
        return float(os.environ.get("ARENA_HELM_PENDING_GRACE", "300"))
    except ValueError:
        return 300.0


def submit(spec: JobSpec, helm: Helm | None = None, kube: KubeReader | None = None, *,
           values: dict[str, Any] | None = None, sources: ValueSources = NO_SOURCES,
           notify: Callable[[str], None] | None = None) -> SubmitResult:
    """Install the job's release. All or nothing: on any failure the release is removed again.

    The happy path is one ``helm install`` (the API is not consulted first: helm itself refuses a name in
    use, an existing object and a kind the cluster does not serve). A failure is then explained with the
    API's help: a missing CRD names the operator to install, a release left pending by an interrupted
    install (older than ``pending_grace()``) is removed and the install tried again, with a message through
    ``notify``; and whatever this install created is removed.
    """
    from ..adapters.kube import KubeReader
    from ..views.release_index import SUBMIT_LABEL

    kube = kube or KubeReader()
    if helm is None:  # helm reaches the cluster ``kube`` reaches
        from ..adapters.helm import KubeTarget

        helm = Helm(target=KubeTarget(kube.kubeconfig, kube.context))
    info = BY_KEY[spec.kind]
    kind = info.kind
    if values is None:
        from .provenance import record

        values = job_values(spec, record(spec))
    values = _with_runtime(spec, kube, values)
    from .preflight import check_local_queue, check_priority_class

    check_priority_class(kube, spec.priority, notify)
    check_local_queue(kube, spec.namespace, spec.queue_name)
    c = gateway.Cluster(helm, kube)
    for attempt in (1, 2):
        try:
            release = c.install(info.chart, spec.namespace, spec.name, values, sources=sources, mark=SUBMIT_LABEL,
                                explain=lambda exc: _explain(exc, kind))
            break
        except AlreadyExistsError as exc:
            if attempt == 1 and NAME_IN_USE.search(str(exc)) and _recover_pending(c, spec, notify):
                continue
            raise _already_exists(exc, kind, spec.name, spec.namespace) from None
    import yaml  # the install path only: --dry-run needs no YAML parser

    objects = [
        (doc.get("kind", ""), doc.get("apiVersion", ""), doc.get("metadata", {}).get("name", ""))
        for doc in yaml.safe_load_all(release.get("manifest", "")) if isinstance(doc, dict)
    ]
    api_version = next((a for k, a, _ in objects if k == kind), info.api_versions()[0])
    return SubmitResult(spec.name, spec.namespace, kind, api_version, int(release.get("version", 1)), objects)


def _with_runtime(spec: JobSpec, kube: KubeReader, values: dict[str, Any]) -> dict[str, Any]:
    """A TrainJob: ``--runtime`` must be a runtime the cluster serves; the chart patches its trainer jobs."""
    if not BY_KEY[spec.kind].runtime_key:
        return values
    from .runtimes import check_runtime, patched_jobs

    runtime = values.get("runtime") or {}
    found = check_runtime(kube, runtime.get("name", ""), runtime.get("kind", "ClusterTrainingRuntime"),
                          spec.namespace)
    jobs = patched_jobs(found)
    return {**values, "replicatedJobs": jobs} if jobs and "replicatedJobs" not in values else values


def _explain(exc: ArenaHelmError, kind: str) -> ArenaHelmError:
    """helm's "no matches for kind" means the job's CRD is missing: say which operator to install. So does a 404
    on creating the job ("the server could not find the requested resource (post mpijobs.kubeflow.org)"): the
    CRD went away after helm's discovery had listed it."""
    text = str(exc)
    info = BY_KIND[kind]
    gone = f"could not find the requested resource (post {info.plural}.{info.group})"
    if "no matches for kind" in text or "ensure CRDs are installed first" in text or gone in text:
        versions = " or ".join(info.api_versions())
        return ClusterError(f"the cluster does not serve {kind} ({versions}): install {info.operator} first")
    return exc


def _already_exists(exc: AlreadyExistsError, kind: str, name: str, namespace: str) -> AlreadyExistsError:
    text = str(exc)
    if NAME_IN_USE.search(text) or "sh.helm.release" in text or "release: already exists" in text:
        return _name_taken(name, namespace)
    if "pending" in str(exc):
        return exc
    return AlreadyExistsError(
        f"{kind} {name} already exists in namespace {namespace} (not from arena-helm): pick another --name, "
        f"or delete that object first (kubectl delete {BY_KIND[kind].plural}.{BY_KIND[kind].group} {name} "
        f"-n {namespace})"
    )


def _name_taken(name: str, namespace: str) -> AlreadyExistsError:
    return AlreadyExistsError(
        f"a release named {name} already exists in namespace {namespace}: pick another --name, "
        f"or delete it first (arena-helm delete {name} -n {namespace})"
    )


def _record_age(record: dict) -> float:
    created = epoch((record.get("metadata") or {}).get("creationTimestamp"), default=time.time())
    return time.time() - created


def _recover_pending(c: gateway.Cluster, spec: JobSpec, notify: Callable[[str], None] | None) -> bool:
    """The name is taken: if by a release an interrupted install left pending, remove it (True) or say how."""
    from ..views.release_index import OWNER_SELECTOR, latest_record, release_resource

    resource = release_resource()
    if resource is None:  # records outside the API (memory, sql): helm's own error stands
        return False
    records = c.kube.list_release_metadata(resource, spec.namespace, f"{OWNER_SELECTOR},name={spec.name}",
                                           cached=False)
    latest = latest_record(records)
    status = (((latest or {}).get("metadata") or {}).get("labels") or {}).get("status", "")
    if status not in PENDING:
        return False
    age = _record_age(latest)
    grace = pending_grace()
    name, namespace = spec.name, spec.namespace
    if age < grace:
        raise AlreadyExistsError(
            f"release {name} in namespace {namespace} is {status} since {int(age)}s ago (another install may "
            f"be running); if it was interrupted, retry after {int(grace)}s or remove it with "
            f"arena-helm delete {name} -n {namespace}"
        )
    if notify:
        notify(f"release {name} was left {status} by an interrupted install ({int(age)}s ago); removing it first")
    c.uninstall(namespace, name)
    return True


TERMINAL = ("Succeeded", "Failed")


def wait_for(kube: KubeReader, result: SubmitResult, timeout: float, poll: float = 2.0,
             progress: Callable[[str], None] | None = None) -> str:
    """Follow the submitted job until it succeeds or fails; returns the final phase or raises WaitTimeoutError."""
    return wait_job(kube, result.kind, result.api_version.split("/")[-1], result.namespace, result.name, timeout,
                    poll, progress)


def wait_job(kube: KubeReader, kind: str, version: str, namespace: str, name: str, timeout: float,
             poll: float = 2.0, progress: Callable[[str], None] | None = None) -> str:
    """Follow a job object until it succeeds or fails (its operator's word: ``views.job_phase``); returns the
    final phase, or raises WaitTimeoutError (the job keeps running) or NotFoundError (it was deleted). A kind
    whose operator writes no Restarting condition (a TrainJob) is Restarting when its pods say so, as ``get``
    tells it (``views.jobs.restarts_from_pods``): only then are its pods listed."""
    from ..views.jobs import job_phase, pod_job_selector, restarts_from_pods

    reads_pods = not BY_KIND[kind].writes_restarting
    deadline = time.monotonic() + timeout
    last = None
    while True:
        job = kube.get_job(kind, version, namespace, name)
        if job is None:
            raise NotFoundError(f"{kind} {name} disappeared from namespace {namespace}")
        phase = job_phase(job)
        if reads_pods and phase in ("Running", "Pending") and restarts_from_pods(
                job, kube.list_pods(namespace, selector=pod_job_selector(kind, name))):
            phase = "Restarting"
        if phase != last and progress:
            progress(f"{kind.lower()}/{name}: {phase}")
        last = phase
        if phase in TERMINAL:
            return phase
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(
                f"{kind.lower()}/{name} still {phase} after --timeout {int(timeout)}s "
                "(the job keeps running; follow it with arena-helm get)"
            )
        time.sleep(poll)


__all__ = ["SubmitResult", "job_values", "render", "submit", "wait_for", "wait_job"]
