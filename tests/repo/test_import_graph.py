"""The package's import graph, imports inside functions included (a lazy import is an import all the same):
no circle, and at most 10 floors (the longest chain of imports).

With no circle, every module stands on a floor above all that it imports, so no import runs back up."""

from __future__ import annotations

from pathlib import Path

import importgraph
import pytest

PKG = Path(__file__).resolve().parents[2] / "arena_helm"

# The one-shape issue's bound: lower it as the layout flattens, never raise it.
MAX_FLOORS = 10


def test_the_package_imports_in_no_circle():
    graph = importgraph.package_graph(PKG)
    assert len(graph) > 50 and sum(map(len, graph.values())) > 300  # the whole package was read
    assert importgraph.cycles(graph) == []


def test_the_package_has_no_more_floors_than_the_ratchet():
    graph = importgraph.package_graph(PKG)
    floors = importgraph.floors(graph)
    chain = importgraph.longest_chain(graph)
    assert len(chain) == max(floors.values())
    assert max(floors.values()) <= MAX_FLOORS, " -> ".join(chain)


def test_a_planted_lazy_import_that_closes_a_circle_is_found(tmp_path):
    """The check can fail: a function-level import from the ground floor back up to the views is a circle."""
    pkg = tmp_path / "arena_helm"
    for path in PKG.rglob("*.py"):
        dest = pkg / path.relative_to(PKG)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(path.read_text())
    catalog = pkg / "core" / "catalog.py"
    catalog.write_text(catalog.read_text() + "\n\ndef planted():\n    from ..views.jobs import JobView\n\n    return JobView\n")
    graph = importgraph.package_graph(pkg)
    found = importgraph.cycles(graph)
    assert found and all("arena_helm.core.catalog" in c and "arena_helm.views.jobs" in c for c in found)
    with pytest.raises(ValueError, match="import cycle through"):
        importgraph.floors(graph)


# The folders, lowest first: a module imports modules of its own folder and of the folders on lower rows only.
# The families share a row and import none of each other. (The package's face, __init__ and __main__, stands
# above them all.) README.md's architecture section says what each folder holds.
FOLDERS = (
    ("core",),
    ("views",),
    ("adapters",),
    ("workload",),
    ("releases",),
    ("insight",),
    ("training", "serving", "workspace", "tensorboard"),
    ("cli",),
)
RANK = {folder: row for row, folders in enumerate(FOLDERS) for folder in folders}


def folder_crossings(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports that run from a folder to one on its own row or a higher one."""
    def folder(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 2 else None

    return sorted((m, t) for m, targets in graph.items() for t in targets
                  if folder(m) and folder(t) and folder(m) != folder(t) and RANK[folder(t)] >= RANK[folder(m)])


def test_every_module_lives_in_a_folder_of_the_layout():
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert top == ["__about__.py", "__init__.py", "__main__.py"]
    assert sorted(p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__" and p.name != "charts") \
        == sorted(RANK)


def test_no_import_runs_from_a_folder_to_one_on_its_row_or_above():
    assert folder_crossings(importgraph.package_graph(PKG)) == []


def test_the_graph_reads_every_form_of_import():
    modules = {"p", "p.a", "p.b", "p.b.c", "p.d"}
    source = ("import p.d\n"
              "from . import a\n"
              "from .b import c\n"
              "def f():\n    from .b import thing\n")
    assert importgraph.imports_of(source, "p.x", False, modules) == {"p.d", "p.a", "p.b.c", "p.b"}
    assert importgraph.imports_of("from .. import a\n", "p.b.c", False, modules) == {"p.a"}
    assert importgraph.imports_of("from .c import x\n", "p.b", True, modules) == {"p.b.c"}
    assert importgraph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert importgraph.floors({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == {"b": 1, "a": 2, "c": 3}


def test_a_command_module_imports_the_cli_s_shared_modules_only():
    """Under cli/, a command group's module imports cli.groups, cli.common and cli.specflags, never another command
    group's module; rerun alone runs submit's pipeline (cli.submit)."""
    graph = importgraph.package_graph(PKG)
    shared = {"arena_helm.cli", "arena_helm.cli.groups", "arena_helm.cli.common", "arena_helm.cli.specflags"}
    crossing = sorted((m, t) for m, targets in graph.items() if m.startswith("arena_helm.cli.") and m not in shared
                      for t in targets if t.startswith("arena_helm.cli.") and t not in shared)
    assert crossing == [("arena_helm.cli.rerun", "arena_helm.cli.submit")]
    for low in shared - {"arena_helm.cli"}:  # the shared modules import no command module
        assert {t for t in graph[low] if t.startswith("arena_helm.cli")} <= shared, low
