"""The README's lists of what arena-helm has (its job kinds, the defaults file's image keys, the charts) are the
registries', so that a new kind or chart cannot leave them stale."""

from __future__ import annotations

import re
from pathlib import Path

from arena_helm.adapters.defaults import IMAGE_KEYS
from arena_helm.core.jobkinds import KINDS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def section(title: str) -> str:
    return README.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_first_paragraph_names_every_job_kind():
    first = " ".join(README.split("\n\n", 2)[1].split())
    named = re.search(r"one command submits a (.*?) \(GPUs", first).group(1)
    assert re.split(r", | or ", named) == [k.kind for k in KINDS]


def test_the_defaults_file_images_are_its_keys():
    line = " ".join(re.search(r"`images` \((.*?)\); flags win", README, re.S).group(1).split())
    assert set(re.findall(r"`([a-z]+)`", line)) == set(IMAGE_KEYS)


def test_the_charts_section_names_every_chart():
    named = set(re.findall(r"`charts/([a-z0-9-]+)`", section("The charts, with plain helm")))
    assert named == {p.parent.name for p in (REPO / "charts").glob("*/Chart.yaml")}
