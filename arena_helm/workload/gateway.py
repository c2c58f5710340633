"""The one gateway to helm's releases, for every family: a command's adapters (``Cluster``) and what is done
with releases through them. Find one by name (its own storage records), index them all from their records'
metadata (no helm), list a chart's, read a release's values, install (all or nothing), upgrade, uninstall;
``render`` is the dry run (``helm template``, no cluster). A chart is named (``charts/<name>``) and assembled
for the call. No module but this one runs helm's release commands (a repo test checks).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..adapters.helm import NO_SOURCES, SCHEMA_REJECTED, Helm, ValueSources
from ..core.catalog import release_chart
from ..core.debuglog import debug
from ..core.errors import AlreadyExistsError, ArenaHelmError, UsageError
from ..views.release_index import (
    INSTALL_LABEL,
    LISTED_STATES,
    ReleaseMeta,
    decode_payload,
    from_list_item,
    latest_record,
    latest_releases,
    record_meta,
    release_item,
    release_resource,
)

if TYPE_CHECKING:
    from ..adapters.kube import KubeReader


@contextlib.contextmanager
def assembled(chart: str) -> Iterator[Path]:
    """Chart ``chart`` made installable (its file:// dependencies in place): kept in the cache folder while
    its files do not change (``$ARENA_HELM_CACHE``; a temporary folder where that cannot be written)."""
    from ..adapters.charts import installable
    from ..adapters.defaults import cache_dir

    with installable(chart, cache_dir()) as path:
        yield path


@contextlib.contextmanager
def _naming_sources(sources: ValueSources) -> Iterator[None]:
    """A chart schema's refusal of values the user's -f/--set* gave says so (the flags' own values are checked
    before helm runs: a problem there is in those)."""
    try:
        yield
    except UsageError as exc:
        text = str(exc)
        if sources.items and text.startswith(SCHEMA_REJECTED + ":"):
            flags = "/".join(dict.fromkeys(flag for flag, _ in sources.items))
            raise UsageError(f"{SCHEMA_REJECTED} (the values of {flags}){text[len(SCHEMA_REJECTED):]}") from None
        raise


def render(helm: Helm, chart: str, name: str, values: dict[str, Any], namespace: str,
           sources: ValueSources = NO_SOURCES) -> str:
    """The manifests release ``name`` of ``chart`` would make (``helm template``): no cluster, no kubeconfig."""
    with assembled(chart) as path, _naming_sources(sources):
        return helm.template(name, path, values, namespace, sources)


class Cluster:
    """The helm and API adapters of one command, and every release operation on them. ``helm`` may be a
    factory: it is built on first use, so that the commands which read through the API only (list, get, top)
    need no helm binary."""

    def __init__(self, helm: Helm | Callable[[], Helm], kube: KubeReader):
        self._helm = helm
        self.kube = kube

    @property
    def helm(self) -> Helm:
        if callable(self._helm):  # a factory (a Helm is not callable)
            self._helm = self._helm()
        return self._helm

    # ---- reading ---------------------------------------------------------------------------------------
    def index(self, namespace: str, all_namespaces: bool = False) -> dict[tuple[str, str], ReleaseMeta]:
        """(namespace, name) -> the latest revision of every listed release, from the storage records'
        metadata (one metadata-only LIST, paged). ``helm list`` only for drivers outside the API."""
        resource = release_resource()
        if resource is None:
            return {(r["namespace"], r["name"]): from_list_item(r) for r in self.helm.list(namespace, all_namespaces)}
        ns = None if all_namespaces else namespace
        records = [m for m in (record_meta(it["metadata"]) for it in self.kube.list_release_metadata(resource, ns))
                   if m]
        return latest_releases(records)

    def recheck(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], ReleaseMeta]:
        """The releases ``keys`` (namespace, name) read again: job objects that name a release the index had
        not seen yet (installed while the index was read). One metadata LIST per namespace and 50 names."""
        resource = release_resource()
        if resource is None:
            return {}
        by_ns: dict[str, list[str]] = defaultdict(list)
        for ns, name in keys:
            by_ns[ns].append(name)
        records: list[ReleaseMeta] = []
        for ns, names in sorted(by_ns.items()):
            for i in range(0, len(names), 50):
                selector = f"owner=helm,name in ({','.join(sorted(names[i:i + 50]))})"
                items = self.kube.list_release_metadata(resource, ns, selector, cached=False)
                records += [m for m in (record_meta(it["metadata"]) for it in items) if m]
        return latest_releases(records)

    def find(self, namespace: str, name: str) -> dict | None:
        """Release ``name`` read in full (only its own records), as a ``helm list -o json`` item with the
        chart and helm's description; None when no listed release has that name."""
        resource = release_resource()
        if resource is None:
            return next((r for r in self.helm.list(namespace) if r.get("name") == name), None)
        record = latest_record(self.kube.release_records_full(resource, namespace, name))
        if record is None:
            return None
        meta = record_meta(record.get("metadata") or {})
        if meta is None or meta.status not in LISTED_STATES:
            return None
        try:
            item = release_item(decode_payload((record.get("data") or {}).get("release", ""), resource))
        except (ValueError, OSError, EOFError, TypeError) as exc:  # not helm's format: say so, keep the labels' view
            debug(__name__, "release %s/%s: cannot decode its record: %s", namespace, name, exc)
            item = meta.item()
        item.setdefault("namespace", namespace)
        return item

    def of_chart(self, chart: str, namespace: str, all_namespaces: bool = False) -> list[dict]:
        """The listed releases made from ``chart`` (``helm list -o json`` items)."""
        return [r for r in self.helm.list(namespace, all_namespaces) if release_chart(r) == chart]

    def listed(self, namespace: str, all_namespaces: bool = False) -> list[dict]:
        """Every listed release (``helm list -o json`` items)."""
        return self.helm.list(namespace, all_namespaces)

    def values(self, namespace: str, name: str) -> dict[str, Any]:
        """The user-supplied values of release ``name`` (``helm get values``)."""
        return self.helm.get_values(name, namespace)

    # ---- changing --------------------------------------------------------------------------------------
    def install(self, chart: str, namespace: str, name: str, values: dict[str, Any], *,
                labels: dict[str, str] | None = None, sources: ValueSources = NO_SOURCES,
                mark: str = INSTALL_LABEL,
                explain: Callable[[ArenaHelmError], ArenaHelmError] | None = None) -> dict[str, Any]:
        """Install release ``name`` of ``chart``; all or nothing. On a failure after the cluster was reached,
        what this install left is removed, only if the release carries this install's token (the release label
        ``mark``: never another's release of that name); a failure to remove it is a note on the error's one
        line. ``explain`` words the error (before the note). An AlreadyExistsError is raised as it is."""
        import uuid

        from ..adapters.failures import nothing_installed

        token = uuid.uuid4().hex
        with assembled(chart) as path, _naming_sources(sources):
            try:
                return self.helm.install(name, path, values, namespace, labels={**(labels or {}), mark: token},
                                         sources=sources)
            except AlreadyExistsError:
                raise
            except ArenaHelmError as exc:
                note = None if nothing_installed(exc) else self._remove_if_mine(namespace, name, mark, token)
                err = explain(exc) if explain else exc
                raise (type(err)(f"{err}; {note}") if note else err) from None

    def _remove_if_mine(self, namespace: str, name: str, mark: str, token: str) -> str | None:
        try:
            mine = self.helm.list(namespace, selector=f"{mark}={token}")
            if any(r.get("name") == name for r in mine):
                self.helm.uninstall(name, namespace)
        except ArenaHelmError as exc:  # the install error is the one the user needs; this is a footnote
            return f"removing what it left failed too ({exc}): check with arena-helm get {name} -n {namespace}"
        return None

    def upgrade(self, chart: str, namespace: str, name: str, values: dict[str, Any], *,
                reuse_values: bool = False) -> dict[str, Any]:
        """Upgrade release ``name`` to ``values`` (merged over its own with ``reuse_values``)."""
        with assembled(chart) as path:
            return self.helm.upgrade(name, path, values, namespace, reuse_values=reuse_values)

    def uninstall(self, namespace: str, name: str) -> None:
        self.helm.uninstall(name, namespace)
