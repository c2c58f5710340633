"""A real Prometheus (Debian's 2.42, ``scripts/install-prometheus.sh``) scraping an exporter simulator.

The simulator is a small HTTP server that serves, in Prometheus' text exposition format, what the test
sets for the simulated pods and nodes:

- ``/dcgm``: NVIDIA dcgm-exporter's series ``DCGM_FI_DEV_GPU_UTIL``, ``DCGM_FI_DEV_FB_FREE`` and
  ``DCGM_FI_DEV_FB_USED`` (MiB) as release 4.4.2-4.7.0 prints them. No GPU here, so no dcgm-exporter: what
  is served is a real ``/metrics`` capture of that release, ``tests/data/dcgm-exporter/metrics-4.4.2-4.7.0.txt``,
  read at run time as a template. It comes from kOps' AI-conformance run on an L4 node, scraping the exporter
  of GPU operator v25.10.1, whose chart pins ``nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.7.0-distroless``
  (cncf/k8s-ai-conformance commit 83cdb76,
  ``v1.35/kops/tests/TestObservability_AcceleratorMetrics_ViaDCGM/output.md``; the whole chain of sources is in
  ``tests/data/dcgm-exporter/PROVENANCE.md``). Its ``# HELP``/``# TYPE`` lines are served verbatim (the rows
  of NVIDIA/dcgm-exporter tag 4.4.2-4.7.0, commit 54267f29ee80, ``etc/dcp-metrics-included.csv``, the file the
  operator sets in ``DCGM_EXPORTER_COLLECTORS``; ``etc/default-counters.csv`` has the same rows), and so are
  its label names, order and spelling (``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``,
  ``Hostname``, ``DCGM_FI_DRIVER_VERSION``). Only the values and the per-GPU labels are the simulated state's:
  ``gpu`` the device index, ``UUID``, ``pci_bus_id`` (the captured bus number plus the index), ``device``
  ``nvidiaN``, ``modelName``, ``Hostname`` the node; the driver version stays the captured one. Values print
  as the release prints DCGM's int64 fields (``%d``; a fractional simulated value as its float fields,
  ``%f``). The captured GPU ran no pod, so a busy GPU's workload labels follow the release's code:
  ``internal/pkg/transformation/kubernetes.go`` ``PodMapper.Process`` adds ``pod``/``namespace``/``container``
  and ``pod_uid`` (empty without ``--kubernetes-enable-pod-uid``) to a GPU the kubelet maps to a pod, nothing
  to a free GPU, and ``internal/pkg/rendermetrics/render_metrics.go`` prints them after the captured labels in
  key order (``container``, ``namespace``, ``pod``, ``pod_uid``; Prometheus drops the empty one). The scrape
  job carries the target labels the GPU operator's ServiceMonitor scrape gives (job
  ``nvidia-dcgm-exporter``; ``namespace``/``pod``/``container`` of the exporter's own pod, ``service``,
  ``endpoint``; ``honorLabels`` false, the operator's default): Prometheus renames a busy GPU's own to
  ``exported_namespace``/``exported_pod``/``exported_container``, and a free GPU's series carry the
  exporter's pod only. The targets come from a file (``file_sd_configs``): one default exporter for every
  node, and, as the operator's DaemonSet runs one per node, an exporter pod of its own for a node a test
  gives one (``PrometheusServer.add_node_exporter``: its target passes ``?node=NAME``);
- ``/gpu-exporter``: Arena's older names (``nvidia_gpu_duty_cycle``, ``nvidia_gpu_memory_used_bytes``,
  ``nvidia_gpu_memory_total_bytes``; labels ``minor_number``, ``uuid``, ``node_name``, ``namespace_name``,
  ``pod_name``, ``container_name``), as kubeflow/arena's gpu-exporter did;
- ``/cadvisor``: the kubelet's cAdvisor series ``container_cpu_usage_seconds_total`` (a counter growing at
  the rate the test sets, each sample with its own timestamp so that the rate is exact) and
  ``container_memory_working_set_bytes`` (labels ``namespace``, ``pod``, ``container``, ``image``, ``id``),
  plus the pause container (``container="POD"``) and pod-level cgroup (``container=""``, ``image=""``)
  series that queries must leave out.

Network: where the machine allows it (root, ``ip netns``), Prometheus runs in a network namespace of its
own with a veth link to the host (a private /30), listening on 0.0.0.0 inside that namespace only. Its
address on the link is not loopback, so a Service + Endpoints can point at it and the API server's
service proxy reaches it (the 1.20 API server refuses Endpoints on 127.0.0.0/8). Otherwise it listens on
127.0.0.1 of the host, and only ``--prometheus-url`` can reach it (``proxy_ok`` is False).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRAPE = 0.5  # seconds
EXPORTER_NAMESPACE, EXPORTER_POD = "gpu-operator", "nvidia-dcgm-exporter-5xq8d"
# what a ServiceMonitor scrape of the GPU operator's dcgm-exporter adds to every series (prometheus-operator's
# endpoint relabelings: the pod's namespace, name and container, the Service, the endpoint's port name)
EXPORTER_TARGET_LABELS = {"namespace": EXPORTER_NAMESPACE, "pod": EXPORTER_POD, "container": "nvidia-dcgm-exporter",
                          "service": "nvidia-dcgm-exporter", "endpoint": "gpu-metrics"}
# the dcgm-exporter release /dcgm serves, and the real /metrics capture of it that is served
# (tests/data/dcgm-exporter/PROVENANCE.md)
DCGM_RELEASE = "4.4.2-4.7.0"
DCGM_CAPTURE = REPO / "tests" / "data" / "dcgm-exporter" / f"metrics-{DCGM_RELEASE}.txt"
DCGM_FIELDS = {"DCGM_FI_DEV_GPU_UTIL": "util", "DCGM_FI_DEV_FB_FREE": "free_mib", "DCGM_FI_DEV_FB_USED": "used_mib"}


def prometheus_binary() -> str:
    proc = subprocess.run(["bash", str(REPO / "scripts" / "install-prometheus.sh")], stdout=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError("scripts/install-prometheus.sh failed: no Prometheus for the tests")
    return proc.stdout.strip().splitlines()[-1]


@dataclass
class Gpu:
    node: str
    device: int
    util: float
    used_mib: float
    free_mib: float
    namespace: str = ""
    pod: str = ""  # empty: a free GPU (its series carry no pod of their own)
    container: str = ""
    legacy: bool = False  # served with Arena's gpu-exporter names instead of DCGM's
    model: str = "NVIDIA A100-SXM4-80GB"  # DCGM's modelName (the tests' 81920 MiB cards)

    @property
    def uuid(self) -> str:
        """A GPU UUID as NVML prints it (``GPU-`` and a UUID), the same for the same node and device."""
        return f"GPU-{uuid.uuid5(uuid.NAMESPACE_URL, f'arena-helm-sim/{self.node}/{self.device}')}"


@dataclass
class PodUsage:
    namespace: str
    pod: str
    cpu: float  # cores (the counter's rate)
    memory: float  # bytes
    container: str = "main"
    t0: float = 0.0


def _labels(**kv) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in kv.items()) + "}"


@dataclass(frozen=True)
class DcgmFamily:
    """One series family of the dcgm-exporter capture: its ``# HELP``/``# TYPE`` lines as captured, and its
    sample's labels (name, captured value) in the captured order."""

    name: str
    head: tuple[str, ...]
    labels: tuple[tuple[str, str], ...]


_SAMPLE = re.compile(r"(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)\{(?P<labels>.*)\} (?P<value>\S+)")
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="([^"\\]*)"(?:,|$)')
# the labels dcgm-exporter gives each GPU (render_metrics.go); every other captured label keeps its value
_PER_GPU = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")


def dcgm_capture(path: Path = DCGM_CAPTURE) -> tuple[DcgmFamily, ...]:
    """The families of the capture at ``path``, in its order: each a ``# HELP`` and a ``# TYPE`` line and
    one sample line. Raises ValueError if the capture is not that, or lacks a family or a per-GPU label."""
    heads: dict[str, list[str]] = {}
    labels: dict[str, tuple[tuple[str, str], ...]] = {}
    for line in path.read_text().splitlines():
        if line.startswith(("# HELP ", "# TYPE ")):
            heads.setdefault(line.split(" ", 3)[2], []).append(line)
            continue
        m = _SAMPLE.fullmatch(line)
        pairs = tuple(_LABEL.findall(m["labels"])) if m else ()
        if not m or m["name"] in labels or ",".join(f'{k}="{v}"' for k, v in pairs) != m["labels"]:
            raise ValueError(f"{path}: not one sample line of a family: {line!r}")
        labels[m["name"]] = pairs
    families = tuple(DcgmFamily(name, tuple(heads.get(name, ())), pairs) for name, pairs in labels.items())
    for f in families:
        names = [k for k, _ in f.labels]
        if [h.split(" ", 2)[1] for h in f.head] != ["HELP", "TYPE"] or any(k not in names for k in _PER_GPU):
            raise ValueError(f"{path}: {f.name} lacks its HELP/TYPE lines or a per-GPU label: {f}")
    if set(heads) != set(labels) or {f.name for f in families} != set(DCGM_FIELDS):
        raise ValueError(f"{path}: families {sorted(heads)} / {sorted(labels)}, not {sorted(DCGM_FIELDS)}")
    return families


def _pci_bus_id(captured: str, device: int) -> str:
    """Device ``device``'s PCI bus id: the captured one (GPU 0's) with ``device`` added to its bus number."""
    domain, bus, rest = captured.split(":", 2)
    return f"{domain}:{(int(bus, 16) + device) % 256:02X}:{rest}"


def _dcgm_value(v: float) -> str:
    """As dcgm-exporter 4.4.2-4.7.0 prints a value (``internal/pkg/collector/gpu_collector.go`` ``toString``):
    DCGM's int64 fields (these three) ``%d``, its float fields ``%f``."""
    return f"{int(v)}" if float(v).is_integer() else f"{v:f}"


class ExporterSim:
    def __init__(self, host: str):
        self.lock = threading.Lock()
        self.gpus: dict[tuple[str, int], Gpu] = {}
        self.pods: dict[tuple[str, str], PodUsage] = {}
        self.node_exporters: set[str] = set()  # nodes served by an exporter target of their own
        self.scrapes: dict[str, int] = {}
        self.dcgm_families = dcgm_capture()  # the capture /dcgm serves, read once per simulator
        sim = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                path, _, query = self.path.partition("?")
                body = sim.render(path, (urllib.parse.parse_qs(query).get("node") or [None])[0])
                if body is None:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a scrape cut short (Prometheus stopping)
                pass

        self.server = Server((host, 0), Handler)
        self.server.daemon_threads = True
        self.address = f"{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- what the tests set --------------------------------------------------------------------------
    def set_gpu(self, gpu: Gpu) -> None:
        with self.lock:
            self.gpus[(gpu.node, gpu.device)] = gpu

    def set_pod(self, usage: PodUsage) -> None:
        with self.lock:
            old = self.pods.get((usage.namespace, usage.pod))
            usage.t0 = old.t0 if old else time.time() - 60
            self.pods[(usage.namespace, usage.pod)] = usage

    # ---- exposition ----------------------------------------------------------------------------------
    def render(self, path: str, node: str | None = None) -> str | None:
        with self.lock:
            self.scrapes[path] = self.scrapes.get(path, 0) + 1
            if path == "/dcgm":
                return self._dcgm(node)
            if path == "/gpu-exporter":
                return self._legacy()
            if path == "/cadvisor":
                return self._cadvisor()
        return None

    def _dcgm(self, node: str | None) -> str:
        """The series of ``node``'s GPUs (its own exporter), or of the nodes that have none (the default), laid
        out as the capture: its HELP/TYPE lines, its labels in its order with the GPU's own substituted, then a
        busy GPU's workload labels (``render_metrics.go``: ``Labels``, then ``Attributes`` in key order)."""
        out = []
        for fam in self.dcgm_families:
            out += fam.head
            for g in self.gpus.values():
                if g.legacy or (g.node != node if node else g.node in self.node_exporters):
                    continue
                own = {"gpu": str(g.device), "UUID": g.uuid, "device": f"nvidia{g.device}", "modelName": g.model,
                       "Hostname": g.node}
                labels = [(k, _pci_bus_id(v, g.device) if k == "pci_bus_id" else own.get(k, v)) for k, v in fam.labels]
                if g.pod:  # kubernetes.go PodMapper.Process; pod_uid is empty without --kubernetes-enable-pod-uid
                    labels += [("container", g.container), ("namespace", g.namespace), ("pod", g.pod), ("pod_uid", "")]
                body = ",".join(f'{k}="{v}"' for k, v in labels)
                out.append(f"{fam.name}{{{body}}} {_dcgm_value(getattr(g, DCGM_FIELDS[fam.name]))}")
        return "\n".join(out) + "\n"

    def _legacy(self) -> str:
        out = []
        for name, fn in (("nvidia_gpu_duty_cycle", lambda g: g.util),
                         ("nvidia_gpu_memory_used_bytes", lambda g: g.used_mib * 2**20),
                         ("nvidia_gpu_memory_total_bytes", lambda g: (g.used_mib + g.free_mib) * 2**20)):
            out.append(f"# TYPE {name} gauge")
            for g in self.gpus.values():
                if not g.legacy:
                    continue
                labels = dict(minor_number=g.device, uuid=g.uuid, name="Tesla V100-SXM2-16GB", node_name=g.node,
                              namespace_name=g.namespace, pod_name=g.pod, container_name=g.container)
                out.append(f"{name}{_labels(**labels)} {fn(g):.0f}")
        return "\n".join(out) + "\n"

    def _cadvisor(self) -> str:
        now_ms = int(time.time() * 1000)
        cpu = ["# TYPE container_cpu_usage_seconds_total counter"]
        mem = ["# TYPE container_memory_working_set_bytes gauge"]
        for u in self.pods.values():
            seconds = now_ms / 1000 - u.t0
            base = dict(namespace=u.namespace, pod=u.pod)
            cid = f"/kubepods/pod-{u.pod}"
            series = (
                (dict(base, container=u.container, image="trainer:1", id=f"{cid}/c1", cpu="total"), u.cpu, u.memory),
                (dict(base, container="POD", image="pause:3.2", id=f"{cid}/pause", cpu="total"), 0.001, 700000),
                (dict(base, container="", image="", id=cid, cpu="total"), u.cpu + 0.001, u.memory + 700000),
            )
            for labels, rate, working_set in series:
                cpu.append(f"container_cpu_usage_seconds_total{_labels(**labels)} {rate * seconds:.6f} {now_ms}")
                mem.append(f"container_memory_working_set_bytes{_labels(**labels)} {working_set:.0f} {now_ms}")
        return "\n".join(cpu + mem) + "\n"


class Netns:
    """A network namespace joined to the host by a veth pair on a private /30 (needs root)."""

    def __init__(self):
        n = os.getpid() % 16000
        self.name = f"arenah-prom-{n}"
        self.host_if, self.ns_if = f"ahp{n}h", f"ahp{n}n"
        self.host_ip = f"10.213.{n // 64}.{(n % 64) * 4 + 1}"
        self.ns_ip = f"10.213.{n // 64}.{(n % 64) * 4 + 2}"
        self.up = False

    def _ip(self, *args: str, ns: bool = False) -> None:
        argv = ["ip", "netns", "exec", self.name, "ip", *args] if ns else ["ip", *args]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def create(self) -> bool:
        if os.geteuid() != 0 or not shutil.which("ip"):
            return False
        self.delete()  # a leftover of an earlier run with the same pid
        try:
            self._ip("netns", "add", self.name)
            self.up = True
            self._ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
            self._ip("link", "set", self.ns_if, "netns", self.name)
            self._ip("addr", "add", f"{self.host_ip}/30", "dev", self.host_if)
            self._ip("link", "set", self.host_if, "up")
            self._ip("addr", "add", f"{self.ns_ip}/30", "dev", self.ns_if, ns=True)
            self._ip("link", "set", self.ns_if, "up", ns=True)
            self._ip("link", "set", "lo", "up", ns=True)
        except (subprocess.CalledProcessError, OSError):
            self.delete()
            return False
        return True

    def exec_prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]

    def delete(self) -> None:
        subprocess.run(["ip", "link", "del", self.host_if], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", self.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.up = False


class PrometheusServer:
    """Prometheus + the exporter simulator. ``url`` is where the host reaches it; ``ip``/``port`` are what
    an Endpoints object points at (``proxy_ok``: an address the API server may proxy to)."""

    def __init__(self):
        self.netns = Netns()
        self.proxy_ok = self.netns.create()
        host = self.netns.host_ip if self.proxy_ok else "127.0.0.1"
        self.sim = ExporterSim(host)
        self.workdir = Path(tempfile.mkdtemp(prefix="prometheus-test-"))
        if self.proxy_ok:
            self.ip, self.port, listen, prefix = self.netns.ns_ip, 9090, "0.0.0.0:9090", self.netns.exec_prefix()
        else:
            from kubecluster import free_port

            self.ip, self.port, prefix = "127.0.0.1", free_port(), []
            listen = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.ip}:{self.port}"
        config = {
            "global": {"scrape_interval": f"{int(SCRAPE * 1000)}ms", "scrape_timeout": f"{int(SCRAPE * 1000)}ms",
                       "evaluation_interval": "5s"},
            "scrape_configs": [
                {"job_name": "nvidia-dcgm-exporter", "metrics_path": "/dcgm",
                 "file_sd_configs": [{"files": [str(self.workdir / "dcgm-targets.json")], "refresh_interval": "1s"}]},
                {"job_name": "gpu-exporter", "metrics_path": "/gpu-exporter",
                 "static_configs": [{"targets": [self.sim.address]}]},
                {"job_name": "kubelet-cadvisor", "metrics_path": "/cadvisor", "honor_timestamps": True,
                 "static_configs": [{"targets": [self.sim.address]}]},
            ],
        }
        self._exporter_groups = [{"targets": [self.sim.address], "labels": dict(EXPORTER_TARGET_LABELS)}]
        self._write_targets()
        (self.workdir / "prometheus.yml").write_text(json.dumps(config))
        self.log = open(self.workdir / "prometheus.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [*prefix, prometheus_binary(), f"--config.file={self.workdir / 'prometheus.yml'}",
             f"--storage.tsdb.path={self.workdir / 'data'}", f"--web.listen-address={listen}",
             "--storage.tsdb.retention.time=1h", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def register_service(self, core, namespace: str) -> str:
        """Prometheus as a cluster has it, in ``namespace`` (made by the caller): a pod with Prometheus' address
        (on no node, so kwok leaves it alone; its status is the one set here), a Service labelled as Arena looks
        for it, and Endpoints naming the pod (the service proxy only proxies to an endpoint address whose
        targetRef is a pod with that IP). ``core``: a CoreV1Api. Returns ``NAMESPACE/NAME:PORT``. Only where
        ``proxy_ok``: the API server refuses loopback Endpoints."""
        assert self.proxy_ok, "no network namespace: the API server cannot proxy to Prometheus"
        name, pod = "prometheus-server", "prometheus-server-0"
        core.create_namespaced_pod(namespace, {
            "metadata": {"name": pod, "labels": {"app": "prometheus"}},
            "spec": {"containers": [{"name": "prometheus", "image": "prom/prometheus:v2.42.0"}]}})
        core.patch_namespaced_pod_status(pod, namespace, {"status": {"phase": "Running", "podIP": self.ip,
                                                                     "podIPs": [{"ip": self.ip}]}})
        core.create_namespaced_service(namespace, {
            "metadata": {"name": name, "labels": {"kubernetes.io/name": "prometheus-server"}},
            "spec": {"ports": [{"name": "web", "port": 9090, "targetPort": self.port}]}})
        core.create_namespaced_endpoints(namespace, {
            "metadata": {"name": name},
            "subsets": [{"addresses": [{"ip": self.ip, "targetRef": {"kind": "Pod", "name": pod,
                                                                     "namespace": namespace}}],
                         "ports": [{"name": "web", "port": self.port}]}]})
        return f"{namespace}/{name}:9090"

    def _write_targets(self) -> None:
        tmp = self.workdir / "dcgm-targets.json.tmp"
        tmp.write_text(json.dumps(self._exporter_groups))
        tmp.replace(self.workdir / "dcgm-targets.json")  # Prometheus' file watcher sees a whole file

    def add_node_exporter(self, node: str) -> str:
        """An exporter pod of its own for ``node`` (a target of its own: ``?node=NODE``, labelled with its own
        pod name, as the DaemonSet's pod on that node); returns the pod's name."""
        pod = f"nvidia-dcgm-exporter-{abs(hash(node)) % 36**5:05d}"
        with self.sim.lock:
            self.sim.node_exporters.add(node)
        self._exporter_groups.append({"targets": [self.sim.address], "labels": {
            **EXPORTER_TARGET_LABELS, "pod": pod, "__param_node": node}})
        self._write_targets()
        return pod

    def _wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited: {(self.workdir / 'prometheus.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus not ready after {timeout}s")

    def query(self, promql: str) -> list[dict]:
        q = urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=5) as resp:
            return json.loads(resp.read())["data"]["result"]

    def wait_for(self, promql: str, expected: dict[tuple, float], key, timeout: float = 30.0) -> None:
        """Poll ``promql`` until every ``key(labels) -> value`` in ``expected`` is there (to 1e-6)."""
        deadline = time.monotonic() + timeout
        got: dict = {}
        while time.monotonic() < deadline:
            got = {key(r["metric"]): float(r["value"][1]) for r in self.query(promql)}
            if all(k in got and abs(got[k] - v) <= 1e-6 * max(1.0, abs(v)) for k, v in expected.items()):
                return
            time.sleep(0.1)
        raise AssertionError(f"Prometheus never had {expected} for {promql}: {got}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.sim.close()
        if self.netns.up:
            self.netns.delete()
        shutil.rmtree(self.workdir, ignore_errors=True)
