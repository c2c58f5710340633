"""How ``arena-helm serve list -A`` scales: 1,000 serving releases (custom servings, each a Deployment and a
Service) on the test API server, against ``helm list -A`` + ``kubectl get deploy,svc -A`` in the same run.

1. Starts the test API server (``tests/support/kubecluster.py``; no controllers: the Deployments stay as
   written, which is all either side reads).
2. Installs one template serving with the real helm through ``arena-helm serve custom`` (release
   ``seedsrv-v1``), reads back its release Secret, Deployment and Service, and uninstalls it.
3. Seeds the servings FAST, without helm per release (a thread pool): for each ``sNNNN`` (version v1, spread
   over namespaces ``bench-00`` ..) the helm release Secret in helm's storage format, copied from the template
   with the names and dates replaced (as ``list_scale.py`` does for jobs), and its Deployment and Service.
4. Checks that the real helm (every version the tests use) lists exactly the seeded releases.
5. Times ``arena-helm serve list -A`` against the baseline ``helm list -A -o json --max 0`` followed by
   ``kubectl get deployments,services -A -o json`` (the two times summed): median of N runs after a warm-up,
   each command spawned by a small launcher process (peak RSS of the command's process tree). arena-helm must
   print a row per serving.

Goal: time ratio arena-helm / baseline <= 0.5, and no helm process (``stats:`` line, ARENA_HELM_STATS=1).

    python benchmarks/serve_list_scale.py            # 1,000 servings, 3 runs (~3 min on 2 cores)
    python benchmarks/serve_list_scale.py --quick    # 100 servings, 2 runs
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import datetime as dt
import json
import threading
import time
from pathlib import Path

import _benchlib as bl
import list_scale as ls

GOAL_RATIO = 0.5
TEMPLATE = "seedsrv"
TEMPLATE_NS = "bench-template"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--servings", type=int, default=1000, help="serving releases to seed (default 1000)")
    p.add_argument("--namespaces", type=int, default=10, help="namespaces they are spread over (default 10)")
    p.add_argument("-n", "--runs", type=int, default=3, help="measured runs of each command (default 3)")
    p.add_argument("--threads", type=int, default=24, help="seeding threads (default 24)")
    p.add_argument("--helm", help="helm version of both sides (default: the first the tests use)")
    p.add_argument("--arena-helm", help="the arena-helm console script (default: beside this Python)")
    p.add_argument("--quick", action="store_true", help="100 servings, 2 runs")
    args = p.parse_args(argv)
    if args.quick:
        args.servings, args.runs = 100, 2
    return args


def _sub(value, name: str, namespace: str):
    if isinstance(value, str):
        return value.replace(TEMPLATE, name).replace(TEMPLATE_NS, namespace)
    if isinstance(value, list):
        return [_sub(v, name, namespace) for v in value]
    if isinstance(value, dict):
        return {k: _sub(v, name, namespace) for k, v in value.items()}
    return value


class Template:
    """The template serving's release Secret, Deployment and Service, to be copied under other names."""

    def __init__(self, secret: dict, deployment: dict, service: dict):
        self.release = ls.decode_release(secret["data"]["release"])
        self.secret_labels = dict(secret["metadata"].get("labels") or {})
        self.secret_type = secret.get("type", "helm.sh/release.v1")
        self.deployment = deployment
        self.service = service

    def secret_for(self, name: str, namespace: str, when: dt.datetime) -> dict:
        release = f"{name}-v1"
        rel = _sub(copy.deepcopy(self.release), name, namespace)
        rel.update({"name": release, "namespace": namespace, "version": 1})
        rel["info"] = {**(rel.get("info") or {}), "status": "deployed", "first_deployed": ls.rfc3339(when),
                       "last_deployed": ls.rfc3339(when)}
        labels = {**self.secret_labels, "name": release, "owner": "helm", "status": "deployed", "version": "1"}
        if "modifiedAt" in labels:
            labels["modifiedAt"] = str(int(when.timestamp()))
        return {"apiVersion": "v1", "kind": "Secret", "type": self.secret_type,
                "metadata": {"name": f"sh.helm.release.v1.{release}.v1", "namespace": namespace, "labels": labels},
                "data": {"release": ls.encode_release(rel)}}

    def object_for(self, obj: dict, name: str, namespace: str) -> dict:
        meta = obj["metadata"]
        out = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
               "metadata": {"name": _sub(meta["name"], name, namespace), "namespace": namespace,
                            "labels": _sub(dict(meta.get("labels") or {}), name, namespace),
                            "annotations": _sub(dict(meta.get("annotations") or {}), name, namespace)},
               "spec": _sub(copy.deepcopy(obj["spec"]), name, namespace)}
        for key in ("clusterIP", "clusterIPs"):  # the API server gives each Service its own
            out["spec"].pop(key, None)
        return out


class Seeder:
    def __init__(self, cluster, template: Template, namespaces: list[str], threads: int):
        self.cluster, self.template, self.namespaces, self.threads = cluster, template, namespaces, threads
        self._local = threading.local()
        self.start_time = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)

    def _post(self, path: str, body: dict) -> None:
        api = getattr(self._local, "api", None) or self.cluster.api_client()
        self._local.api = api
        api.call_api(path, "POST", body=body, auth_settings=["BearerToken"], _preload_content=False,
                     header_params={"Content-Type": "application/json", "Accept": "application/json"})

    def name(self, i: int) -> tuple[str, str]:
        return f"s{i:04d}", self.namespaces[i % len(self.namespaces)]

    def _seed_one(self, i: int) -> None:
        name, ns = self.name(i)
        t = self.template
        self._post(f"/api/v1/namespaces/{ns}/secrets", t.secret_for(name, ns, self.start_time + dt.timedelta(seconds=i)))
        self._post(f"/apis/apps/v1/namespaces/{ns}/deployments", t.object_for(t.deployment, name, ns))
        self._post(f"/api/v1/namespaces/{ns}/services", t.object_for(t.service, name, ns))

    def seed(self, total: int) -> None:
        start = time.perf_counter()
        with cf.ThreadPoolExecutor(max_workers=self.threads) as pool:
            list(pool.map(self._seed_one, range(total)))
        print(f"  seeded {total} servings (release Secret + Deployment + Service) in "
              f"{time.perf_counter() - start:.1f} s with {self.threads} threads", flush=True)


def make_template(cluster, arena: Path, helm: Path, env: dict[str, str]) -> Template:
    from kubernetes import client

    kc = str(cluster.admin.kubeconfig)
    cluster.create_namespace(TEMPLATE_NS)
    api = cluster.api_client()
    bl.run([str(arena), "serve", "custom", "--name", TEMPLATE, "--version", "v1", "--image", "nginx:1.27",
            "--restful-port", "8501", "--gpus", "1", "-n", TEMPLATE_NS, "--kubeconfig", kc, "--helm-binary",
            str(helm)], env=env, what="arena-helm serve custom (the template)")
    release = f"{TEMPLATE}-v1"
    secret = api.sanitize_for_serialization(client.CoreV1Api(api).read_namespaced_secret(
        f"sh.helm.release.v1.{release}.v1", TEMPLATE_NS))
    dep = api.sanitize_for_serialization(client.AppsV1Api(api).read_namespaced_deployment(release, TEMPLATE_NS))
    svc = api.sanitize_for_serialization(client.CoreV1Api(api).read_namespaced_service(release, TEMPLATE_NS))
    bl.run([str(helm), "uninstall", release, "-n", TEMPLATE_NS, "--kubeconfig", kc], env=env,
           what="helm uninstall (the template)")
    return Template(secret, dep, svc)


def main() -> int:
    args = parse_args()
    ls.LAUNCHER.append(bl.Launcher())  # before this process reads anything big
    arena = bl.find_arena_helm(args.arena_helm)
    version = args.helm or bl.helm_versions()[0]
    helm, kubectl = bl.helm_binary(version), bl.kubectl_binary()
    env, stats_env = bl.child_env(), bl.child_env(ARENA_HELM_STATS="1")
    print(f"serve_list_scale: {args.servings} custom servings over {args.namespaces} namespaces, {args.runs} runs; "
          f"helm {version}")
    cluster = None
    try:
        cluster = bl.start_test_cluster()
        kc = str(cluster.admin.kubeconfig)
        template = make_template(cluster, arena, helm, env)
        namespaces = [f"bench-{i:02d}" for i in range(args.namespaces)]
        for ns in namespaces:
            cluster.create_namespace(ns)
        seeder = Seeder(cluster, template, namespaces, args.threads)
        seeder.seed(args.servings)
        expected = {(ns, f"{name}-v1") for name, ns in map(seeder.name, range(args.servings))}
        for v in bl.helm_versions():  # the seeded format, as every helm reads it
            out = bl.run([str(bl.helm_binary(v)), "list", "-A", "-o", "json", "--max", "0", "--kubeconfig", kc],
                         env=env, what=f"helm {v} list -A").stdout
            seen = {(r["namespace"], r["name"]) for r in json.loads(out) if r["status"] == "deployed"}
            if seen != expected:
                raise bl.BenchError(f"helm {v} lists {len(seen)} of the {len(expected)} seeded releases")
        helm_argv = [str(helm), "list", "-A", "-o", "json", "--max", "0", "--kubeconfig", kc]
        kubectl_argv = [str(kubectl), "get", "deployments,services", "-A", "-o", "json", "--kubeconfig", kc]
        arena_argv = [str(arena), "serve", "list", "-A", "--kubeconfig", kc, "--helm-binary", str(helm)]
        base, arena_t, helm_t, kubectl_t, rss = [], [], [], [], []
        stats, rows = None, 0
        for i in range(args.runs + 1):  # the first of each: a warm-up
            h_s, _, _, _ = ls.run_measured(helm_argv, env, "helm list -A")
            k_s, _, _, _ = ls.run_measured(kubectl_argv, env, "kubectl get -A")
            a_s, a_rss, a_out, a_err = ls.run_measured(arena_argv, stats_env, "arena-helm serve list -A")
            stats = bl.parse_stats(a_err) or stats
            rows = len(a_out.splitlines()) - 1
            if i:
                helm_t.append(h_s)
                kubectl_t.append(k_s)
                base.append(h_s + k_s)
                arena_t.append(a_s)
                rss.append(a_rss)
        if rows != args.servings:
            raise bl.BenchError(f"arena-helm serve list -A printed {rows} rows; seeded {args.servings} servings")
    finally:
        if cluster is not None:
            bl.stop_test_cluster(cluster)
    ratio = bl.median(arena_t) / bl.median(base)
    print(f"  baseline median {bl.median(base):.3f} s (helm list {bl.median(helm_t):.3f} s + kubectl get "
          f"{bl.median(kubectl_t):.3f} s); arena-helm serve list -A median {bl.median(arena_t):.3f} s (p90 "
          f"{bl.percentile(arena_t, 90):.3f} s), peak RSS {max(rss):.0f} MB; "
          + (f"stats: helm_calls={stats[0]} api_requests={stats[1]}" if stats else "no stats line"), flush=True)
    ok = ratio <= GOAL_RATIO and stats is not None and stats[0] == 0
    print(bl.verdict(ok, f"at {args.servings} servings ratio {ratio:.2f} (goal <= {GOAL_RATIO}); helm processes "
                     f"{stats[0] if stats else '?'}"))
    return 0


if __name__ == "__main__":
    bl.main_guard(main)
