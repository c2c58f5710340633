"""The Kubernetes API adapter: the only module that talks to the API server (the kubernetes client is
imported lazily, on first use). Errors become arena-helm errors with one line."""

from __future__ import annotations

import json
import logging
from typing import Any

from . import stats
from .errors import ArenaHelmError, KubeconfigError, NotFoundError
from .kinds import BY_KIND, GROUPS

log = logging.getLogger(__name__)

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

            from .kubeconfig import HINT, load

            view = load(self.kubeconfig, self.context).check()
            try:
                self._api = config.new_client_from_config_dict(view.config, context=view.context)
            except ConfigException as exc:
                raise KubeconfigError(f"kubeconfig {view.where()}: {exc}: {HINT}") from None
            except OSError as exc:
                raise KubeconfigError(f"kubeconfig {view.where()}: cannot read {exc.filename}: {exc.strerror}: "
                                      f"{HINT}") from None
            self._api.configuration.retries = 1
            _log_requests(self._api)
        return self._api

    @property
    def server(self) -> str:
        return self.api.configuration.host

    def call(self, fn, *args, action: str, **kwargs):
        """Run one client call, counting it and translating its errors (arena_helm.failures)."""
        from kubernetes.client.rest import ApiException
        from urllib3.exceptions import HTTPError

        from . import failures

        self.requests += 1
        stats.count("api_requests")
        if "_request_timeout" not in kwargs:
            kwargs["_request_timeout"] = 30
        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            raise api_error(exc, action, self.server) from None
        except HTTPError as exc:
            reason = getattr(exc, "reason", None) or exc
            raise failures.unreachable(action, self.server, str(reason)) from None

    def get_json(self, path: str, action: str) -> dict:
        resp = self.call(
            self.api.call_api, path, "GET", auth_settings=["BearerToken"], _preload_content=False,
            _return_http_data_only=True, action=action,
        )
        return json.loads(resp.data)

    # ---- discovery -----------------------------------------------------------------------------
    def served_job_versions(self) -> dict[str, list[str]]:
        """Job kind -> the versions of its group serving it (preferred first)."""
        out: dict[str, list[str]] = {}
        for group_name in GROUPS:
            try:
                group = self.get_json(f"/apis/{group_name}", "reading the API discovery")
            except NotFoundError:
                continue
            for version in [v["version"] for v in group.get("versions", [])]:
                try:
                    resources = self.get_json(f"/apis/{group_name}/{version}", "reading the API discovery")
                except NotFoundError:  # discovery lags a CRD change for a moment: that version is not served
                    continue
                for res in resources.get("resources", []):
                    info = BY_KIND.get(res.get("kind", ""))
                    if "/" not in res["name"] and info is not None and info.group == group_name:
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

        info = BY_KIND[kind]
        try:
            return self.call(
                client.CustomObjectsApi(self.api).get_namespaced_custom_object,
                info.group, version, namespace, info.plural, name, action=f"reading {kind} {name}",
            )
        except NotFoundError:
            return None


def api_error(exc, action: str, server: str | None = None) -> ArenaHelmError:
    """An ApiException as one line (arena_helm.failures): the API server's own message, prefixed by what
    we were doing."""
    from . import failures

    message = ""
    try:
        message = json.loads(exc.body).get("message", "")
    except (TypeError, ValueError, AttributeError):
        pass
    message = message or exc.reason or f"HTTP {exc.status}"
    return failures.from_api(exc.status, message, action, server)


def _log_requests(api) -> None:
    """--debug: log every API request (method, path, status, milliseconds) of this client."""
    import time
    from urllib.parse import urlsplit

    rest = api.rest_client
    original = rest.request

    def request(method, url, *args, **kwargs):
        if not log.isEnabledFor(logging.DEBUG):
            return original(method, url, *args, **kwargs)
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        query = kwargs.get("query_params") or (args[0] if args else None)
        if query:
            from urllib.parse import urlencode

            path += ("&" if "?" in path else "?") + urlencode(query)
        started = time.monotonic()
        status = "error"
        try:
            resp = original(method, url, *args, **kwargs)
            status = str(getattr(resp, "status", "?"))
            return resp
        except Exception as exc:
            status = str(getattr(exc, "status", None) or type(exc).__name__)
            raise
        finally:
            log.debug("api: %s %s %s %dms", method, path, status, (time.monotonic() - started) * 1000)

    rest.request = request


PART_OF = "app.kubernetes.io/part-of=arena-helm"


def _ns_path(namespace: str | None) -> str:
    return f"/namespaces/{namespace}" if namespace else ""


class KubeReader(Kube):
    """The read side: LISTs as plain dicts (no model objects), one request per resource type."""

    def list_path(self, path: str, action: str, **query: str) -> list[dict]:
        from urllib.parse import urlencode

        q = {k: v for k, v in query.items() if v}
        data = self.get_json(path + (f"?{urlencode(q)}" if q else ""), action)
        return data.get("items") or []

    def list_jobs(self, kind: str, version: str, namespace: str | None) -> list[dict]:
        info = BY_KIND[kind]
        items = self.list_path(f"/apis/{info.group}/{version}{_ns_path(namespace)}/{info.plural}",
                               f"listing {info.plural}", labelSelector=PART_OF)
        for item in items:  # LIST items carry no kind
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", f"{info.group}/{version}")
        return items

    def list_pods(self, namespace: str | None, selector: str = PART_OF, field_selector: str = "") -> list[dict]:
        return self.list_path(f"/api/v1{_ns_path(namespace)}/pods", "listing pods", labelSelector=selector,
                              fieldSelector=field_selector)

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
