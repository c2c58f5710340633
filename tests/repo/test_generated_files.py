"""The generated chart files are current: every chart's values.schema.json, values.yaml and README values
table is what its generator writes from arena_helm/workload/chart_values.py today (regenerated and compared here,
file by file), and each generator's ``--check`` agrees."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena_helm.workload import chart_registry

REPO = Path(__file__).resolve().parents[2]
CHARTS = REPO / "charts"
SCRIPTS = ("gen-chart-schemas.py", "gen-chart-values-yaml.py", "gen-chart-readme.py")
ALL_CHARTS = tuple(chart_registry.CHART_VALUES)


def test_every_chart_has_a_values_model():
    assert sorted(ALL_CHARTS) == sorted(p.parent.name for p in CHARTS.glob("*/Chart.yaml"))


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py").replace("-", "_"), REPO / "scripts" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generators():
    return {name: _script(name) for name in SCRIPTS}


@pytest.fixture(scope="module")
def schemas(generators):
    """Every chart's schema, generated once for the module."""
    return generators["gen-chart-schemas.py"].schemas()


@pytest.mark.parametrize("chart", ALL_CHARTS)
def test_schema_is_generated(generators, schemas, chart):
    text = generators["gen-chart-schemas.py"].render(schemas[chart])
    assert (CHARTS / chart / "values.schema.json").read_text(encoding="utf-8") == text, (
        f"{chart}/values.schema.json is stale: run scripts/gen-chart-schemas.py")


@pytest.mark.parametrize("chart", ALL_CHARTS)
def test_values_yaml_is_generated(generators, chart):
    text = generators["gen-chart-values-yaml.py"].values_yaml(chart)
    assert (CHARTS / chart / "values.yaml").read_text(encoding="utf-8") == text, (
        f"{chart}/values.yaml is stale: run scripts/gen-chart-values-yaml.py")


@pytest.mark.parametrize("chart", ALL_CHARTS)
def test_readme_table_is_generated(generators, chart):
    gen = generators["gen-chart-readme.py"]
    path = CHARTS / chart / "README.md"
    readme = path.read_text(encoding="utf-8")
    assert gen.updated(readme, gen.table(CHARTS / chart), path) == readme, (
        f"{chart}/README.md's values table is stale: run scripts/gen-chart-readme.py")


@pytest.mark.parametrize("script", SCRIPTS)
def test_check_mode(script, tmp_path):
    """--check exits 0 on the repository, 1 (naming the file) on a copy with one stale description."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    charts = tmp_path / "charts"
    for chart in ALL_CHARTS:
        (charts / chart).mkdir(parents=True)
        for name in ("values.schema.json", "values.yaml", "README.md"):
            (charts / chart / name).write_bytes((CHARTS / chart / name).read_bytes())
    target = charts / "pytorchjob" / {"gen-chart-schemas.py": "values.schema.json",
                                      "gen-chart-values-yaml.py": "values.yaml",
                                      "gen-chart-readme.py": "README.md"}[script]
    text = target.read_text(encoding="utf-8")
    assert "Shell that runs the command." in text
    stale = text.replace("Shell that runs the command.", "Shell of the command.")
    target.write_text(stale, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--check", "--charts-dir", str(charts)],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert str(target) in proc.stderr and "tfjob" not in proc.stderr, proc.stderr
    assert target.read_text(encoding="utf-8") == stale  # --check writes nothing


def test_values_yaml_comments_are_the_descriptions():
    """Each key of values.yaml sits under its model field's description (spot check, by hand)."""
    from arena_helm.training.kinds.tfjob import TFJobValues
    from arena_helm.workload.chart_values import CodeSync

    lines = (CHARTS / "tfjob" / "values.yaml").read_text(encoding="utf-8").splitlines()
    index = lines.index("shell: sh")
    assert lines[index - 1] == "# " + TFJobValues.model_fields["shell"].description
    index = lines.index("  depth: 1")
    assert lines[index - 1] == "  # " + CodeSync.model_fields["depth"].description


def test_schema_refers_only_to_definitions_it_has():
    for chart in ALL_CHARTS:
        schema = json.loads((CHARTS / chart / "values.schema.json").read_text(encoding="utf-8"))
        text = json.dumps(schema)
        for name in schema.get("$defs", {}):
            assert f'"#/$defs/{name}"' in text, f"{chart}: $defs.{name} is unused"
        refs = {part.split('"')[0] for part in text.split('"$ref": "#/$defs/')[1:]}
        assert refs <= set(schema.get("$defs", {})), (chart, refs - set(schema.get("$defs", {})))


def _nodes(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def test_no_keyword_beside_a_ref():
    """helm 3's gojsonschema (draft-07) ignores every keyword beside a $ref: there is none."""
    for chart in ALL_CHARTS:
        schema = json.loads((CHARTS / chart / "values.schema.json").read_text(encoding="utf-8"))
        for node in _nodes(schema):
            if "$ref" in node:
                assert list(node) == ["$ref"], (chart, node)
            assert "title" not in node or node is schema, (chart, node)
            assert "default" not in node, (chart, node)
            if "properties" in node:
                assert node.get("additionalProperties") is False, (chart, node)
                for name, prop in node["properties"].items():
                    assert prop.get("description"), (chart, name)
