"""The README's workspace excerpt as a reader meets it: its ``$ arena-helm workspace start ... --dry-run`` runs as
written (in-process, the real helm 3 and 4, no cluster) and prints what the excerpt shows (its lines, the parts
between ``...`` of an elided one)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from edgetools import cli, with_flags

REPO = Path(__file__).resolve().parents[2]


def excerpt() -> tuple[list[str], list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Workspaces")
    section = text[start:text.index("\n## ", start + 1)]
    block = re.search(r"```console\n(.*?)```", section, re.S).group(1).splitlines()
    assert block[0].startswith("$ arena-helm workspace start ") and block[0].endswith(" --dry-run"), block[0]
    shown = []
    for line in block[1:]:
        if line.startswith("$ "):
            break
        shown.append(line)
    return shlex.split(block[0][2:])[1:], shown


def test_the_readme_workspace_excerpt_is_what_the_dry_run_prints(helm_bin):
    argv, shown = excerpt()
    res = cli(*with_flags(argv, ["--helm-binary", str(helm_bin)]))
    assert res.exit_code == 0, res.output
    lines = [line.strip() for line in res.stdout.splitlines()]
    fragments = 0
    for line in shown:
        if "..." not in line:
            assert line.strip() in lines, line
            continue
        for part in (p.strip().strip(",").strip() for p in line.split("...")):
            if part and part != "]":
                assert part.rstrip(",") in res.stdout, part
                fragments += 1
    assert fragments == 2 and len(shown) > 6
