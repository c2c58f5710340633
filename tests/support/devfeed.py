"""What the dev cluster (``scripts/dev-cluster.sh``, tests/support/devcluster.py) adds to the test cluster for a
person: Prometheus found as a cluster has it, GPU and CPU figures read from the cluster's own pods, and log lines a
pod asks for. The tests set these figures themselves (tests/support/promsim.py); here the pods say them.

- Prometheus: Debian's, scraping the exporter stand-in (promsim: DCGM's series as dcgm-exporter 4.4.2-4.7.0 prints them,
  the kubelet's cAdvisor series), registered as Arena looks for it: a Service ``monitoring/prometheus-server``
  labelled ``kubernetes.io/name=prometheus-server`` with Endpoints at its address, reached through the API server's
  service proxy (``PrometheusServer.proxy_ok``; where network namespaces are not permitted, ``--prometheus-url`` /
  ``$PROMETHEUS_ADDRESS`` names it instead).
- GPUs: each node's ``nvidia.com/gpu`` devices, handed to the running pods bound to it in the order they were
  created, as many as each container's limit (a kubelet's device manager hands out whole devices; dcgm-exporter
  maps them to the pods through the kubelet's pod-resources API). A device no pod holds is free. A pod's
  annotations say how busy its GPUs are: ``GPU_UTIL`` (percent, default 0: idle) and ``GPU_MEMORY`` (MiB used,
  default 0) of each of its devices, of ``GPU_MEMORY_TOTAL`` MiB.
- CPU and memory of every running container: ``CPU`` (cores, default 0.1) and ``MEMORY`` (MiB, default 256).
- Logs: ``LOG``, lines (``\\n`` apart) the pod's first container prints once it runs (written once, through kwok;
  a pod that finished at once gets them too).

Pods finish, fail, restart or wait as the ``arena-helm.test/*`` annotations of tests/data/kwok/pod-stages.yaml say.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable

from promsim import Gpu, PodUsage

GPU = "nvidia.com/gpu"
PREFIX = "arena-helm.test/"
GPU_UTIL, GPU_MEMORY, CPU, MEMORY, LOG = (f"{PREFIX}{k}" for k in ("gpu-util", "gpu-memory", "cpu", "memory", "log"))
GPU_MEMORY_TOTAL = 81920  # MiB of each device (an 80 GB card)
MIB = 2**20


def _number(annotations: dict, key: str, default: float) -> float:
    try:
        return float(annotations.get(key, default))
    except ValueError:
        return default


def _running(pods: Iterable[dict]) -> list[dict]:
    return sorted((p for p in pods if (p.get("status") or {}).get("phase") == "Running"
                   and not (p.get("metadata") or {}).get("deletionTimestamp")),
                  key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]))


def gpus_of(nodes: dict[str, int], pods: Iterable[dict]) -> list[Gpu]:
    """Every device of ``nodes`` (name -> GPUs): held by a running pod's container, or free. Pure."""
    out: list[Gpu] = []
    running = _running(pods)
    for node, count in sorted(nodes.items()):
        device = 0
        for pod in (p for p in running if (p.get("spec") or {}).get("nodeName") == node):
            meta = pod["metadata"]
            annotations = meta.get("annotations") or {}
            util, used = _number(annotations, GPU_UTIL, 0), _number(annotations, GPU_MEMORY, 0)
            for c in pod["spec"].get("containers") or []:
                wanted = int(((c.get("resources") or {}).get("limits") or {}).get(GPU, 0) or 0)
                for _ in range(wanted):
                    if device < count:
                        out.append(Gpu(node, device, util, used, GPU_MEMORY_TOTAL - used, meta["namespace"],
                                       meta["name"], c["name"]))
                        device += 1
        out += [Gpu(node, d, 0, 0, GPU_MEMORY_TOTAL) for d in range(device, count)]
    return out


def usage_of(pods: Iterable[dict]) -> list[PodUsage]:
    """The CPU and memory every running container uses, as its pod's annotations say. Pure."""
    out = []
    for pod in _running(pods):
        meta = pod["metadata"]
        annotations = meta.get("annotations") or {}
        for c in (pod.get("spec") or {}).get("containers") or []:
            out.append(PodUsage(meta["namespace"], meta["name"], _number(annotations, CPU, 0.1),
                                _number(annotations, MEMORY, 256) * MIB, c["name"]))
    return out


class DevFeed:
    """Keeps the exporter stand-in of ``prometheus`` in step with the pods of ``nodes`` (name -> GPUs) and writes
    the log lines pods ask for, every ``period`` seconds until ``stop``."""

    def __init__(self, cluster, kwok, prometheus, nodes: dict[str, int], period: float = 1.0):
        from kubernetes import client

        self.core = client.CoreV1Api(cluster.api_client())
        self.cluster, self.kwok, self.prometheus, self.nodes, self.period = cluster, kwok, prometheus, nodes, period
        self.logged: set[tuple[str, str]] = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def register_service(self, namespace: str = "monitoring") -> str | None:
        """Prometheus registered as a cluster has it (``PrometheusServer.register_service``): ``NAMESPACE/NAME:PORT``,
        or None where the API server cannot proxy to it."""
        if not self.prometheus.proxy_ok:
            return None
        self.cluster.create_namespace(namespace)
        return self.prometheus.register_service(self.core, namespace)

    def start(self) -> DevFeed:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)

    def sync(self) -> None:
        """One step: the figures of the pods on ``nodes`` now, and their log lines not yet written."""
        listed = json.loads(self.core.list_pod_for_all_namespaces(_preload_content=False).data)["items"]
        pods = [p for p in listed if (p.get("spec") or {}).get("nodeName") in self.nodes]
        sim = self.prometheus.sim
        for gpu in gpus_of(self.nodes, pods):
            sim.set_gpu(gpu)
        for usage in usage_of(pods):
            sim.set_pod(usage)
        for pod in pods:  # once it ran: a pod may finish (exit-code) before a step sees it running
            meta = pod["metadata"]
            if (pod.get("status") or {}).get("phase") not in ("Running", "Succeeded", "Failed"):
                continue
            text = (meta.get("annotations") or {}).get(LOG)
            key = (meta["namespace"], meta["name"])
            if text and key not in self.logged:
                self.kwok.write_log(meta["namespace"], meta["name"], pod["spec"]["containers"][0]["name"],
                                    text.replace("\\n", "\n"))
                self.logged.add(key)

    def _loop(self) -> None:
        while not self.done.wait(self.period):
            try:
                self.sync()
            except Exception as exc:  # noqa: BLE001 - a person's cluster keeps going; the log says why
                print(f"[dev-cluster] the metrics feed: {exc}", flush=True)
