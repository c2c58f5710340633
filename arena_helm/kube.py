"""The Kubernetes API adapter: the only module that talks to the API server (the kubernetes client is
imported lazily, on first use). Errors become arena-helm errors with one line."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from .errors import ArenaHelmError, ClusterError, ForbiddenError, NotFoundError

log = logging.getLogger(__name__)
STATS = {"api_requests": 0, "list_pages": 0}  # API requests (and LIST pages among them) of this process

GROUP = "kubeflow.org"
# kind -> (plural, versions we can use, operator to install when it is not served)
JOB_KINDS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "TFJob": ("tfjobs", ("v1",), "the Kubeflow training operator (v1.7+)"),
    "PyTorchJob": ("pytorchjobs", ("v1",), "the Kubeflow training operator (v1.7+)"),
    "MPIJob": ("mpijobs", ("v2beta1", "v1"), "the Kubeflow mpi-operator (v0.4+, kubeflow.org/v2beta1) "
               "or the training operator (kubeflow.org/v1)"),
}


class Kube:
    """One API connection per CLI invocation. ``api_client`` may be injected (tests)."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, api_client: Any = None):
        self.kubeconfig = kubeconfig
        self.context = context
        self._api = api_client
        self.requests = 0  # API requests made (benchmarks print it)

    # ---- connection ----------------------------------------------------------------------------
    @property
    def api(self):
        if self._api is None:
            from kubernetes import config
            from kubernetes.config.config_exception import ConfigException

            try:
                self._api = config.new_client_from_config(config_file=self.kubeconfig, context=self.context)
            except ConfigException as exc:
                raise ClusterError(f"no usable kubeconfig: {exc}") from None
            except OSError as exc:
                raise ClusterError(f"cannot read the kubeconfig: {exc.strerror}: {exc.filename}") from None
            self._api.configuration.retries = 1
        return self._api

    @property
    def server(self) -> str:
        return self.api.configuration.host

    def call(self, fn, *args, action: str, **kwargs):
        """Run one client call, counting it and translating its errors."""
        from kubernetes.client.rest import ApiException
        from urllib3.exceptions import HTTPError

        self.requests += 1
        STATS["api_requests"] += 1
        if "_request_timeout" not in kwargs:
            kwargs["_request_timeout"] = 30
        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            raise api_error(exc, action) from None
        except HTTPError as exc:
            reason = getattr(exc, "reason", None) or exc
            raise ClusterError(f"{action}: cannot reach the API server at {self.server}: {reason}") from None

    def get_json(self, path: str, action: str) -> dict:
        resp = self.call(
            self.api.call_api, path, "GET", auth_settings=["BearerToken"], _preload_content=False,
            _return_http_data_only=True, action=action,
        )
        return json.loads(resp.data)

    # ---- discovery -----------------------------------------------------------------------------
    def served_job_versions(self) -> dict[str, list[str]]:
        """Job kind -> the kubeflow.org versions serving it (preferred first)."""
        try:
            group = self.get_json(f"/apis/{GROUP}", "reading the API discovery")
        except NotFoundError:
            return {}
        versions = [v["version"] for v in group.get("versions", [])]
        out: dict[str, list[str]] = {}
        for version in versions:
            try:
                resources = self.get_json(f"/apis/{GROUP}/{version}", "reading the API discovery")
            except NotFoundError:  # discovery lags a CRD change for a moment: that version is not served
                continue
            for res in resources.get("resources", []):
                if "/" not in res["name"] and res.get("kind") in JOB_KINDS:
                    out.setdefault(res["kind"], []).append(version)
        return out

    # ---- objects -------------------------------------------------------------------------------
    def release_records(self, namespace: str, name: str) -> list[dict]:
        """The Secrets in which helm keeps the revisions of release ``name`` (its storage driver)."""
        from urllib.parse import urlencode

        query = urlencode({"labelSelector": f"owner=helm,name={name}"})
        data = self.get_json(f"/api/v1/namespaces/{namespace}/secrets?{query}", f"reading release {name}")
        return data.get("items") or []

    def get_job(self, kind: str, version: str, namespace: str, name: str) -> dict | None:
        from kubernetes import client

        plural = JOB_KINDS[kind][0]
        try:
            return self.call(
                client.CustomObjectsApi(self.api).get_namespaced_custom_object,
                GROUP, version, namespace, plural, name, action=f"reading {kind} {name}",
            )
        except NotFoundError:
            return None


def api_error(exc, action: str) -> ArenaHelmError:
    """An ApiException as one line: the API server's own message, prefixed by what we were doing."""
    message = ""
    try:
        message = json.loads(exc.body).get("message", "")
    except (TypeError, ValueError, AttributeError):
        pass
    message = message or exc.reason or f"HTTP {exc.status}"
    if exc.status == 403:
        return ForbiddenError(f"{action}: forbidden: {message}")
    if exc.status == 404:
        return NotFoundError(f"{action}: {message}")
    if exc.status == 401:
        return ClusterError(f"{action}: the API server rejected the credentials (401 Unauthorized)")
    return ClusterError(f"{action}: {message}")


PART_OF = "app.kubernetes.io/part-of=arena-helm"
PAGE_SIZE = 500  # items per LIST request


def _record_metadata(item: dict) -> dict:
    """A storage record of a metadata-only LIST, cut to what the release index reads."""
    meta = item.get("metadata") or {}
    return {"metadata": {k: meta[k] for k in ("name", "namespace", "labels", "creationTimestamp", "resourceVersion")
                         if k in meta}}


def _ns_path(namespace: str | None) -> str:
    return f"/namespaces/{namespace}" if namespace else ""


class ListExpired(Exception):
    """A paged LIST's continue token expired (410 Gone): the LIST starts again (not an ArenaHelmError:
    ``Kube.call`` lets it through untranslated)."""


class KubeReader(Kube):
    """The read side: LISTs as plain dicts (no model objects), paged (``limit``/``continue``, PAGE_SIZE
    items a request), each item cut down by ``slim`` as its page arrives so that memory stays bounded by
    what the views keep."""

    def list_path(self, path: str, action: str, *, slim: Callable[[dict], dict | None] | None = None,
                  accept: str | None = None, **query: str) -> list[dict]:
        """Every item of a LIST, page by page. An expired continue token (410 Gone: the server compacted
        past the LIST's resourceVersion) starts the LIST again, once; the items already read are dropped, so
        the result is one consistent snapshot."""
        q = {k: v for k, v in query.items() if v}
        for attempt in (1, 2):
            try:
                return self._list_pages(path, action, q, slim, accept)
            except ListExpired:
                if attempt == 2:
                    raise ClusterError(f"{action}: the API server expired the LIST twice (410 Gone); "
                                       "try again") from None
                log.debug("%s: continue token expired (410 Gone); listing again", action)
        raise AssertionError("unreachable")

    def _list_pages(self, path: str, action: str, query: dict[str, str], slim, accept: str | None) -> list[dict]:
        items: list[dict] = []
        token = ""
        while True:
            params = [*query.items(), ("limit", str(PAGE_SIZE))]
            if token:
                params.append(("continue", token))
            page = self._get_page(path, params, accept, action)
            STATS["list_pages"] += 1
            for item in page.get("items") or []:
                kept = slim(item) if slim else item
                if kept is not None:
                    items.append(kept)
            token = (page.get("metadata") or {}).get("continue") or ""
            del page
            if not token:
                return items

    def _get_page(self, path: str, params: list[tuple[str, str]], accept: str | None, action: str) -> dict:
        from kubernetes.client.rest import ApiException

        headers = {"Accept": accept} if accept else None

        def get(_request_timeout=60):
            try:
                return self.api.call_api(path, "GET", query_params=params, header_params=headers,
                                         auth_settings=["BearerToken"], _preload_content=False,
                                         _return_http_data_only=True, _request_timeout=_request_timeout)
            except ApiException as exc:
                if exc.status == 410 and any(k == "continue" for k, _ in params):
                    raise ListExpired() from None
                raise

        resp = self.call(get, action=action, _request_timeout=60)
        try:
            return json.loads(resp.data)
        finally:
            resp.release_conn()

    def list_jobs(self, kind: str, version: str, namespace: str | None, *, selector: str = PART_OF,
                  slim: Callable[[dict], dict | None] | None = None) -> list[dict]:
        """The ``kind`` objects (``selector`` "" for every one, made by helm or not)."""
        plural = JOB_KINDS[kind][0]
        items = self.list_path(f"/apis/{GROUP}/{version}{_ns_path(namespace)}/{plural}", f"listing {plural}",
                               slim=slim, labelSelector=selector)
        for item in items:  # LIST items carry no kind
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", f"{GROUP}/{version}")
        return items

    def list_pods(self, namespace: str | None, selector: str = PART_OF, field_selector: str = "", *,
                  slim: Callable[[dict], dict | None] | None = None) -> list[dict]:
        return self.list_path(f"/api/v1{_ns_path(namespace)}/pods", "listing pods", slim=slim,
                              labelSelector=selector, fieldSelector=field_selector)

    def list_release_metadata(self, resource: str, namespace: str | None, selector: str = "owner=helm", *,
                              cached: bool = True) -> list[dict]:
        """The ``metadata`` of helm's storage records (``resource``: secrets or configmaps), without their
        payloads: a metadata-only LIST (PartialObjectMetadataList), Secrets narrowed to helm's type.

        ``cached``: served from the API server's watch cache (``resourceVersion=0``, as informers LIST),
        which spares the server reading every record's payload from etcd (10x faster at 2,000 releases); the
        cache may lag etcd by a moment, and a 1.20 server answers it in one response (a few hundred bytes per
        record: the payloads are what it leaves out). ``cached=False`` reads etcd, paged."""
        from .releases import METADATA_ACCEPT, SECRET_TYPE

        fields = f"type={SECRET_TYPE}" if resource == "secrets" else ""
        return self.list_path(f"/api/v1{_ns_path(namespace)}/{resource}", "listing helm releases",
                              slim=_record_metadata, accept=METADATA_ACCEPT, labelSelector=selector,
                              fieldSelector=fields, resourceVersion="0" if cached else "")

    def release_records_full(self, resource: str, namespace: str, name: str) -> list[dict]:
        """The storage records of release ``name``, payloads included (one release, for a full read)."""
        from .releases import SECRET_TYPE

        fields = f"type={SECRET_TYPE}" if resource == "secrets" else ""
        return self.list_path(f"/api/v1/namespaces/{namespace}/{resource}", f"reading release {name}",
                              labelSelector=f"owner=helm,name={name}", fieldSelector=fields)

    def delete_job(self, kind: str, version: str, namespace: str, name: str) -> None:
        """DELETE a job object; its pods go with it (background propagation, as kubectl delete does)."""
        from kubernetes import client

        plural = JOB_KINDS[kind][0]
        self.call(client.CustomObjectsApi(self.api).delete_namespaced_custom_object, GROUP, version, namespace,
                  plural, name, body={"propagationPolicy": "Background"}, action=f"deleting {kind} {name}")

    def list_services(self, namespace: str | None, selector: str) -> list[dict]:
        return self.list_path(f"/api/v1{_ns_path(namespace)}/services", "listing services", labelSelector=selector)

    def list_events(self, namespace: str) -> list[dict]:
        return self.list_path(f"/api/v1/namespaces/{namespace}/events", "listing events")

    def list_nodes(self) -> list[dict]:
        return self.list_path("/api/v1/nodes", "listing nodes")

    def stream_log(self, namespace: str, pod: str, *, container: str | None = None, follow: bool = False,
                   tail: int | None = None, since_seconds: int | None = None, since_time: str | None = None,
                   timestamps: bool = False):
        """Yield the pod's log in chunks (bytes), through the API server's pod log endpoint."""
        query: list[tuple[str, str]] = []
        for key, value in (("container", container), ("tailLines", tail), ("sinceSeconds", since_seconds),
                           ("sinceTime", since_time)):
            if value is not None:
                query.append((key, str(value)))
        if follow:
            query.append(("follow", "true"))
        if timestamps:
            query.append(("timestamps", "true"))
        resp = self.call(
            self.api.call_api, f"/api/v1/namespaces/{namespace}/pods/{pod}/log", "GET", query_params=query,
            auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True,
            _request_timeout=None if follow else 60, action=f"reading the log of pod {pod}",
        )
        try:
            yield from resp.stream(4096, decode_content=True)
        finally:
            resp.release_conn()
