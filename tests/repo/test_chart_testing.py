"""chart-testing itself (``ct``, built from its Go module by scripts/build-cluster.sh) runs the README's
``ct lint --config ct.yaml`` on the repository's charts, with helm 3 and with helm 4 as its ``helm``: yamllint on
every Chart.yaml, values.yaml and ci/*-values.yaml, the Chart.yaml schema (yamale), ``helm lint --strict`` with
each ci values file. Chart users and CI pipelines run ct: this is their check, not a copy of it. A planted
broken chart shows ct's run can fail and names what it found."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from charttesting import checkout, ct_folder
from helmtools import helm_path

REPO = Path(__file__).resolve().parents[2]
README_COMMAND = ["ct", "lint", "--config", "ct.yaml"]


@pytest.fixture(scope="module")
def ct_dir() -> Path:
    return ct_folder()


def run_ct(ct_dir: Path, root: Path, helm_version: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """The README's command in ``root``, with ``helm`` the given version and yamllint/yamale this Python's."""
    bin_dir = tmp_path / f"bin-{helm_version}"
    bin_dir.mkdir()
    (bin_dir / "helm").symlink_to(helm_path(helm_version))
    path = os.pathsep.join([str(bin_dir), str(ct_dir), str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return subprocess.run(README_COMMAND, cwd=root, capture_output=True, text=True, check=False,
                          env={"PATH": path, "HOME": str(tmp_path), "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
                               "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
                               "HELM_DATA_HOME": str(tmp_path / "helm-data")})


def verdicts(output: str) -> dict[str, str]:
    """ct's summary: chart -> ✔︎ or ✖︎."""
    return dict((name, mark) for mark, name in re.findall(r"^ (✔︎|✖︎) (\S+) => \(version", output, re.M))


def test_the_readme_names_the_command():
    assert f"`{' '.join(README_COMMAND)}` (chart-testing)" in (REPO / "README.md").read_text()


def charts() -> set[str]:
    return {p.parent.name for p in (REPO / "charts").glob("*/Chart.yaml")}


@pytest.mark.parametrize("helm_version", ["3.17.3", "4.1.4"], ids=["helm3", "helm4"])
def test_ct_lint_passes_every_chart(ct_dir, helm_version, tmp_path):
    res = run_ct(ct_dir, checkout(tmp_path / "repo"), helm_version, tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    assert verdicts(res.stdout) == dict.fromkeys(charts(), "✔︎")
    assert res.stdout.rstrip().endswith("All charts linted successfully"), res.stdout[-500:]
    # each ci values file was linted with: the run is the real one, not a chart-less pass
    linted = set(re.findall(r'^Linting chart with values file "(charts/[^"]+)"', res.stdout, re.M))
    assert linted == {str(p.relative_to(REPO)) for p in (REPO / "charts").glob("*/ci/*-values.yaml")}


def test_ct_lint_fails_on_what_it_checks(ct_dir, tmp_path):
    """Trailing spaces yamllint refuses (tfjob's values.yaml), a key the Chart.yaml schema does not know
    (pytorchjob) and a template helm lint --strict refuses (mpijob): ct fails those three, passes the rest."""
    root = checkout(tmp_path / "repo")
    values = root / "charts" / "tfjob" / "values.yaml"
    values.write_text(values.read_text() + "# planted   \n")
    chart_yaml = root / "charts" / "pytorchjob" / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text() + "planted: x\n")
    (root / "charts" / "mpijob" / "templates" / "planted.yaml").write_text("kind: {{ .Values.nothing.here }}\n")
    res = run_ct(ct_dir, root, "4.1.4", tmp_path)
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr
    broken = {"tfjob", "pytorchjob", "mpijob"}
    assert verdicts(res.stdout) == {c: "✖︎" if c in broken else "✔︎" for c in charts()}
    lines = {line.strip() for line in (res.stdout + res.stderr).splitlines()}
    assert f"{len(values.read_text().splitlines())}:10    error    trailing spaces  (trailing-spaces)" in lines
    assert "planted: Unexpected element" in lines
    assert "nil pointer evaluating interface {}.here" in lines
