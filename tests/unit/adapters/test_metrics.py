"""The pure metrics layer: Prometheus answers -> GPU/usage records, joins with jobs/pods/nodes, the cells and
tables of get -g / top, and the adapter's choices (which Prometheus, how many queries) with a fake API."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from apiobjects import gpu_node

from arena_helm.adapters.metrics import (
    CPU_QUERY,
    GPU_QUERY,
    MEM_QUERY,
    Collector,
    MetricsOptions,
    Prometheus,
    PrometheusUnavailable,
    find_service,
    parse_service,
)
from arena_helm.core.errors import UsageError
from arena_helm.views.jobs import job_view
from arena_helm.views.nodes import node_view
from arena_helm.views.output import job_gpus_detail, top_job_instances, top_jobs_table, top_nodes_table
from arena_helm.views.usage import (
    MIB,
    Metrics,
    Usage,
    add_job_json,
    fmt_gpu_mem,
    fmt_util,
    gpus_from_series,
    job_metric_cells,
    node_pods,
    summarize,
    usage_from_cadvisor,
    usage_from_node_metrics,
    usage_from_pod_metrics,
    vector,
)

NOW = dt.datetime(2026, 1, 2, 15, 0, 0, tzinfo=dt.UTC)


def answer(*series: tuple[dict, str]) -> dict:
    return {"status": "success", "data": {"resultType": "vector",
                                          "result": [{"metric": m, "value": [1767366000.0, v]} for m, v in series]}}


def dcgm(name, node, gpu, value, pod="", ns="", exported=True):
    labels = {"__name__": name, "gpu": str(gpu), "UUID": f"GPU-{node}-{gpu}", "Hostname": node}
    if pod and exported:  # scraped with target labels namespace/pod/container: Prometheus renames the series' own
        labels.update(exported_pod=pod, exported_namespace=ns, exported_container="main", pod="dcgm-exporter-x",
                      namespace="gpu-operator", container="nvidia-dcgm-exporter")
    elif pod:
        labels.update(pod=pod, namespace=ns, container="main")
    return labels, str(value)


def legacy(name, node, minor, value, pod, ns):
    return {"__name__": name, "minor_number": str(minor), "uuid": f"GPU-{minor}", "node_name": node,
            "pod_name": pod, "namespace_name": ns, "container_name": "main"}, str(value)


# ---- parsing and joining -----------------------------------------------------------------------------------
def test_vector_drops_nan_and_unparsable_values():
    data = answer(({"a": "1"}, "1.5"), ({"a": "2"}, "NaN"), ({"a": "3"}, "x"))
    assert vector(data) == [({"a": "1"}, 1.5)]
    assert vector({"status": "success"}) == []


def test_dcgm_series_join_into_one_gpu_per_node_and_device_with_the_exported_pod():
    series = vector(answer(
        dcgm("DCGM_FI_DEV_GPU_UTIL", "n1", 1, 61, "w-0", "team"),
        dcgm("DCGM_FI_DEV_FB_USED", "n1", 1, 10240, "w-0", "team"),
        dcgm("DCGM_FI_DEV_FB_FREE", "n1", 1, 71680, "w-0", "team"),
        dcgm("DCGM_FI_DEV_GPU_UTIL", "n1", 0, 80, "w-1", "team", exported=False),
        dcgm("DCGM_FI_DEV_FB_USED", "n1", 0, 30720, "w-1", "team", exported=False),
        dcgm("DCGM_FI_DEV_GPU_UTIL", "n1", 10, 0),  # an idle GPU: no pod
        ({"__name__": "up", "job": "x"}, "1"),  # not a GPU series
    ))
    gpus = gpus_from_series(series)
    assert [(g.node, g.device, g.util, g.mem_used, g.mem_total, g.namespace, g.pod, g.container) for g in gpus] == [
        ("n1", "0", 80.0, 30720 * MIB, None, "team", "w-1", "main"),
        ("n1", "1", 61.0, 10240 * MIB, 81920 * MIB, "team", "w-0", "main"),
        ("n1", "10", 0.0, None, None, "", "", ""),
    ]


def test_arena_gpu_exporter_series_are_bytes_with_their_own_labels():
    gpus = gpus_from_series(vector(answer(
        legacy("nvidia_gpu_duty_cycle", "n2", 0, 42, "old-chief-0", "team"),
        legacy("nvidia_gpu_memory_used_bytes", "n2", 0, 4096 * MIB, "old-chief-0", "team"),
        legacy("nvidia_gpu_memory_total_bytes", "n2", 0, 16384 * MIB, "old-chief-0", "team"),
    )))
    assert [(g.node, g.device, g.util, g.mem_used, g.mem_total, g.namespace, g.pod) for g in gpus] == [
        ("n2", "0", 42.0, 4096 * MIB, 16384 * MIB, "team", "old-chief-0")]
    assert gpus[0].to_json() == {"id": "0", "uuid": "GPU-0", "node": "n2", "gpuDutyCycle": 42.0,
                                 "usedGPUMemory": 4096 * MIB, "totalGPUMemory": 16384 * MIB,
                                 "podNames": ["team/old-chief-0"]}


def test_cadvisor_sums_per_pod_and_metrics_api_quantities():
    cpu = [({"namespace": "a", "pod": "p"}, 1.25), ({"namespace_name": "a", "pod_name": "q"}, 0.5), ({}, 9.0)]
    mem = [({"namespace": "a", "pod": "p"}, 2.0 * 2**30)]
    assert usage_from_cadvisor(cpu, mem) == {("a", "p"): Usage(1.25, 2.0 * 2**30), ("a", "q"): Usage(0.5, None)}
    pods = usage_from_pod_metrics([{"metadata": {"namespace": "a", "name": "p"}, "containers": [
        {"name": "c1", "usage": {"cpu": "500000000n", "memory": "1Gi"}},
        {"name": "c2", "usage": {"cpu": "250m", "memory": "512Mi"}}]}])
    assert pods == {("a", "p"): Usage(0.75, 1.5 * 2**30)}
    assert usage_from_node_metrics([{"metadata": {"name": "n"}, "usage": {"cpu": "3", "memory": "4Gi"}}]) == {
        "n": Usage(3.0, 4 * 2**30)}


def test_summary_and_cells():
    assert summarize(None) == summarize([]) and summarize([]).util is None
    assert fmt_util(None) == "N/A" and fmt_util(44.5) == "44.5%"
    assert fmt_gpu_mem(None, None) == "N/A"
    assert fmt_gpu_mem(1024 * MIB, 81920 * MIB) == "1024.0/81920.0(MiB)"
    assert fmt_gpu_mem(1024 * MIB, None) == "1024.0/N/A(MiB)"


# ---- views -----------------------------------------------------------------------------------------------
def pod(name, node, gpus, ns="team", rtype="worker", index="0", phase="Running"):
    return {"metadata": {"name": name, "namespace": ns, "creationTimestamp": "2026-01-02T14:00:00Z",
                         "labels": {"training.kubeflow.org/replica-type": rtype,
                                    "training.kubeflow.org/replica-index": index}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {
                "limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "4", "memory": "8Gi"}}}]},
            "status": {"phase": phase, "hostIP": "10.0.0.1"}}


def tfjob(name, workers, gpus):
    return {"kind": "TFJob", "metadata": {"name": name, "namespace": "team", "creationTimestamp": "2026-01-02T14:00:00Z"},
            "spec": {"tfReplicaSpecs": {"Worker": {"replicas": workers, "template": {"spec": {"containers": [
                {"name": "main", "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                                               "requests": {"cpu": "4", "memory": "8Gi"}}}]}}}}},
            "status": {"conditions": [{"type": "Running", "status": "True"}], "startTime": "2026-01-02T14:00:00Z"}}


@pytest.fixture
def job():
    pods = [pod("train-worker-0", "n1", 2, index="0"), pod("train-worker-1", "n1", 2, index="1")]
    release = {"name": "train", "namespace": "team-a", "status": "deployed", "chart": "tfjob-0.1.0", "revision": 1}
    return job_view(release=release, job=tfjob("train", 2, 2), pods=pods, now=NOW), pods


@pytest.fixture
def metrics():
    gpus = gpus_from_series(vector(answer(
        *[dcgm(n, "n1", d, v, p, "team") for n, d, v, p in (
            ("DCGM_FI_DEV_GPU_UTIL", 0, 80, "train-worker-0"), ("DCGM_FI_DEV_FB_USED", 0, 30720, "train-worker-0"),
            ("DCGM_FI_DEV_FB_FREE", 0, 51200, "train-worker-0"),
            ("DCGM_FI_DEV_GPU_UTIL", 1, 61, "train-worker-0"), ("DCGM_FI_DEV_FB_USED", 1, 10240, "train-worker-0"),
            ("DCGM_FI_DEV_FB_FREE", 1, 71680, "train-worker-0"),
            ("DCGM_FI_DEV_GPU_UTIL", 2, 25, "train-worker-1"), ("DCGM_FI_DEV_FB_USED", 2, 2048, "train-worker-1"),
            ("DCGM_FI_DEV_FB_FREE", 2, 79872, "train-worker-1"))])))
    pods = {("team", "train-worker-0"): Usage(3.5, 6 * 2**30), ("team", "train-worker-1"): Usage(0.25, 1.5 * 2**30),
            ("other", "x"): Usage(7.0, 1.0)}
    return Metrics(gpus=gpus, pods=pods, usage_source="prometheus")


def test_top_job_row_averages_utilisation_and_sums_memory_and_usage(job, metrics):
    v, _ = job
    assert job_metric_cells(metrics, v) == ("55.3%", "43008.0/245760.0(MiB)", "3750m", "7.5Gi")
    assert job_metric_cells(Metrics(), v) == ("N/A", "N/A", "N/A", "N/A")
    assert top_jobs_table([v], all_namespaces=False, metrics=metrics) == (
        "NAME   STATUS   TRAINER  GPU(Requested)  GPU(Allocated)  GPU(Util)  GPU_MEMORY(Used/Total)  CPU(Requested)  "
        "CPU(Usage)  MEMORY(Requested)  MEMORY(Usage)  NODE\n"
        "train  RUNNING  TFJOB    4               4               55.3%      43008.0/245760.0(MiB)   8               "
        "3750m       16Gi               7.5Gi          n1\n"
        "\n"
        "Total Allocated/Requested GPUs of Training Jobs: 4/4")


def test_top_job_instances_has_a_row_per_gpu_and_na_for_an_instance_without_samples(job, metrics):
    v, _ = job
    header = ("INSTANCE        STATUS   TYPE    IS_CHIEF  GPU(Requested)  NODE  NODE_IP   CPU(Usage)  MEMORY(Usage)  "
              "GPU(DeviceIndex)  GPU(DutyCycle)  GPU_MEMORY(Used/Total)")
    assert top_job_instances(v, metrics) == (
        f"{header}\n"
        "train-worker-0  Running  worker  true      2               n1    10.0.0.1  3500m       6Gi            "
        "0                 80.0%           30720.0/81920.0(MiB)\n"
        + " " * header.index("GPU(DeviceIndex)") + "1                 61.0%           10240.0/81920.0(MiB)\n"
        "train-worker-1  Running  worker  false     2               n1    10.0.0.1  250m        1.5Gi          "
        "2                 25.0%           2048.0/81920.0(MiB)")
    no_gpu_samples = Metrics(gpus=[], pods=None)
    assert top_job_instances(v, no_gpu_samples).splitlines()[1].split()[-5:] == ["N/A", "N/A", "N/A", "N/A", "N/A"]


def test_get_gpus_detail_ends_with_allocated_requested(job, metrics):
    v, _ = job
    text = job_gpus_detail(v, metrics, pending="", events=[])
    assert text.split("\n\n", 1)[1] == (
        "INSTANCE        STATUS   GPU(Requested)  NODE  GPU(DeviceIndex)  GPU(DutyCycle)  GPU_MEMORY(Used/Total)\n"
        "train-worker-0  Running  2               n1    0                 80.0%           30720.0/81920.0(MiB)\n"
        "                                               1                 61.0%           10240.0/81920.0(MiB)\n"
        "train-worker-1  Running  2               n1    2                 25.0%           2048.0/81920.0(MiB)\n"
        "\n"
        "Allocated/Requested GPUs of Job: 4/4")


def test_job_json_carries_arena_gpu_metric_keys(job, metrics):
    v, _ = job
    data = add_job_json(metrics, v, v.to_json())
    assert (data["gpuDutyCycle"], data["usedCPU"], data["usedMemory"]) == (pytest.approx(55.333, abs=1e-3), "3750m",
                                                                          "7.5Gi")
    assert data["instances"][1]["gpuMetrics"] == {"2": {"gpuDutyCycle": 25.0, "usedGPUMemory": 2048 * MIB,
                                                        "totalGPUMemory": 81920 * MIB}}
    assert add_job_json(Metrics(), v, v.to_json())["instances"][0]["gpuMetrics"] == {}  # Arena's empty map


def test_top_node_usage_is_the_sum_of_its_pods_unless_node_metrics_are_served(job, metrics):
    _, pods = job
    n = node_view(gpu_node("n1", 4), pods)
    on = node_pods(pods)
    out = top_nodes_table([n], details=True, metrics=metrics, pods_on=on)
    assert out.splitlines()[1].split() == ["n1", "10.0.0.1", "<none>", "Ready", "4", "4", "55.3%",
                                           "43008.0/245760.0(MiB)", "8/64", "3750m", "16Gi/256Gi", "7.5Gi"]
    assert "n1 GPUs:\nGPU(DeviceIndex)  GPU(DutyCycle)  GPU_MEMORY(Used/Total)  POD\n" \
           "0                 80.0%           30720.0/81920.0(MiB)    team/train-worker-0\n" in out
    served = Metrics(gpus=metrics.gpus, pods=metrics.pods, nodes={"n1": Usage(12.0, 100 * 2**30)})
    assert top_nodes_table([n], details=False, metrics=served, pods_on=on).splitlines()[1].split()[-3:] == [
        "12", "16Gi/256Gi", "100Gi"]
    bare = top_nodes_table([n], details=True, metrics=Metrics(), pods_on=on)
    assert "GPUs:" not in bare and bare.splitlines()[1].split()[6:] == ["N/A", "N/A", "8/64", "N/A", "16Gi/256Gi",
                                                                         "N/A"]


# ---- choosing Prometheus, counting queries ---------------------------------------------------------------
def test_options_flag_then_defaults_file_and_bad_values():
    assert MetricsOptions.resolve("http://p:9090/", None, {"service": "m/p"}).url == "http://p:9090"
    assert MetricsOptions.resolve(None, "m/p:9090", {"url": "http://x"}).service == "m/p:9090"
    opts = MetricsOptions.resolve(None, None, {"service": "mon/prom:web", "timeout": 2})
    assert (opts.service, opts.timeout) == ("mon/prom:web", 2.0)
    assert parse_service("prom", "--prometheus-service", "team").__dict__ == {
        "namespace": "team", "name": "prom", "port": "9090", "scheme": "http"}
    with pytest.raises(UsageError, match=r"^--prometheus-url \(the URL given\): give an http:// or https:// URL with a "
                       r"host \(e\.g\. http://prometheus\.monitoring:9090\)$"):
        MetricsOptions.resolve("prom:9090", None, {})
    with pytest.raises(UsageError, match=r"prometheus.service \(defaults file\) 'a/b/c'"):
        MetricsOptions.resolve(None, None, {"service": "a/b/c"})


class FakeKube:
    """Stands in for KubeReader: services by selector, metrics.k8s.io lists, the service proxy."""

    def __init__(self, services=(), metrics_api=None, answers=None):
        self.services, self.metrics_api, self.answers = list(services), metrics_api, answers or {}
        self.calls: list[str] = []

    def list_services(self, namespace, selector):
        self.calls.append(f"services {selector}")
        key, _, values = selector.partition(" in ")
        wanted = set(values.strip("()").split(","))
        return [s for s in self.services if s["metadata"]["labels"].get(key) in wanted]

    def get_json(self, path, action):
        from arena_helm.core.errors import NotFoundError

        self.calls.append(f"GET {path}")
        if self.metrics_api is None:
            raise NotFoundError("the server could not find the requested resource")
        return {"items": self.metrics_api.get(path, [])}

    def service_proxy_get(self, namespace, service, path, query, action, timeout):
        (_, q), = query
        self.calls.append(f"proxy /api/v1/namespaces/{namespace}/services/{service}/proxy/{path} {q}")
        return json.dumps(self.answers.get(q, answer())).encode()


def svc(ns, name, key, value, port=9090):
    return {"metadata": {"namespace": ns, "name": name, "labels": {key: value}}, "spec": {"ports": [{"port": port}]}}


def test_the_service_is_found_by_arenas_labels_in_arenas_order_with_two_lists():
    kube = FakeKube([svc("a", "old", "kubernetes.io/name", "Prometheus"),
                     svc("b", "admin", "kubernetes.io/service-name", "prometheus-admin", 9335),
                     svc("c", "plain", "kubernetes.io/name", "prometheus", 80)])
    ref = find_service(kube)
    assert (ref.namespace, ref.name, ref.port) == ("b", "admin", "9335")
    assert len(kube.calls) == 2
    ref = find_service(FakeKube([svc("c", "plain", "kubernetes.io/name", "prometheus", 80)]))
    assert (ref.namespace, ref.name, ref.port) == ("c", "plain", "80")  # the Service's own port
    assert find_service(FakeKube()) is None


def test_a_view_makes_a_constant_number_of_queries_whatever_its_size():
    gpus = [dcgm("DCGM_FI_DEV_GPU_UTIL", f"n{i}", d, 50, f"p{i}-{d}", "t") for i in range(100) for d in range(8)]
    kube = FakeKube([svc("mon", "prometheus-server", "kubernetes.io/name", "prometheus-server")],
                    answers={GPU_QUERY: answer(*gpus)})
    c = Collector(kube, MetricsOptions(), "team")
    m = c.collect(nodes=True)
    assert len(m.gpus) == 800 and m.usage_source == "prometheus" and m.notes == []
    proxied = [x for x in kube.calls if x.startswith("proxy")]
    assert [x.split(" ", 2)[2] for x in proxied] == [GPU_QUERY, CPU_QUERY, MEM_QUERY]
    assert proxied[0].startswith("proxy /api/v1/namespaces/mon/services/http:prometheus-server:9090/proxy/api/v1/query")
    assert len(kube.calls) == 2 + 1 + 3  # two service LISTs, the metrics.k8s.io probe, three queries
    kube.calls.clear()
    c.collect(nodes=True)  # a --refresh round: the Service is not looked up again
    assert len(kube.calls) == 4


def test_metrics_api_usage_wins_over_cadvisor_and_no_prometheus_is_one_note():
    api = {"/apis/metrics.k8s.io/v1beta1/namespaces/team/pods": [
        {"metadata": {"namespace": "team", "name": "p"}, "containers": [{"usage": {"cpu": "2", "memory": "1Gi"}}]}]}
    kube = FakeKube(metrics_api=api)
    m = Collector(kube, MetricsOptions(), "team").collect(namespace="team")
    assert m.usage_source == "metrics.k8s.io" and m.pods == {("team", "p"): Usage(2.0, 2**30)} and m.gpus is None
    assert m.notes == ["note: no Prometheus found (no Service labelled as Arena looks for, no --prometheus-url or "
                       "--prometheus-service); GPU utilisation and memory read N/A"]
    assert not any(x.startswith("proxy") for x in kube.calls)


def test_prometheus_error_answers_become_unavailable():
    kube = FakeKube(answers={GPU_QUERY: {"status": "error", "error": "parse error"}})
    p = Prometheus(kube=kube, service=parse_service("m/p", "--prometheus-service"))
    with pytest.raises(PrometheusUnavailable, match="refused the query: parse error"):
        p.query(GPU_QUERY)


def test_a_failed_usage_query_keeps_the_gpus_and_the_next_round_tries_again():
    kube = FakeKube([svc("mon", "prometheus-server", "kubernetes.io/name", "prometheus-server")],
                    answers={GPU_QUERY: answer(dcgm("DCGM_FI_DEV_GPU_UTIL", "n", 0, 50, "p", "t")),
                             CPU_QUERY: {"status": "error", "error": "query timed out"}})
    c = Collector(kube, MetricsOptions(), "t")
    m = c.collect()
    assert len(m.gpus) == 1 and m.pods is None
    assert m.notes == ["note: Prometheus at service mon/prometheus-server:9090 (through the API server's service "
                       "proxy) refused the query: query timed out; CPU/memory usage read N/A"]
    kube.answers[CPU_QUERY] = answer(({"namespace": "t", "pod": "p"}, "0.5"))
    kube.calls.clear()
    m = c.collect()
    assert m.notes == [] and m.pods == {("t", "p"): Usage(0.5, None)}
    assert sum(x.startswith("services") for x in kube.calls) == 2  # looked up again after the failure


def test_the_join_layer_is_pure_and_the_adapter_imports_no_client_library():
    import ast
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[3] / "arena_helm"

    def imports(name):
        tree = ast.parse((pkg / name).read_text())
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.add(node.module.split(".")[0])
        return out

    io = {"subprocess", "socket", "urllib", "urllib3", "kubernetes", "typer", "http", "requests"}
    assert not imports("views/usage.py") & io
    assert not imports("adapters/metrics.py") & {"kubernetes", "urllib3", "typer", "requests"}
