#!/usr/bin/env python3
"""What ``arena-helm submit KIND --dry-run`` costs on top of ``helm template`` of the same chart and values,
against what ``python -c "import typer"`` costs, all measured in this run (no cluster needed).

For each job kind (every kind of arena_helm.core.jobkinds) and each helm version:

* arena-helm: ``arena-helm submit KIND --name bench --image IMG --gpus 1 --cpu 2 --memory 4Gi
  --helm-binary HELM --dry-run python train.py`` (the console script, as a subprocess);
* baseline: ``helm template bench CHART --values VALUES`` of the same chart (assembled once with
  ``arena_helm.adapters.charts.assemble_chart``) and the very values arena-helm renders (``--dry-run -o values``,
  written to a file before the clock starts);
* the unit: ``python -c "import typer"`` with the console script's interpreter;
* the floor: ``python -c`` importing typer and validating one one-field pydantic model (what any Typer CLI
  with a pydantic spec pays before its own code; pydantic's first validator also runs its plugin discovery,
  importing importlib.metadata), printed as a multiple of the unit beside the goal.

The four run interleaved, N times each after a warm-up; the script prints every median (and p90), the
overhead (median arena-helm minus median helm template) and that overhead as a multiple of the typer
import, then arena-helm's own share: the overhead less the floor. Goal (issue "one shape for every family"):
the own share <= 1x the typer import, for every kind and helm (the earlier goal, the whole overhead <= 2x,
sits below the floor itself: its line is printed for the record).

    python benchmarks/dry_run_overhead.py            # 7 runs of each
    python benchmarks/dry_run_overhead.py --quick    # 3 runs of each, helm 4 and tfjob only
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import _benchlib as bl  # puts the repository on sys.path

from arena_helm.core.jobkinds import KINDS as REGISTRY  # noqa: E402

GOAL = bl.OWN_SHARE_GOAL  # (overhead - floor) / (python -c 'import typer')
KINDS = tuple(k.key for k in REGISTRY)  # every kind of arena_helm.core.jobkinds
COMMAND = ["python", "train.py", "--epochs", "1"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python benchmarks/dry_run_overhead.py",
        description="Per-render time of 'arena-helm submit KIND --dry-run' vs 'helm template' of the same chart "
        f"and values; goal: the difference of medians less the floor (typer + one pydantic model) <= {GOAL}x "
        "'python -c \"import typer\"'.")
    p.add_argument("-n", "--runs", type=int, default=7, help="measured runs of each command (default 7)")
    p.add_argument("--kind", action="append", choices=KINDS, help="job kind (repeatable; default: every kind)")
    p.add_argument("--helm", action="append", metavar="VERSION",
                   help="helm version (repeatable; default: every version the tests use)")
    p.add_argument("--image", default="busybox:1.36")
    p.add_argument("--quick", action="store_true", help="3 runs, tfjob, the newest helm")
    p.add_argument("--arena-helm", help="the arena-helm console script (default: beside this Python, "
                   "else on PATH)")
    args = p.parse_args(argv)
    if args.quick:
        args.runs = 3
        args.kind = args.kind or ["tfjob"]
        args.helm = args.helm or [bl.helm_versions()[-1]]
    if args.runs < 1:
        p.error("--runs must be >= 1")
    return args


def submit_argv(arena: Path, kind: str, image: str, helm: Path, *extra: str) -> list[str]:
    return [str(arena), "submit", kind, "--name", "bench", "--image", image, "--gpus", "1", "--cpu", "2",
            "--memory", "4Gi", "--helm-binary", str(helm), "--dry-run", *extra, *COMMAND]


def main() -> int:
    args = parse_args()
    arena = bl.find_arena_helm(args.arena_helm)
    python = bl.script_interpreter(arena)
    versions = tuple(args.helm) if args.helm else bl.helm_versions()
    kinds = tuple(args.kind) if args.kind else KINDS
    env = bl.child_env()
    from arena_helm.adapters.charts import assemble_chart

    print(f"dry_run_overhead: {args.runs} runs of each, interleaved after a warm-up; kinds {', '.join(kinds)}; "
          f"helm {', '.join(versions)}")
    typer_cmd = [python, "-c", bl.TYPER_CODE]
    floor_cmd = [python, "-c", bl.FLOOR_CODE]
    work = Path(tempfile.mkdtemp(prefix="arena-helm-bench-"))
    results = []
    try:
        for kind in kinds:
            chart = assemble_chart(kind, work / kind)
            for version in versions:
                helm = bl.helm_binary(version)
                values = work / f"{kind}-{version}.yaml"
                values.write_bytes(bl.run(submit_argv(arena, kind, args.image, helm, "-o", "values"), env=env,
                                          what=f"{kind} --dry-run -o values").stdout)
                runs = {
                    "arena": submit_argv(arena, kind, args.image, helm),
                    "template": [str(helm), "template", "bench", str(chart), "--values", str(values)],
                    "typer": typer_cmd,
                    "floor": floor_cmd,
                }
                for name, argv in runs.items():  # warm-up, and the two renders must agree
                    bl.run(argv, env=env, what=f"{name} ({kind}, helm {version})")
                times: dict[str, list[float]] = {k: [] for k in runs}
                for i in range(args.runs):
                    order = list(runs) if i % 2 == 0 else list(reversed(runs))
                    for name in order:
                        t, _ = bl.timed(runs[name], env=env, what=f"{name} ({kind}, helm {version})")
                        times[name].append(t)
                med = {k: bl.median(v) for k, v in times.items()}
                p90 = {k: bl.percentile(v, 90) for k, v in times.items()}
                over = med["arena"] - med["template"]
                ratio = over / med["typer"]
                floor = med["floor"] / med["typer"]
                own = (over - med["floor"]) / med["typer"]
                results.append((kind, version, over, ratio, own))
                print(f"  {kind:<10} helm {version}: submit --dry-run {med['arena']:.3f} s (p90 {p90['arena']:.3f})"
                      f" | helm template {med['template']:.3f} s (p90 {p90['template']:.3f})"
                      f" | import typer {med['typer']:.3f} s (p90 {p90['typer']:.3f})"
                      f" | overhead {over:+.3f} s = {ratio:.2f}x typer"
                      f" | floor (typer + one pydantic model) {med['floor']:.3f} s = {floor:.2f}x typer"
                      f" | own share {over - med['floor']:+.3f} s = {own:.2f}x typer", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    worst = max(results, key=lambda r: r[4])
    ok = all(r[4] <= GOAL for r in results)
    print(bl.verdict(ok, f"arena-helm's own share of a dry run at most {worst[4]:.2f}x 'import typer' ({worst[0]}, "
                         f"helm {worst[1]}: overhead {worst[2]:+.3f} s less the floor; goal <= {GOAL}x)"))
    whole = max(results, key=lambda r: r[3])
    print(bl.verdict(all(r[3] <= bl.TYPER_GOAL for r in results),
                     f"(for the record) the whole dry-run overhead at most {whole[3]:.2f}x 'import typer' "
                     f"({whole[0]}, helm {whole[1]}; earlier goal <= {bl.TYPER_GOAL}x, below the floor)"))
    return 0


if __name__ == "__main__":
    bl.main_guard(main)
