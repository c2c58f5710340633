#!/usr/bin/env python3
"""Startup time of the CLI: ``arena-helm --help`` vs ``python -c "import typer"`` (same interpreter).

Runs both commands N times each (interleaved, after a warm-up), reports the median and p90 wall time in
milliseconds and the ratio of the medians. Goal: ratio <= 1.3, i.e. ``--help`` costs at most 30% more
than importing Typer alone. Also reports which heavy modules (kubernetes, pyhelm3, pydantic, yaml)
``--help`` imports: it should import none of them.

    python benchmarks/startup.py            # 20 runs each, 2 warm-up
    python benchmarks/startup.py --quick    # 5 runs each, 1 warm-up
"""

from __future__ import annotations

import argparse
import json

import _benchlib as bl

GOAL_RATIO = 1.3
HEAVY_MODULES = ("kubernetes", "pyhelm3", "pydantic", "yaml")
MARKER = "@@BENCH-MODULES@@"

# Runs in a child interpreter: the console script's own entry point with ``--help``, then reports which
# of the heavy top-level packages ended up in sys.modules.
PROBE = f"""
import contextlib, io, json, sys
sys.argv = ["arena-helm", "--help"]
from arena_helm.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
names = {list(HEAVY_MODULES)!r}
print({MARKER!r} + json.dumps([n for n in names if n in sys.modules]))
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python benchmarks/startup.py",
        description="Wall time of 'arena-helm --help' vs 'python -c \"import typer\"'; goal: ratio of "
        f"medians <= {GOAL_RATIO}.",
    )
    p.add_argument("-n", "--runs", type=int, default=20, help="measured runs of each command (default 20)")
    p.add_argument("--warmup", type=int, default=2, help="unmeasured warm-up runs of each (default 2)")
    p.add_argument("--quick", action="store_true", help="5 runs, 1 warm-up")
    p.add_argument("--arena-helm", help="the arena-helm console script (default: beside this Python, "
                   "else on PATH)")
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.warmup = 5, 1
    if args.runs < 1 or args.warmup < 0:
        p.error("--runs must be >= 1 and --warmup >= 0")
    return args


def heavy_imports(python: str, env: dict[str, str]) -> list[str]:
    proc = bl.run([python, "-c", PROBE], env=env, what="the import probe (arena_helm.cli --help)")
    for line in proc.stdout.decode(errors="replace").splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    raise bl.BenchError("the import probe printed no module list")


def importtime_of(python: str, script: str, env: dict[str, str]) -> dict[str, int]:
    """Cumulative import microseconds of the heavy modules under ``-X importtime`` (0 if not imported)."""
    proc = bl.run([python, "-X", "importtime", script, "--help"], env=env,
                  what="arena-helm --help -X importtime")
    found: dict[str, int] = {}
    for line in proc.stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].strip()
        if name in HEAVY_MODULES:
            found[name] = int(parts[1].strip())
    return found


def main() -> int:
    args = parse_args()
    script = bl.find_arena_helm(args.arena_helm)
    python = bl.script_interpreter(script)
    env = bl.child_env()

    cli = [str(script), "--help"]
    base = [python, "-c", "import typer"]
    print(f"startup: {args.runs} runs each ({args.warmup} warm-up), interleaved")
    print(f"  CLI:      arena-helm --help   ({script.name}, interpreter {python})")
    print("  baseline: python -c 'import typer'   (same interpreter)")

    for _ in range(args.warmup):
        bl.run(cli, env=env, what="arena-helm --help")
        bl.run(base, env=env, what="python -c 'import typer'")
    cli_t: list[float] = []
    base_t: list[float] = []
    for i in range(args.runs):
        # Alternate which goes first, so slow drift of the machine hits both alike.
        order = ((cli, cli_t, "arena-helm --help"), (base, base_t, "import typer"))
        for argv, sink, what in order if i % 2 == 0 else reversed(order):
            seconds, _ = bl.timed(argv, env=env, what=what)
            sink.append(seconds * 1000.0)

    cli_med, base_med = bl.median(cli_t), bl.median(base_t)
    ratio = cli_med / base_med
    print(f"  arena-helm --help     median {cli_med:7.1f} ms   p90 {bl.percentile(cli_t, 90):7.1f} ms"
          f"   min {min(cli_t):7.1f} ms")
    print(f"  import typer          median {base_med:7.1f} ms   p90 {bl.percentile(base_t, 90):7.1f} ms"
          f"   min {min(base_t):7.1f} ms")
    print(f"  ratio of medians (arena-helm / typer): {ratio:.2f}   (difference {cli_med - base_med:+.1f} ms)")

    imported = heavy_imports(python, env)
    times = importtime_of(python, str(script), env)
    for name in HEAVY_MODULES:
        if name in imported:
            extra = f" (-X importtime: {times[name] / 1000:.1f} ms cumulative)" if name in times else ""
            print(f"  imported by --help: {name}{extra}")
        else:
            print(f"  not imported by --help: {name}")
    heavy = ", ".join(imported) if imported else "none"

    print(bl.verdict(ratio <= GOAL_RATIO,
                     f"startup ratio {ratio:.2f} (goal <= {GOAL_RATIO}); "
                     f"--help imports heavy modules: {heavy}"))
    return 0


if __name__ == "__main__":
    bl.main_guard(main)
