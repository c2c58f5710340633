#!/usr/bin/env python3
"""What ``arena-helm submit tfjob`` costs on top of a plain ``helm install`` of the same chart and values.

Starts the test API server (``tests/support/kubecluster.py``), then for each helm version (3 and 4):

* arena-helm: ``arena-helm submit tfjob --name job-NN --image IMG -n NS --kubeconfig KC --helm-binary HELM
  COMMAND`` into namespace ``bench-arena-helmV``;
* baseline: ``helm install job-NN CHART -n NS2 --kubeconfig KC --values VALUES`` of the same chart
  (assembled once with ``arena_helm.adapters.charts.assemble_chart``) with the very values arena-helm generates
  (``--dry-run --output values``, written to a file before the clock starts) into ``bench-plain-helmV``.

Both are subprocesses, interleaved, after one unmeasured warm-up install each, and with them (interleaved too)
``python -c "import typer"`` and the floor (typer plus one pydantic model validated) with the console
script's interpreter. Reports the median seconds per install of both, their difference and ratio, and the
difference and the floor as multiples of the typer import. Goals: difference <= 0.4 s, and (issue "one
module per job kind") difference <= 2x the typer import, with every helm version.

    python benchmarks/submit_overhead.py            # 10 releases of each per helm version
    python benchmarks/submit_overhead.py --quick    # 3 releases of each
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import _benchlib as bl

GOAL_DIFF = 0.4  # seconds


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python benchmarks/submit_overhead.py",
        description="Per-install time of 'arena-helm submit tfjob' vs a plain 'helm install' of the same "
        f"chart and values, against the test API server; goal: difference of medians <= {GOAL_DIFF} s.",
    )
    p.add_argument("-n", "--releases", type=int, default=10,
                   help="measured installs of each kind per helm version (default 10)")
    p.add_argument("--quick", action="store_true", help="3 installs of each kind per helm version")
    p.add_argument("--helm", action="append", metavar="VERSION",
                   help="helm version to measure (repeatable; default: every version the tests use)")
    p.add_argument("--image", default="busybox:1.36", help="image of the jobs (never pulled: no kubelet)")
    p.add_argument("--arena-helm", help="the arena-helm console script (default: beside this Python, "
                   "else on PATH)")
    args = p.parse_args(argv)
    if args.quick:
        args.releases = 3
    if args.releases < 1:
        p.error("--releases must be >= 1")
    return args


TRAIN_COMMAND = ["python", "train.py", "--epochs", "1"]


def submit_argv(arena: Path, name: str, image: str, namespace: str, kubeconfig: Path,
                helm: Path) -> list[str]:
    # Options before the command words: everything after the first positional is the training command.
    return [str(arena), "submit", "tfjob", "--name", name, "--image", image, "-n", namespace,
            "--kubeconfig", str(kubeconfig), "--helm-binary", str(helm), *TRAIN_COMMAND]


def values_file(arena: Path, name: str, image: str, helm: Path, dest: Path, env: dict[str, str]) -> Path:
    """The chart values arena-helm would install for ``name``, as a YAML file."""
    proc = bl.run([str(arena), "submit", "tfjob", "--name", name, "--image", image,
                   "--helm-binary", str(helm), "--dry-run", "--output", "values", *TRAIN_COMMAND],
                  env=env, what=f"arena-helm submit tfjob --dry-run --output values ({name})")
    dest.write_bytes(proc.stdout)
    return dest


def measure_version(version: str, args, arena: Path, python: str, cluster, chart: Path, work: Path) -> dict:
    helm = bl.helm_binary(version)
    major = version.split(".")[0]
    kubeconfig = cluster.admin.kubeconfig
    ns_arena, ns_plain = f"bench-arena-helm{major}", f"bench-plain-helm{major}"
    cluster.create_namespace(ns_arena)
    cluster.create_namespace(ns_plain)
    env = bl.child_env()
    stats_env = bl.child_env(ARENA_HELM_STATS="1")

    names = ["warmup"] + [f"job-{i:02d}" for i in range(args.releases)]
    vals = {n: values_file(arena, n, args.image, helm, work / f"values-{major}-{n}.yaml", env) for n in names}

    arena_t: list[float] = []
    plain_t: list[float] = []
    typer_t: list[float] = []
    floor_t: list[float] = []
    stats = None
    for i, name in enumerate(names):
        runs = [
            ("arena", submit_argv(arena, name, args.image, ns_arena, kubeconfig, helm), stats_env),
            ("plain", [str(helm), "install", name, str(chart), "--namespace", ns_plain, "--kubeconfig",
                       str(kubeconfig), "--values", str(vals[name])], env),
            ("typer", [python, "-c", bl.TYPER_CODE], env),
            ("floor", [python, "-c", bl.FLOOR_CODE], env),
        ]
        if i % 2:
            runs.reverse()  # alternate which goes first
        for kind, argv, run_env in runs:
            seconds, proc = bl.timed(argv, env=run_env, what=f"{kind} install of {name} (helm {version})")
            if kind == "arena":
                stats = bl.parse_stats(proc.stderr) or stats
            if name == "warmup":
                continue
            {"arena": arena_t, "plain": plain_t, "typer": typer_t, "floor": floor_t}[kind].append(seconds)

    # Both sets of releases must really be there (and deployed).
    for ns in (ns_arena, ns_plain):
        proc = bl.run([str(helm), "list", "--namespace", ns, "--kubeconfig", str(kubeconfig), "--max", "0",
                       "--output", "json"], env=env, what=f"helm list -n {ns}")
        deployed = sum(1 for r in json.loads(proc.stdout or b"[]") if r.get("status") == "deployed")
        if deployed != len(names):
            raise bl.BenchError(
                f"helm {version}: {deployed} deployed releases in {ns}, expected {len(names)}"
            )

    a, p, ty, fl = bl.median(arena_t), bl.median(plain_t), bl.median(typer_t), bl.median(floor_t)
    return {"version": version, "arena": a, "plain": p, "diff": a - p, "ratio": a / p, "stats": stats,
            "arena_p90": bl.percentile(arena_t, 90), "plain_p90": bl.percentile(plain_t, 90),
            "typer": ty, "typers": (a - p) / ty, "floor": fl, "floor_typers": fl / ty}


def main() -> int:
    args = parse_args()
    arena = bl.find_arena_helm(args.arena_helm)
    python = bl.script_interpreter(arena)
    versions = tuple(args.helm) if args.helm else bl.helm_versions()
    for v in versions:
        bl.helm_binary(v)  # fail early if one is missing

    from arena_helm.adapters.charts import assemble_chart

    print(f"submit_overhead: {args.releases} installs of each kind per helm version "
          f"({', '.join(versions)}), 1 warm-up each")
    work = Path(tempfile.mkdtemp(prefix="arena-helm-bench-"))
    cluster = None
    results = []
    try:
        chart = assemble_chart("tfjob", work / "chart")
        cluster = bl.start_test_cluster()
        for version in versions:
            r = measure_version(version, args, arena, python, cluster, chart, work)
            results.append(r)
            stats = f"   arena-helm stats: helm_calls={r['stats'][0]} api_requests={r['stats'][1]}" \
                if r["stats"] else ""
            print(f"  helm {version}: arena-helm submit median {r['arena']:.3f} s (p90 {r['arena_p90']:.3f})"
                  f" | plain helm install median {r['plain']:.3f} s (p90 {r['plain_p90']:.3f})")
            print(f"  helm {version}: difference {r['diff']:+.3f} s   ratio {r['ratio']:.2f}{stats}")
            print(f"  helm {version}: import typer median {r['typer']:.3f} s | difference = {r['typers']:.2f}x typer"
                  f" | floor (typer + one pydantic model) {r['floor']:.3f} s = {r['floor_typers']:.2f}x typer",
                  flush=True)
    finally:
        if cluster is not None:
            bl.stop_test_cluster(cluster)
        shutil.rmtree(work, ignore_errors=True)

    worst = max(results, key=lambda r: r["diff"])
    ok = all(r["diff"] <= GOAL_DIFF for r in results)
    detail = ", ".join(f"helm {r['version']} {r['diff']:+.3f} s (ratio {r['ratio']:.2f})" for r in results)
    print(bl.verdict(ok, f"submit overhead {detail}; worst {worst['diff']:+.3f} s (goal <= {GOAL_DIFF} s)"))
    worst = max(results, key=lambda r: r["typers"])
    ok = all(r["typers"] <= bl.TYPER_GOAL for r in results)
    print(bl.verdict(ok, f"submit overhead at most {worst['typers']:.2f}x 'import typer' (helm {worst['version']}; "
                         f"goal <= {bl.TYPER_GOAL}x; the floor {worst['floor_typers']:.2f}x)"))
    return 0


if __name__ == "__main__":
    bl.main_guard(main)
