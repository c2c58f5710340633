"""The metrics adapter: Prometheus instant queries and ``metrics.k8s.io``, for ``get -g`` and ``top``.

Where Prometheus is, first match wins:

1. ``--prometheus-url URL`` (or ``$PROMETHEUS_ADDRESS``, Arena's variable; ``$PROMETHEUS_TOKEN`` is sent as
   a bearer token), then the defaults file's ``prometheus.url``: queried directly;
2. ``--prometheus-service [NAMESPACE/]NAME[:PORT]``, then the defaults file's ``prometheus.service``:
   queried through the API server's service proxy;
3. a Service found by label in any namespace, as Arena v1 does (kubeflow/arena ``pkg/prometheus/query.go``
   ``getPrometheusServer`` and ``pkg/apis/types`` ``SUPPORT_PROMETHEUS_SERVERS``, in its order):
   ``kubernetes.io/name=prometheus-server`` (port 9090), ``kubernetes.io/service-name=prometheus-admin`` or
   ``kubernetes.io/name=prometheus-admin`` (9335), ``kubernetes.io/service-name=prometheus-server``,
   ``kubernetes.io/name=prometheus``, ``kubernetes.io/name=Prometheus`` (9090); through the service proxy.
   Two LISTs (set-based selectors), whatever the number of candidates.

Requests are constant in the size of the view: one instant query for the GPU series (every metric name
in one ``__name__=~`` selector, like Arena's ``POD_METRIC_TMP``), one for the idle GPUs (``idle_query``:
``top`` and ``list --idle``), one for the CPU rate and one for the working set; never one per pod or node.
Every query has a timeout (10 s, Arena's; ``prometheus.timeout`` in the defaults file). Nothing here raises
when metrics are missing: the view gets ``None`` (shown as N/A) and one note for stderr.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Any

from ..core import stats
from ..core.errors import ArenaHelmError, NotFoundError, UsageError
from ..views.usage import (
    DCGM_UTIL,
    GPU_METRICS,
    OLD_UTIL,
    IdleSpec,
    Metrics,
    gpus_from_series,
    idle_from_series,
    target_pods,
    usage_from_cadvisor,
    usage_from_node_metrics,
    usage_from_pod_metrics,
    vector,
)

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT = 10.0
# (label selector key, value, port) in Arena's order of preference
ARENA_SERVERS = (
    ("kubernetes.io/name", "prometheus-server", 9090),
    ("kubernetes.io/service-name", "prometheus-admin", 9335),
    ("kubernetes.io/name", "prometheus-admin", 9335),
    ("kubernetes.io/service-name", "prometheus-server", 9090),
    ("kubernetes.io/name", "prometheus", 9090),
    ("kubernetes.io/name", "Prometheus", 9090),
)
GPU_QUERY = "{__name__=~\"" + "|".join(GPU_METRICS) + "\"}"
# per pod, as metrics-server does it: the rate between the last two samples, containers only
_CONTAINERS = '{image!="",container!="POD",container_name!="POD"}'
CPU_QUERY = f"sum by (namespace, pod, namespace_name, pod_name) (irate(container_cpu_usage_seconds_total{_CONTAINERS}[5m]))"
MEM_QUERY = f"sum by (namespace, pod, namespace_name, pod_name) (container_memory_working_set_bytes{_CONTAINERS})"


def idle_query(seconds: int) -> str:
    """One instant query for the idle GPUs over the last ``seconds``: each utilisation series' average over the
    window, kept only if the series is there now and was there ``seconds`` ago (``offset``, within the
    server's lookback), i.e. the same pod (the series' labels) held the GPU for the whole window. ``and``
    matches the label sets without the metric name; the two exporters' names are averaged apart, so that no
    two series can meet without their names."""
    w = f"{int(seconds)}s"
    return " or ".join(f"(avg_over_time({name}[{w}]) and {name} offset {w} and {name})" for name in (DCGM_UTIL, OLD_UTIL))


IDLE_FOR_RANGE = 86400  # seconds: how far back idle_for_query looks (a longer idle time reads "24h+")


def idle_for_query(below: float, seconds: int = IDLE_FOR_RANGE) -> str:
    """One instant query for how long each GPU's series has been idle: the seconds since its last sample at or
    above ``below`` percent (the current one when busy now; else the last within ``seconds``), or, with none,
    since its first sample there (the series names the pod, so that is since the pod got the GPU); a series
    newer than the server's evaluation interval (no subquery step has seen it yet) since its current sample.
    Subqueries step at the evaluation interval; ``timestamp`` is the sample's own."""
    r = f"{int(seconds)}s"
    return " or ".join(f"(time() - (timestamp({n} >= {below:g}) or max_over_time(timestamp({n} >= {below:g})[{r}:])"
                       f" or min_over_time(timestamp({n})[{r}:]) or timestamp({n})))" for n in (DCGM_UTIL, OLD_UTIL))


def parse_idle_below(text: str, flag: str = "--idle-below") -> float:
    """``5%``, ``5`` or ``0.5%`` -> 5.0: a percentage above 0 and at most 100."""
    raw = str(text).strip()
    body = raw[:-1].strip() if raw.endswith("%") else raw
    try:
        value = float(body)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 100:  # NaN fails too
        raise UsageError(f"{flag} {raw!r}: give a utilisation percentage above 0 and at most 100, e.g. 5%")
    return value


def parse_idle_for(text: str, flag: str = "--idle-for") -> int:
    """A Go duration (``30m``, ``1h30m``) of at least one second -> seconds."""
    from ..core.grammars import parse_duration

    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None
    if seconds < 1:
        raise UsageError(f"{flag} {text!r}: give a duration of at least 1s, e.g. 30m")
    return seconds


def idle_spec(below: str, for_: str) -> IdleSpec:
    return IdleSpec(parse_idle_below(below), parse_idle_for(for_))


_SERVICE_RE = re.compile(r"^(?:(?P<ns>[a-z0-9][-a-z0-9]*)/)?(?P<name>[a-z0-9][-a-z0-9]*)(?::(?P<port>[0-9]+|[a-z][-a-z0-9]*))?$")


class PrometheusUnavailable(Exception):
    """Prometheus could not be found or did not answer: the message is the stderr note's reason."""


@dataclass
class ServiceRef:
    namespace: str
    name: str
    port: str  # number or port name
    scheme: str = "http"

    def __str__(self) -> str:
        return f"service {self.namespace}/{self.name}:{self.port}"


def parse_service(text: str, flag: str, default_namespace: str = "default") -> ServiceRef:
    m = _SERVICE_RE.fullmatch(text.strip())
    if not m:
        raise UsageError(f"{flag} {text!r}: give [NAMESPACE/]NAME[:PORT], e.g. monitoring/prometheus-server:9090")
    from ..core.grammars import is_port_number  # lazily, as check_url's grammar below

    port = m.group("port") or "9090"
    if port.isdigit() and not is_port_number(port):
        raise UsageError(f"{flag} {text!r}: port {port} is out of range: give 1-65535 (or the port's name)")
    return ServiceRef(m.group("ns") or default_namespace, m.group("name"), port)


def check_url(url: str, flag: str) -> str:
    from ..core.grammars import check_http_url

    return check_http_url(url, flag, "http://prometheus.monitoring:9090").rstrip("/")


@dataclass
class MetricsOptions:
    """The user's choice of Prometheus: flag values and the defaults file's ``prometheus`` mapping."""

    url: str | None = None
    service: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    url_source: str = "--prometheus-url"
    service_source: str = "--prometheus-service"

    @classmethod
    def resolve(cls, url: str | None, service: str | None, defaults: dict | None) -> MetricsOptions:
        d = defaults or {}
        opts = cls(timeout=float(d.get("timeout", DEFAULT_TIMEOUT)))
        if url:
            opts.url = check_url(url, "--prometheus-url")
        elif service:
            opts.service = service
        elif d.get("url"):
            opts.url, opts.url_source = check_url(d["url"], "prometheus.url (defaults file)"), "prometheus.url"
        elif d.get("service"):
            opts.service, opts.service_source = d["service"], "prometheus.service (defaults file)"
        if opts.service:
            parse_service(opts.service, opts.service_source)  # bad input fails before any request
        return opts


class Prometheus:
    """Instant queries, either straight to ``url`` or through the API server's service proxy."""

    def __init__(self, *, kube=None, url: str | None = None, service: ServiceRef | None = None,
                 timeout: float = DEFAULT_TIMEOUT, token: str | None = None):
        self.kube, self.url, self.service, self.timeout, self.token = kube, url, service, timeout, token
        self.queries = 0

    @property
    def where(self) -> str:
        return self.url or f"{self.service} (through the API server's service proxy)"

    def query(self, promql: str) -> list[tuple[dict[str, str], float]]:
        self.queries += 1
        stats.count("prometheus_queries")
        log.debug("prometheus query at %s: %s", self.where, promql)
        raw = self._get_direct(promql) if self.url else self._get_proxied(promql)
        try:
            data = json.loads(raw)
        except ValueError:
            raise PrometheusUnavailable(f"Prometheus at {self.where} did not answer with JSON") from None
        if not isinstance(data, dict) or data.get("status") != "success":
            err = data.get("error") if isinstance(data, dict) else None
            raise PrometheusUnavailable(f"Prometheus at {self.where} refused the query: {err or 'no success'}")
        return vector(data)

    def _get_direct(self, promql: str) -> bytes:
        import urllib.error
        import urllib.request
        from urllib.parse import urlencode

        req = urllib.request.Request(f"{self.url}/api/v1/query?{urlencode({'query': promql})}")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - http(s) checked
                return resp.read()
        except urllib.error.HTTPError as exc:
            body = exc.read()
            if body.startswith(b"{"):
                return body  # Prometheus' own error answer (status "error")
            raise PrometheusUnavailable(f"Prometheus at {self.url} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise PrometheusUnavailable(f"Prometheus at {self.url} did not answer ({reason})") from None

    def _get_proxied(self, promql: str) -> bytes:
        s = self.service
        try:
            return self.kube.service_proxy_get(s.namespace, f"{s.scheme}:{s.name}:{s.port}", "api/v1/query",
                                               [("query", promql)], f"querying Prometheus at {s}", self.timeout)
        except ArenaHelmError as exc:
            raise PrometheusUnavailable(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a timeout or a broken connection: metrics are optional
            raise PrometheusUnavailable(f"Prometheus at {self.where} did not answer ({type(exc).__name__}: "
                                        f"{exc})") from None


def find_service(kube) -> ServiceRef | None:
    """Arena's label search for the Prometheus Service, in every namespace (two LISTs)."""
    found: dict[tuple[str, str], dict] = {}
    for key in ("kubernetes.io/name", "kubernetes.io/service-name"):
        values = sorted({v for k, v, _ in ARENA_SERVERS if k == key})
        for svc in kube.list_services(None, f"{key} in ({','.join(values)})"):
            value = ((svc.get("metadata") or {}).get("labels") or {}).get(key, "")
            found.setdefault((key, value), svc)
    for key, value, port in ARENA_SERVERS:
        svc = found.get((key, value))
        if svc is None:
            continue
        meta, ports = svc.get("metadata") or {}, (svc.get("spec") or {}).get("ports") or []
        if ports and not any(p.get("port") == port for p in ports):
            port = ports[0].get("port", port)
        return ServiceRef(meta.get("namespace", "default"), meta.get("name", ""), str(port))
    return None


def connect(kube, opts: MetricsOptions, namespace: str) -> Prometheus:
    """The Prometheus to query; PrometheusUnavailable when there is none to be found."""
    token = os.environ.get("PROMETHEUS_TOKEN") or None
    if opts.url:
        return Prometheus(url=opts.url, timeout=opts.timeout, token=token)
    if opts.service:
        return Prometheus(kube=kube, service=parse_service(opts.service, opts.service_source, namespace),
                          timeout=opts.timeout)
    try:
        svc = find_service(kube)
    except ArenaHelmError as exc:
        raise PrometheusUnavailable(f"cannot look for the Prometheus Service ({exc})") from None
    if svc is None:
        raise PrometheusUnavailable("no Prometheus found (no Service labelled as Arena looks for, no "
                                    "--prometheus-url or --prometheus-service)")
    return Prometheus(kube=kube, service=svc, timeout=opts.timeout)


def _metrics_api(kube, path: str) -> list[dict] | None:
    """A metrics.k8s.io LIST, or None when the cluster does not serve it."""
    try:
        return kube.get_json(f"/apis/metrics.k8s.io/v1beta1{path}", "reading metrics.k8s.io").get("items") or []
    except NotFoundError:
        return None
    except ArenaHelmError as exc:  # 503 (APIService down), forbidden: fall back to Prometheus
        log.debug("metrics.k8s.io: %s", exc)
        return None


class Collector:
    """Gathers the metrics of one view; keeps the Prometheus it found for ``--refresh`` rounds."""

    def __init__(self, kube, opts: MetricsOptions, namespace: str):
        self.kube, self.opts, self.namespace = kube, opts, namespace
        self._prom: Prometheus | None = None
        self._unavailable: str | None = None
        self.reason = ""  # why the last round lacked metrics (the note's reason)

    def prometheus(self) -> Prometheus | None:
        """The Prometheus found before, else a new search (each --refresh round retries after a failure)."""
        if self._prom is None:
            try:
                self._prom, self._unavailable = connect(self.kube, self.opts, self.namespace), None
            except PrometheusUnavailable as exc:
                self._unavailable = str(exc)
        return self._prom

    def collect(self, *, gpus: bool = True, usage: bool = True, nodes: bool = False,
                namespace: str | None = None, idle: IdleSpec | None = None,
                idle_for_below: float | None = None) -> Metrics:
        """GPU series and/or CPU/memory usage for pods of ``namespace`` (None: every namespace); with
        ``nodes``, NodeMetrics too; with ``idle``, the idle GPUs (one more query); with ``idle_for_below``,
        how long each GPU has been under that utilisation (one more). At most 5 Prometheus queries and 2
        metrics.k8s.io LISTs."""
        m = Metrics(idle_spec=idle)
        reasons: list[str] = []
        prom = self.prometheus()
        if prom is None and self._unavailable:
            reasons.append(self._unavailable)
        if usage:
            ns_path = f"/namespaces/{namespace}" if namespace else ""
            items = _metrics_api(self.kube, f"{ns_path}/pods")
            if items is not None:
                m.pods, m.usage_source = usage_from_pod_metrics(items), "metrics.k8s.io"
                if nodes:
                    node_items = _metrics_api(self.kube, "/nodes")
                    m.nodes = usage_from_node_metrics(node_items) if node_items is not None else None
        try:
            gpu_series = prom.query(GPU_QUERY) if prom is not None and gpus else None
            if gpu_series is not None:
                m.gpus = gpus_from_series(gpu_series)
            if prom is not None and idle is not None:
                idle_series = prom.query(idle_query(idle.seconds))
                # the exporters' own pods, as either answer shows them (a series beside its exported_pod)
                exporters = target_pods((gpu_series or []) + idle_series)
                if gpu_series is not None:
                    m.gpus = gpus_from_series(gpu_series, exporters)
                m.idle_avgs = idle_from_series(idle_series, exporters)
                m.apply_idle()
            if prom is not None and idle_for_below is not None:
                m.idle_for = idle_from_series(prom.query(idle_for_query(idle_for_below)))
            if prom is not None and usage and m.pods is None:
                cpu, mem = prom.query(CPU_QUERY), prom.query(MEM_QUERY)
                m.pods, m.usage_source = usage_from_cadvisor(cpu, mem), "prometheus"
        except PrometheusUnavailable as exc:
            reasons.append(str(exc))
            self._prom, self._unavailable = None, str(exc)
        self.reason = reasons[-1] if reasons else ""
        if reasons:
            parts = (["GPU utilisation and memory"] if gpus and m.gpus is None else []) + (
                ["idle GPUs"] if idle is not None and m.idle_avgs is None and not (gpus and m.gpus is None) else []) + (
                ["idle times"] if idle_for_below is not None and m.idle_for is None else []) + (
                ["CPU/memory usage"] if usage and m.pods is None else [])
            what = " and ".join(parts)
            m.notes.append(f"note: {reasons[-1]}; {what} read N/A" if what else f"note: {reasons[-1]}")
        return m


def metrics_defaults() -> dict[str, Any]:
    from .defaults import load_defaults

    return load_defaults().prometheus
