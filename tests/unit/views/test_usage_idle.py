"""Idle GPUs (``top job``/``top node`` IDLE, the idle summary, ``list --idle``) and what the views say of a free
GPU, from Prometheus answers laid out as dcgm-exporter's series reach Prometheus through the GPU operator's
ServiceMonitor (target labels ``namespace``/``pod``/``container``/``service``/``endpoint``; ``honorLabels``
false, the operator's default, or true). Pure views and the adapter with a fake API; the CLI for flag errors."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from apiobjects import gpu_node
from typer.testing import CliRunner

from arena_helm.adapters.metrics import (
    CPU_QUERY,
    GPU_QUERY,
    MEM_QUERY,
    Collector,
    MetricsOptions,
    idle_query,
    idle_spec,
    parse_idle_below,
    parse_idle_for,
)
from arena_helm.cli import app
from arena_helm.core.errors import UsageError
from arena_helm.views.jobs import job_view
from arena_helm.views.nodes import node_view
from arena_helm.views.output import jobs_table, top_job_instances, top_jobs_table, top_nodes_table
from arena_helm.views.usage import (
    MIB,
    IdleSpec,
    Metrics,
    add_job_json,
    add_node_json,
    fmt_window,
    idle_from_series,
    job_idle_gpus,
    node_holders,
    node_pods,
)

NOW = dt.datetime(2026, 1, 2, 15, 0, 0, tzinfo=dt.UTC)
USER = "arena.kubeflow.org/username"


def answer(*series: tuple[dict, float]) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": m, "value": [1767366000.0, str(v)]} for m, v in series]}}


def exporter_labels(node: str) -> dict:
    """The target labels a ServiceMonitor scrape of the GPU operator's dcgm-exporter adds to every series."""
    return {"container": "nvidia-dcgm-exporter", "endpoint": "gpu-metrics", "instance": f"{node}-ip:9400",
            "job": "nvidia-dcgm-exporter", "namespace": "gpu-operator", "pod": f"nvidia-dcgm-exporter-{node}",
            "service": "nvidia-dcgm-exporter"}


def series(name, node, gpu, value, pod="", ns="team", honor=False, metric_name=True):
    """One dcgm-exporter series as Prometheus stores it: the exporter's labels, a workload's when the kubelet
    maps the GPU to a pod (renamed exported_* beside the target's, unless honorLabels)."""
    labels = {"gpu": str(gpu), "UUID": f"GPU-{node}-{gpu}", "device": f"nvidia{gpu}",
              "modelName": "NVIDIA A100-SXM4-80GB", "Hostname": node, **exporter_labels(node)}
    if metric_name:
        labels["__name__"] = name
    if pod and honor:
        labels.update(namespace=ns, pod=pod, container="main")
    elif pod:
        labels.update(exported_namespace=ns, exported_pod=pod, exported_container="main")
    return labels, value


def gpu_answer(node, gpus, honor=False):
    """gpus: (device, util, used MiB, pod) -> the GPU query's answer (utilisation, used and free memory)."""
    out = []
    for d, util, used, pod in gpus:
        out += [series("DCGM_FI_DEV_GPU_UTIL", node, d, util, pod, honor=honor),
                series("DCGM_FI_DEV_FB_USED", node, d, used, pod, honor=honor),
                series("DCGM_FI_DEV_FB_FREE", node, d, 81920 - used, pod, honor=honor)]
    return answer(*out)


def idle_answer(node, avgs, honor=False):
    """avgs: (device, average, pod) of the series covering the window -> the idle query's answer (no names)."""
    return answer(*[series("", node, d, avg, pod, honor=honor, metric_name=False) for d, avg, pod in avgs])


def pod(name, node, gpus, ns="team", index="0", user="alice", job="train"):
    return {"metadata": {"name": name, "namespace": ns, "creationTimestamp": "2026-01-02T14:00:00Z",
                         "annotations": {USER: user} if user else {},
                         "labels": {"training.kubeflow.org/replica-type": "worker",
                                    "training.kubeflow.org/replica-index": index,
                                    "training.kubeflow.org/job-name": job}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {
                "limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "4", "memory": "8Gi"}}}]},
            "status": {"phase": "Running", "hostIP": "10.0.0.1"}}


def exporter_pod(node):
    return {"metadata": {"name": f"nvidia-dcgm-exporter-{node}", "namespace": "gpu-operator"},
            "spec": {"nodeName": node, "containers": [{"name": "nvidia-dcgm-exporter"}]},
            "status": {"phase": "Running"}}


def tfjob(name, workers, gpus, user="alice"):
    return {"kind": "TFJob", "metadata": {"name": name, "namespace": "team", "creationTimestamp": "2026-01-02T14:00:00Z",
                                          "annotations": {USER: user}},
            "spec": {"tfReplicaSpecs": {"Worker": {"replicas": workers, "template": {"spec": {"containers": [
                {"name": "main", "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                                               "requests": {"cpu": "4", "memory": "8Gi"}}}]}}}}},
            "status": {"conditions": [{"type": "Running", "status": "True"}], "startTime": "2026-01-02T14:00:00Z"}}


SPEC = IdleSpec(5.0, 1800)
# node n1, 4 GPUs: train-worker-0 (busy: 80%, 61%) and train-worker-1 (idle: 0.5%, 3%); node n2, 2 free GPUs
N1 = [(0, 80, 30720, "train-worker-0"), (1, 61, 10240, "train-worker-0"), (2, 0, 0, "train-worker-1"),
      (3, 3, 512, "train-worker-1")]
N1_AVGS = [(0, 78.5, "train-worker-0"), (1, 60.0, "train-worker-0"), (2, 0.5, "train-worker-1"),
           (3, 3.0, "train-worker-1")]
N2 = [(0, 0, 0, ""), (1, 0, 0, "")]


def collected(gpu: dict, idle: dict | None) -> Metrics:
    """What Collector.collect makes of the two answers (the adapter is tested below with a fake API)."""
    kube = FakeKube(answers={GPU_QUERY: gpu, idle_query(SPEC.seconds): idle or answer()})
    return Collector(kube, MetricsOptions(url=None, service="mon/prom"), "team").collect(usage=False, idle=SPEC)


@pytest.fixture
def cluster():
    pods = [pod("train-worker-0", "n1", 2, index="0"), pod("train-worker-1", "n1", 2, index="1"),
            exporter_pod("n1"), exporter_pod("n2")]
    job = job_view(release={"name": "train", "namespace": "team", "status": "deployed", "chart": "tfjob-0.1.0",
                            "revision": 1},
                   job=tfjob("train", 2, 2), pods=pods[:2], now=NOW)
    nodes = [node_view(gpu_node("n1", 4), pods), node_view(gpu_node("n2", 2), pods)]
    return job, nodes, pods


# ---- a free GPU has no pod ----------------------------------------------------------------------------------
def test_a_free_gpu_beside_busy_ones_has_no_pod_not_the_exporters():
    m = collected(gpu_answer("n1", [*N1[:2], (2, 0, 0, ""), (3, 0, 0, "")]), None)
    assert [(g.device, g.namespace, g.pod, g.container) for g in m.gpus] == [
        ("0", "team", "train-worker-0", "main"), ("1", "team", "train-worker-0", "main"), ("2", "", "", ""),
        ("3", "", "", "")]
    assert m.gpus[2].to_json()["podNames"] == []


def test_top_node_gives_no_pod_to_the_gpus_of_a_node_whose_gpus_are_all_free(cluster):
    """All of n2's GPUs free: no series shows its exporter's pod beside a workload's, so only the API can tell:
    nvidia-dcgm-exporter-n2 holds no GPU on n2. ``top node -d`` and ``-o json`` name no pod."""
    _, nodes, pods = cluster
    m = collected({"status": "success", "data": {"resultType": "vector", "result":
                   gpu_answer("n1", N1)["data"]["result"] + gpu_answer("n2", N2)["data"]["result"]}},
                  idle_answer("n1", N1_AVGS))
    assert [g.pod for g in m.gpus if g.node == "n2"] == ["nvidia-dcgm-exporter-n2"] * 2  # the labels alone
    m.keep_holders(node_holders(nodes))
    out = top_nodes_table(nodes, details=True, metrics=m, pods_on=node_pods(pods), pods=pods)
    assert ("n2 GPUs:\n"
            "GPU(DeviceIndex)  GPU(DutyCycle)  GPU_MEMORY(Used/Total)  POD     IDLE\n"
            "0                 0.0%            0.0/81920.0(MiB)        <none>\n"
            "1                 0.0%            0.0/81920.0(MiB)        <none>\n") in out + "\n"
    data = add_node_json(m, nodes[1], [], nodes[1].to_json())
    assert [(g["id"], g["podNames"], g["idle"], g["avgGPUDutyCycle"]) for g in data["gpuMetrics"]] == [
        ("0", [], False, None), ("1", [], False, None)]
    assert data["idleGPUs"] == 0


def test_with_honor_labels_a_free_gpu_carries_the_exporters_pod_and_top_node_drops_it(cluster):
    _, nodes, pods = cluster
    m = collected(gpu_answer("n1", [*N1[:2], (2, 0, 0, ""), (3, 0, 0, "")], honor=True), None)
    assert [g.pod for g in m.gpus] == ["train-worker-0", "train-worker-0", "nvidia-dcgm-exporter-n1",
                                       "nvidia-dcgm-exporter-n1"]
    m.keep_holders(node_holders(nodes))
    assert [(g.device, g.pod) for g in m.node_gpus("n1")] == [("0", "train-worker-0"), ("1", "train-worker-0"),
                                                              ("2", ""), ("3", "")]


# ---- idle -------------------------------------------------------------------------------------------------
def test_a_node_with_two_busy_and_two_idle_gpus_shows_two_idle(cluster):
    job, nodes, pods = cluster
    m = collected(gpu_answer("n1", N1), idle_answer("n1", N1_AVGS))
    m.keep_holders(node_holders(nodes))
    out = top_nodes_table(nodes[:1], details=True, metrics=m, pods_on=node_pods(pods), pods=pods)
    assert out == (
        "NAME  IPADDRESS  ROLE    STATUS  GPU(Total)  GPU(Allocated)  GPU(Idle)  GPU(Util)  GPU_MEMORY(Used/Total)  "
        "CPU(Requested/Allocatable)  CPU(Usage)  MEMORY(Requested/Allocatable)  MEMORY(Usage)\n"
        "n1    10.0.0.1   <none>  Ready   4           4               2          36.0%      41472.0/327680.0(MiB)   "
        "8/64                        N/A         16Gi/256Gi                     N/A\n"
        "\n"
        "n1 GPU pods:\n"
        "NAMESPACE  POD             GPU\n"
        "team       train-worker-0  2\n"
        "team       train-worker-1  2\n"
        "\n"
        "n1 GPUs:\n"
        "GPU(DeviceIndex)  GPU(DutyCycle)  GPU_MEMORY(Used/Total)  POD                  IDLE\n"
        "0                 80.0%           30720.0/81920.0(MiB)    team/train-worker-0\n"
        "1                 61.0%           10240.0/81920.0(MiB)    team/train-worker-0\n"
        "2                 0.0%            0.0/81920.0(MiB)        team/train-worker-1  IDLE\n"
        "3                 3.0%            512.0/81920.0(MiB)      team/train-worker-1  IDLE\n"
        "\n"
        "Allocated/Total GPUs In Cluster: 4/4 (100.0%)\n"
        "Idle/Allocated GPUs (under 5% for 30m+): 2/4\n"
        "  by job: team/train 2\n"
        "  by user: alice 2")
    assert sum(line.endswith("  IDLE") and not line.startswith("GPU(") for line in out.splitlines()) == 2
    data = add_node_json(m, nodes[0], [], nodes[0].to_json())
    assert data["idleGPUs"] == 2
    assert [(g["id"], g["idle"], g["avgGPUDutyCycle"]) for g in data["gpuMetrics"]] == [
        ("0", False, 78.5), ("1", False, 60.0), ("2", True, 0.5), ("3", True, 3.0)]


def test_top_job_has_an_idle_column_marker_and_summary(cluster):
    job, _, _ = cluster
    m = collected(gpu_answer("n1", N1), idle_answer("n1", N1_AVGS))
    assert top_jobs_table([job], all_namespaces=False, metrics=m) == (
        "NAME   STATUS   TRAINER  GPU(Requested)  GPU(Allocated)  GPU(Idle)  GPU(Util)  GPU_MEMORY(Used/Total)  "
        "CPU(Requested)  CPU(Usage)  MEMORY(Requested)  MEMORY(Usage)  NODE\n"
        "train  RUNNING  TFJOB    4               4               2          36.0%      41472.0/327680.0(MiB)   "
        "8               N/A         16Gi               N/A            n1\n"
        "\n"
        "Total Allocated/Requested GPUs of Training Jobs: 4/4\n"
        "Idle/Allocated GPUs (under 5% for 30m+): 2/4\n"
        "  by job: train 2\n"
        "  by user: alice 2")
    rows = top_job_instances(job, m).splitlines()
    assert rows[0].endswith("GPU_MEMORY(Used/Total)  IDLE")
    assert [r.endswith("IDLE") for r in rows[1:]] == [False, False, True, True]
    data = add_job_json(m, job, job.to_json())
    assert data["idleGPUs"] == 2
    assert data["instances"][1]["gpuMetrics"]["2"] == {"gpuDutyCycle": 0.0, "usedGPUMemory": 0.0,
                                                       "totalGPUMemory": 81920 * MIB, "idle": True,
                                                       "avgGPUDutyCycle": 0.5}


def test_a_gpu_not_held_by_the_same_pod_for_the_whole_window_is_not_idle(cluster):
    """The idle query keeps a series only if it was there --idle-for ago: a GPU given to train-worker-1 ten
    minutes ago (its series is new) is missing from the answer, so it is not idle, however low it runs."""
    job, _, _ = cluster
    m = collected(gpu_answer("n1", N1), idle_answer("n1", N1_AVGS[:3]))
    assert [(g.device, g.idle, g.avg_util) for g in m.gpus] == [("0", False, 78.5), ("1", False, 60.0),
                                                                ("2", True, 0.5), ("3", False, None)]
    assert job_idle_gpus(m, job) == 1


def test_the_threshold_is_strict_and_a_free_gpu_is_never_idle():
    spec = IdleSpec(3.0, 600)
    kube = FakeKube(answers={GPU_QUERY: gpu_answer("n1", [*N1, (4, 0, 0, "")]),
                             idle_query(600): idle_answer("n1", [*N1_AVGS, (4, 0.0, "")])})
    m = Collector(kube, MetricsOptions(service="mon/prom"), "team").collect(usage=False, idle=spec)
    assert [(g.device, g.idle) for g in m.gpus] == [("0", False), ("1", False), ("2", True), ("3", False),
                                                    ("4", False)]


def test_the_summary_counts_by_job_and_user_most_idle_first():
    from arena_helm.views.usage import idle_summary

    text = idle_summary(IdleSpec(5, 5400), [("a", "bob", 4, 1), ("b", "alice", 2, 2), ("c", "", 8, 1),
                                            ("d", "bob", 1, 1), ("e", "carol", 3, 0)])
    assert text == ("Idle/Allocated GPUs (under 5% for 1h30m+): 5/18\n"
                    "  by job: b 2, a 1, c 1, d 1\n"
                    "  by user: alice 2, bob 2, <unknown> 1")
    assert idle_summary(SPEC, [("a", "bob", 4, 0)]) == "Idle/Allocated GPUs (under 5% for 30m+): 0/4"
    assert [fmt_window(s) for s in (1800, 5400, 45, 3600, 90)] == ["30m", "1h30m", "45s", "1h", "1m30s"]


def test_list_idle_reads_the_idle_query_alone(cluster):
    job, _, _ = cluster
    other = job_view(release={"name": "busy", "namespace": "team", "status": "deployed", "chart": "tfjob-0.1.0",
                              "revision": 1},
                     job=tfjob("busy", 1, 2), pods=[pod("busy-worker-0", "n1", 2, job="busy")], now=NOW)
    kube = FakeKube(answers={idle_query(SPEC.seconds): idle_answer("n1", [*N1_AVGS, (5, 40.0, "busy-worker-0")])})
    m = Collector(kube, MetricsOptions(service="mon/prom"), "team").collect(gpus=False, usage=False, idle=SPEC)
    assert [c for c in kube.calls if c.startswith("proxy")] == [
        f"proxy /api/v1/namespaces/mon/services/http:prom:9090/proxy/api/v1/query {idle_query(1800)}"]
    assert (job_idle_gpus(m, job), job_idle_gpus(m, other)) == (2, 0)
    assert jobs_table([job], all_namespaces=False, wide=False, metrics=m) == (
        "NAME   STATUS   TRAINER  DURATION  GPU(Requested)  GPU(Allocated)  GPU(Idle)  NODE\n"
        "train  RUNNING  TFJOB    60m       4               4               2          n1")


def test_the_idle_query_is_one_instant_query_of_both_exporters():
    assert idle_query(1800) == (
        "(avg_over_time(DCGM_FI_DEV_GPU_UTIL[1800s]) and DCGM_FI_DEV_GPU_UTIL offset 1800s and DCGM_FI_DEV_GPU_UTIL)"
        " or (avg_over_time(nvidia_gpu_duty_cycle[1800s]) and nvidia_gpu_duty_cycle offset 1800s and "
        "nvidia_gpu_duty_cycle)")
    legacy = {"minor_number": "0", "uuid": "GPU-0", "node_name": "n2", "pod_name": "old-chief-0",
              "namespace_name": "team", "container_name": "main"}
    assert idle_from_series([(legacy, 1.5), ({**legacy, "pod_name": ""}, 0.0)]) == {("n2", "0", "team", "old-chief-0"): 1.5}


def test_views_make_a_constant_number_of_queries_with_idle():
    gpus = [series("DCGM_FI_DEV_GPU_UTIL", f"n{i}", d, 50, f"p{i}-{d}") for i in range(100) for d in range(8)]
    idle = [series("", f"n{i}", d, 1.0, f"p{i}-{d}", metric_name=False) for i in range(100) for d in range(8)]
    kube = FakeKube(answers={GPU_QUERY: answer(*gpus), idle_query(1800): answer(*idle)})
    m = Collector(kube, MetricsOptions(service="mon/prom"), "team").collect(nodes=True, idle=SPEC)
    assert len(m.gpus) == 800 and all(g.idle for g in m.gpus)
    assert [c.split(" ", 2)[2] for c in kube.calls if c.startswith("proxy")] == [
        GPU_QUERY, idle_query(1800), CPU_QUERY, MEM_QUERY]


def test_a_refused_idle_query_keeps_the_gpus_and_says_idle_gpus_read_na():
    kube = FakeKube(answers={GPU_QUERY: gpu_answer("n1", N1),
                             idle_query(1800): {"status": "error", "error": "query timed out"}})
    m = Collector(kube, MetricsOptions(service="mon/prom"), "team").collect(usage=False, idle=SPEC)
    assert len(m.gpus) == 4 and not m.idle_known and all(g.idle is None for g in m.gpus)
    assert m.notes == ["note: Prometheus at service mon/prom:9090 (through the API server's service proxy) "
                       "refused the query: query timed out; idle GPUs read N/A"]


# ---- flags ------------------------------------------------------------------------------------------------
def test_idle_flags_parse_and_refuse():
    assert [parse_idle_below(t) for t in ("5%", "5", "0.5%", " 100 % ".strip())] == [5.0, 5.0, 0.5, 100.0]
    assert (parse_idle_for("30m"), parse_idle_for("1h30m"), parse_idle_for("10s")) == (1800, 5400, 10)
    assert idle_spec("5%", "30m") == IdleSpec(5.0, 1800)
    for bad in ("0", "0%", "101%", "abc", "-3", "nan"):
        with pytest.raises(UsageError, match=r"--idle-below '.*': give a utilisation percentage above 0 and at "
                                              r"most 100, e.g. 5%"):
            parse_idle_below(bad)
    with pytest.raises(UsageError, match=r"--idle-for '0': give a duration of at least 1s, e.g. 30m"):
        parse_idle_for("0")
    with pytest.raises(UsageError, match=r"--idle-for: '30' is not a duration: it has no unit"):
        parse_idle_for("30")


@pytest.mark.parametrize("argv, line", [
    (["top", "job", "--idle-below", "0"], "error: --idle-below '0': give a utilisation percentage above 0 and at most "
                                          "100, e.g. 5%"),
    (["top", "node", "--idle-for", "30"], "error: --idle-for: '30' is not a duration: it has no unit (use a Go "
                                          "duration, e.g. 90s, 10m, 1.5h or 2h30m)"),
    (["list", "--idle", "--idle-for", "soon"], None),
    (["list", "--idle-below", "5%"], "error: --idle-below: only with --idle"),
], ids=["top-job-below", "top-node-for", "list-for", "list-without-idle"])
def test_bad_idle_flags_are_one_line_and_exit_2_before_any_request(argv, line, tmp_path):
    res = CliRunner().invoke(app, [*argv, "--kubeconfig", str(tmp_path / "none")])
    assert res.exit_code == 2, res.output
    (got,) = res.stderr.splitlines()
    assert got == line if line else got.startswith("error: --idle-for: 'soon' is not a duration"), got


# ---- a fake API ------------------------------------------------------------------------------------------
class FakeKube:
    """The service proxy to Prometheus, answering each query from ``answers`` (empty otherwise)."""

    def __init__(self, answers=None):
        self.answers = answers or {}
        self.calls: list[str] = []

    def get_json(self, path, action):
        from arena_helm.core.errors import NotFoundError

        self.calls.append(f"GET {path}")
        raise NotFoundError("the server could not find the requested resource")

    def service_proxy_get(self, namespace, service, path, query, action, timeout):
        (_, q), = query
        self.calls.append(f"proxy /api/v1/namespaces/{namespace}/services/{service}/proxy/{path} {q}")
        return json.dumps(self.answers.get(q, answer())).encode()


# ---- idle for (workspace list) ------------------------------------------------------------------------------
def test_the_idle_for_query_is_one_instant_query_of_both_exporters():
    from arena_helm.adapters.metrics import idle_for_query

    assert idle_for_query(5.0, 86400) == (
        "(time() - (timestamp(DCGM_FI_DEV_GPU_UTIL >= 5) or "
        "max_over_time(timestamp(DCGM_FI_DEV_GPU_UTIL >= 5)[86400s:]) or "
        "min_over_time(timestamp(DCGM_FI_DEV_GPU_UTIL)[86400s:]) or timestamp(DCGM_FI_DEV_GPU_UTIL))) or "
        "(time() - (timestamp(nvidia_gpu_duty_cycle >= 5) or "
        "max_over_time(timestamp(nvidia_gpu_duty_cycle >= 5)[86400s:]) or "
        "min_over_time(timestamp(nvidia_gpu_duty_cycle)[86400s:]) or timestamp(nvidia_gpu_duty_cycle)))")
    assert idle_for_query(0.5).count(">= 0.5") == 4


def test_a_pod_is_idle_for_as_long_as_its_most_recently_busy_gpu():
    from arena_helm.adapters.metrics import idle_for_query

    kube = FakeKube(answers={idle_for_query(5.0): idle_answer("n1", [
        (0, 125.0, "nb-1-abcde"), (1, 3600.0, "nb-1-abcde"), (2, 40.0, "other-0"), (3, 9.0, "")])})
    m = Collector(kube, MetricsOptions(service="mon/prom"), "team").collect(gpus=False, usage=False,
                                                                            idle_for_below=5.0)
    assert [c.split(" ", 2)[2] for c in kube.calls if c.startswith("proxy")] == [idle_for_query(5.0)]
    assert (m.pod_idle_for("team", "nb-1-abcde"), m.pod_idle_for("team", "other-0"),
            m.pod_idle_for("team", "gone")) == (125.0, 40.0, None)
    assert m.notes == []
    refused = FakeKube(answers={idle_for_query(5.0): {"status": "error", "error": "query timed out"}})
    m = Collector(refused, MetricsOptions(service="mon/prom"), "team").collect(gpus=False, usage=False,
                                                                               idle_for_below=5.0)
    assert m.pod_idle_for("team", "nb-1-abcde") is None
    assert m.notes == ["note: Prometheus at service mon/prom:9090 (through the API server's service proxy) "
                       "refused the query: query timed out; idle times read N/A"]


def ws_job(name="nb", run=1, gpus=1, ns="team", conditions=()):
    return {"metadata": {"name": f"{name}-{run}", "namespace": ns, "creationTimestamp": "2026-01-02T14:00:00Z",
                         "uid": "u1", "labels": {"app.kubernetes.io/name": "workspace",
                                                 "app.kubernetes.io/instance": name,
                                                 "arena-helm.kubeflow.org/workspace-run": str(run)}},
            "spec": {"template": {"spec": {"containers": [{"name": "workspace", "resources": {
                "limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "2", "memory": "4Gi"}}}]}}},
            "status": {"conditions": list(conditions)}}


def ws_pod(name, node_name, gpus, ns="team"):
    p = pod(name, node_name, gpus, ns=ns, user="")
    p["metadata"]["labels"] = {"app.kubernetes.io/name": "workspace", "job-name": name.rsplit("-", 1)[0]}
    p["status"]["containerStatuses"] = [{"name": "workspace", "ready": True}]
    return p


def test_a_running_workspace_is_a_row_of_top_job_with_its_gpus(cluster):
    from arena_helm.workspace.workspaces import workspace_job_view

    job, _, _ = cluster
    ws = workspace_job_view(ws_job(gpus=1), [ws_pod("nb-1-abcde", "n1", 1)], NOW)
    assert (ws.name, ws.trainer, ws.status, ws.requested_gpus, ws.allocated_gpus, ws.requested_cpu,
            ws.requested_memory, ws.node, ws.duration) == ("nb", "workspace", "RUNNING", 1, 1, 2.0, 4 * 2**30, "n1",
                                                           "60m")
    assert [(i.name, i.gpus, i.node, i.is_chief) for i in ws.instances] == [("nb-1-abcde", 1, "n1", True)]
    kube = FakeKube(answers={GPU_QUERY: gpu_answer("n1", [*N1[:3], (3, 1, 512, "nb-1-abcde")]),
                             idle_query(SPEC.seconds): idle_answer("n1", [*N1_AVGS[:3], (3, 1.0, "nb-1-abcde")])})
    m = Collector(kube, MetricsOptions(url=None, service="mon/prom"), "team").collect(usage=False, idle=SPEC)
    lines = top_jobs_table([job, ws], all_namespaces=False, metrics=m).splitlines()
    assert lines[2].split() == ["nb", "RUNNING", "WORKSPACE", "1", "1", "1", "1.0%", "512.0/81920.0(MiB)", "2",
                                "N/A", "4Gi", "N/A", "n1"]
    assert lines[3:] == ["", "Total Allocated/Requested GPUs of Training Jobs: 4/4",
                         "Total Allocated/Requested GPUs of Workspaces: 1/1",
                         "Idle/Allocated GPUs (under 5% for 30m+): 2/4",  # train: 3 series here, nb: 1
                         "  by job: train 1, workspace/nb 1", "  by user: <unknown> 1, alice 1"]
    assert top_job_instances(ws, m).splitlines()[1].split()[:2] == ["nb-1-abcde", "Running"]


def test_only_the_workspaces_whose_job_has_not_ended_are_among_the_jobs():
    from arena_helm.workspace.workspaces import active_workspace_views

    class Kube:
        def list_batch_jobs(self, ns, selector):
            assert (ns, selector) == ("team", "app.kubernetes.io/name=workspace")
            return [ws_job("nb", 1, conditions=[{"type": "Complete", "status": "True"}]), ws_job("nb", 2),
                    ws_job("old", 1, conditions=[{"type": "Complete", "status": "True"}]), ws_job("wait", 1, gpus=4)]

        def list_pods(self, ns, selector):
            return [ws_pod("nb-2-xyz12", "n1", 1)]

    class C:
        kube = Kube()

    views = active_workspace_views(C(), "team", False)
    assert [(v.name, v.status, v.requested_gpus, v.allocated_gpus) for v in views] == [
        ("nb", "RUNNING", 1, 1), ("wait", "PENDING", 4, 0)]


def test_a_user_who_may_not_list_jobs_sees_no_workspaces_among_the_jobs():
    from arena_helm.core.errors import ForbiddenError
    from arena_helm.workspace.workspaces import active_workspace_views

    class Kube:
        def list_batch_jobs(self, ns, selector):
            raise ForbiddenError("jobs.batch is forbidden")

    class C:
        kube = Kube()

    assert active_workspace_views(C(), "team", False) == []
