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

Which pod a GPU serves: dcgm-exporter labels a GPU's series with ``namespace``/``pod``/``container`` only when
the kubelet's pod-resources API maps the device to a pod (NVIDIA/dcgm-exporter ``pkg/dcgmexporter/kubernetes.go``
``PodMapper.Process``: the attributes are set ``if exists``). A free GPU's series has none, so a scrape whose
target carries ``namespace``/``pod`` labels of its own (a ServiceMonitor or pod-annotation scrape; the GPU
operator's ServiceMonitor leaves ``honorLabels`` false, its default) gives it the *exporter's* pod, while a busy
GPU keeps its workload as ``exported_namespace``/``exported_pod`` beside the exporter's. So: ``exported_pod``
is the workload; a ``pod`` that other series show beside an ``exported_pod`` is the exporter (a scrape target),
not a workload; and ``top node``, which has the pods from the API, keeps a GPU's pod only if that pod is bound
to the GPU's node holding GPUs (``holders``): an exporter pod holds none (that also covers ``honorLabels:
true``, where a free GPU's ``pod`` is the exporter's and a busy one's the workload's).

Idle GPUs: one instant query (``metrics.idle_query``) gives, for each GPU series that is there now and was
there ``--idle-for`` ago (so held by the same pod the whole window), its average utilisation over the window;
an allocated GPU (its series names a workload pod) averaging under ``--idle-below`` is idle. Information only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.catalog import Family
from ..core.grammars import quantity_float
from .jobs import JobView, fmt_cpu, fmt_mem
from .nodes import NodeView

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


def target_pods(series: list[tuple[dict[str, str], float]]) -> set[tuple[str, str]]:
    """(namespace, pod) of the scrape targets (the exporters' own pods): the ``namespace``/``pod`` labels a
    series carries beside its own pod labels (``exported_pod``, renamed by Prometheus; ``pod_name``, Arena's
    gpu-exporter or dcgm-exporter's old names), which can only be the target's."""
    out: set[tuple[str, str]] = set()
    for labels, _ in series:
        if labels.get("pod") and (labels.get("exported_pod") or labels.get("pod_name")):
            out.add((labels.get("namespace", ""), labels["pod"]))
    return out


def series_pod(labels: dict[str, str], exporters: set[tuple[str, str]] = frozenset()) -> tuple[str, str, str]:
    """(namespace, pod, container) of the workload a GPU series names; empty for a free GPU (no pod label
    of its own: a ``pod`` that is an exporter's, see ``target_pods``)."""
    if labels.get("exported_pod"):  # Prometheus renamed the series' own labels: the target has them too
        return labels.get("exported_namespace", ""), labels["exported_pod"], labels.get("exported_container", "")
    if labels.get("pod_name"):  # Arena's gpu-exporter; dcgm-exporter with --use-old-namespace
        return (_label(labels, "namespace_name", "pod_namespace"), labels["pod_name"],
                _label(labels, "container_name", "pod_container_name"))
    ns, pod = labels.get("namespace", ""), labels.get("pod", "")
    if not pod or (ns, pod) in exporters:
        return "", "", ""
    return ns, pod, labels.get("container", "")


def _gpu_key(labels: dict[str, str]) -> tuple[str, str]:
    node = _label(labels, "Hostname", "node_name", "node", "kubernetes_node")
    return node, _label(labels, "gpu", "minor_number") or _label(labels, "UUID", "uuid")


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
    avg_util: float | None = None  # average utilisation over --idle-for, when the pod held it all along
    idle: bool | None = None  # allocated and averaging under --idle-below; None: not asked or not known

    @property
    def device_order(self) -> tuple[int, str]:
        return (int(self.device), "") if self.device.isdigit() else (1 << 30, self.device)

    def to_json(self) -> dict[str, Any]:
        # Arena's AdvancedGpuMetric / GpuMetric keys, then the idle keys when the view asked for them
        return {"id": self.device, "uuid": self.uuid, "node": self.node,
                "gpuDutyCycle": self.util, "usedGPUMemory": self.mem_used, "totalGPUMemory": self.mem_total,
                "podNames": [f"{self.namespace}/{self.pod}"] if self.pod else []}

    def idle_json(self) -> dict[str, Any]:
        return {"idle": self.idle, "avgGPUDutyCycle": self.avg_util}


def gpus_from_series(series: list[tuple[dict[str, str], float]],
                     exporters: set[tuple[str, str]] | None = None) -> list[GpuMetric]:
    """Join the GPU series of one query (any of GPU_METRICS) into one GpuMetric per (node, device); a GPU
    whose series name no workload pod (only an exporter's, ``series_pod``) has none."""
    exporters = target_pods(series) if exporters is None else exporters
    gpus: dict[tuple[str, str], GpuMetric] = {}
    for labels, value in series:
        name = labels.get("__name__", "")
        if name not in GPU_METRICS:
            continue
        node, device = _gpu_key(labels)
        g = gpus.setdefault((node, device), GpuMetric(node=node, device=device))
        if not g.pod:
            g.namespace, g.pod, g.container = series_pod(labels, exporters)
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


IdleKey = tuple[str, str, str, str]  # node, device, namespace, pod


def idle_from_series(series: list[tuple[dict[str, str], float]],
                     exporters: set[tuple[str, str]] | None = None) -> dict[IdleKey, float]:
    """The idle query's answer (``metrics.idle_query``: no metric names, one average per series held by the
    same labels for the whole window) -> (node, device, namespace, pod) -> average utilisation; series
    that name no workload pod (free GPUs) are left out."""
    exporters = target_pods(series) if exporters is None else exporters
    out: dict[IdleKey, float] = {}
    for labels, value in series:
        ns, pod, _ = series_pod(labels, exporters)
        if pod:
            node, device = _gpu_key(labels)
            out[(node, device, ns, pod)] = value
    return out


@dataclass(frozen=True)
class IdleSpec:
    """What idle means for a view: an average under ``below`` percent over the last ``seconds``."""

    below: float = 5.0
    seconds: int = 1800

    @property
    def window(self) -> str:
        return fmt_window(self.seconds)

    def text(self) -> str:
        return f"under {self.below:g}% for {self.window}+"


def fmt_window(seconds: int) -> str:
    """Whole seconds as a Go duration: 1800 -> ``30m``, 5400 -> ``1h30m``, 45 -> ``45s``."""
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((h, "h"), (m, "m"), (s, "s")) if n) or "0s"


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
    idle_spec: IdleSpec | None = None  # what the view asked (None: no idle information wanted)
    idle_avgs: dict[IdleKey, float] | None = None  # the idle query's answer (None: not asked or not answered)
    idle_for: dict[IdleKey, float] | None = None  # seconds each GPU has been idle (metrics.idle_for_query)
    _by_pod: dict[tuple[str, str], list[GpuMetric]] | None = None
    _by_node: dict[str, list[GpuMetric]] | None = None
    _idle_by_pod: dict[tuple[str, str], list[tuple[str, str, float]]] | None = None

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


    @property
    def idle_known(self) -> bool:
        return self.idle_spec is not None and self.idle_avgs is not None

    def apply_idle(self) -> None:
        """Mark each GPU with its average over the window and whether it is idle (allocated, the same pod
        all the window, under the threshold)."""
        if not self.idle_known or self.gpus is None:
            return
        for g in self.gpus:
            g.avg_util = self.idle_avgs.get((g.node, g.device, g.namespace, g.pod)) if g.pod else None
            g.idle = bool(g.pod) and g.avg_util is not None and g.avg_util < self.idle_spec.below

    def keep_holders(self, holders: dict[str, set[tuple[str, str]]]) -> None:
        """``top node``: a GPU serves a pod only if the API has that pod bound to the GPU's node holding GPUs
        (``holders``: node -> (namespace, pod)); any other pod a series names is an exporter's (or gone)."""
        if self.gpus is None:
            return
        for g in self.gpus:
            if g.pod and (g.namespace, g.pod) not in holders.get(g.node, ()):
                g.namespace = g.pod = g.container = ""
                g.avg_util = None
                g.idle = False if self.idle_known else None
        self._by_pod = self._by_node = None

    def pod_idle_for(self, namespace: str, pod: str) -> float | None:
        """How long ``pod`` has had all its GPUs idle: the shortest idle time of its GPUs (None: not known,
        or no series names the pod)."""
        if self.idle_for is None:
            return None
        times = [s for (_, _, ns, p), s in self.idle_for.items() if (ns, p) == (namespace, pod)]
        return min(times) if times else None

    def pod_idle(self, namespace: str, pod: str) -> list[tuple[str, str, float]]:
        """(node, device, average) of the GPUs ``pod`` held idle over the window (from the idle query alone:
        ``list --idle``, which reads no current GPU series)."""
        if not self.idle_known:
            return []
        if self._idle_by_pod is None:
            self._idle_by_pod = {}
            for (node, device, ns, p), avg in self.idle_avgs.items():
                if avg < self.idle_spec.below:
                    self._idle_by_pod.setdefault((ns, p), []).append((node, device, avg))
        return self._idle_by_pod.get((namespace, pod), [])


NO_METRICS = Metrics()


def node_holders(nodes: list[NodeView]) -> dict[str, set[tuple[str, str]]]:
    """node -> (namespace, pod) of the pods the API has bound to it holding GPUs."""
    return {n.name: {(p["namespace"], p["name"]) for p in n.gpu_pods} for n in nodes}


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


def job_idle_gpus(m: Metrics, v: JobView) -> int | None:
    """How many of the job's GPUs are idle (None: no idle information): from the GPUs of the view where the
    view read them (``top``), else from the idle query alone (``list --idle``)."""
    if not m.idle_known:
        return None
    if m.gpus is not None:
        return sum(1 for g in job_gpus(m, v) or [] if g.idle)
    return sum(len(m.pod_idle(v.namespace, i.name)) for i in v.instances)


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


def fmt_count(n: int | None) -> str:
    return NA if n is None else str(n)


def idle_marker(g: GpuMetric) -> str:
    """The IDLE column of a GPU row: ``IDLE`` for an idle GPU, empty otherwise."""
    return "IDLE" if g.idle else ""


def idle_summary(spec: IdleSpec, held: list[tuple[str, str, int, int]]) -> str:
    """The summary lines of the idle GPUs: ``held`` is (job, user, allocated, idle) of each holder.

    ``Idle/Allocated GPUs (under 5% for 30m+): 2/5``, then, when some are idle, ``by job:`` and ``by user:``
    lines (most idle first, then by name)."""
    allocated, idle = sum(a for _, _, a, _ in held), sum(i for _, _, _, i in held)
    lines = [f"Idle/Allocated GPUs ({spec.text()}): {idle}/{allocated}"]
    if idle:
        for what, index in (("job", 0), ("user", 1)):
            counts: dict[str, int] = {}
            for row in held:
                if row[3]:
                    key = row[index] or "<unknown>"
                    counts[key] = counts.get(key, 0) + row[3]
            lines.append(f"  by {what}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items(),
                                                                                  key=lambda kv: (-kv[1], kv[0]))))
    return "\n".join(lines)


def jobs_idle_summary(m: Metrics, views: list[JobView], *, all_namespaces: bool) -> str | None:
    """``top job``'s idle summary (None without idle information): the jobs' allocated GPUs are those whose
    series name the jobs' pods."""
    if not m.idle_known or m.gpus is None:
        return None
    held = []
    for v in views:
        gpus = job_gpus(m, v) or []
        if gpus:
            name = v.name if v.family is Family.TRAINING else f"{v.trainer}/{v.name}"
            held.append((f"{v.namespace}/{name}" if all_namespaces else name, v.user, len(gpus),
                         sum(1 for g in gpus if g.idle)))
    return idle_summary(m.idle_spec, held)


def nodes_idle_summary(m: Metrics, nodes: list[NodeView], pods: list[dict]) -> str | None:
    """``top node``'s idle summary: the GPUs of these nodes that serve a pod (after ``keep_holders``), by the
    pod's job (``NAMESPACE/JOB``; a pod of no job by itself) and its user (Arena's annotation on the pod)."""
    from .jobs import USER_NAME_ANNOTATION, pod_job_name

    if not m.idle_known or m.gpus is None:
        return None
    by_key = {((p.get("metadata") or {}).get("namespace", ""), (p.get("metadata") or {}).get("name", "")): p
              for p in pods}
    names = {n.name for n in nodes}
    held: dict[tuple[str, str], list[int]] = {}
    for g in m.gpus:
        if g.node not in names or not g.pod:
            continue
        p = by_key.get((g.namespace, g.pod)) or {}
        meta = p.get("metadata") or {}
        job = pod_job_name(p)
        owner = f"{g.namespace}/{job}" if job else f"{g.namespace}/{g.pod} (pod)"
        user = (meta.get("annotations") or {}).get(USER_NAME_ANNOTATION, "")
        row = held.setdefault((owner, user), [0, 0])
        row[0] += 1
        row[1] += 1 if g.idle else 0
    return idle_summary(m.idle_spec, [(j, u, a, i) for (j, u), (a, i) in held.items()])


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


def node_idle_gpus(m: Metrics, n: NodeView) -> int | None:
    gpus = m.node_gpus(n.name)
    return None if gpus is None or not m.idle_known else sum(1 for g in gpus if g.idle)


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
            rows.append([*cells, NA, NA, NA, *([""] if m.idle_known else [])])
            continue
        for k, g in enumerate(gpus):
            rows.append([*(cells if k == 0 else [""] * len(cells)), g.device, fmt_util(g.util),
                         fmt_gpu_mem(g.mem_used, g.mem_total), *([idle_marker(g)] if m.idle_known else [])])
    return rows


# ---- JSON ------------------------------------------------------------------------------------------------
def add_job_json(m: Metrics, v: JobView, data: dict[str, Any]) -> dict[str, Any]:
    """A job's JSON with its metrics: the job's GPU summary and usage, and each instance's ``gpuMetrics``
    (device index -> Arena's GpuMetric keys) and usage. Values are None where metrics are missing, except
    ``gpuMetrics``, which is ``{}`` then, as Arena's map is (pkg/training/get_advanced.go ``BuildJobInfo``)."""
    data.update(summarize(job_gpus(m, v)).to_json())
    data.update(usage_json(job_usage(m, v)))
    if m.idle_spec is not None:  # top's idle keys: None when Prometheus did not answer
        data["idleGPUs"] = job_idle_gpus(m, v)
    for inst in data.get("instances") or []:
        gpus = m.pod_gpus(v.namespace, inst.get("name", ""))
        inst["gpuMetrics"] = {} if gpus is None else {
            g.device: {"gpuDutyCycle": g.util, "usedGPUMemory": g.mem_used, "totalGPUMemory": g.mem_total,
                       **(g.idle_json() if m.idle_spec is not None else {})}
            for g in gpus}
        inst.update(usage_json(m.pod_usage(v.namespace, inst.get("name", ""))))
    return data


def add_node_json(m: Metrics, n: NodeView, pods_on: list[tuple[str, str]], data: dict[str, Any]) -> dict[str, Any]:
    gpus = m.node_gpus(n.name)
    data.update(summarize(gpus).to_json())
    data.update(usage_json(m.node_usage(n.name, pods_on)))
    idle = m.idle_spec is not None
    if idle:
        data["idleGPUs"] = None if gpus is None or not m.idle_known else sum(1 for g in gpus if g.idle)
    data["gpuMetrics"] = None if gpus is None else [{**g.to_json(), **(g.idle_json() if idle else {})} for g in gpus]
    return data
