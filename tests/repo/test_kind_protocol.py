"""One typed kind protocol for every family (``catalog.Kind``): a job kind, a serving kind and each one-chart family
are one, as a type checker (mypy) sees them, not only at run time; every chart but the library is a kind's. The
module of each job and serving kind is what its family's module contract (``JobKindModule``, ``ServeKindModule``)
says, every hook included: the code calls them, it does not look them up by name."""

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


def modules_conformance() -> str:
    """Each job and serving kind's module held to its family's module contract (the lists are the catalog's)."""
    from arena_helm.core.jobkinds import KINDS
    from arena_helm.core.servekinds import KINDS_PACKAGE, SERVE_KINDS

    lines = ["from arena_helm.core.jobkinds import JobKindModule",
             "from arena_helm.core.servekinds import ServeKindModule"]
    for k in KINDS:
        module = k.spec.partition(":")[0]
        lines += [f"import {module}", f"job_{k.key}: JobKindModule = {module}"]
    for s in SERVE_KINDS:
        lines += [f"import {KINDS_PACKAGE}.{s.module_name}",
                  f"serve_{s.key}: ServeKindModule = {KINDS_PACKAGE}.{s.module_name}"]
    return "\n".join(lines) + "\n"


def test_every_family_s_kinds_are_one_typed_protocol(tmp_path):
    res = mypy(tmp_path, CONFORMANCE + modules_conformance())
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_kind_module_without_a_hook_is_refused_by_the_type_checker(tmp_path):
    """A kind module that misses a hook (or misspells it) fails the check, as a module whose hook has the wrong
    type does; the code would otherwise fail only when that kind reaches the call."""
    planted = tmp_path / "planted_kinds"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "nohook.py").write_text("def kind_values(spec):\n    return {}\n\n\ndef extra_envs(spec):\n"
                                       "    return {}\n\n\nextra_annotations = extra_envs\n"
                                       "log_writer_selector = None\n")
    (planted / "badhook.py").write_text("SPEC = VALUES = int\nWORDS = 'w'\nUPDATES: dict = {}\n"
                                        "PLACEHOLDERS: dict = {}\n\n\ndef values(spec):\n    return {}\n\n\n"
                                        "def from_words(words):\n    return {}\n\n\n"
                                        "workload_view = None\nworkload_shape = 'shape'\n")
    source = ("from arena_helm.core.jobkinds import JobKindModule\n"
              "from arena_helm.core.servekinds import ServeKindModule\n"
              "import planted_kinds.nohook\nimport planted_kinds.badhook\n"
              "job: JobKindModule = planted_kinds.nohook\nserve: ServeKindModule = planted_kinds.badhook\n")
    res = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"),
         "--no-color-output", "-c", source],
        capture_output=True, text=True, check=False, cwd=REPO,
        env={**os.environ, "MYPYPATH": f"{REPO}{os.pathsep}{tmp_path}"})
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout.splitlines() == [
        '<string>:5: error: Incompatible types in assignment (expression has type Module, variable has type '
        '"JobKindModule")  [assignment]',
        '<string>:5: note: "ModuleType" is missing following "JobKindModule" protocol member:',
        "<string>:5: note:     extra_env",
        '<string>:6: error: Incompatible types in assignment (expression has type Module, variable has type '
        '"ServeKindModule")  [assignment]',
        '<string>:6: note: Following member(s) of Module "planted_kinds.badhook" have conflicts:',
        '<string>:6: note:     workload_shape: expected "Callable[[dict[Any, Any]], tuple[int, list[list[dict[Any, '
        'Any]]], dict[Any, Any]]] | None", got "str"',
        "Found 2 errors in 1 file (checked 1 source file)"]


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


# Where a kind's or a family's name may be written: the catalog and the kinds' descriptors (core/), the kind
# modules, and each family's own modules (a family names itself; never another, never a kind).
KIND_HOMES = ("core/catalog.py", "core/jobkinds.py", "core/servekinds.py", "training/kinds/", "serving/kinds/")
FAMILY_HOMES = {"-serving": ("serving/",)}


def kind_names() -> set[str]:
    """Every name of a job or serving kind: its command, aliases, chart, Kubernetes kind and resource."""
    from arena_helm.core.jobkinds import KINDS
    from arena_helm.core.servekinds import SERVE_KINDS

    names = {n for k in KINDS for n in (*k.names, k.chart, k.kind, k.kind.lower(), k.plural)}
    return names | {n for k in SERVE_KINDS for n in (k.key, k.chart)}


def family_names() -> set[str]:
    from arena_helm.core.catalog import FAMILY_CHART

    return {f.value for f in Family} | set(FAMILY_CHART.values())


def _strings(tree):
    """The string constants of a module that are not docstrings (an f-string's literal parts included)."""
    import ast

    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def name_uses(source: str, rel: str) -> list[str]:
    """Where a module tells kinds or families apart by name: a string that is a kind's name, a string holding a
    family's suffix (``-serving``) outside that family, a comparison with a family's name."""
    import ast

    tree = ast.parse(source)
    found = []
    if not rel.startswith(KIND_HOMES):
        kinds = kind_names()
        found += [f"{n.lineno}: {n.value!r} names a kind" for n in _strings(tree) if n.value in kinds]
    for suffix, homes in FAMILY_HOMES.items():
        if not rel.startswith((*KIND_HOMES, *homes)):
            found += [f"{n.lineno}: {n.value!r} holds {suffix!r}" for n in _strings(tree) if suffix in n.value]
    if not rel.startswith("core/catalog.py"):
        families = family_names()
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                values = [e for o in operands for e in ([o] if isinstance(o, ast.Constant) else
                                                        getattr(o, "elts", []) if isinstance(o, ast.Tuple | ast.List
                                                                                              | ast.Set) else [])]
                found += [f"{node.lineno}: compares with {v.value!r}, a family's name" for v in values
                          if isinstance(v, ast.Constant) and v.value in families]
    return sorted(set(found), key=lambda line: (int(line.split(":")[0]), line))


def test_no_kind_or_family_is_told_apart_by_its_name_outside_the_catalog_and_the_kind_modules():
    """Families and kinds are told apart by the catalog's facts (a row's family, a descriptor's fields), never
    by their names: a kind's name written elsewhere, a ``-serving`` suffix outside the serving family, or a
    comparison with a family's name is a dispatch that a new kind or family would silently miss."""
    pkg = REPO / "arena_helm"
    uses = {p.relative_to(pkg).as_posix(): name_uses(p.read_text(), p.relative_to(pkg).as_posix())
            for p in sorted(pkg.rglob("*.py"))}
    assert {rel: found for rel, found in uses.items() if found} == {}
    planted = ('def f(info, row, release):\n    """tfjob in a docstring is prose"""\n'
               '    if info.key == "mpijob":\n        return row.chart.endswith("-serving")\n'
               '    return release["chart"] in ("workspace", "x"), f"{info.kind}: mpijob {row}"\n')
    assert name_uses(planted, "views/probe.py") == [
        "3: 'mpijob' names a kind", "4: '-serving' holds '-serving'", "5: compares with 'workspace', a family's name"]
    assert name_uses(planted, "serving/probe.py") == [
        "3: 'mpijob' names a kind", "5: compares with 'workspace', a family's name"]
