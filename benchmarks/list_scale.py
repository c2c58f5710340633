#!/usr/bin/env python3
"""How ``arena-helm list -A`` scales: 1,000 then 10,000 TFJob releases (10,000 pods; a third of the jobs
QUEUED) on the test API server.

1. Starts the test API server (``tests/support/kubecluster.py``).
2. Installs three template releases with the real helm (a single-Chief TFJob, a 2-worker TFJob and one of a
   LocalQueue, ``--queue-name``), reads back their release Secrets and TFJob objects, and uninstalls them
   again.
3. Seeds releases FAST, without running helm per release: for every job it writes the helm release Secret
   (helm's storage format: Secret ``sh.helm.release.v1.<name>.v1`` of type ``helm.sh/release.v1``, data
   ``release`` = base64(gzip(JSON release)), which the Secret's own base64 wraps once more) copied from a
   template with the name, namespace and times replaced, the TFJob object, and its 0, 1 or 2 pods (as the
   training operator would create them; they stay Pending: there is no node). A thread pool does it.
4. Checks at the first size that the real helm (every version the tests use) lists exactly the seeded
   releases (at the full size the baseline's own ``helm list`` run is checked).
5. Times ``arena-helm list -A`` against the baseline ``helm list -A -o json --max 0`` followed by
   ``kubectl get tfjobs,pytorchjobs,mpijobs,pods -A -o json`` (the two times summed), median of N runs,
   at the first size (default 1,000 jobs) and again after seeding up to the full size (default 10,000).
   Prints arena-helm's ``stats:`` line (ARENA_HELM_STATS=1) at both sizes, with the number of LIST pages
   the data takes (``kube.PAGE_SIZE`` items a page): the requests beyond the pages must be the same at both
   sizes. Peak memory is that of the whole process tree (max RSS of arena-helm and any child, from
   wait4(); ``list`` starts no helm any more), every command spawned by a small launcher process started
   before this script grows (``_benchlib.Launcher``: Linux counts the spawning process's resident set in a
   child's peak, so a command run from this script would measure at least this script's own size).
6. At each size, runs once each the other commands that read every job as ``list`` does: ``top job -A``,
   ``prune --dry-run -A --since 1h`` (the seeded jobs never finish: it finds none) and the shell completion of
   ``get`` (one namespace), with their time, peak RSS and requests; with ``--profile``, ``list -A`` once more
   under memray: the allocation sites live at the heap's peak.

Goals at the full size: time ratio arena-helm / baseline <= 0.5, peak RSS <= 250 MB (list at both sizes, and
the other commands), requests growing only with the number of pages.

    python benchmarks/list_scale.py             # 1,000 then 10,000 jobs, 3 runs each (~15 min on 2 cores)
    python benchmarks/list_scale.py --quick     # 50 then 500 jobs, 2 runs each
    python benchmarks/list_scale.py --profile   # and where list's memory goes (needs: pip install memray)
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures as cf
import copy
import datetime as dt
import gzip
import json
import math
import re
import tempfile
import threading
import time
from pathlib import Path

import _benchlib as bl

GOAL_RATIO = 0.5
GOAL_RSS_MB = 250.0
PAGE_SIZE = 500  # arena_helm.adapters.kube.PAGE_SIZE (checked at start)
KINDS_QUERY = "tfjobs,pytorchjobs,mpijobs,pods"
# Template releases: (release name, extra submit flags). The names are unusual strings so that replacing
# them in the manifest and values touches nothing else.
# The third is a job of a Kueue LocalQueue, seeded as Kueue holds one: suspended, no pods (QUEUED): list asks
# Kueue's visibility API for the positions once per LocalQueue (here one per namespace), whatever the jobs.
TEMPLATES = (("seedtplone", []), ("seedtpltwo", ["--workers", "2"]), ("seedtplq", ["--queue-name", "seedq"]))
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TEMPLATE_NS = "bench-template"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python benchmarks/list_scale.py",
        description="'arena-helm list -A' vs 'helm list -A' + 'kubectl get ... -A' with many seeded TFJob "
        f"releases; goals: time ratio <= {GOAL_RATIO}, peak RSS of arena-helm's process tree <= "
        f"{GOAL_RSS_MB:.0f} MB, requests growing only with the number of LIST pages.",
    )
    p.add_argument("--jobs", type=int, default=10000, help="total releases at the full size (default 10000)")
    p.add_argument("--first", type=int, default=1000, help="releases at the first measured size (default 1000)")
    p.add_argument("--namespaces", type=int, default=10,
                   help="namespaces the releases spread over (default 10)")
    p.add_argument("-n", "--runs", type=int, default=3,
                   help="measured runs of each side per size (default 3)")
    p.add_argument("--threads", type=int, default=24, help="threads seeding the API server (default 24)")
    p.add_argument("--helm", metavar="VERSION", default=None,
                   help="helm version used by arena-helm and the baseline (default: the first the tests use, "
                   "Helm 3); the seeded releases are checked with every version")
    p.add_argument("--quick", action="store_true", help="50 then 500 jobs, 2 runs each")
    p.add_argument("--arena-helm", help="the arena-helm console script (default: beside this Python, "
                   "else on PATH)")
    p.add_argument("--profile", action="store_true",
                   help="also run 'list -A' once per size under memray (pip install memray) and print the "
                   "allocation sites live at its peak of heap memory, by line and by arena-helm's own frame")
    args = p.parse_args(argv)
    if args.quick:
        args.jobs, args.first, args.runs = 500, 50, 2
    if not (1 <= args.first <= args.jobs) or args.namespaces < 1 or args.runs < 1 or args.threads < 1:
        p.error("need 1 <= --first <= --jobs, --namespaces >= 1, --runs >= 1, --threads >= 1")
    return args


# ---- helm's release storage ----------------------------------------------------------------------------
def decode_release(secret_data_release: str) -> dict:
    """Secret ``data.release`` (as the API returns it) -> the release dict."""
    raw = base64.b64decode(base64.b64decode(secret_data_release))
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def encode_release(release: dict) -> str:
    """The release dict -> Secret ``data.release`` (base64 of helm's own base64 of the gzipped JSON)."""
    packed = gzip.compress(json.dumps(release, separators=(",", ":")).encode(), compresslevel=6, mtime=0)
    return base64.b64encode(base64.b64encode(packed)).decode()


def rfc3339(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


class Template:
    """One real release (and its TFJob) installed by helm, to be copied under other names."""

    def __init__(self, name: str, secret: dict, tfjob: dict):
        self.name = name
        self.release = decode_release(secret["data"]["release"])
        self.secret_labels = dict(secret["metadata"].get("labels") or {})
        self.secret_type = secret.get("type", "helm.sh/release.v1")
        self.tfjob = tfjob

    def _sub(self, value, name: str, namespace: str):
        """Replace the template's release name and namespace in every string of ``value``."""
        if isinstance(value, str):
            return value.replace(self.name, name).replace(TEMPLATE_NS, namespace)
        if isinstance(value, list):
            return [self._sub(v, name, namespace) for v in value]
        if isinstance(value, dict):
            return {k: self._sub(v, name, namespace) for k, v in value.items()}
        return value

    def secret_for(self, name: str, namespace: str, when: dt.datetime) -> dict:
        rel = dict(self.release)
        rel["name"] = name
        rel["namespace"] = namespace
        rel["version"] = 1
        rel["manifest"] = self._sub(self.release.get("manifest", ""), name, namespace)
        rel["config"] = self._sub(self.release.get("config") or {}, name, namespace)
        info = dict(self.release.get("info") or {})
        info.update({"status": "deployed", "first_deployed": rfc3339(when), "last_deployed": rfc3339(when)})
        rel["info"] = info
        labels = dict(self.secret_labels)
        labels.update({"name": name, "owner": "helm", "status": "deployed", "version": "1"})
        if "modifiedAt" in labels:  # helm >= 3.13 stamps the Secret with the last change (Unix seconds)
            labels["modifiedAt"] = str(int(when.timestamp()))
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v1", "namespace": namespace, "labels": labels},
            "type": self.secret_type,
            "data": {"release": encode_release(rel)},
        }

    def tfjob_for(self, name: str, namespace: str) -> dict:
        job = {"apiVersion": self.tfjob["apiVersion"], "kind": self.tfjob["kind"]}
        meta = self.tfjob["metadata"]
        job["metadata"] = {
            "name": name,
            "namespace": namespace,
            "labels": self._sub(dict(meta.get("labels") or {}), name, namespace),
            "annotations": self._sub(dict(meta.get("annotations") or {}), name, namespace),
        }
        job["metadata"]["labels"].update(
            {"app.kubernetes.io/part-of": "arena-helm", "release": name, "app": "tfjob"}
        )
        job["spec"] = self._sub(copy.deepcopy(self.tfjob["spec"]), name, namespace)
        if QUEUE_LABEL in job["metadata"]["labels"]:  # as Kueue's webhook leaves it until admission
            job["spec"].setdefault("runPolicy", {})["suspend"] = True
        return job


def pods_for(job: dict, uid: str) -> list[dict]:
    """The pods the training operator would create for ``job`` (owner reference to it); none while suspended."""
    name = job["metadata"]["name"]
    if (job["spec"].get("runPolicy") or {}).get("suspend"):
        return []
    owner = {"apiVersion": job["apiVersion"], "kind": job["kind"], "name": name, "uid": uid,
             "controller": True, "blockOwnerDeletion": True}
    pods = []
    for rtype, spec in job["spec"]["tfReplicaSpecs"].items():
        rlow = rtype.lower()
        template = spec["template"]
        for index in range(int(spec.get("replicas", 1))):
            labels = dict(template.get("metadata", {}).get("labels") or {})
            labels.update({
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/operator-name": "tfjob-controller",
                "training.kubeflow.org/replica-type": rlow,
                "training.kubeflow.org/replica-index": str(index),
                "app.kubernetes.io/part-of": "arena-helm",
                "release": name,
            })
            if rlow == "chief":
                labels["training.kubeflow.org/job-role"] = "master"
            spec_copy = copy.deepcopy(template["spec"])
            spec_copy["automountServiceAccountToken"] = False
            pods.append({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{name}-{rlow}-{index}", "labels": labels, "ownerReferences": [owner]},
                "spec": spec_copy,
            })
    return pods


# ---- seeding -----------------------------------------------------------------------------------------
class Seeder:
    def __init__(self, cluster, templates: list[Template], namespaces: list[str], threads: int):
        self.cluster = cluster
        self.templates = templates
        self.namespaces = namespaces
        self.threads = threads
        self._local = threading.local()
        self.seeded = 0
        self.pods = 0
        self.start_time = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)

    def _api(self):
        api = getattr(self._local, "api", None)
        if api is None:
            api = self._local.api = self.cluster.api_client()
        return api

    def _post(self, path: str, body: dict) -> dict:
        resp = self._api().call_api(
            path, "POST", body=body,
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True,
        )
        return json.loads(resp.data)

    def job_name(self, i: int) -> tuple[str, str]:
        return f"job-{i:04d}", self.namespaces[i % len(self.namespaces)]

    def _seed_one(self, i: int) -> int:
        name, ns = self.job_name(i)
        tpl = self.templates[i % len(self.templates)]
        when = self.start_time + dt.timedelta(seconds=i)
        self._post(f"/api/v1/namespaces/{ns}/secrets", tpl.secret_for(name, ns, when))
        job = tpl.tfjob_for(name, ns)
        created = self._post(f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs", job)
        pods = pods_for(job, created["metadata"]["uid"])
        for pod in pods:
            self._post(f"/api/v1/namespaces/{ns}/pods", pod)
        return len(pods)

    def seed_up_to(self, total: int) -> float:
        """Create releases ``seeded .. total-1``; returns the seconds it took."""
        todo = range(self.seeded, total)
        start = time.perf_counter()
        with cf.ThreadPoolExecutor(max_workers=self.threads) as pool:
            for pods in pool.map(self._seed_one, todo):
                self.pods += pods
        seconds = time.perf_counter() - start
        print(f"  seeded jobs {self.seeded}..{total - 1} ({len(todo)} releases: Secret + TFJob + pods; "
              f"{self.pods} pods in all) in {seconds:.1f} s with {self.threads} threads", flush=True)
        self.seeded = total
        return seconds


def make_templates(cluster, arena: Path, helm: Path, env: dict[str, str]) -> list[Template]:
    """Install the template releases with the real helm, read back Secret + TFJob, uninstall them."""
    from kubernetes import client

    kc = str(cluster.admin.kubeconfig)
    cluster.create_namespace(TEMPLATE_NS)
    api = cluster.api_client()
    core = client.CoreV1Api(api)
    custom = client.CustomObjectsApi(api)
    templates = []
    for name, flags in TEMPLATES:
        bl.run([str(arena), "submit", "tfjob", "--name", name, "--image", "busybox:1.36", *flags,
                "-n", TEMPLATE_NS, "--kubeconfig", kc, "--helm-binary", str(helm), "python", "train.py"],
               env=env, what=f"arena-helm submit tfjob (template {name})")
        secret = api.sanitize_for_serialization(core.read_namespaced_secret(f"sh.helm.release.v1.{name}.v1",
                                                                            TEMPLATE_NS))
        tfjob = custom.get_namespaced_custom_object("kubeflow.org", "v1", TEMPLATE_NS, "tfjobs", name)
        templates.append(Template(name, secret, tfjob))
        bl.run([str(helm), "uninstall", name, "-n", TEMPLATE_NS, "--kubeconfig", kc], env=env,
               what=f"helm uninstall {name}")
    rel = templates[0].release
    meta = rel["chart"]["metadata"]
    print(f"  template release (written by helm {helm.parent.name.removeprefix('helm-')}): keys "
          f"{sorted(rel)}; chart {meta.get('name')}-{meta.get('version')}; "
          f"Secret labels {sorted(templates[0].secret_labels)}", flush=True)
    return templates


def check_helm_sees(cluster, expected: set[tuple[str, str]], env: dict[str, str]) -> None:
    """Every helm version must list exactly the seeded releases, all deployed, chart tfjob."""
    kc = str(cluster.admin.kubeconfig)
    for version in bl.helm_versions():
        helm = bl.helm_binary(version)
        proc = bl.run([str(helm), "list", "-A", "-o", "json", "--max", "0", "--kubeconfig", kc], env=env,
                      what=f"helm {version} list -A")
        listed = json.loads(proc.stdout or b"[]")
        seen = {(r["namespace"], r["name"]) for r in listed}
        bad = [r for r in listed
               if r.get("status") != "deployed" or not str(r.get("chart", "")).startswith("tfjob-")]
        if seen != expected or bad:
            missing = sorted(expected - seen)[:5]
            extra = sorted(seen - expected)[:5]
            raise bl.BenchError(
                f"helm {version} lists {len(seen)} releases, expected {len(expected)} "
                f"(missing e.g. {missing}, unexpected e.g. {extra}, bad status/chart e.g. {bad[:1]}): "
                "the seeded release Secrets are not in a format helm accepts"
            )
        chart = listed[0]["chart"] if listed else "-"
        print(f"  helm {version} list -A sees {len(listed)} releases (all deployed, chart {chart})",
              flush=True)


# ---- measuring ---------------------------------------------------------------------------------------------
class BaselineFailed(bl.BenchError):
    """The baseline's helm list failed (at 10,000 releases the API server may cut its one unpaged LIST of
    every release payload): ``seconds`` is how long it ran, a lower bound of what it would have taken."""

    def __init__(self, message: str, seconds: float):
        super().__init__(message)
        self.seconds = seconds


LAUNCHER: list[bl.Launcher] = []  # started first thing in main(), while this process is small


def run_measured(argv: list[str], env: dict[str, str], what: str) -> tuple[float, float, bytes, bytes]:
    """Run ``argv`` from the launcher (``_benchlib.Launcher``: this process's own size would otherwise count
    in the child's peak); returns (wall seconds, max RSS MB of it and its reaped children, stdout, stderr)."""
    seconds, rss, code, stdout, stderr = LAUNCHER[0].run(argv, env)
    if code != 0:
        text = stderr.decode(errors="replace")[-2000:]
        if what.startswith("helm list"):
            raise BaselineFailed(f"{what} failed (exit {code}) after {seconds:.1f} s: {text.strip()}", seconds)
        raise bl.BenchError(f"{what} failed (exit {code}): {text}")
    return seconds, rss, stdout, stderr


PAGES_RE = re.compile(r"list_pages=(\d+)")


def other_commands(size: int, arena: Path, helm: Path, kc: str, namespaces: int) -> list[tuple[str, list[str], dict]]:
    """The other commands that read every job the way ``list`` does: (label, argv, extra environment).
    Completion answers for one namespace (``get`` takes no -A): its size/namespaces jobs."""
    common = ["--kubeconfig", kc, "--helm-binary", str(helm)]
    words = f"arena-helm get -n bench-00 --kubeconfig {kc} --helm-binary {helm} job-"
    return [
        ("top job -A", [str(arena), "top", "job", "-A", *common], {}),
        ("prune --dry-run -A", [str(arena), "prune", "--dry-run", "-A", "--since", "1h", *common], {}),
        (f"completion of get (namespace bench-00, {math.ceil(size / namespaces)} jobs)", [str(arena)],
         {"_ARENA_HELM_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}),
    ]


def measure_others(size: int, arena: Path, helm: Path, kc: str, namespaces: int, env: dict[str, str]) -> list[dict]:
    """One run of each of ``other_commands`` (after list's runs: the same warm caches): seconds, peak RSS of
    its process tree, requests; each must print what it read (rows, names)."""
    out = []
    for label, argv, extra in other_commands(size, arena, helm, kc, namespaces):
        seconds, rss, stdout, stderr = run_measured(argv, {**env, **extra}, f"arena-helm {label}")
        lines = stdout.decode(errors="replace").splitlines()
        if label.startswith("top"):
            printed = sum(1 for line in lines if line.startswith("bench-"))
            expected = size
        elif label.startswith("prune"):
            printed = 1 if lines and lines[0].startswith("nothing to prune") else -1
            expected = 1  # the seeded jobs never finish: it finds none and says so
        else:
            printed = len(lines)
            expected = math.ceil(size / namespaces)
        if printed != expected:
            raise bl.BenchError(f"arena-helm {label} at {size} jobs printed {printed} of {expected} expected lines: "
                                f"{stdout[:300]!r}")
        stats = bl.parse_stats(stderr)
        out.append({"label": label, "seconds": seconds, "rss": rss, "stats": stats})
        print(f"  [{size} jobs] arena-helm {label}: {seconds:.3f} s, peak RSS {rss:.0f} MB, "
              f"{stats[1] if stats else '-'} API requests", flush=True)
    return out


def profile(size: int, arena: Path, arena_args: list[str], env: dict[str, str]) -> None:
    """``arena-helm list -A`` once under memray: the heap's peak and the allocation sites live at that
    moment (the leaf line; the innermost arena-helm frame), largest first."""
    import collections

    try:
        import memray
    except ImportError:
        raise bl.BenchError("--profile needs memray in this Python (pip install memray)") from None
    with tempfile.TemporaryDirectory(prefix="arena-helm-memray-") as folder:
        out = Path(folder) / "list.bin"
        python = bl.script_interpreter(arena)
        argv = [python, "-m", "memray", "run", "--quiet", "--force", "--trace-python-allocators", "-o", str(out),
                "-m", "arena_helm", *arena_args]
        seconds, rss, _, _ = run_measured(argv, env, "arena-helm list -A under memray")
        reader = memray.FileReader(str(out))
        peak = reader.metadata.peak_memory
        by_leaf: collections.Counter = collections.Counter()
        by_ours: collections.Counter = collections.Counter()
        by_phase: collections.Counter = collections.Counter()
        for rec in reader.get_high_watermark_allocation_records(merge_threads=True):
            stack = rec.stack_trace()  # innermost frame first
            leaf = _site(stack[0]) if stack else "(no Python frame: interpreter, imports of C code)"
            ours = [f for f in stack if "arena_helm/" in f[1]]
            by_leaf[leaf] += rec.size
            by_ours[_site(ours[0]) if ours else "(no arena_helm frame: start-up)"] += rec.size
            # the outermost frame below the CLI: the LIST or step of the read the memory belongs to
            steps = [f for f in ours if "/cli/" not in f[1] and not f[1].endswith("__main__.py")]
            by_phase[_site(steps[-1]) if steps else "(the CLI itself: imports, start-up, output)"] += rec.size
        reader.close()
    print(f"  [{size} jobs] memray: heap peak {peak / 2**20:.0f} MB (RSS under memray {rss:.0f} MB, {seconds:.1f} s); "
          "live at the peak, by line:", flush=True)
    for site, size_b in by_leaf.most_common(12):
        print(f"      {size_b / 2**20:7.1f} MB  {site}")
    print(f"  [{size} jobs] ... by the innermost arena_helm frame:")
    for site, size_b in by_ours.most_common(12):
        print(f"      {size_b / 2**20:7.1f} MB  {site}")
    print(f"  [{size} jobs] ... by the step of the read (the outermost arena_helm frame below the CLI):")
    for site, size_b in by_phase.most_common(8):
        print(f"      {size_b / 2**20:7.1f} MB  {site}")


def _site(frame: tuple[str, str, int]) -> str:
    """A stack frame as ``package/module.py:line function`` (no folder of this machine)."""
    function, filename, line = frame
    parts = filename.replace("\\", "/").split("/")
    for anchor in ("site-packages", "lib"):
        if anchor in parts:
            parts = parts[len(parts) - parts[::-1].index(anchor):]
            break
    else:
        parts = parts[-2:]
    return f"{'/'.join(parts)}:{line} {function}"


def arena_list_available(arena: Path, env: dict[str, str]) -> bool:
    proc = bl.run([str(arena), "list", "--help"], env=env, check=False)
    return proc.returncode == 0


def measure(size: int, pods: int, args, arena: Path | None, helm: Path, kubectl: Path, kc: str) -> dict:
    env = bl.child_env()
    stats_env = bl.child_env(ARENA_HELM_STATS="1")
    helm_argv = [str(helm), "list", "-A", "-o", "json", "--max", "0", "--kubeconfig", kc]
    kubectl_argv = [str(kubectl), "get", KINDS_QUERY, "-A", "-o", "json", "--kubeconfig", kc]
    arena_argv = [str(arena), "list", "-A", "--kubeconfig", kc, "--helm-binary", str(helm)] if arena else None

    base_t, helm_t, kubectl_t, arena_t, arena_rss, base_rss = [], [], [], [], [], []
    stats = pages = None
    rows = 0
    # One unmeasured warm-up of each (discovery cache, page cache), then N interleaved runs.
    helm_failed = []
    for i in range(args.runs + 1):
        try:
            h_s, h_rss, h_out, _ = run_measured(helm_argv, env, "helm list -A")
        except BaselineFailed as exc:  # its time so far is a lower bound: the ratio becomes an upper bound
            print(f"  [{size} jobs] baseline: {exc}", flush=True)
            helm_failed.append(exc.seconds)
            h_s, h_rss, h_out = exc.seconds, 0.0, None
        k_s, k_rss, k_out, _ = run_measured(kubectl_argv, env, "kubectl get -A")
        if i == 0:
            n_rel = len(json.loads(h_out or b"[]")) if h_out is not None else size
            items = json.loads(k_out)["items"]
            n_pods = sum(1 for it in items if it.get("kind") == "Pod")
            del items
            print(f"  [{size} jobs] baseline sees {n_rel} releases and {len(json.loads(k_out)['items']) - n_pods} "
                  f"jobs + {n_pods} pods", flush=True)
            if n_rel != size or n_pods != pods:
                raise bl.BenchError(f"the baseline sees {n_rel} releases and {n_pods} pods; seeded {size} and {pods}")
        else:
            helm_t.append(h_s)
            kubectl_t.append(k_s)
            base_t.append(h_s + k_s)
            base_rss.append(max(h_rss, k_rss))
        del h_out, k_out
        if arena_argv:
            a_s, a_rss, a_out, a_err = run_measured(arena_argv, stats_env, "arena-helm list -A")
            stats = bl.parse_stats(a_err) or stats
            found = PAGES_RE.search(a_err.decode(errors="replace"))
            pages = int(found.group(1)) if found else pages
            rows = max(len(a_out.splitlines()) - 1, 0)
            if i > 0:
                arena_t.append(a_s)
                arena_rss.append(a_rss)
    if arena_argv and rows != size:
        raise bl.BenchError(f"arena-helm list -A printed {rows} rows; seeded {size} jobs")
    others = measure_others(size, arena, helm, kc, args.namespaces, stats_env) if arena_argv else []
    if arena_argv and args.profile:
        profile(size, arena, arena_argv[1:], stats_env)

    r = {"size": size, "pods": pods, "base": bl.median(base_t), "helm": bl.median(helm_t), "helm_failed": helm_failed,
         "kubectl": bl.median(kubectl_t), "base_rss": max(base_rss), "arena": None, "stats": stats, "pages": pages,
         "rss": None, "others": others}
    if helm_failed:
        print(f"  [{size} jobs] helm list -A failed in {len(helm_failed)} of {args.runs + 1} runs: the baseline "
              "times below count those runs up to their failure (lower bounds)", flush=True)
    print(f"  [{size} jobs] baseline median {r['base']:.3f} s (medians: helm list {r['helm']:.3f} s, kubectl get "
          f"{r['kubectl']:.3f} s; p90 {bl.percentile(base_t, 90):.3f} s; peak RSS helm/kubectl "
          f"{r['base_rss']:.0f} MB)", flush=True)
    if arena_argv:
        r["arena"] = bl.median(arena_t)
        r["rss"] = max(arena_rss)
        r["ratio"] = r["arena"] / r["base"]
        # the pages the data needs at least: TFJobs and pods, PAGE_SIZE a page; the release metadata (served
        # by the watch cache in one response) and the LISTs that come back empty (pytorchjobs, mpijobs,
        # TensorBoard services) one each
        r["min_pages"] = math.ceil(size / PAGE_SIZE) + math.ceil(pods / PAGE_SIZE) + 4
        stats_line = (f"stats: helm_calls={stats[0]} api_requests={stats[1]} list_pages={pages}" if stats
                      else "no stats: line printed")
        p90 = bl.percentile(arena_t, 90)
        print(f"  [{size} jobs] arena-helm list -A median {r['arena']:.3f} s (p90 {p90:.3f}"
              f" s)   ratio {r['ratio']:.2f}   peak RSS {r['rss']:.0f} MB   {stats_line} (pages needed at least: "
              f"{r['min_pages']})", flush=True)
    return r


def main() -> int:
    args = parse_args()
    LAUNCHER.append(bl.Launcher())  # before this process reads anything big
    arena = bl.find_arena_helm(args.arena_helm)
    version = args.helm or bl.helm_versions()[0]
    helm = bl.helm_binary(version)
    kubectl = bl.kubectl_binary()
    for v in bl.helm_versions():
        bl.helm_binary(v)
    env = bl.child_env()
    from arena_helm.adapters import kube

    if kube.PAGE_SIZE != PAGE_SIZE:
        raise bl.BenchError(f"arena_helm.adapters.kube.PAGE_SIZE is {kube.PAGE_SIZE}; this script expects {PAGE_SIZE}")

    print(f"list_scale: {args.first} then {args.jobs} TFJob releases over {args.namespaces} namespaces, "
          f"{args.runs} runs each; arena-helm and baseline with helm {version}; commands run from a launcher "
          f"process of {LAUNCHER[0].floor_mb:.0f} MB (the floor of every peak RSS below)")
    have_list = arena_list_available(arena, env)
    if not have_list:
        print("SKIP: arena-helm list not available yet ('arena-helm list --help' failed); measuring the "
              "baseline only")

    cluster = None
    results = []
    wall = time.perf_counter()
    try:
        cluster = bl.start_test_cluster()
        kc = str(cluster.admin.kubeconfig)
        templates = make_templates(cluster, arena, helm, env)
        namespaces = [f"bench-{i:02d}" for i in range(args.namespaces)]
        start = time.perf_counter()
        for ns in namespaces:
            cluster.create_namespace(ns)
        print(f"  created {len(namespaces)} namespaces in {time.perf_counter() - start:.1f} s", flush=True)
        seeder = Seeder(cluster, templates, namespaces, args.threads)
        sizes = (args.first, args.jobs) if args.first < args.jobs else (args.jobs,)
        for n, size in enumerate(sizes):
            seeder.seed_up_to(size)
            if n == 0:  # the seeded format, checked with every helm version once
                check_helm_sees(cluster, {seeder.job_name(i)[::-1] for i in range(size)}, env)
            results.append(measure(size, seeder.pods, args, arena if have_list else None, helm, kubectl, kc))
    finally:
        if cluster is not None:
            bl.stop_test_cluster(cluster)
    print(f"  whole run {time.perf_counter() - wall:.0f} s", flush=True)

    full = results[-1]
    if not have_list:
        print(bl.verdict(False, f"arena-helm list not available yet; baseline at {full['size']} jobs "
                         f"{full['base']:.3f} s (goals: ratio <= {GOAL_RATIO}, "
                         f"peak RSS <= {GOAL_RSS_MB:.0f} MB)"))
        return 0
    # requests beyond the LIST pages (discovery, ...) must not grow with the jobs
    extra = [r["stats"][1] - r["pages"] if r["stats"] and r["pages"] is not None else None for r in results]
    constant = "constant" if len(set(extra)) == 1 and extra[0] is not None and all(
        r["pages"] <= r["min_pages"] + 3 for r in results) else "NOT constant"
    stats_text = " -> ".join(f"{r['size']}: {r['stats'][1]} requests, {r['pages']} of them pages" if r["stats"] else
                             f"{r['size']}: none" for r in results)
    others_rss = max((o["rss"] for r in results for o in r["others"]), default=0.0)
    ok = (full["ratio"] <= GOAL_RATIO and all(r["rss"] <= GOAL_RSS_MB for r in results) and constant == "constant"
          and full["stats"][0] == 0 and others_rss <= GOAL_RSS_MB)
    if full["helm_failed"]:
        print(f"  note: the baseline's helm list -A failed {len(full['helm_failed'])} time(s) at {full['size']} jobs; "
              "its time counts up to the failure, so the ratio is an upper bound")
    print(bl.verdict(ok, f"at {full['size']} jobs ratio {full['ratio']:.2f} (goal <= {GOAL_RATIO}), peak RSS of "
                     f"arena-helm's process tree {full['rss']:.0f} MB (goal <= {GOAL_RSS_MB:.0f} MB; helm alone "
                     f"in the baseline {full['base_rss']:.0f} MB); top job -A, prune --dry-run -A and completion at "
                     f"most {others_rss:.0f} MB; helm processes {full['stats'][0]}; "
                     f"{stats_text} (requests beyond the pages: {extra}, {constant})"))
    return 0


if __name__ == "__main__":
    bl.main_guard(main)
