"""GPU, CPU and memory usage joined with jobs, pods and nodes. Pure (no I/O): the inputs are Prometheus
instant-query results and ``metrics.k8s.io`` lists as plain dicts; ``metrics.py`` fetches them.

GPU series, as Arena v1 reads them (kubeflow/arena ``pkg/prometheus``, ``pkg/apis/types``) plus NVIDIA's
DCGM exporter:

- DCGM exporter: ``DCGM_FI_DEV_GPU_UTIL`` (%), ``DCGM_FI_DEV_FB_USED`` and ``DCGM_FI_DEV_FB_FREE`` (MiB),
  labels ``gpu`` (device index), ``UUID``, ``Hostname`` (the node), ``namespace``, ``pod``, ``container``
  (``exported_namespace``/``exported_pod``/``exported_container`` when Prometheus renamed them because the
  scrape target has its own ``namespace``/``pod`` labels);
- Arena's gpu-exporter: ``nvidia_gpu_duty_cycle`` (%), ``nvidia_gpu_memory_used_bytes``,
  ``nvidia_gpu_memory_total_bytes``, labels ``minor_number``, ``uuid``, ``node_name``, ``namespace_name``,
  ``pod_name``, ``container_name``.

CPU and memory usage: ``metrics.k8s.io`` (PodMetrics/NodeMetrics) where served, else cAdvisor's
``container_cpu_usage_seconds_total`` (rate) and ``container_memory_working_set_bytes`` summed per pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .k8s import quantity_float
from .nodeviews import NodeView
from .views import JobView, fmt_cpu, fmt_mem

MIB = 2**20
DCGM_UTIL, DCGM_FB_USED, DCGM_FB_FREE = "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"
OLD_UTIL, OLD_USED, OLD_TOTAL = "nvidia_gpu_duty_cycle", "nvidia_gpu_memory_used_bytes", "nvidia_gpu_memory_total_bytes"
GPU_METRICS = (DCGM_UTIL, DCGM_FB_USED, DCGM_FB_FREE, OLD_UTIL, OLD_USED, OLD_TOTAL)
NA = "N/A"


# ---- Prometheus results ------------------------------------------------------------------------------
def vector(data: dict) -> list[tuple[dict[str, str], float]]:
    """An instant-query answer (``{"status": "success", "data": {"resultType": "vector", ...}}``) as
    (labels, value) pairs. NaN and unparsable values are dropped."""
    result = ((data or {}).get("data") or {}).get("result") or []
    out = []
    for item in result:
        try:
            value = float((item.get("value") or [0, "nan"])[1])
        except (TypeError, ValueError, IndexError):
            continue
        if value != value:  # NaN
            continue
        out.append((dict(item.get("metric") or {}), value))
    return out


def _label(labels: dict[str, str], *names: str) -> str:
    for name in names:
        if labels.get(name):
            return labels[name]
    return ""


@dataclass
class GpuMetric:
    """One GPU device: utilisation (%), memory used/total (bytes), and the pod using it (if any)."""

    node: str
    device: str
    util: float | None = None
    mem_used: float | None = None
    mem_total: float | None = None
    namespace: str = ""
    pod: str = ""
    container: str = ""
    uuid: str = ""
    _free: float | None = None

    @property
    def device_order(self) -> tuple[int, str]:
        return (int(self.device), "") if self.device.isdigit() else (1 << 30, self.device)

    def to_json(self) -> dict[str, Any]:
        # Arena's AdvancedGpuMetric / GpuMetric keys
        return {"id": self.device, "uuid": self.uuid, "node": self.node,
                "gpuDutyCycle": self.util, "usedGPUMemory": self.mem_used, "totalGPUMemory": self.mem_total,
                "podNames": [f"{self.namespace}/{self.pod}"] if self.pod else []}


def gpus_from_series(series: list[tuple[dict[str, str], float]]) -> list[GpuMetric]:
    """Join the GPU series of one query (any of GPU_METRICS) into one GpuMetric per (node, device)."""
    gpus: dict[tuple[str, str], GpuMetric] = {}
    for labels, value in series:
        name = labels.get("__name__", "")
        if name not in GPU_METRICS:
            continue
        node = _label(labels, "Hostname", "node_name", "node", "kubernetes_node")
        device = _label(labels, "gpu", "minor_number") or _label(labels, "UUID", "uuid")
        g = gpus.setdefault((node, device), GpuMetric(node=node, device=device))
        if not g.pod:
            if labels.get("exported_pod"):  # Prometheus renamed the series' own labels (target had them)
                g.pod, g.namespace = labels["exported_pod"], labels.get("exported_namespace", "")
                g.container = _label(labels, "exported_container", "container")
            else:
                g.pod = _label(labels, "pod_name", "pod")
                g.namespace = _label(labels, "namespace_name", "namespace")
                g.container = _label(labels, "container_name", "container")
        g.uuid = g.uuid or _label(labels, "UUID", "uuid")
        if name in (DCGM_UTIL, OLD_UTIL):
            g.util = value
        elif name == DCGM_FB_USED:
            g.mem_used = value * MIB
        elif name == DCGM_FB_FREE:
            g._free = value * MIB
        elif name == OLD_USED:
            g.mem_used = value
        elif name == OLD_TOTAL:
            g.mem_total = value
    for g in gpus.values():
        if g._free is not None and g.mem_total is None:
            g.mem_total = (g.mem_used or 0.0) + g._free
        if not g.pod:
            g.namespace = ""
    return sorted(gpus.values(), key=lambda g: (g.node, g.device_order))


@dataclass
class Usage:
    """CPU (cores) and memory (bytes) in use."""

    cpu: float | None = None
    memory: float | None = None

    def add(self, other: Usage | None) -> None:
        if other is None:
            return
        if other.cpu is not None:
            self.cpu = (self.cpu or 0.0) + other.cpu
        if other.memory is not None:
            self.memory = (self.memory or 0.0) + other.memory


def _pod_key(labels: dict[str, str]) -> tuple[str, str]:
    return (_label(labels, "namespace", "namespace_name"), _label(labels, "pod", "pod_name"))


def usage_from_cadvisor(cpu: list[tuple[dict, float]], memory: list[tuple[dict, float]]) -> dict[tuple[str, str], Usage]:
    """(namespace, pod) -> Usage from the per-pod sums of cAdvisor's CPU rate and working set."""
    out: dict[tuple[str, str], Usage] = {}
    for labels, value in cpu:
        u = out.setdefault(_pod_key(labels), Usage())
        u.cpu = (u.cpu or 0.0) + value
    for labels, value in memory:
        u = out.setdefault(_pod_key(labels), Usage())
        u.memory = (u.memory or 0.0) + value
    out.pop(("", ""), None)
    return out


def usage_from_pod_metrics(items: list[dict]) -> dict[tuple[str, str], Usage]:
    """metrics.k8s.io PodMetrics items -> (namespace, pod) -> Usage (containers summed)."""
    out = {}
    for item in items:
        meta = item.get("metadata") or {}
        u = Usage(0.0, 0.0)
        for c in item.get("containers") or []:
            usage = c.get("usage") or {}
            u.cpu += quantity_float(usage.get("cpu", 0))
            u.memory += quantity_float(usage.get("memory", 0))
        out[(meta.get("namespace", ""), meta.get("name", ""))] = u
    return out


def usage_from_node_metrics(items: list[dict]) -> dict[str, Usage]:
    out = {}
    for item in items:
        usage = item.get("usage") or {}
        out[(item.get("metadata") or {}).get("name", "")] = Usage(quantity_float(usage.get("cpu", 0)),
                                                                 quantity_float(usage.get("memory", 0)))
    return out


# ---- what a view gets ----------------------------------------------------------------------------------
@dataclass
class Metrics:
    """What the metrics sources gave for one view. ``None`` means the source was not available (N/A)."""

    gpus: list[GpuMetric] | None = None
    pods: dict[tuple[str, str], Usage] | None = None
    nodes: dict[str, Usage] | None = None  # metrics.k8s.io NodeMetrics, when served
    usage_source: str = ""  # "metrics.k8s.io", "prometheus" or ""
    notes: list[str] = field(default_factory=list)
    _by_pod: dict[tuple[str, str], list[GpuMetric]] | None = None
    _by_node: dict[str, list[GpuMetric]] | None = None

    def pod_gpus(self, namespace: str, pod: str) -> list[GpuMetric] | None:
        if self.gpus is None:
            return None
        if self._by_pod is None:
            self._by_pod = {}
            for g in self.gpus:
                if g.pod:
                    self._by_pod.setdefault((g.namespace, g.pod), []).append(g)
        return self._by_pod.get((namespace, pod), [])

    def node_gpus(self, node: str) -> list[GpuMetric] | None:
        if self.gpus is None:
            return None
        if self._by_node is None:
            self._by_node = {}
            for g in self.gpus:
                self._by_node.setdefault(g.node, []).append(g)
        return self._by_node.get(node, [])

    def pod_usage(self, namespace: str, pod: str) -> Usage | None:
        if self.pods is None:
            return None
        return self.pods.get((namespace, pod))

    def node_usage(self, node: str, pods: list[tuple[str, str]]) -> Usage | None:
        """A node's usage: NodeMetrics where served, else the sum of the pods running on it."""
        if self.nodes is not None and node in self.nodes:
            return self.nodes[node]
        if self.pods is None:
            return None
        total = Usage()
        for key in pods:
            total.add(self.pods.get(key))
        return total


NO_METRICS = Metrics()


@dataclass
class GpuSummary:
    """Average utilisation and total memory used/total of a set of GPUs (None: no samples)."""

    util: float | None
    mem_used: float | None
    mem_total: float | None

    def to_json(self) -> dict[str, Any]:
        return {"gpuDutyCycle": self.util, "usedGPUMemory": self.mem_used, "totalGPUMemory": self.mem_total}


def summarize(gpus: list[GpuMetric] | None) -> GpuSummary:
    if not gpus:
        return GpuSummary(None, None, None)
    utils = [g.util for g in gpus if g.util is not None]
    used = [g.mem_used for g in gpus if g.mem_used is not None]
    total = [g.mem_total for g in gpus if g.mem_total is not None]
    return GpuSummary(sum(utils) / len(utils) if utils else None, sum(used) if used else None,
                      sum(total) if total else None)


def job_gpus(m: Metrics, v: JobView) -> list[GpuMetric] | None:
    if m.gpus is None:
        return None
    out: list[GpuMetric] = []
    for i in v.instances:
        out += m.pod_gpus(v.namespace, i.name) or []
    return out


def job_usage(m: Metrics, v: JobView) -> Usage | None:
    if m.pods is None:
        return None
    total = Usage()
    for i in v.instances:
        total.add(m.pod_usage(v.namespace, i.name))
    return total


def node_pods(pods: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """node name -> (namespace, pod) of the pods bound to it."""
    out: dict[str, list[tuple[str, str]]] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node:
            meta = p.get("metadata") or {}
            out.setdefault(node, []).append((meta.get("namespace", ""), meta.get("name", "")))
    return out


# ---- formatting ----------------------------------------------------------------------------------------
def fmt_util(value: float | None) -> str:
    return NA if value is None else f"{value:.1f}%"


def fmt_gpu_mem(used: float | None, total: float | None) -> str:
    """Arena's GPU memory cell: ``1024.0/16384.0(MiB)``."""
    if used is None and total is None:
        return NA
    u = NA if used is None else f"{used / MIB:.1f}"
    t = NA if total is None else f"{total / MIB:.1f}"
    return f"{u}/{t}(MiB)"


def fmt_cpu_usage(u: Usage | None) -> str:
    """Cores in use, to the millicore (a measured rate is never a whole number exactly)."""
    return NA if u is None or u.cpu is None else fmt_cpu(round(u.cpu, 3))


def fmt_mem_usage(u: Usage | None) -> str:
    return NA if u is None or u.memory is None else fmt_mem(u.memory)


def usage_json(u: Usage | None) -> dict[str, Any]:
    return {"usedCPU": None if u is None or u.cpu is None else fmt_cpu(round(u.cpu, 3)),
            "usedMemory": None if u is None or u.memory is None else fmt_mem(u.memory)}


def job_metric_cells(m: Metrics, v: JobView) -> tuple[str, str, str, str]:
    """(GPU(Util), GPU_MEMORY(Used/Total), CPU(Usage), MEMORY(Usage)) of one job in ``top job``."""
    s = summarize(job_gpus(m, v))
    u = job_usage(m, v) if not v.finished else None
    return fmt_util(s.util), fmt_gpu_mem(s.mem_used, s.mem_total), fmt_cpu_usage(u), fmt_mem_usage(u)


def node_metric_cells(m: Metrics, n: NodeView, pods_on: list[tuple[str, str]]) -> tuple[str, str, str, str]:
    s = summarize(m.node_gpus(n.name))
    u = m.node_usage(n.name, pods_on)
    return fmt_util(s.util), fmt_gpu_mem(s.mem_used, s.mem_total), fmt_cpu_usage(u), fmt_mem_usage(u)


def instance_gpu_rows(m: Metrics, v: JobView, instance_cells) -> list[list[str]]:
    """A row per instance and per GPU (Arena's ``top job NAME``): the instance's cells on its first GPU row,
    blank on the next ones; an instance without GPU samples gets one row of N/A."""
    rows = []
    for i in v.instances:
        cells = instance_cells(i)
        gpus = m.pod_gpus(v.namespace, i.name) or []
        if not gpus:
            rows.append([*cells, NA, NA, NA])
            continue
        for k, g in enumerate(gpus):
            rows.append([*(cells if k == 0 else [""] * len(cells)), g.device, fmt_util(g.util),
                         fmt_gpu_mem(g.mem_used, g.mem_total)])
    return rows


# ---- JSON ------------------------------------------------------------------------------------------------
def add_job_json(m: Metrics, v: JobView, data: dict[str, Any]) -> dict[str, Any]:
    """A job's JSON with its metrics: the job's GPU summary and usage, and each instance's ``gpuMetrics``
    (device index -> Arena's GpuMetric keys) and usage. Values are None where metrics are missing, except
    ``gpuMetrics``, which is ``{}`` then, as Arena's map is (pkg/training/get_advanced.go ``BuildJobInfo``)."""
    data.update(summarize(job_gpus(m, v)).to_json())
    data.update(usage_json(job_usage(m, v)))
    for inst in data.get("instances") or []:
        gpus = m.pod_gpus(v.namespace, inst.get("name", ""))
        inst["gpuMetrics"] = {} if gpus is None else {
            g.device: {"gpuDutyCycle": g.util, "usedGPUMemory": g.mem_used, "totalGPUMemory": g.mem_total}
            for g in gpus}
        inst.update(usage_json(m.pod_usage(v.namespace, inst.get("name", ""))))
    return data


def add_node_json(m: Metrics, n: NodeView, pods_on: list[tuple[str, str]], data: dict[str, Any]) -> dict[str, Any]:
    gpus = m.node_gpus(n.name)
    data.update(summarize(gpus).to_json())
    data.update(usage_json(m.node_usage(n.name, pods_on)))
    data["gpuMetrics"] = None if gpus is None else [g.to_json() for g in gpus]
    return data
