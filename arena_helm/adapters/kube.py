"""The Kubernetes API adapter: the only module that talks to the API server (the kubernetes client is
imported lazily, on first use). Errors become arena-helm errors with one line."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from ..core import stats
from ..core.errors import ArenaHelmError, ClusterError, ForbiddenError, KubeconfigError, NotFoundError
from ..core.jobkinds import BY_KIND, GROUPS

log = logging.getLogger(__name__)

class Kube:
    """One API connection per CLI invocation. ``api_client`` may be injected (tests)."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, api_client: Any = None):
        self.kubeconfig = kubeconfig
        self.context = context
        self._api = api_client

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

    def connect(self) -> None:
        """Build the API client now (kubeconfig read and checked), e.g. before threads share it."""
        self.api  # noqa: B018 - the property builds it

    @property
    def server(self) -> str:
        return self.api.configuration.host

    def call(self, fn, *args, action: str, **kwargs):
        """Run one client call, counting it and translating its errors (arena_helm.adapters.failures)."""
        from kubernetes.client.rest import ApiException
        from urllib3.exceptions import HTTPError

        from . import failures

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

    def token_user(self, token: str) -> str | None:
        """Who a bearer token is (a TokenReview, as Arena's getUserNameByToken); None if the server will not
        say (no permission to create tokenreviews, or the token is not valid)."""
        from kubernetes.client import AuthenticationV1Api, V1TokenReview, V1TokenReviewSpec

        try:
            review = AuthenticationV1Api(self.api).create_token_review(V1TokenReview(spec=V1TokenReviewSpec(
                token=token)), _request_timeout=10)
        except Exception:  # noqa: BLE001 - best effort: refused, unreachable (helm's install then says so)
            return None
        finally:
            stats.count("api_requests")
        status = review.status
        if status is None or status.error or not status.user:
            return None
        return status.user.username or None

    def raw(self, method: str, path: str, action: str, *, query: list[tuple[str, str]] | None = None,
            body: Any = None, content_type: str | None = None, timeout: float | None = None) -> bytes:
        """One request to ``path`` of the API server; the answer's bytes (errors translated by ``call``)."""
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        extra = {} if timeout is None else {"_request_timeout": timeout}
        resp = self.call(
            self.api.call_api, path, method, query_params=query or [], header_params=headers, body=body,
            auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True, action=action,
            **extra,
        )
        return resp.data

    def get_json(self, path: str, action: str) -> dict:
        return json.loads(self.raw("GET", path, action))

    def dry_run_patch_job(self, kind: str, version: str, namespace: str, name: str, spec: dict, action: str) -> dict:
        """A server-side dry-run merge patch of the job's ``spec``: the object as the server would keep it
        (a CRD without a field prunes it), nothing written."""
        info = BY_KIND[kind]
        path = f"/apis/{info.group}/{version}/namespaces/{namespace}/{info.plural}/{name}"
        return json.loads(self.raw("PATCH", path, action, query=[("dryRun", "All")], body={"spec": spec},
                                   content_type="application/merge-patch+json"))

    def annotate_job(self, kind: str, version: str, namespace: str, name: str, annotations: dict[str, str],
                     action: str) -> None:
        """A merge patch of the job's annotations (only those given)."""
        info = BY_KIND[kind]
        path = f"/apis/{info.group}/{version}/namespaces/{namespace}/{info.plural}/{name}"
        self.raw("PATCH", path, action, body={"metadata": {"annotations": annotations}},
                 content_type="application/merge-patch+json")

    def service_proxy_get(self, namespace: str, service: str, path: str, query: list[tuple[str, str]],
                          action: str, timeout: float) -> bytes:
        """GET ``path`` of a Service through the API server's service proxy (``service``: [scheme:]name:port)."""
        return self.raw("GET", f"/api/v1/namespaces/{namespace}/services/{service}/proxy/{path.lstrip('/')}",
                        action, query=query, timeout=timeout)


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

    def served_groups(self) -> dict[str, list[str]]:
        """API group -> the versions the server serves of it (preferred first): ``/apis`` discovery."""
        groups = self.get_json("/apis", "reading the API discovery").get("groups") or []
        out = {}
        for g in groups:
            versions = [v["version"] for v in g.get("versions") or []]
            preferred = (g.get("preferredVersion") or {}).get("version")
            if preferred in versions:
                versions.remove(preferred)
                versions.insert(0, preferred)
            out[g.get("name", "")] = versions
        return out

    def server_version(self) -> dict:
        """The API server's ``/version`` (gitVersion, major, minor)."""
        return self.get_json("/version", "reading the API server's version")

    def access_allowed(self, namespace: str | None, verb: str, group: str, resource: str,
                       subresource: str = "") -> tuple[bool, str]:
        """A SelfSubjectAccessReview: may the current user ``verb`` the resource (in ``namespace``; None:
        cluster-wide)? (allowed, the authorizer's reason)."""
        attrs = {"verb": verb, "group": group, "resource": resource}
        if subresource:
            attrs["subresource"] = subresource
        if namespace:
            attrs["namespace"] = namespace
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attrs}}
        review = json.loads(self.raw("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                     "reviewing the user's permissions", body=body,
                                     content_type="application/json"))
        status = review.get("status") or {}
        return bool(status.get("allowed")), status.get("reason", "") or status.get("evaluationError", "")

    def dry_run_create(self, doc: dict, namespace: str, plural: str) -> dict:
        """A server-side dry-run create of a namespaced custom object (a job, a serving's InferenceService; its
        resource ``plural``) (``dryRun=All``, strict field validation): what the server would keep; its schema,
        admission webhooks and RBAC all answer, nothing is written."""
        path = f"/apis/{doc['apiVersion']}/namespaces/{namespace}/{plural}"
        return json.loads(self.raw("POST", path, f"a dry-run create of {doc['kind']}",
                                   query=[("dryRun", "All"), ("fieldValidation", "Strict")], body=doc,
                                   content_type="application/json"))

    # ---- objects -------------------------------------------------------------------------------
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
    """An ApiException as one line (arena_helm.adapters.failures): the API server's own message, prefixed by what
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
PAGE_SIZE = 500  # items per LIST request


def _record_metadata(item: dict) -> dict:
    """A storage record of a metadata-only LIST, cut to what the release index reads."""
    meta = item.get("metadata") or {}
    return {"metadata": {k: meta[k] for k in ("name", "namespace", "labels", "creationTimestamp", "resourceVersion")
                         if k in meta}}


_SCAN = json.JSONDecoder().scan_once
_SPACE = re.compile(r"[ \t\n\r]*")


def parse_list_page(data: bytes, slim: Callable[[dict], Any] | None, into: list) -> dict:
    """One LIST answer (a JSON object with ``items``), its items decoded one at a time, each cut down by
    ``slim`` (None: dropped) and appended to ``into`` before the next is decoded: the page's memory is its
    text plus one item, not every item's dicts at once. Returns the other top-level fields (``metadata``
    with the continue token, ``kind``, ...). ValueError for an answer that is not such an object."""
    text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
    rest: dict = {}

    def space(i: int) -> int:
        return _SPACE.match(text, i).end()

    def value(i: int) -> tuple[Any, int]:
        try:
            return _SCAN(text, i)
        except StopIteration:
            raise ValueError(f"no JSON value at character {i}") from None

    def expect(i: int, char: str) -> int:
        if text[i:i + 1] != char:
            raise ValueError(f"{char!r} expected at character {i}")
        return space(i + 1)

    i = expect(space(0), "{")
    while text[i:i + 1] != "}":
        key, i = value(i)
        if not isinstance(key, str):
            raise ValueError(f"a key expected at character {i}")
        i = expect(space(i), ":")
        if key == "items" and text[i:i + 1] == "[":
            i = space(i + 1)
            while text[i:i + 1] != "]":
                item, i = value(i)
                kept = slim(item) if slim else item
                del item
                if kept is not None:
                    into.append(kept)
                i = space(i)
                if text[i:i + 1] == ",":
                    i = space(i + 1)
                elif text[i:i + 1] != "]":
                    raise ValueError(f"',' or ']' expected at character {i}")
            i = space(i + 1)
        else:
            rest[key], i = value(i)
            i = space(i)
        if text[i:i + 1] == ",":
            i = space(i + 1)
        elif text[i:i + 1] != "}":
            raise ValueError(f"',' or '}}' expected at character {i}")
    if text[space(i + 1):]:
        raise ValueError(f"extra data at character {space(i + 1)}")
    return rest


def ns_path(namespace: str | None) -> str:
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
            data = self._get_page(path, params, accept, action)
            stats.count("list_pages")
            try:
                token = (parse_list_page(data, slim, items).get("metadata") or {}).get("continue") or ""
            except ValueError as exc:
                raise ClusterError(f"{action}: the API server's answer is not a JSON list: {exc}") from None
            del data
            if not token:
                return items

    def _get_page(self, path: str, params: list[tuple[str, str]], accept: str | None, action: str) -> bytes:
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
            return resp.data
        finally:
            resp.release_conn()

    def list_leases(self, name: str) -> list[dict]:
        """The Leases named ``name`` in every namespace (controllers' leader election)."""
        return self.list_path("/apis/coordination.k8s.io/v1/leases", f"listing leases {name}",
                              fieldSelector=f"metadata.name={name}")

    def list_validating_webhooks(self) -> list[dict]:
        """The ValidatingWebhookConfigurations of the cluster (admissionregistration.k8s.io/v1)."""
        return self.list_path("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                              "listing validating webhook configurations")

    def list_local_queues(self, namespace: str) -> list[dict]:
        """Kueue's LocalQueues in ``namespace`` (kueue.x-k8s.io/v1beta1)."""
        return self.list_path(f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{namespace}/localqueues",
                              "listing Kueue local queues")

    def list_kueue_workloads(self, namespace: str) -> list[dict]:
        """Kueue's Workloads in ``namespace`` (kueue.x-k8s.io/v1beta1, served by every Kueue release from 0.5
        on, 0.17 included)."""
        return self.list_path(f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{namespace}/workloads",
                              "listing Kueue workloads")

    def get_local_queue(self, namespace: str, name: str) -> dict | None:
        """Kueue's LocalQueue ``name`` (kueue.x-k8s.io/v1beta1), None if there is none."""
        try:
            return self.get_json(f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{namespace}/localqueues/{name}",
                                 f"reading Kueue local queue {name}")
        except NotFoundError:
            return None

    def get_cluster_queue(self, name: str) -> dict | None:
        """Kueue's ClusterQueue ``name`` (kueue.x-k8s.io/v1beta1), None if there is none."""
        try:
            return self.get_json(f"/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}",
                                 f"reading Kueue cluster queue {name}")
        except NotFoundError:
            return None

    def get_namespace(self, name: str) -> dict | None:
        """Namespace ``name``, None if there is none."""
        try:
            return self.get_json(f"/api/v1/namespaces/{name}", f"reading namespace {name}")
        except NotFoundError:
            return None

    def pending_workloads(self, namespace: str, local_queue: str) -> list[dict] | None:
        """The pending workloads of a LocalQueue in Kueue's order, from Kueue's visibility API (an aggregated
        API its controller serves: ``visibility.kueue.x-k8s.io`` v1beta2, else v1beta1); None when no version
        of it answers (not served, unavailable, or not readable by this user)."""
        from ..views.queueing import VISIBILITY_GROUP, VISIBILITY_VERSIONS

        for version in VISIBILITY_VERSIONS:
            path = (f"/apis/{VISIBILITY_GROUP}/{version}/namespaces/{namespace}/localqueues/{local_queue}"
                    "/pendingworkloads")
            try:
                return list(self.get_json(path, f"reading the pending workloads of queue {local_queue}")
                            .get("items") or [])
            except NotFoundError:
                continue
            except (ForbiddenError, ClusterError) as exc:  # 403, or 503 while the APIService is unavailable
                log.debug("visibility API %s: %s", version, exc)
                return None
            except ValueError:
                return None
        return None

    def list_jobs(self, kind: str, version: str, namespace: str | None, *, selector: str = PART_OF,
                  slim: Callable[[dict], dict | None] | None = None) -> list[dict]:
        """The ``kind`` objects (``selector`` "" for every one, made by helm or not)."""
        info = BY_KIND[kind]
        items = self.list_path(f"/apis/{info.group}/{version}{ns_path(namespace)}/{info.plural}",
                               f"listing {info.plural}", slim=slim, labelSelector=selector)
        for item in items:  # LIST items carry no kind
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", f"{info.group}/{version}")
        return items

    def list_pods(self, namespace: str | None, selector: str = PART_OF, field_selector: str = "", *,
                  slim: Callable[[dict], dict | None] | None = None) -> list[dict]:
        return self.list_path(f"/api/v1{ns_path(namespace)}/pods", "listing pods", slim=slim,
                              labelSelector=selector, fieldSelector=field_selector)

    def list_release_metadata(self, resource: str, namespace: str | None, selector: str = "owner=helm", *,
                              cached: bool = True) -> list[dict]:
        """The ``metadata`` of helm's storage records (``resource``: secrets or configmaps), without their
        payloads: a metadata-only LIST (PartialObjectMetadataList), Secrets narrowed to helm's type.

        ``cached``: served from the API server's watch cache (``resourceVersion=0``, as informers LIST),
        which spares the server reading every record's payload from etcd (10x faster at 2,000 releases); the
        cache may lag etcd by a moment, and a 1.20 server answers it in one response (a few hundred bytes per
        record: the payloads are what it leaves out). ``cached=False`` reads etcd, paged."""
        from ..views.release_index import METADATA_ACCEPT, SECRET_TYPE

        fields = f"type={SECRET_TYPE}" if resource == "secrets" else ""
        return self.list_path(f"/api/v1{ns_path(namespace)}/{resource}", "listing helm releases",
                              slim=_record_metadata, accept=METADATA_ACCEPT, labelSelector=selector,
                              fieldSelector=fields, resourceVersion="0" if cached else "")

    def release_records_full(self, resource: str, namespace: str, name: str) -> list[dict]:
        """The storage records of release ``name``, payloads included (one release, for a full read)."""
        from ..views.release_index import SECRET_TYPE

        fields = f"type={SECRET_TYPE}" if resource == "secrets" else ""
        return self.list_path(f"/api/v1/namespaces/{namespace}/{resource}", f"reading release {name}",
                              labelSelector=f"owner=helm,name={name}", fieldSelector=fields)

    def delete_job(self, kind: str, version: str, namespace: str, name: str) -> None:
        """DELETE a job object; its pods go with it (background propagation, as kubectl delete does)."""
        from kubernetes import client

        info = BY_KIND[kind]
        self.call(client.CustomObjectsApi(self.api).delete_namespaced_custom_object, info.group, version,
                  namespace, info.plural, name, body={"propagationPolicy": "Background"},
                  action=f"deleting {kind} {name}")

    # ---- workspaces (arena_helm.workspace.workspaces): a Job, its home PVC, its token Secret -----------------------
    def list_batch_jobs(self, namespace: str | None, selector: str) -> list[dict]:
        return self.list_path(f"/apis/batch/v1{ns_path(namespace)}/jobs", "listing jobs (batch)",
                              labelSelector=selector)

    def list_pvcs(self, namespace: str | None, selector: str) -> list[dict]:
        return self.list_path(f"/api/v1{ns_path(namespace)}/persistentvolumeclaims",
                              "listing persistent volume claims", labelSelector=selector)

    def get_pvc(self, namespace: str, name: str) -> dict | None:
        try:
            return self.get_json(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}",
                                 f"reading persistent volume claim {name}")
        except NotFoundError:
            return None

    def delete_pvc(self, namespace: str, name: str) -> bool:
        """DELETE a PVC; False when there was none."""
        try:
            self.raw("DELETE", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}",
                     f"deleting persistent volume claim {name}")
        except NotFoundError:
            return False
        return True

    def create_secret(self, namespace: str, name: str, data: dict[str, str], *, labels: dict[str, str]) -> bool:
        """Create an Opaque Secret from ``data`` (its values go as stringData, in the request body only:
        AlreadyExistsError when one of that name exists). True once created."""
        body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": name, "namespace": namespace, "labels": labels}, "stringData": data}
        self.raw("POST", f"/api/v1/namespaces/{namespace}/secrets", f"creating secret {name}", body=body,
                 content_type="application/json")
        return True

    def get_secret_key(self, namespace: str, name: str, key: str) -> str | None:
        """The decoded value of ``key`` of Secret ``name``, None when the Secret or the key is missing."""
        import base64

        try:
            secret = self.get_json(f"/api/v1/namespaces/{namespace}/secrets/{name}", f"reading secret {name}")
        except NotFoundError:
            return None
        value = (secret.get("data") or {}).get(key)
        return base64.b64decode(value).decode() if value is not None else None

    def delete_secret(self, namespace: str, name: str) -> bool:
        """DELETE a Secret; False when there was none."""
        try:
            self.raw("DELETE", f"/api/v1/namespaces/{namespace}/secrets/{name}", f"deleting secret {name}")
        except NotFoundError:
            return False
        return True

    def list_deployments(self, namespace: str | None, selector: str) -> list[dict]:
        return self.list_objects("apps", "v1", "deployments", namespace, selector)

    def list_objects(self, group: str, version: str, plural: str, namespace: str | None, selector: str) -> list[dict]:
        """The ``plural`` objects of ``group/version`` with the labels of ``selector`` (NotFoundError: not served)."""
        return self.list_path(f"/apis/{group}/{version}{ns_path(namespace)}/{plural}", f"listing {plural}",
                              labelSelector=selector)

    def list_services(self, namespace: str | None, selector: str) -> list[dict]:
        return self.list_path(f"/api/v1{ns_path(namespace)}/services", "listing services", labelSelector=selector)

    def list_events(self, namespace: str) -> list[dict]:
        return self.list_path(f"/api/v1/namespaces/{namespace}/events", "listing events")

    def list_nodes(self) -> list[dict]:
        return self.list_path("/api/v1/nodes", "listing nodes")

    def stream_log(self, namespace: str, pod: str, *, container: str | None = None, follow: bool = False,
                   tail: int | None = None, since_seconds: int | None = None, since_time: str | None = None,
                   timestamps: bool = False, previous: bool = False):
        """Yield the pod's log in chunks (bytes), through the API server's pod log endpoint (``previous``: of
        the container before its last restart)."""
        query: list[tuple[str, str]] = []
        for key, value in (("container", container), ("tailLines", tail), ("sinceSeconds", since_seconds),
                           ("sinceTime", since_time)):
            if value is not None:
                query.append((key, str(value)))
        if follow:
            query.append(("follow", "true"))
        if timestamps:
            query.append(("timestamps", "true"))
        if previous:
            query.append(("previous", "true"))
        resp = self.call(
            self.api.call_api, f"/api/v1/namespaces/{namespace}/pods/{pod}/log", "GET", query_params=query,
            auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True,
            _request_timeout=None if follow else 60, action=f"reading the log of pod {pod}",
        )
        try:
            yield from resp.stream(4096, decode_content=True)
        finally:
            resp.release_conn()


# ---- exec (attach) ---------------------------------------------------------------------------------
class ExecChannel:
    """One ``pods/exec`` websocket (kubernetes.stream's WSClient, binary): channel messages in and out.

    ``recv()`` returns ``(channel, data)``, or None once the remote side closed; ``sock`` is the socket to
    ``select`` on, ``pending()`` what its TLS layer already holds (``select`` does not see that)."""

    def __init__(self, ws):
        self.ws = ws
        self.sock = ws.sock.sock
        self.v5 = ws.subprotocol == "v5.channel.k8s.io"

    def pending(self) -> int:
        return getattr(self.sock, "pending", lambda: 0)()

    def recv(self) -> tuple[int, bytes] | None:
        from websocket import ABNF, WebSocketException

        try:
            op, frame = self.ws.sock.recv_data_frame(True)
        except (WebSocketException, OSError):
            return None
        if op == ABNF.OPCODE_CLOSE:
            return None
        data = frame.data or b""
        return (data[0], data[1:]) if data else (-1, b"")

    def send(self, channel: int, data: bytes) -> bool:
        """False once the connection is gone."""
        from websocket import WebSocketException

        try:
            self.ws.write_channel(channel, data)
            return True
        except (WebSocketException, OSError):
            return False

    def close_stdin(self) -> None:
        """The v5 CLOSE signal for stdin (v4 has no way to say it)."""
        from websocket import WebSocketException

        try:
            self.ws.close_channel(0)
        except (WebSocketException, OSError):
            pass

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - the remote side may be gone already
            pass


def exec_handshake_error(exc, pod: str) -> ArenaHelmError:
    """kubernetes.stream turns a refused upgrade into ApiException(status=0, reason="Handshake status 404
    Not Found -+-+- {headers} -+-+- {status JSON}"): keep the API server's own message."""
    import re

    text = str(getattr(exc, "reason", "") or exc)
    body = text.rsplit("-+-+-", 1)[-1].strip()
    if body.startswith(("b'", 'b"')):  # older websocket-client versions print the body as bytes
        body = body[2:-1].encode().decode("unicode_escape")
    try:
        message = json.loads(body).get("message", "")
    except (ValueError, AttributeError):
        message = ""
    status = re.search(r"Handshake status (\d+)", text)
    code = int(status.group(1)) if status else 0
    message = message or text.splitlines()[0]
    if code == 403:
        return ForbiddenError(f"exec in pod {pod}: forbidden: {message}")
    if code == 404:
        return NotFoundError(f"exec in pod {pod}: {message}")
    return ClusterError(f"exec in pod {pod}: {message}")


def open_exec(kube: Kube, namespace: str, pod: str, container: str, command: list[str], tty: bool) -> ExecChannel:
    """Start ``command`` in the pod's container through the API server's pods/exec (stdin, stdout, and
    stderr unless ``tty``: a terminal has one output stream)."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    from kubernetes.stream import stream

    core = client.CoreV1Api(kube.api)
    stats.count("api_requests")
    log.debug("exec: %s/%s -c %s: %s", namespace, pod, container, command)
    try:
        ws = stream(core.connect_get_namespaced_pod_exec, pod, namespace, container=container, command=command,
                    stdin=True, stdout=True, stderr=not tty, tty=tty, _preload_content=False, binary=True)
    except ApiException as exc:
        raise exec_handshake_error(exc, pod) from None
    except AttributeError as exc:
        # the client's ApiClient decodes ``e.body`` of the handshake's ApiException, which is None: the
        # ApiException with the API server's answer is the context of that AttributeError
        if isinstance(exc.__context__, ApiException):
            raise exec_handshake_error(exc.__context__, pod) from None
        raise
    except OSError as exc:
        raise ClusterError(f"exec in pod {pod}: cannot reach the API server at {kube.server}: {exc}") from None
    return ExecChannel(ws)
