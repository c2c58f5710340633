"""GPU utilisation/memory and CPU/memory usage in get -g, top job and top node, from a REAL Prometheus
(Debian's 2.42) scraping the exporter simulator of ``tests/support/promsim.py`` (no GPUs here), through the
CLI in-process. The series name the pods the real training-operator made for the jobs and kwok runs.

Paths to Prometheus, each taken by at least one test:
- ``--prometheus-url`` (direct HTTP);
- the API server's service proxy, to a Service + Endpoints pointing at Prometheus' address in its own
  network namespace (``promsim.Netns``; the API server refuses loopback Endpoints), the Service named
  by ``--prometheus-service``, by the defaults file, or found by Arena's label ``kubernetes.io/name=prometheus-server``.
  Where network namespaces are not permitted these tests skip and say so.

The metrics do not depend on the helm version: these tests use Helm 3 only.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from helmtools import HELM_VERSIONS, helm_path
from kubernetes import client
from promsim import Gpu, PodUsage
from typer.testing import CliRunner
from waits import wait_for, wait_job_pods

from arena_helm.adapters.metrics import CPU_QUERY, GPU_QUERY, MEM_QUERY
from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
MIB = 2**20
GIB = 2**30
_monitoring = itertools.count()


def norm(text: str) -> str:
    return "\n".join(re.sub(r" +", " ", line).strip() for line in text.splitlines())


@pytest.fixture
def prom_service(prometheus, cluster):
    """Prometheus registered as a cluster has it (``PrometheusServer.register_service``), in a namespace of its
    own, removed after the test."""
    if not prometheus.proxy_ok:
        pytest.skip("network namespaces are not permitted here: the service-proxy path cannot be tested "
                    "(the API server refuses loopback Endpoints)")
    core = client.CoreV1Api(cluster.api_client())
    ns = f"monitoring-{next(_monitoring)}-{os.getpid() % 10000}"
    cluster.create_namespace(ns)
    yield prometheus.register_service(core, ns)
    core.delete_namespaced_service("prometheus-server", ns)  # its Endpoints go with it
    core.delete_namespace(ns)


class Ctx:
    def __init__(self, cluster, namespace):
        self.base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_path(HELM_VERSIONS[0]))]
        self.ns = namespace

    def __call__(self, *args, env=None):
        cmd = list(args)
        if cmd[0] == "submit":
            i = cmd.index("--")
            cmd = cmd[:i] + self.base + ["-n", self.ns] + cmd[i:]
        else:
            cmd = cmd + self.base + ["-n", self.ns]
        return runner.invoke(app, cmd, env={"PROMETHEUS_ADDRESS": None, "ARENA_HELM_CONFIG": None, **(env or {})})


def ok(res):
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture
def jobs(cluster, kubelet, namespace, prometheus):
    """Two running jobs on two GPU nodes, with the metrics the simulated exporters serve for them:

    - ``train`` (TFJob, 2 workers x 2 GPUs, 4 CPUs and 8Gi each) on node ``m-NS`` (4 A100 80GB), DCGM series;
    - ``old`` (TFJob, one chief with 1 GPU) on node ``l-NS`` (1 V100 16GB), Arena's gpu-exporter series.

    The real operator makes the pods and the real scheduler places them: ``old`` is submitted once
    ``train`` holds all of ``m-NS``'s GPUs, so its only place is ``l-NS``.
    """
    ns = namespace
    ctx = Ctx(cluster, ns)
    m_node, l_node = f"m-{ns}", f"l-{ns}"
    kubelet.add_node(m_node, pool=ns, gpus=4, cpu="64", memory="256Gi", labels={"node-role.kubernetes.io/gpu": ""})
    kubelet.add_node(l_node, pool=ns, gpus=1, cpu="16", memory="64Gi")
    try:
        core = client.CoreV1Api(cluster.api_client())
        ok(ctx("submit", "tf", "--name", "train", "--image", "tf:2", "--workers", "2", "--gpus", "2", "--cpu", "4",
               "--memory", "8Gi", "--", "python", "train.py"))
        train = wait_job_pods(core, ns, "train", ["train-worker-0", "train-worker-1"])
        for pod in train:
            kubelet.run_pod(ns, pod, m_node)
        ok(ctx("submit", "tf", "--name", "old", "--image", "tf:2", "--gpus", "1", "--", "python", "old.py"))
        (old,) = wait_job_pods(core, ns, "old", ["old-chief-0"])
        kubelet.run_pod(ns, old, l_node)
        for job in ("train", "old"):  # the operator's own Running condition
            wait_for(lambda job=job: json.loads(ok(ctx("get", job, "-o", "json")).stdout)["status"] == "RUNNING",
                     f"{job} RUNNING")
        sim = prometheus.sim
        total = 81920  # MiB, an A100 80GB
        for dev, pod, util, used in ((0, "train-worker-0", 80, 30720), (1, "train-worker-0", 61, 10240),
                                     (2, "train-worker-1", 25, 2048), (3, "train-worker-1", 12, 0)):
            sim.set_gpu(Gpu(m_node, dev, util, used, total - used, ns, pod, "tensorflow"))
        sim.set_gpu(Gpu(l_node, 0, 42, 4096, 16384 - 4096, ns, old, "tensorflow", legacy=True))
        sim.set_pod(PodUsage(ns, "train-worker-0", 3.5, 6 * GIB, "tensorflow"))
        sim.set_pod(PodUsage(ns, "train-worker-1", 0.25, 1536 * MIB, "tensorflow"))
        sim.set_pod(PodUsage(ns, old, 1.0, 2 * GIB, "tensorflow"))
        # wait until Prometheus has every sample (and two CPU samples for the rate)
        by_pod = lambda m: (m.get("namespace"), m.get("pod"))  # noqa: E731
        prometheus.wait_for(CPU_QUERY, {(ns, "train-worker-0"): 3.5, (ns, "train-worker-1"): 0.25, (ns, old): 1.0},
                            by_pod)
        prometheus.wait_for(MEM_QUERY, {(ns, "train-worker-0"): 6 * GIB, (ns, old): 2 * GIB}, by_pod)
        prometheus.wait_for(GPU_QUERY, {("DCGM_FI_DEV_GPU_UTIL", m_node, "3"): 12,
                                        ("nvidia_gpu_duty_cycle", l_node, "0"): 42},
                            lambda m: (m["__name__"], m.get("Hostname") or m.get("node_name"),
                                       m.get("gpu") or m.get("minor_number")))
        yield ctx, m_node, l_node
    finally:
        for node in (m_node, l_node):
            kubelet.remove_node(node)


def test_top_job_shows_gpu_utilisation_memory_and_usage_from_prometheus(jobs, prometheus, namespace):
    ctx, m_node, l_node = jobs
    res = ok(ctx("top", "job", "--prometheus-url", prometheus.url))
    assert res.stderr == ""
    assert norm(res.stdout) == norm(  # no series is 30m old here: no GPU is idle for 30m+
        "NAME STATUS TRAINER GPU(Requested) GPU(Allocated) GPU(Idle) GPU(Util) GPU_MEMORY(Used/Total) CPU(Requested) "
        "CPU(Usage) MEMORY(Requested) MEMORY(Usage) NODE\n"
        f"train RUNNING TFJOB 4 4 0 44.5% 43008.0/327680.0(MiB) 8 3750m 16Gi 7.5Gi {m_node}\n"
        f"old RUNNING TFJOB 1 1 0 42.0% 4096.0/16384.0(MiB) 0 1 0 2Gi {l_node}\n"
        "\n"
        "Total Allocated/Requested GPUs of Training Jobs: 5/5\n"
        "Idle/Allocated GPUs (under 5% for 30m+): 0/5\n")
    data = json.loads(ok(ctx("top", "job", "-o", "json", "--prometheus-url", prometheus.url)).stdout)
    train = next(j for j in data if j["name"] == "train")
    assert (train["gpuDutyCycle"], train["usedGPUMemory"], train["totalGPUMemory"], train["usedCPU"],
            train["usedMemory"], train["idleGPUs"]) == (44.5, 43008 * MIB, 4 * 81920 * MIB, "3750m", "7.5Gi", 0)
    w0 = next(i for i in train["instances"] if i["name"] == "train-worker-0")
    assert w0["gpuMetrics"] == {"0": {"gpuDutyCycle": 80.0, "usedGPUMemory": 30720 * MIB,
                                      "totalGPUMemory": 81920 * MIB, "idle": False, "avgGPUDutyCycle": None},
                                "1": {"gpuDutyCycle": 61.0, "usedGPUMemory": 10240 * MIB,
                                      "totalGPUMemory": 81920 * MIB, "idle": False, "avgGPUDutyCycle": None}}


def test_top_job_name_has_a_row_per_instance_and_gpu_through_the_service_proxy(jobs, prom_service, namespace):
    ctx, m_node, _ = jobs
    res = ok(ctx("top", "job", "train"))  # the Service is found by Arena's label
    assert res.stderr == ""
    lines = res.stdout.splitlines()
    assert lines[2].startswith(" ") and lines[4].startswith(" "), res.stdout  # continuation rows: blank cells
    assert norm(res.stdout) == norm(
        "INSTANCE STATUS TYPE IS_CHIEF GPU(Requested) NODE NODE_IP CPU(Usage) MEMORY(Usage) GPU(DeviceIndex) "
        "GPU(DutyCycle) GPU_MEMORY(Used/Total) IDLE\n"
        f"train-worker-0 Running worker true 2 {m_node} 127.0.0.1 3500m 6Gi 0 80.0% 30720.0/81920.0(MiB)\n"
        "1 61.0% 10240.0/81920.0(MiB)\n"
        f"train-worker-1 Running worker false 2 {m_node} 127.0.0.1 250m 1.5Gi 2 25.0% 2048.0/81920.0(MiB)\n"
        "3 12.0% 0.0/81920.0(MiB)\n")


def test_get_gpus_ends_with_allocated_requested(jobs, prom_service, namespace):
    ctx, m_node, l_node = jobs
    res = ok(ctx("get", "train", "-g", "--prometheus-service", prom_service))
    assert res.stderr == ""
    header, table = res.stdout.split("\n\n", 1)
    assert "Name:        train\nStatus:      RUNNING" in header and "GPUs:        4 requested, 4 allocated" in header
    assert norm(table) == norm(
        "INSTANCE STATUS GPU(Requested) NODE GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total)\n"
        f"train-worker-0 Running 2 {m_node} 0 80.0% 30720.0/81920.0(MiB)\n"
        "1 61.0% 10240.0/81920.0(MiB)\n"
        f"train-worker-1 Running 2 {m_node} 2 25.0% 2048.0/81920.0(MiB)\n"
        "3 12.0% 0.0/81920.0(MiB)\n"
        "\n"
        "Allocated/Requested GPUs of Job: 4/4\n")
    legacy = ok(ctx("get", "old", "--gpus", "--prometheus-service", prom_service)).stdout
    assert norm(legacy.split("\n\n", 1)[1]) == norm(
        "INSTANCE STATUS GPU(Requested) NODE GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total)\n"
        f"old-chief-0 Running 1 {l_node} 0 42.0% 4096.0/16384.0(MiB)\n"
        "\n"
        "Allocated/Requested GPUs of Job: 1/1\n")


def test_top_node_details_per_gpu_with_the_service_from_the_defaults_file(jobs, prom_service, namespace, tmp_path):
    ctx, m_node, l_node = jobs
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"prometheus:\n  service: {prom_service}\n  timeout: 5\n")
    res = ok(ctx("top", "node", m_node, l_node, "-d", env={"ARENA_HELM_CONFIG": str(cfg)}))
    assert res.stderr == ""
    ns = namespace
    assert norm(res.stdout) == norm(
        "NAME IPADDRESS ROLE STATUS GPU(Total) GPU(Allocated) GPU(Idle) GPU(Util) GPU_MEMORY(Used/Total) "
        "CPU(Requested/Allocatable) CPU(Usage) MEMORY(Requested/Allocatable) MEMORY(Usage)\n"
        f"{l_node} 127.0.0.1 <none> Ready 1 1 0 42.0% 4096.0/16384.0(MiB) 0/16 1 0/64Gi 2Gi\n"
        f"{m_node} 127.0.0.1 gpu Ready 4 4 0 44.5% 43008.0/327680.0(MiB) 8/64 3750m 16Gi/256Gi 7.5Gi\n"
        "\n"
        f"{l_node} GPU pods:\n"
        "NAMESPACE POD GPU\n"
        f"{ns} old-chief-0 1\n"
        "\n"
        f"{l_node} GPUs:\n"
        "GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total) POD IDLE\n"
        f"0 42.0% 4096.0/16384.0(MiB) {ns}/old-chief-0\n"
        "\n"
        f"{m_node} GPU pods:\n"
        "NAMESPACE POD GPU\n"
        f"{ns} train-worker-0 2\n"
        f"{ns} train-worker-1 2\n"
        "\n"
        f"{m_node} GPUs:\n"
        "GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total) POD IDLE\n"
        f"0 80.0% 30720.0/81920.0(MiB) {ns}/train-worker-0\n"
        f"1 61.0% 10240.0/81920.0(MiB) {ns}/train-worker-0\n"
        f"2 25.0% 2048.0/81920.0(MiB) {ns}/train-worker-1\n"
        f"3 12.0% 0.0/81920.0(MiB) {ns}/train-worker-1\n"
        "\n"
        "Allocated/Total GPUs In Cluster: 5/5 (100.0%)\n"
        "Idle/Allocated GPUs (under 5% for 30m+): 0/5\n")
    data = json.loads(ok(ctx("top", "node", m_node, "-o", "json", env={"ARENA_HELM_CONFIG": str(cfg)})).stdout)
    (node,) = data["nodes"]
    assert (node["gpuDutyCycle"], node["usedCPU"], node["usedMemory"], node["idleGPUs"]) == (44.5, "3750m", "7.5Gi", 0)
    assert (data["idleGPUs"], data["idle"]) == (0, {"below": 5.0, "for": "30m"})
    assert [(g["id"], g["gpuDutyCycle"], g["podNames"]) for g in node["gpuMetrics"]] == [
        ("0", 80.0, [f"{ns}/train-worker-0"]), ("1", 61.0, [f"{ns}/train-worker-0"]),
        ("2", 25.0, [f"{ns}/train-worker-1"]), ("3", 12.0, [f"{ns}/train-worker-1"])]


def test_without_prometheus_the_columns_read_na_with_one_note(jobs, namespace):
    ctx, m_node, l_node = jobs
    res = ok(ctx("top", "job"))
    assert res.stderr.splitlines() == [
        "note: no Prometheus found (no Service labelled as Arena looks for, no --prometheus-url or "
        "--prometheus-service); GPU utilisation and memory and CPU/memory usage read N/A"]
    assert norm(res.stdout) == norm(
        "NAME STATUS TRAINER GPU(Requested) GPU(Allocated) GPU(Util) GPU_MEMORY(Used/Total) CPU(Requested) "
        "CPU(Usage) MEMORY(Requested) MEMORY(Usage) NODE\n"
        f"train RUNNING TFJOB 4 4 N/A N/A 8 N/A 16Gi N/A {m_node}\n"
        f"old RUNNING TFJOB 1 1 N/A N/A 0 N/A 0 N/A {l_node}\n"
        "\n"
        "Total Allocated/Requested GPUs of Training Jobs: 5/5\n")
    res = ok(ctx("get", "train", "-g"))
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("note: no Prometheus found")
    assert norm(res.stdout.split("\n\n", 1)[1]) == norm(
        "INSTANCE STATUS GPU(Requested) NODE GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total)\n"
        f"train-worker-0 Running 2 {m_node} N/A N/A N/A\n"
        f"train-worker-1 Running 2 {m_node} N/A N/A N/A\n"
        "\n"
        "Allocated/Requested GPUs of Job: 4/4\n")
    res = ok(ctx("top", "node", m_node, "-d"))
    assert len(res.stderr.splitlines()) == 1
    assert f"{m_node} GPUs:" not in res.stdout
    assert norm(res.stdout).splitlines()[1] == (
        f"{m_node} 127.0.0.1 gpu Ready 4 4 N/A N/A 8/64 N/A 16Gi/256Gi N/A")
    # a Prometheus that does not listen: the same N/A, and the note says who did not answer
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    res = ok(ctx("top", "job", "--prometheus-url", dead))
    (note,) = res.stderr.splitlines()
    assert note.startswith(f"note: Prometheus at {dead} did not answer (") and note.endswith("read N/A"), note
    assert norm(res.stdout).splitlines()[1] == f"train RUNNING TFJOB 4 4 N/A N/A 8 N/A 16Gi N/A {m_node}"


def test_a_prometheus_that_hangs_times_out(jobs, tmp_path):
    ctx, m_node, _ = jobs
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)  # accepts connections and never answers
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"prometheus:\n  url: http://127.0.0.1:{server.getsockname()[1]}\n  timeout: 0.5\n")
    try:
        started = time.monotonic()
        res = ok(ctx("top", "job", env={"ARENA_HELM_CONFIG": str(cfg)}))
        assert time.monotonic() - started < 8
    finally:
        server.close()
    (note,) = res.stderr.splitlines()
    assert "did not answer (timed out)" in note, note
    assert norm(res.stdout).splitlines()[1] == f"train RUNNING TFJOB 4 4 N/A N/A 8 N/A 16Gi N/A {m_node}"


@pytest.mark.parametrize("bad", [("--prometheus-url", "prometheus:9090"), ("--prometheus-service", "a/b/c"),
                                 ("-r", "0")], ids=["url", "service", "refresh"])
def test_bad_metrics_flags_are_usage_errors(jobs, bad):
    ctx, _, _ = jobs
    res = ctx("top", "job", *bad)
    assert res.exit_code == 2 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"error: {bad[0]}") or line.startswith("error: -r/--refresh"), line


# ---- --refresh ---------------------------------------------------------------------------------------
def _spawn(ctx, argv, **kw):
    cmd = [sys.executable, "-m", "arena_helm", *argv, *ctx.base, "-n", ctx.ns]
    env = {k: v for k, v in os.environ.items() if k not in ("PROMETHEUS_ADDRESS", "ARENA_HELM_CONFIG")}
    # as in a terminal, SIGINT (Ctrl-C) is not ignored: a suite started in the background of a shell without job
    # control inherits SIG_IGN for it, and Python then installs no KeyboardInterrupt handler
    return subprocess.Popen(cmd, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


def _read_until(fd, predicate, timeout=60.0) -> bytes:
    buf = b""
    deadline = time.monotonic() + timeout
    while not predicate(buf):
        left = deadline - time.monotonic()
        assert left > 0, f"no such output in time: {buf[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"the command ended: {buf[-2000:]!r}"
            buf += chunk
    return buf


def test_refresh_prints_repeated_blocks_and_ends_cleanly_on_ctrl_c(jobs, prometheus):
    ctx, m_node, _ = jobs
    proc = _spawn(ctx, ["top", "job", "-r", "0.2", "--prometheus-url", prometheus.url],
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = _read_until(proc.stdout.fileno(), lambda b: b.count(b"\n----") >= 2)
    finally:
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err and err == b"", err
    blocks = re.split(r"\n-{43} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d -{52}\n", (out + rest).decode())
    assert len(blocks) >= 3
    for block in blocks[:2]:
        assert norm(block).splitlines()[1] == (
            f"train RUNNING TFJOB 4 4 0 44.5% 43008.0/327680.0(MiB) 8 3750m 16Gi 7.5Gi {m_node}")
    assert "\x1b[" not in (out + rest).decode()


def test_refresh_redraws_in_place_on_a_terminal(jobs, prometheus):
    import pty

    ctx, m_node, l_node = jobs
    master, slave = pty.openpty()
    proc = _spawn(ctx, ["top", "node", m_node, "-r", "0.2", "--prometheus-url", prometheus.url],
                  stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        out = _read_until(master, lambda b: b.count(b"\x1b[H\x1b[2J") >= 3 and b.endswith(b"\n"))
    finally:
        threading.Thread(target=lambda: _drain(master), daemon=True).start()
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 0 and b"Traceback" not in err, err
    frames = out.decode().replace("\r\n", "\n").split("\x1b[H\x1b[2J")[1:]
    assert len(frames) >= 3 and "-----" not in out.decode()
    assert norm(frames[1]).splitlines()[1] == (
        f"{m_node} 127.0.0.1 gpu Ready 4 4 0 44.5% 43008.0/327680.0(MiB) 8/64 3750m 16Gi/256Gi 7.5Gi")


def _drain(fd):
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- metrics.k8s.io ---------------------------------------------------------------------------------
@pytest.fixture
def metrics_server(cluster, controllers, tmp_path):
    """metrics.k8s.io served by the real metrics-server, scraping kwok's kubelets (tests/support/metricsserver.py),
    for this test only."""
    from controllers import source_dir
    from metricsserver import MetricsServer

    server = MetricsServer(controllers, tmp_path / "metrics-server", source_dir("metrics-server")).start()
    try:
        yield client.CustomObjectsApi(cluster.api_client())
    finally:
        server.stop()


def test_usage_comes_from_metrics_k8s_io_where_served(jobs, metrics_server, kubelet, prometheus, namespace):
    """CPU and memory in `top job` and `top node` come from metrics.k8s.io as metrics-server serves it: each pod's
    usage (kwok's kubelet reports the usage annotated on the pod: the CPU as a cumulative counter, which
    metrics-server turns into a rate over two scrapes) and each node's (the sum of its pods, as kwok reports
    it)."""
    ctx, m_node, l_node = jobs
    ns = namespace
    usage = {"train-worker-0": ("1200m", "4Gi"), "train-worker-1": ("300m", "1Gi"), "old-chief-0": ("500m", "3Gi")}
    for pod, (cpu, mem) in usage.items():
        kubelet.annotate(ns, pod, {"kwok.x-k8s.io/usage-cpu": cpu, "kwok.x-k8s.io/usage-memory": mem})

    def served():
        pods = metrics_server.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", ns, "pods")["items"]
        have = {p["metadata"]["name"]: p["containers"] for p in pods}
        nodes = {n["metadata"]["name"] for n in metrics_server.list_cluster_custom_object(
            "metrics.k8s.io", "v1beta1", "nodes")["items"]}
        # two scrapes after the annotations: a rate of the annotated usage, not of the 1m before them
        return set(have) == set(usage) and {m_node, l_node} <= nodes and all(
            round(quantity(c["usage"]["cpu"]), 3) == quantity(usage[p][0]) for p, cs in have.items() for c in cs)

    wait_for(served, "metrics-server's PodMetrics and NodeMetrics of the annotated usage", timeout=120)
    res = ok(ctx("top", "job", "--prometheus-url", prometheus.url))
    assert res.stderr == ""
    assert norm(res.stdout).splitlines()[1:3] == [  # GPUs from Prometheus, usage from metrics.k8s.io
        f"train RUNNING TFJOB 4 4 0 44.5% 43008.0/327680.0(MiB) 8 1500m 16Gi 5Gi {m_node}",
        f"old RUNNING TFJOB 1 1 0 42.0% 4096.0/16384.0(MiB) 0 500m 0 3Gi {l_node}"]
    res = ok(ctx("top", "node", m_node, l_node))  # no Prometheus at all: GPU N/A, usage still there
    assert res.stderr.splitlines() == [
        "note: no Prometheus found (no Service labelled as Arena looks for, no --prometheus-url or "
        "--prometheus-service); GPU utilisation and memory read N/A"]
    assert norm(res.stdout).splitlines()[1:3] == [  # each node's NodeMetrics: the sum of its pods
        f"{l_node} 127.0.0.1 <none> Ready 1 1 N/A N/A 0/16 500m 0/64Gi 3Gi",
        f"{m_node} 127.0.0.1 gpu Ready 4 4 N/A N/A 8/64 1500m 16Gi/256Gi 5Gi"]


def quantity(text: str) -> float:
    """A CPU quantity in cores (``1200m``, ``1199998765n``, ``2``)."""
    from arena_helm.core.grammars import parse_quantity

    return float(parse_quantity(text))


# ---- idle GPUs and free GPUs ---------------------------------------------------------------------------
IDLE_FOR = 15  # seconds: --idle-for of the idle tests (the series have to be that old)


@pytest.fixture
def quiet(cluster, kubelet, namespace, prometheus):
    """Job ``quiet`` (TFJob, 2 workers x 2 GPUs) on node ``q-NS`` (5 A100 80GB): worker-0's GPUs busy (70%,
    55%), worker-1's idle (0%, 2%), GPU 4 free (no pod); node ``f-NS`` (2 GPUs, added once the pods are bound)
    all free. Each node has its own exporter pod (as the GPU operator's DaemonSet), scraped with a
    ServiceMonitor's target labels (promsim). Waits until the idle query over IDLE_FOR seconds has the
    GPUs of the pods (the same series for the whole window)."""
    ns = namespace
    ctx = Ctx(cluster, ns)
    q_node, f_node = f"q-{ns}", f"f-{ns}"
    kubelet.add_node(q_node, pool=ns, gpus=5, cpu="64", memory="256Gi")
    try:
        core = client.CoreV1Api(cluster.api_client())
        ok(ctx("submit", "tf", "--name", "quiet", "--image", "tf:2", "--workers", "2", "--gpus", "2", "--", "python",
               "quiet.py"))
        pods = wait_job_pods(core, ns, "quiet", ["quiet-worker-0", "quiet-worker-1"])
        for pod in pods:
            kubelet.run_pod(ns, pod, q_node)
        wait_for(lambda: json.loads(ok(ctx("get", "quiet", "-o", "json")).stdout)["status"] == "RUNNING", "quiet RUNNING")
        kubelet.add_node(f_node, pool=ns, gpus=2, cpu="16", memory="64Gi")
        exporters = {node: prometheus.add_node_exporter(node) for node in (q_node, f_node)}
        sim = prometheus.sim
        for dev, pod, util, used in ((0, "quiet-worker-0", 70, 20480), (1, "quiet-worker-0", 55, 10240),
                                     (2, "quiet-worker-1", 0, 0), (3, "quiet-worker-1", 2, 1024), (4, "", 0, 0)):
            sim.set_gpu(Gpu(q_node, dev, util, used, 81920 - used, ns if pod else "", pod, "tensorflow" if pod else ""))
        for dev in (0, 1):
            sim.set_gpu(Gpu(f_node, dev, 0, 0, 81920))
        from arena_helm.adapters.metrics import idle_query

        by_gpu = lambda m: (m.get("Hostname"), m.get("gpu"), m.get("exported_pod") or m.get("pod"))  # noqa: E731
        prometheus.wait_for(idle_query(IDLE_FOR), {
            (q_node, "0", "quiet-worker-0"): 70, (q_node, "1", "quiet-worker-0"): 55, (q_node, "2", "quiet-worker-1"): 0,
            (q_node, "3", "quiet-worker-1"): 2, (f_node, "0", exporters[f_node]): 0}, by_gpu, timeout=90)
        job = client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
            "kubeflow.org", "v1", ns, "tfjobs", "quiet")
        user = (job["metadata"].get("annotations") or {}).get("arena.kubeflow.org/username", "")
        yield ctx, q_node, f_node, user, exporters
    finally:
        for node in (q_node, f_node):
            kubelet.remove_node(node)


def test_top_node_shows_two_idle_gpus_and_a_free_gpu_has_no_pod(quiet, prometheus, namespace):
    ctx, q_node, f_node, user, exporters = quiet
    ns = namespace
    # Prometheus itself names the exporters' pods on the free GPUs (the real label layout)
    free = {(r["metric"]["Hostname"], r["metric"]["gpu"]): (r["metric"]["namespace"], r["metric"]["pod"],
                                                            "exported_pod" in r["metric"])
            for r in prometheus.query(f'DCGM_FI_DEV_GPU_UTIL{{Hostname=~"{q_node}|{f_node}"}}')}
    assert free[(q_node, "4")] == ("gpu-operator", exporters[q_node], False)
    assert free[(f_node, "0")] == ("gpu-operator", exporters[f_node], False)
    assert free[(q_node, "2")] == ("gpu-operator", exporters[q_node], True)
    res = ok(ctx("top", "node", q_node, f_node, "-d", "--idle-for", f"{IDLE_FOR}s", "--prometheus-url", prometheus.url))
    assert res.stderr == ""
    assert norm(res.stdout) == norm(
        "NAME IPADDRESS ROLE STATUS GPU(Total) GPU(Allocated) GPU(Idle) GPU(Util) GPU_MEMORY(Used/Total) "
        "CPU(Requested/Allocatable) CPU(Usage) MEMORY(Requested/Allocatable) MEMORY(Usage)\n"
        f"{f_node} 127.0.0.1 <none> Ready 2 0 0 0.0% 0.0/163840.0(MiB) 0/16 N/A 0/64Gi N/A\n"
        f"{q_node} 127.0.0.1 <none> Ready 5 4 2 25.4% 31744.0/409600.0(MiB) 0/64 N/A 0/256Gi N/A\n"
        "\n"
        f"{f_node} GPU pods: none\n"
        "\n"
        f"{f_node} GPUs:\n"
        "GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total) POD IDLE\n"
        "0 0.0% 0.0/81920.0(MiB) <none>\n"
        "1 0.0% 0.0/81920.0(MiB) <none>\n"
        "\n"
        f"{q_node} GPU pods:\n"
        "NAMESPACE POD GPU\n"
        f"{ns} quiet-worker-0 2\n"
        f"{ns} quiet-worker-1 2\n"
        "\n"
        f"{q_node} GPUs:\n"
        "GPU(DeviceIndex) GPU(DutyCycle) GPU_MEMORY(Used/Total) POD IDLE\n"
        f"0 70.0% 20480.0/81920.0(MiB) {ns}/quiet-worker-0\n"
        f"1 55.0% 10240.0/81920.0(MiB) {ns}/quiet-worker-0\n"
        f"2 0.0% 0.0/81920.0(MiB) {ns}/quiet-worker-1 IDLE\n"
        f"3 2.0% 1024.0/81920.0(MiB) {ns}/quiet-worker-1 IDLE\n"
        "4 0.0% 0.0/81920.0(MiB) <none>\n"
        "\n"
        "Allocated/Total GPUs In Cluster: 4/7 (57.1%)\n"
        f"Idle/Allocated GPUs (under 5% for {IDLE_FOR}s+): 2/4\n"
        f"by job: {ns}/quiet 2\n"
        f"by user: {user or '<unknown>'} 2\n")
    assert [line.split()[0] for line in res.stdout.splitlines() if line.endswith(" IDLE")
            and not line.startswith("GPU(")] == ["2", "3"]
    data = json.loads(ok(ctx("top", "node", q_node, f_node, "-o", "json", "--idle-for", f"{IDLE_FOR}s",
                             "--prometheus-url", prometheus.url)).stdout)
    f, q = data["nodes"]
    assert [(g["id"], g["podNames"], g["idle"], g["avgGPUDutyCycle"]) for g in f["gpuMetrics"]] == [
        ("0", [], False, None), ("1", [], False, None)]
    assert [(g["id"], g["podNames"], g["idle"], g["avgGPUDutyCycle"]) for g in q["gpuMetrics"]] == [
        ("0", [f"{ns}/quiet-worker-0"], False, 70.0), ("1", [f"{ns}/quiet-worker-0"], False, 55.0),
        ("2", [f"{ns}/quiet-worker-1"], True, 0.0), ("3", [f"{ns}/quiet-worker-1"], True, 2.0),
        ("4", [], False, None)]
    assert (f["idleGPUs"], q["idleGPUs"], data["idleGPUs"], data["idle"]) == (0, 2, 2, {"below": 5.0, "for": "15s"})
    # a higher threshold takes in GPU 1 too (55% < 60%); the default 30m window: nothing is that old here
    res = ok(ctx("top", "node", q_node, "--idle-for", f"{IDLE_FOR}s", "--idle-below", "60", "--prometheus-url",
                 prometheus.url))
    assert norm(res.stdout).splitlines()[1].split()[4:7] == ["5", "4", "3"]
    res = ok(ctx("top", "node", q_node, "--prometheus-url", prometheus.url))
    assert norm(res.stdout).splitlines()[1].split()[4:7] == ["5", "4", "0"]
    assert norm(res.stdout).splitlines()[-1] == "Idle/Allocated GPUs (under 5% for 30m+): 0/4"


def test_top_job_and_list_idle_name_the_job_with_idle_gpus(quiet, cluster, kubelet, prometheus, namespace):
    """``quiet`` holds two idle GPUs, ``busy`` one busy GPU: top job counts them, ``list --idle`` lists
    ``quiet`` alone."""
    ctx, q_node, f_node, user, _ = quiet
    core = client.CoreV1Api(cluster.api_client())
    ok(ctx("submit", "tf", "--name", "busy", "--image", "tf:2", "--gpus", "1", "--", "python", "busy.py"))
    (pod,) = wait_job_pods(core, namespace, "busy", ["busy-chief-0"])
    node = kubelet.run_pod(namespace, pod, None)
    dev = 4 if node == q_node else 0  # the GPU the scheduler left free there
    prometheus.sim.set_gpu(Gpu(node, dev, 80, 4096, 81920 - 4096, namespace, pod, "tensorflow"))
    wait_for(lambda: json.loads(ok(ctx("get", "busy", "-o", "json")).stdout)["status"] == "RUNNING", "busy RUNNING")
    prometheus.wait_for(GPU_QUERY, {("DCGM_FI_DEV_GPU_UTIL", node, str(dev), pod): 80},
                        lambda m: (m["__name__"], m.get("Hostname"), m.get("gpu"), m.get("exported_pod")))
    flags = ("--idle-for", f"{IDLE_FOR}s", "--prometheus-url", prometheus.url)
    res = ok(ctx("top", "job", *flags))
    assert res.stderr == ""
    assert norm(res.stdout) == norm(
        "NAME STATUS TRAINER GPU(Requested) GPU(Allocated) GPU(Idle) GPU(Util) GPU_MEMORY(Used/Total) CPU(Requested) "
        "CPU(Usage) MEMORY(Requested) MEMORY(Usage) NODE\n"
        f"quiet RUNNING TFJOB 4 4 2 31.8% 31744.0/327680.0(MiB) 0 N/A 0 N/A {q_node}\n"
        f"busy RUNNING TFJOB 1 1 0 80.0% 4096.0/81920.0(MiB) 0 N/A 0 N/A {node}\n"
        "\n"
        "Total Allocated/Requested GPUs of Training Jobs: 5/5\n"
        f"Idle/Allocated GPUs (under 5% for {IDLE_FOR}s+): 2/5\n"
        "by job: quiet 2\n"
        f"by user: {user or '<unknown>'} 2\n")
    res = ok(ctx("top", "job", "quiet", *flags))
    assert [line.endswith(" IDLE") for line in res.stdout.splitlines()] == [True, False, False, True, True]
    assert norm(res.stdout).splitlines()[3].endswith("2 0.0% 0.0/81920.0(MiB) IDLE")
    data = json.loads(ok(ctx("top", "job", "-o", "json", *flags)).stdout)
    assert [(j["name"], j["idleGPUs"]) for j in data] == [("quiet", 2), ("busy", 0)]
    w1 = next(i for i in data[0]["instances"] if i["name"] == "quiet-worker-1")
    assert {d: (g["idle"], g["avgGPUDutyCycle"]) for d, g in w1["gpuMetrics"].items()} == {"2": (True, 0.0),
                                                                                           "3": (True, 2.0)}
    res = ok(ctx("list", "--idle", *flags))
    assert res.stderr == ""
    assert [line.split()[:1] + line.split()[4:7] for line in norm(res.stdout).splitlines()] == [
        ["NAME", "GPU(Requested)", "GPU(Allocated)", "GPU(Idle)"], ["quiet", "4", "4", "2"]]
    data = json.loads(ok(ctx("list", "--idle", "-o", "json", *flags)).stdout)
    assert [(j["name"], j["idleGPUs"]) for j in data] == [("quiet", 2)]
    assert ok(ctx("list", "--idle", "-o", "name", "--idle-below", "1%", *flags)).stdout == "tfjob/quiet\n"  # 0% < 1%
    data = json.loads(ok(ctx("list", "--idle", "-o", "json", "--idle-below", "1%", *flags)).stdout)
    assert [(j["name"], j["idleGPUs"]) for j in data] == [("quiet", 1)]  # 2% is not under 1%
    assert ok(ctx("list", "-o", "name")).stdout.splitlines() == ["tfjob/busy", "tfjob/quiet"]
    res = ok(ctx("list", "--idle", "--prometheus-url", prometheus.url))  # 30m: no series is that old
    assert norm(res.stdout) == "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) GPU(Idle) NODE"
    res = ctx("list", "--idle")  # no Prometheus to be found: an error, not an empty list
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.splitlines() == [
        "error: --idle needs Prometheus: no Prometheus found (no Service labelled as Arena looks for, no "
        "--prometheus-url or --prometheus-service)"]


def _stats(ctx, *argv) -> dict[str, int]:
    cmd = [sys.executable, "-m", "arena_helm", *argv, *ctx.base, "-n", ctx.ns]
    env = {k: v for k, v in os.environ.items() if k not in ("PROMETHEUS_ADDRESS", "ARENA_HELM_CONFIG")}
    proc = subprocess.run(cmd, env={**env, "ARENA_HELM_STATS": "1"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = proc.stderr.splitlines()[-1]
    assert line.startswith("stats: "), proc.stderr
    return {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def test_the_idle_views_keep_a_constant_number_of_requests_and_queries(quiet, cluster, kubelet, prometheus, namespace):
    ctx, q_node, f_node, _, _ = quiet
    flags = ("--idle-for", f"{IDLE_FOR}s", "--prometheus-url", prometheus.url)
    views = (("top", "job", *flags), ("top", "node", "-d", *flags), ("list", "--idle", *flags))
    before = [_stats(ctx, *v) for v in views]
    assert [s["prometheus_queries"] for s in before] == [4, 4, 1]  # GPU, idle, CPU rate, working set; idle only
    assert all(s["helm_calls"] == 0 for s in before)
    core = client.CoreV1Api(cluster.api_client())
    for i in range(3):  # three more jobs, two with a GPU
        gpus = ["--gpus", "1"] if i < 2 else []
        ok(ctx("submit", "tf", "--name", f"more-{i}", "--image", "tf:2", *gpus, "--", "python", "more.py"))
        (pod,) = wait_job_pods(core, namespace, f"more-{i}", [f"more-{i}-chief-0"])
        kubelet.run_pod(namespace, pod, None)
    after = [_stats(ctx, *v) for v in views]
    assert after == before, (before, after)


# ---- workspaces: among the jobs of top job and list --idle; how long their GPUs have idled ----------------------
def test_a_workspace_gpu_shows_in_top_job_and_list_idle_and_its_idle_time_in_workspace_list(
        cluster, kubelet, namespace, prometheus):
    """Workspace ``nb`` (1 GPU, on its own node) runs; its GPU is busy (80%), then idle (0%): ``workspace list``
    says for how long (the real Prometheus' answer to metrics.idle_for_query, bounded by when the test made it
    idle), ``top job`` has it as a WORKSPACE row with its GPU, ``list --idle`` names it once its GPU averaged
    under 5% for the window."""
    from kubecluster import make_claim

    from arena_helm.adapters.metrics import idle_for_query, idle_query

    ns = namespace
    ctx = Ctx(cluster, ns)
    core = client.CoreV1Api(cluster.api_client())
    node = f"w-{ns}"
    kubelet.add_node(node, pool=ns, gpus=2, cpu="16", memory="64Gi")
    try:
        make_claim(core, ns, "mine", modes=["ReadWriteOnce"], size="1Gi", storage_class="")
        ok(ctx("workspace", "start", "nb", "--home", "mine", "--gpus", "1", "--cpu", "2", "--idle-stop", "1h"))
        pod = wait_for(lambda: [p.metadata.name for p in core.list_namespaced_pod(
            ns, label_selector="job-name=nb-1").items], "the workspace's pod")[0]
        assert kubelet.run_pod(ns, pod, node) == node
        wait_for(lambda: json.loads(ok(ctx("workspace", "list", "-o", "json")).stdout)[0]["status"] == "RUNNING",
                 "nb RUNNING")
        sim = prometheus.sim
        sim.set_gpu(Gpu(node, 0, 80, 4096, 81920 - 4096, ns, pod, "workspace"))
        sim.set_gpu(Gpu(node, 1, 0, 0, 81920))
        by_pod = lambda m: (m.get("Hostname"), m.get("exported_pod"))  # noqa: E731
        prometheus.wait_for(GPU_QUERY, {(node, pod): 80},
                            lambda m: by_pod(m) if m["__name__"] == "DCGM_FI_DEV_GPU_UTIL" else None, timeout=30)
        busy = json.loads(ok(ctx("workspace", "list", "-o", "json", "--prometheus-url", prometheus.url)).stdout)[0]
        assert busy["idleForSeconds"] is not None and busy["idleForSeconds"] <= 1  # busy now
        age = f'time() - min_over_time(timestamp(DCGM_FI_DEV_GPU_UTIL{{exported_pod="{pod}"}})[1h:])'
        wait_for(lambda: any(float(r["value"][1]) >= 20 for r in prometheus.query(age)), "the busy series 20 s old",
                 60)
        before = time.time()
        sim.set_gpu(Gpu(node, 0, 0, 4096, 81920 - 4096, ns, pod, "workspace"))
        after = time.time()
        prometheus.wait_for(idle_query(IDLE_FOR), {(node, pod): 0}, by_pod, timeout=90)  # 0% all the window now
        start = time.time()
        res = ok(ctx("workspace", "list", "-o", "json", "--prometheus-url", prometheus.url))
        end = time.time()
        (view,) = json.loads(res.stdout)
        # the last busy sample is before `after` (+ a scrape), and Prometheus sees it at its last 5 s step
        # since the last busy sample (not since the GPU's series began, 20 s earlier): as fine as Prometheus'
        # 5 s evaluation steps and the 0.5 s scrapes
        assert start - after - 6 <= view["idleForSeconds"] <= end - before + 6, (view, start - after)
        table = norm(ok(ctx("workspace", "list", "--prometheus-url", prometheus.url)).stdout).splitlines()
        assert table[0] == "NAME TYPE STATUS GPUS IDLE-FOR IDLE-STOP HOME AGE"
        assert table[1].split()[:6] == ["nb", "jupyter", "RUNNING", "1", table[1].split()[4], "60m"]
        assert re.fullmatch(r"\d+s", table[1].split()[4]) and int(table[1].split()[4][:-1]) >= IDLE_FOR - 1
        # the real Prometheus' own answer, asked directly, agrees with what list showed (to the second)
        direct = {by_pod(r["metric"]): float(r["value"][1]) for r in prometheus.query(idle_for_query(5.0))}
        assert direct[(node, pod)] >= view["idleForSeconds"]

        flags = ("--idle-for", f"{IDLE_FOR}s", "--prometheus-url", prometheus.url)
        res = ok(ctx("top", "job", *flags))
        assert res.stderr == ""
        lines = norm(res.stdout).splitlines()
        assert lines[1] == f"nb RUNNING WORKSPACE 1 1 1 0.0% 4096.0/81920.0(MiB) 2 N/A 0 N/A {node}"
        assert lines[3:] == ["Total Allocated/Requested GPUs of Training Jobs: 0/0",
                             "Total Allocated/Requested GPUs of Workspaces: 1/1",
                             f"Idle/Allocated GPUs (under 5% for {IDLE_FOR}s+): 1/1", "by job: workspace/nb 1",
                             "by user: <unknown> 1"]
        rows = norm(ok(ctx("top", "job", "nb", *flags)).stdout).splitlines()
        assert rows[1].split()[:2] == [pod, "Running"] and rows[1].endswith(" IDLE")
        assert ok(ctx("list", "--idle", "-o", "name", *flags)).stdout == "workspace/nb\n"
        # top node: the workspace's pod holds the node's GPU 0, idle
        lines = norm(ok(ctx("top", "node", node, "-d", *flags)).stdout).splitlines()
        assert f"{ns} {pod} 1" in lines and f"0 0.0% 4096.0/81920.0(MiB) {ns}/{pod} IDLE" in lines, lines
        assert ok(ctx("list", "-o", "name")).stdout == ""  # a workspace is no training job

        # stopped, it holds no GPU: top job leaves it out
        ok(ctx("workspace", "stop", "nb"))
        wait_for(lambda: "nb" not in ok(ctx("top", "job", "--prometheus-url", prometheus.url)).stdout.split(),
                 "nb gone from top job")
    finally:
        kubelet.remove_node(node)


# ---- servings: their pods' GPUs in serve get ------------------------------------------------------------------
def test_serve_get_shows_each_serving_pods_gpu_utilisation_and_memory(cluster, kubelet, namespace, prometheus):
    """A vLLM serving (1 GPU a replica) runs on a kwok node; its GPU at 80% with 4 GiB used, as the DCGM
    exporter stand-in reports it and the real Prometheus scrapes it: ``serve get`` shows the pod's GPU(UTIL) and
    GPU(MEMORY MiB), -o json its GPUs; without Prometheus, N/A and one note."""
    ns = namespace
    ctx = Ctx(cluster, ns)
    node = f"s-{ns}"
    kubelet.add_node(node, pool=ns, gpus=2, cpu="16", memory="64Gi")
    try:
        ok(ctx("serve", "vllm", "--name", "qwen", "--version", "v1", "--model", "org/qwen", "--wait", "--timeout",
               "60s"))
        core = client.CoreV1Api(cluster.api_client())
        (pod,) = [p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="release=qwen-v1").items]
        prometheus.sim.set_gpu(Gpu(node, 0, 80, 4096, 81920 - 4096, ns, pod, "serving"))
        prometheus.sim.set_gpu(Gpu(node, 1, 0, 0, 81920))
        by_pod = lambda m: (m.get("Hostname"), m.get("exported_pod"))  # noqa: E731
        prometheus.wait_for(GPU_QUERY, {(node, pod): 80},
                            lambda m: by_pod(m) if m["__name__"] == "DCGM_FI_DEV_GPU_UTIL" else None, timeout=30)
        res = ok(ctx("serve", "get", "qwen", "--prometheus-url", prometheus.url))
        lines = norm(res.stdout).splitlines()
        assert lines[lines.index("INSTANCE STATUS READY RESTARTS NODE GPU(UTIL) GPU(MEMORY MiB)") + 1] == (
            f"{pod} Running 1/1 0 {node} 80.0% 4096/81920")
        (view,) = json.loads(ok(ctx("serve", "get", "qwen", "-o", "json", "--prometheus-url", prometheus.url)).stdout)
        assert view["pods"][0]["gpus"] == [{"device": "0", "util": 80.0, "memoryUsedMiB": 4096.0,
                                            "memoryTotalMiB": 81920.0}]
        # top node: the serving's pod among the node's GPU pods
        nodes = {n["name"]: n for n in json.loads(ok(ctx("top", "node", "-o", "json", "--prometheus-url",
                                                         prometheus.url)).stdout)["nodes"]}
        assert (nodes[node]["allocatedGPUs"], [(p["namespace"], p["name"], p["gpus"]) for p in nodes[node]["gpuPods"]]
                ) == (1, [(ns, pod, 1)])
        res = ok(ctx("serve", "get", "qwen", "--prometheus-url", "http://127.0.0.1:9"))
        lines = norm(res.stdout).splitlines()
        assert lines[-1] == f"{pod} Running 1/1 0 {node} N/A N/A"
        assert res.stderr.startswith("note: ") and "GPU utilisation and memory read N/A" in res.stderr
        ok(ctx("serve", "delete", "qwen"))
    finally:
        kubelet.remove_node(node)
