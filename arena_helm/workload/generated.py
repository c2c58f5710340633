"""The one write-or-check loop of the files generated from the values models (values.schema.json, values.yaml,
the README tables): ``scripts/gen-chart-*.py`` hand it (path, wanted text) pairs. Not used by the CLI."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path


def write_or_check(outputs: Iterable[tuple[Path, str]], *, check: bool, rerun: str,
                   shown: Callable[[Path], str] = str) -> int:
    """Write each stale file (naming it), or with ``check`` only name them on stderr and return 1."""
    stale = []
    for path, text in outputs:
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {shown(path)}")
    if check and stale:
        for path in stale:
            print(f"stale: {path} (run {rerun})", file=sys.stderr)
        return 1
    return 0


def parse_args(description: str, what: str, argv: list[str] | None, charts_dir: Path | None = None):
    """``--check`` (and ``--charts-dir`` when the script has a default for it)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help=f"only report stale {what} (exit 1)")
    if charts_dir is not None:
        parser.add_argument("--charts-dir", type=Path, default=charts_dir, help="folder holding the charts")
    return parser.parse_args(argv)
