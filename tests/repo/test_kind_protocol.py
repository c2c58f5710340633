"""One typed kind protocol for every family (``catalog.Kind``): a job kind, a serving kind and each one-chart family
are one, as a type checker (mypy) sees them, not only at run time; every chart but the library is a kind's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arena_helm.core.catalog import Family

REPO = Path(__file__).resolve().parents[2]

CONFORMANCE = """
from arena_helm.core.catalog import Kind, OneChartKind
from arena_helm.core.jobkinds import JobKindInfo
from arena_helm.core.servekinds import ServeKind


def job(kind: JobKindInfo) -> Kind:
    return kind


def serving(kind: ServeKind) -> Kind:
    return kind


def one_chart(kind: OneChartKind) -> Kind:
    return kind
"""


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    path = tmp_path / "conformance.py"
    path.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"),
         "--no-color-output", str(path)],
        capture_output=True, text=True, check=False, cwd=REPO, env={**os.environ, "MYPYPATH": str(REPO)})


def test_every_family_s_kinds_are_one_typed_protocol(tmp_path):
    res = mypy(tmp_path, CONFORMANCE)
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_kind_that_does_not_say_its_family_is_refused_by_the_type_checker(tmp_path):
    planted = CONFORMANCE + """

class NoFamily:
    key = "x"
    chart = "x"

    def spec_class(self) -> type | None:
        return None

    def values_class(self) -> type:
        return int


def planted(kind: NoFamily) -> Kind:
    return kind
"""
    res = mypy(tmp_path, planted)
    assert res.returncode == 1, res.stdout + res.stderr
    assert '"NoFamily" is missing following "Kind" protocol member' in res.stdout, res.stdout
    assert "family" in res.stdout


def test_every_chart_is_a_kind_s_and_every_kind_says_its_family():
    from arena_helm.core.jobkinds import KINDS
    from arena_helm.core.servekinds import SERVE_KINDS
    from arena_helm.workload.chart_registry import ALL_KINDS, CHART_VALUES

    charts = {p.parent.name for p in (REPO / "charts").glob("*/Chart.yaml")}
    assert set(CHART_VALUES) == charts
    assert {k.chart for k in ALL_KINDS} == charts - {"arena-common"}
    assert {k.family for k in KINDS} == {Family.TRAINING} and {k.family for k in SERVE_KINDS} == {Family.SERVING}
    assert {k.family for k in ALL_KINDS} == set(Family)
    assert len({k.chart for k in ALL_KINDS}) == len(ALL_KINDS)
