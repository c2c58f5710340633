#!/usr/bin/env python3
"""What GPU metrics cost ``arena-helm top node -d``: 100 GPU nodes, 800 GPUs, a real Prometheus.

1. Starts the test API server (``tests/support/kubecluster.py``) and a real Prometheus (Debian's, started
   by ``tests/support/promsim.py`` as the tests start it) scraping the exporter simulator.
2. Seeds nodes with 8 GPUs each and one running 1-GPU pod per GPU (namespace ``bench-gpu``), through the
   API with a thread pool, and gives the simulator a DCGM series set per GPU (utilisation, memory used and
   free) and cAdvisor CPU/memory series per pod; waits until Prometheus has every series.
3. Times, interleaved, median of N runs (after 1 warm-up each):
   - ``arena-helm top node -d --prometheus-url URL`` (with metrics: every column filled);
   - ``arena-helm top node -d`` with no Prometheus to be found (the same command without metrics: the
     metric columns read N/A, one note on stderr).
   ``ARENA_HELM_STATS=1`` prints the API requests and Prometheus queries of each, at a first size (default
   10 nodes) and at the full size, to show that the number of queries does not grow with the nodes.

Goals at the full size: time ratio with / without metrics <= 1.5; the same number of Prometheus queries
at both sizes.

    python benchmarks/top_node_metrics.py             # 10 then 100 nodes (80 then 800 GPUs), 5 runs
    python benchmarks/top_node_metrics.py --quick     # 4 then 20 nodes, 2 runs
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import re
import time

import _benchlib as bl

GOAL_RATIO = 1.5
NS = "bench-gpu"
QUERIES_RE = re.compile(r"prometheus_queries=(\d+)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python benchmarks/top_node_metrics.py",
        description="'arena-helm top node -d' with GPU metrics from a real Prometheus vs without; goal: time "
        f"ratio <= {GOAL_RATIO} and a constant number of Prometheus queries.",
    )
    p.add_argument("--nodes", type=int, default=100, help="GPU nodes at the full size (default 100)")
    p.add_argument("--first", type=int, default=10, help="GPU nodes at the first size (default 10)")
    p.add_argument("--gpus", type=int, default=8, help="GPUs per node (default 8)")
    p.add_argument("-n", "--runs", type=int, default=5, help="measured runs of each command (default 5)")
    p.add_argument("--threads", type=int, default=16, help="seeding threads (default 16)")
    p.add_argument("--arena-helm", help="the arena-helm console script (default: beside this Python)")
    p.add_argument("--quick", action="store_true", help="4 then 20 nodes, 2 runs")
    args = p.parse_args(argv)
    if args.quick:
        args.nodes, args.first, args.runs = 20, 4, 2
    return args


def node_name(i: int) -> str:
    return f"gpu-node-{i:03d}"


def seed(cluster, sim, start: int, stop: int, gpus: int, threads: int) -> None:
    """Nodes start..stop-1, each with ``gpus`` GPUs and a running 1-GPU pod per GPU, and their series."""
    from kubernetes import client
    from promsim import Gpu, PodUsage

    core = client.CoreV1Api(cluster.api_client())

    def one_node(i: int) -> None:
        name = node_name(i)
        core.create_node({"metadata": {"name": name, "labels": {"node-role.kubernetes.io/gpu": ""}}})
        res = {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": str(gpus)}
        core.patch_node_status(name, {"status": {
            "capacity": res, "allocatable": res,
            "addresses": [{"type": "InternalIP", "address": f"10.1.{i // 250}.{i % 250 + 1}"}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "bench"}]}})
        for d in range(gpus):
            pod = f"train-{i:03d}-worker-{d}"
            core.create_namespaced_pod(NS, {
                "metadata": {"name": pod, "labels": {"app": "bench"}},
                "spec": {"nodeName": name, "containers": [{"name": "main", "image": "trainer:1", "resources": {
                    "limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "8", "memory": "64Gi"}}}]}})
            core.patch_namespaced_pod_status(pod, NS, {"status": {"phase": "Running", "hostIP": "10.1.0.1"}})
            sim.set_gpu(Gpu(name, d, 10 + (i * gpus + d) % 90, 1024 * (1 + d), 81920 - 1024 * (1 + d), NS, pod, "main"))
            sim.set_pod(PodUsage(NS, pod, 1.5 + d / 8, (8 + d) * 2**30, "main"))

    started = time.perf_counter()
    with cf.ThreadPoolExecutor(threads) as pool:
        list(pool.map(one_node, range(start, stop)))
    print(f"  seeded nodes {start}..{stop - 1} ({(stop - start) * gpus} GPU pods) in "
          f"{time.perf_counter() - started:.1f} s", flush=True)


def wait_for_series(prom, count: int, timeout: float = 120.0) -> None:
    from arena_helm.adapters.metrics import CPU_QUERY

    started = time.perf_counter()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        gpus = prom.query('count(DCGM_FI_DEV_GPU_UTIL{exported_namespace="' + NS + '"})')
        cpus = [r for r in prom.query(CPU_QUERY) if r["metric"].get("namespace") == NS]
        if gpus and int(float(gpus[0]["value"][1])) >= count and len(cpus) >= count:
            print(f"  Prometheus has the {count} GPUs' and pods' series after {time.perf_counter() - started:.1f} s",
                  flush=True)
            return
        time.sleep(0.5)
    raise bl.BenchError(f"Prometheus did not get the {count} GPUs' series in {timeout:.0f} s")


def measure(size: int, gpus: int, args, arena, kc: str, url: str) -> dict:
    names = [node_name(i) for i in range(size)]
    with_metrics = [arena, "top", "node", *names, "-d", "--kubeconfig", kc, "--prometheus-url", url]
    without = [arena, "top", "node", *names, "-d", "--kubeconfig", kc]
    env = bl.child_env(ARENA_HELM_STATS="1")
    env.pop("PROMETHEUS_ADDRESS", None)
    env.pop("ARENA_HELM_CONFIG", None)
    env["ARENA_HELM_CONFIG"] = "/dev/null"  # an empty defaults file: no prometheus settings
    times: dict[str, list[float]] = {"with": [], "without": []}
    stats: dict[str, tuple] = {}
    for i in range(args.runs + 1):
        for key, argv in (("with", with_metrics), ("without", without)):
            seconds, proc = bl.timed(argv, env=env, what=f"arena-helm top node -d ({key} metrics)")
            out = proc.stdout.decode()
            if key == "with" and "N/A" in out.split("\n\n", 1)[0]:
                raise bl.BenchError("top node -d with metrics shows N/A: Prometheus did not answer")
            if key == "without" and "note:" not in proc.stderr.decode():
                raise bl.BenchError("top node -d without metrics printed no note")
            if i == 0:  # warm-up
                api = bl.parse_stats(proc.stderr)
                q = QUERIES_RE.findall(proc.stderr.decode())
                stats[key] = (api[1] if api else None, int(q[-1]) if q else 0)
                continue
            times[key].append(seconds)
    w, wo = bl.median(times["with"]), bl.median(times["without"])
    print(f"  {size} nodes / {size * gpus} GPUs: with metrics median {w:.3f} s (p90 "
          f"{bl.percentile(times['with'], 90):.3f}), without {wo:.3f} s (p90 {bl.percentile(times['without'], 90):.3f}); "
          f"ratio {w / wo:.2f}; with: {stats['with'][0]} API requests, {stats['with'][1]} Prometheus queries; "
          f"without: {stats['without'][0]} API requests, {stats['without'][1]} queries", flush=True)
    return {"size": size, "with": w, "without": wo, "ratio": w / wo, "queries": stats["with"][1]}


def main() -> int:
    args = parse_args()
    arena = bl.find_arena_helm(args.arena_helm)
    print(f"top_node_metrics: {args.first} then {args.nodes} nodes with {args.gpus} GPUs each, {args.runs} runs")
    cluster = prom = None
    results = []
    try:
        cluster = bl.start_test_cluster()
        from promsim import PrometheusServer

        prom = PrometheusServer()
        print(f"  Prometheus at {prom.url} (scrape every 0.5 s)", flush=True)
        cluster.create_namespace(NS)
        done = 0
        for size in (args.first, args.nodes) if args.first < args.nodes else (args.nodes,):
            seed(cluster, prom.sim, done, size, args.gpus, args.threads)
            done = size
            wait_for_series(prom, size * args.gpus)
            results.append(measure(size, args.gpus, args, arena, str(cluster.admin.kubeconfig), prom.url))
    finally:
        if prom is not None:
            prom.stop()
        if cluster is not None:
            bl.stop_test_cluster(cluster)
    full = results[-1]
    queries = [r["queries"] for r in results]
    constant = len(set(queries)) == 1
    ok = full["ratio"] <= GOAL_RATIO and constant
    print(bl.verdict(ok, f"at {full['size']} nodes ({full['size'] * args.gpus} GPUs) ratio {full['ratio']:.2f} "
                     f"(goal <= {GOAL_RATIO}); Prometheus queries " +
                     " -> ".join(f"{r['size']} nodes: {r['queries']}" for r in results) +
                     (" (constant)" if constant else " (NOT constant)")))
    return 0


if __name__ == "__main__":
    bl.main_guard(main)
