"""The README's "Serving" section as a reader meets it: every ``$ arena-helm serve ... --dry-run`` of its
console blocks runs as written (in-process, with the real helm 3 and 4, no cluster) and prints the objects the
block shows below it (its ``# Source:`` lines and ``kind:`` lines, the rest elided with ``...``)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from edgetools import cli, with_flags

from arena_helm.core.servekinds import SERVE_KINDS

REPO = Path(__file__).resolve().parents[2]
WORKLOAD_KIND = {"kserve": "InferenceService", "distributed": "LeaderWorkerSet", "traffic-split": "HTTPRoute"}


def serving_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Serving")
    return text[start:text.index("\n## ", start + 1)]


def dry_run_examples() -> list[tuple[list[str], list[str]]]:
    """(argv after ``arena-helm``, the lines the README shows it print) for each dry-run example."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", serving_section(), re.S):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ arena-helm serve "):
                i += 1
                continue
            command = lines[i][2:]
            while command.endswith("\\"):  # a continued line
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            i += 1
            shown = []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            words = shlex.split(command, comments=True)
            if "--dry-run" in words:
                out.append((words[1:], shown))
    return out


EXAMPLES = dry_run_examples()


def test_every_serving_kind_and_the_traffic_split_have_a_dry_run_example():
    shown = {argv[1] for argv, _ in EXAMPLES}
    assert shown == {k.key for k in SERVE_KINDS} | {"traffic-split"}, shown


@pytest.mark.parametrize(("argv", "shown"), EXAMPLES, ids=[" ".join(a[:2]) for a, _ in EXAMPLES])
def test_the_readme_serving_example_renders_what_it_shows(argv, shown, helm_bin):
    res = cli(*with_flags(argv, ["--helm-binary", str(helm_bin)]))
    assert res.exit_code == 0, res.output
    docs = [d for d in yaml.safe_load_all(res.stdout) if d]
    assert docs
    kinds = [d["kind"] for d in docs]
    # what the kind's chart is made for (without a cluster to ask, a split takes the Gateway API)
    assert WORKLOAD_KIND.get(argv[1], "Deployment") in kinds, kinds
    for line in shown:
        if line.startswith("kind: "):
            assert line.removeprefix("kind: ") in kinds, (line, kinds)
        elif line.startswith("# Source: "):
            assert line in res.stdout.splitlines(), line
        elif line.startswith("  name: "):
            names = [f'  name: "{d["metadata"]["name"]}"' for d in docs] + [
                f"  name: {d['metadata']['name']}" for d in docs]
            assert line in names, (line, names)
