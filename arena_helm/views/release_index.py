"""The release index: which helm releases exist, read from helm's storage records' metadata only. Pure.

helm keeps every revision of a release as one storage record in the release's namespace: a Secret of
type ``helm.sh/release.v1`` (the default driver) or a ConfigMap (``HELM_DRIVER=configmap``), named
``sh.helm.release.v1.<release>.v<revision>``, whose labels say ``owner=helm``, ``name=<release>``,
``status=<status>`` and ``version=<revision>`` (helm >= 3.13 adds ``modifiedAt``; the labels of
``helm install --labels`` sit beside them). The payload (``data.release``: base64 of gzipped JSON holding
the chart, the values and the manifest) is what makes ``helm list`` cost ~0.3 MB and a decode per job;
``list``, ``top job``, ``prune`` and completion need none of it: this module turns record metadata into
the latest revision of each release and joins it with the job objects, which carry helm's ownership
annotations (``meta.helm.sh/release-name`` / ``-namespace``, set by helm >= 3.2 on every object it
creates) and the charts' ``helm.sh/chart`` label.

Upstream behaviour followed (helm v3.17 / v4.1, the versions the tests run):
- ``pkg/action/list.go``: ``filterLatestReleases`` keeps, per namespace/name, the record with the
  highest version, *then* the state mask applies (``--deployed --failed --pending --uninstalling``, what
  ``Helm.list`` asks for), so a release whose latest revision is ``uninstalled`` (``--keep-history``) or
  ``superseded`` is not listed even if an older revision was deployed.
- ``pkg/storage/driver/secrets.go`` / ``cfgmaps.go``: records found by the label ``owner=helm``; keys
  ``sh.helm.release.v1.<name>.v<version>``; ``pkg/storage/driver/util.go``: payload = base64(gzip(JSON))
  (the Secret driver stores it as bytes, so the API shows it base64-encoded once more).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..core.grammars import epoch, parse_time

STORAGE_PREFIX = "sh.helm.release.v1"
SECRET_TYPE = "helm.sh/release.v1"
OWNER_SELECTOR = "owner=helm"
# helm list --deployed --failed --pending --uninstalling (what Helm.list asks for)
LISTED_STATES = frozenset({"deployed", "failed", "pending-install", "pending-upgrade", "pending-rollback",
                           "uninstalling"})
# labels helm itself puts on a storage record (pkg/storage/driver/util.go: systemLabels)
SYSTEM_LABELS = frozenset({"name", "owner", "status", "version", "createdAt", "modifiedAt"})
RELEASE_NAME_ANNOTATION = "meta.helm.sh/release-name"
RELEASE_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
CHART_LABEL = "helm.sh/chart"
SUBMIT_LABEL = "arena-helm-submit"  # the release label arena-helm's submit sets (submission.py): a job's
INSTALL_LABEL = "arena-helm-install"  # the one the other families' installs set (workload/gateway.py)
METADATA_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


def release_resource() -> str | None:
    """Where helm keeps its records for this process's ``HELM_DRIVER`` (secrets or configmaps), or None
    (memory, sql: only helm can read those)."""
    return storage_resource(os.environ.get("HELM_DRIVER"))


def storage_resource(driver: str | None) -> str | None:
    """The API resource holding helm's records for ``HELM_DRIVER`` (helm's own spelling rules:
    ``pkg/action/action.go`` Init), or None for a driver outside the cluster's API (memory, sql)."""
    value = (driver or "").strip().lower()
    if value in ("", "secret", "secrets"):
        return "secrets"
    if value in ("configmap", "configmaps"):
        return "configmaps"
    return None


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value))
    except ValueError:
        return default


@dataclass(frozen=True)
class ReleaseMeta:
    """One release at its latest revision, as its storage record's metadata tells it."""

    name: str
    namespace: str
    revision: int
    status: str
    created: str = ""  # the record's creationTimestamp (RFC 3339, whole seconds): when the revision was made
    order: int = 0  # the record's resourceVersion as a number (ties of ``created``), 0 when not numeric
    labels: dict[str, str] = field(default_factory=dict, compare=False, hash=False)  # the release's own labels
    chart: str = ""  # "<chart>-<version>" when known (from the job object, or a full read)

    @property
    def created_ts(self) -> float:
        return epoch(self.created)

    def item(self, chart: str | None = None) -> dict[str, Any]:
        """The release as a ``helm list -o json`` item (the keys ``views.release_info`` reads)."""
        return {
            "name": self.name,
            "namespace": self.namespace,
            "revision": str(self.revision),
            "updated": helm_time(self.created),
            "status": self.status,
            "chart": self.chart if chart is None else chart,
        }


def helm_time(rfc3339: str) -> str:
    """``2026-01-02T15:04:05Z`` -> helm list's ``2026-01-02 15:04:05 +0000 UTC`` (no sub-seconds: the
    record's timestamp has whole seconds)."""
    try:
        stamp = parse_time(rfc3339)
    except ValueError:
        return rfc3339
    if stamp is None:
        return ""
    return stamp.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def record_meta(metadata: dict) -> ReleaseMeta | None:
    """A storage record's ``metadata`` -> ReleaseMeta, or None when it is not a helm release record."""
    labels = metadata.get("labels") or {}
    name = labels.get("name")
    if labels.get("owner") != "helm" or not name or "version" not in labels:
        return None
    return ReleaseMeta(
        name=name,
        namespace=metadata.get("namespace", ""),
        revision=_int(labels.get("version")),
        status=labels.get("status", ""),
        created=metadata.get("creationTimestamp", ""),
        order=_int(metadata.get("resourceVersion")),
        labels={k: v for k, v in labels.items() if k not in SYSTEM_LABELS},
    )


def latest_releases(records: list[ReleaseMeta], states: frozenset[str] = LISTED_STATES) -> dict[tuple[str, str], ReleaseMeta]:
    """(namespace, name) -> the latest revision of each release, when that revision's status is listed."""
    latest: dict[tuple[str, str], ReleaseMeta] = {}
    for rec in records:
        key = (rec.namespace, rec.name)
        have = latest.get(key)
        if have is not None and have.revision > rec.revision:
            continue
        latest[key] = rec
    return {k: r for k, r in latest.items() if r.status in states}


def from_list_item(item: dict) -> ReleaseMeta:
    """A ``helm list -o json`` item -> ReleaseMeta (the fallback for drivers outside the API)."""
    return ReleaseMeta(name=item.get("name", ""), namespace=item.get("namespace", ""),
                       revision=_int(item.get("revision")), status=item.get("status", ""),
                       created=_list_time(item.get("updated", "")), chart=item.get("chart", ""))


def _list_time(updated: str) -> str:
    """helm list's ``updated`` -> RFC 3339 (whole seconds)."""
    text = str(updated)
    if len(text) >= 19 and text[10] in " T":
        return f"{text[:10]}T{text[11:19]}Z"
    return ""


# ---- full reads (one release at a time) -----------------------------------------------------------
def decode_payload(data_release: str, resource: str) -> dict:
    """The ``data.release`` of a storage record as the API returns it -> the release (helm's JSON)."""
    raw = base64.b64decode(data_release)
    if resource == "secrets":  # Secret data is base64 on the wire, around helm's own base64
        raw = base64.b64decode(raw)
    if raw[:3] == b"\x1f\x8b\x08":
        import gzip  # only a full read decodes a payload (a dry run or a list never does)

        raw = gzip.decompress(raw)
    return json.loads(raw)


def release_item(release: dict) -> dict[str, Any]:
    """A decoded release -> a ``helm list -o json`` item (chart ``<name>-<version>``, ``updated`` as helm
    prints ``info.last_deployed``)."""
    meta = ((release.get("chart") or {}).get("metadata")) or {}
    info = release.get("info") or {}
    chart = f"{meta.get('name', '')}-{meta.get('version', '')}" if meta.get("name") else ""
    return {
        "name": release.get("name", ""),
        "namespace": release.get("namespace", ""),
        "revision": str(release.get("version", "")),
        "updated": _go_time(info.get("last_deployed", "")),
        "status": info.get("status", ""),
        "chart": chart,
        "app_version": meta.get("appVersion", ""),
        "description": info.get("description", ""),
    }


def _go_time(rfc3339: str) -> str:
    """``2026-01-02T15:04:05.123456789Z`` -> ``2026-01-02 15:04:05.123456789 +0000 UTC`` (Go's Time.String)."""
    text = str(rfc3339)
    if len(text) < 19 or text[10] != "T":
        return text
    rest = text[19:]
    frac = ""
    if rest.startswith("."):
        digits = rest[1:].split("Z")[0].split("+")[0].split("-")[0]
        frac = f".{digits}" if digits.strip("0") else ""
        rest = rest[1 + len(digits):]
    zone = "+0000 UTC" if rest in ("Z", "", "+00:00") else rest.replace(":", "")
    return f"{text[:10]} {text[11:19]}{frac} {zone}"


def latest_record(records: list[dict]) -> dict | None:
    """The full storage record of the latest revision among ``records`` (dicts from the API)."""
    best, best_version = None, -1
    for rec in records:
        meta = record_meta(rec.get("metadata") or {})
        if meta is not None and meta.revision > best_version:
            best, best_version = rec, meta.revision
    return best


# ---- joining releases and job objects ---------------------------------------------------------------
def job_release_key(job: dict) -> tuple[str, str] | None:
    """(namespace, release) that made ``job``, from helm's ownership annotations; None when helm did not."""
    meta = job.get("metadata") or {}
    ann = meta.get("annotations") or {}
    name = ann.get(RELEASE_NAME_ANNOTATION)
    if not name:
        return None
    return ann.get(RELEASE_NAMESPACE_ANNOTATION) or meta.get("namespace", ""), name


def job_chart(job: dict) -> str:
    """The ``helm.sh/chart`` label (``<chart>-<version>``) of a job object, or ""."""
    return ((job.get("metadata") or {}).get("labels") or {}).get(CHART_LABEL, "")


@dataclass
class Joined:
    """The result of joining the release index with the job objects."""

    pairs: list[tuple[ReleaseMeta | None, dict]]  # every job object, with its release (None: no release)
    unjoined: list[ReleaseMeta]  # listed releases that no job object names (job missing, or not a job)
    orphans: list[tuple[str, str]]  # (namespace, release) named by a job's annotations but not in the index


def join(index: dict[tuple[str, str], ReleaseMeta], jobs: list[dict]) -> Joined:
    """Pair every job object with the release whose annotations name it; the release takes its chart
    from the job's ``helm.sh/chart`` label. Pure; the order of ``jobs`` is kept."""
    pairs: list[tuple[ReleaseMeta | None, dict]] = []
    used: set[tuple[str, str]] = set()
    orphans: list[tuple[str, str]] = []
    for job in jobs:
        key = job_release_key(job)
        rel = index.get(key) if key else None
        if rel is not None:
            used.add(key)
            chart = job_chart(job)
            if chart and chart != rel.chart:
                rel = ReleaseMeta(rel.name, rel.namespace, rel.revision, rel.status, rel.created, rel.order,
                                  rel.labels, chart)
        elif key is not None and key not in orphans:
            orphans.append(key)
        pairs.append((rel, job))
    unjoined = [r for k, r in index.items() if k not in used]
    return Joined(pairs, unjoined, orphans)


def needs_full_read(rel: ReleaseMeta) -> bool:
    """A release no job object names is shown (as JOB-MISSING or RELEASE-FAILED) only if it is one of
    ours; whether it is needs its chart, so only arena-helm's own submits (the submit label) are read in
    full. Any other such release is some other application's (or a plain-helm job release whose job object
    is gone: see docs/compatibility.md)."""
    return not rel.chart and SUBMIT_LABEL in rel.labels


def sort_key(release: ReleaseMeta | None, job: dict | None) -> tuple[float, int, str]:
    """Newest first (sorted in reverse): the release's revision time (its record's creation, with its
    resourceVersion to order records of the same second), else the job object's creation."""
    if release is not None and release.created:
        return release.created_ts, release.order, release.name
    meta = (job or {}).get("metadata") or {}
    return epoch(meta.get("creationTimestamp")), _int(meta.get("resourceVersion")), meta.get("name", "")
