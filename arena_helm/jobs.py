"""The Python API: spec -> values -> manifests or a release. The CLI only wraps these.

    from arena_helm import TFJobSpec, render, submit
    spec = TFJobSpec(name="mnist", image="tensorflow/tensorflow:2.15.0", workers=2, gpus=1,
                     command="python train.py")
    print(render(spec))                  # what --dry-run prints; no cluster
    result = submit(spec)                # helm install, atomically
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .charts import assemble_chart
from .errors import AlreadyExistsError, ArenaHelmError, NotFoundError, WaitTimeoutError
from .helm import Helm
from .kube import JOB_KINDS, Kube
from .spec import JobKind, JobSpec, MPIJobSpec
from .values import CHART_OF, apply_overrides, build_values
from .views import job_phase

KIND_NAME = {JobKind.tfjob: "TFJob", JobKind.pytorchjob: "PyTorchJob", JobKind.mpijob: "MPIJob"}


def job_values(spec: JobSpec, values_files=(), set_values=()) -> dict[str, Any]:
    """The chart values: generated from the spec, then -f files, then --set items. Pure."""
    return apply_overrides(build_values(spec), values_files, set_values)


def render(spec: JobSpec, helm: Helm | None = None, *, values: dict[str, Any] | None = None) -> str:
    """The manifests the job would create (``helm template``): no cluster, no kubeconfig."""
    helm = helm or Helm()
    with tempfile.TemporaryDirectory(prefix="arena-helm-") as tmp:
        chart = assemble_chart(CHART_OF[spec.kind], Path(tmp))
        return helm.template(spec.name, chart, values if values is not None else job_values(spec), spec.namespace)


@dataclass
class SubmitResult:
    name: str
    namespace: str
    kind: str
    api_version: str
    revision: int
    objects: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, apiVersion, name)


def submit(spec: JobSpec, helm: Helm | None = None, kube: Kube | None = None, *,
           values: dict[str, Any] | None = None) -> SubmitResult:
    """Install the job's release. All or nothing: on any failure the release is removed again."""
    helm = helm or Helm()
    kube = kube or Kube()
    kind = KIND_NAME[spec.kind]
    wanted = None
    if isinstance(spec, MPIJobSpec) and spec.mpi_api != "auto":
        wanted = spec.mpi_api
    version = kube.require_kind(kind, wanted)
    if values is None:
        values = job_values(spec)
    if isinstance(spec, MPIJobSpec):
        values = {**values, "mpiApiVersion": version}
    if kube.get_job(kind, version, spec.namespace, spec.name) is not None:
        raise AlreadyExistsError(
            f"{kind} {spec.name} already exists in namespace {spec.namespace}: pick another --name, or delete "
            f"it first (arena-helm delete {spec.name} -n {spec.namespace})"
        )
    with tempfile.TemporaryDirectory(prefix="arena-helm-") as tmp:
        chart = assemble_chart(CHART_OF[spec.kind], Path(tmp))
        try:
            release = helm.install(spec.name, chart, values, spec.namespace)
        except AlreadyExistsError:
            raise AlreadyExistsError(
                f"a release named {spec.name} already exists in namespace {spec.namespace}: pick another --name, "
                f"or delete it first (arena-helm delete {spec.name} -n {spec.namespace})"
            ) from None
        except ArenaHelmError as exc:
            _cleanup_failed(helm, spec.name, spec.namespace)
            raise exc from None
    objects = [
        (doc.get("kind", ""), doc.get("apiVersion", ""), doc.get("metadata", {}).get("name", ""))
        for doc in yaml.safe_load_all(release.get("manifest", "")) if isinstance(doc, dict)
    ]
    return SubmitResult(spec.name, spec.namespace, kind, f"kubeflow.org/{version}", int(release.get("version", 1)),
                        objects)


def _cleanup_failed(helm: Helm, name: str, namespace: str) -> None:
    """Remove what a failed install left: the release record and any object it had created."""
    try:
        helm.uninstall(name, namespace)
    except NotFoundError:
        pass
    except ArenaHelmError as exc:  # report, but the install error is the one the user needs
        import logging

        logging.getLogger(__name__).warning("cleanup of release %s failed: %s", name, exc)


TERMINAL = ("Succeeded", "Failed")


def wait_for(kube: Kube, result: SubmitResult, timeout: float, poll: float = 2.0,
             progress: Callable[[str], None] | None = None) -> str:
    """Follow the job until it succeeds or fails; returns the final phase or raises WaitTimeoutError."""
    version = result.api_version.split("/")[1]
    deadline = time.monotonic() + timeout
    last = None
    while True:
        job = kube.get_job(result.kind, version, result.namespace, result.name)
        if job is None:
            raise NotFoundError(f"{result.kind} {result.name} disappeared from namespace {result.namespace}")
        phase = job_phase(job)
        if phase != last and progress:
            progress(f"{result.kind.lower()}/{result.name}: {phase}")
        last = phase
        if phase in TERMINAL:
            return phase
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(
                f"{result.kind.lower()}/{result.name} still {phase} after --timeout {int(timeout)}s "
                "(the job keeps running; follow it with arena-helm get)"
            )
        time.sleep(poll)


__all__ = ["JOB_KINDS", "SubmitResult", "job_phase", "job_values", "render", "submit", "wait_for"]
