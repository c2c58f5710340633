#!/usr/bin/env python3
"""Render what a refactor must keep byte for byte: every command line of ``tests/data/dry-run-corpus.txt`` (dry
runs of every kind of every family, manifests and ``-o values``) through the CLI, and every chart's
``ci/*-values.yaml`` through ``helm template``, each into a file of OUTDIR (its exit code on the first line).

    python scripts/dry-run-corpus.py OUTDIR [--helm-binary PATH]

Run it from two checkouts (each with its own ``arena_helm`` first on sys.path: the checkout holding this
script) and compare: ``diff -r OLD NEW``. No cluster is contacted (KUBECONFIG names no file).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from typer.testing import CliRunner  # noqa: E402

from arena_helm.adapters.charts import assemble_chart  # noqa: E402
from arena_helm.cli import app  # noqa: E402

CORPUS = REPO / "tests" / "data" / "dry-run-corpus.txt"


def corpus() -> list[list[str]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [shlex.split(line) for line in lines if line.strip() and not line.startswith("#")]


def file_name(words: list[str]) -> str:
    """A readable, unique file name for a command line."""
    digest = hashlib.sha256("\0".join(words).encode()).hexdigest()[:10]
    return f"cli-{'-'.join(words[:2])}-{digest}.txt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--helm-binary", default="helm", help="helm to render with (default: helm on PATH)")
    args = ap.parse_args()
    args.outdir.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        # no kubeconfig, no defaults file, no cache of a user's: a HOME of its own
        env = {"KUBECONFIG": "/nonexistent", "ARENA_HELM_CONFIG": None, "ARENA_HELM_HELM": args.helm_binary,
               "HOME": tmp, "XDG_CONFIG_HOME": None, "XDG_CACHE_HOME": None}
        for words in corpus():
            res = runner.invoke(app, words, env=env)
            (args.outdir / file_name(words)).write_text(f"exit {res.exit_code}\n{res.stdout}{res.stderr}",
                                                        encoding="utf-8")
        charts = REPO / "charts"
        for values in sorted(charts.glob("*/ci/*-values.yaml")):
            chart = values.parent.parent.name
            path = assemble_chart(chart, Path(tmp) / "charts" / values.stem)
            res = subprocess.run([args.helm_binary, "template", "rel", str(path), "-f", str(values),
                                  "--namespace", "ns"], capture_output=True, text=True, check=False,
                                 env={**os.environ, "KUBECONFIG": "/nonexistent"})
            (args.outdir / f"chart-{chart}-{values.stem}.yaml").write_text(
                f"exit {res.returncode}\n{res.stdout}{res.stderr}", encoding="utf-8")
    print(f"{len(list(args.outdir.iterdir()))} files in {args.outdir}")


if __name__ == "__main__":
    main()
