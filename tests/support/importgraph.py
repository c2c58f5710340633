"""The package's import graph, read from the source with ``ast``: every ``import``/``from ... import`` of a module
of the package, at module level or inside a function (a lazy import is an import all the same).

A node is a module's dotted name (``arena_helm.cli.jobs``; a package is its ``__init__``). ``from .x import y``
where ``y`` is a submodule of ``x`` is an edge to that submodule. Importing ``a.b.c`` does not count as importing
``a`` and ``a.b`` (a package's face is no layer of its own), so only the named module is an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(source: str, current: str, is_package: bool, modules: set[str]) -> set[str]:
    """The package modules that ``source`` (the text of module ``current``) imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(current, is_package, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    found.add(sub)
                elif target in modules:
                    found.add(target)
    found.discard(current)
    return found


def package_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports, for every module under ``root`` (a package folder)."""
    paths = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    modules = set(paths)
    return {name: imports_of(path.read_text(), name, path.name == "__init__.py", modules)
            for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted; sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's floor in an acyclic graph: 1 for a module that imports none of the package, else one above
    the highest module it imports. The number of floors is the longest chain of imports."""
    floor: dict[str, int] = {}

    def of(v: str, seen: tuple[str, ...] = ()) -> int:
        if v in seen:
            raise ValueError(f"import cycle through {' -> '.join((*seen, v))}")
        if v not in floor:
            floor[v] = 1 + max((of(w, (*seen, v)) for w in graph.get(v, ())), default=0)
        return floor[v]

    for v in graph:
        of(v)
    return floor


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """One longest chain of imports, top first (for a message that says where the floors come from)."""
    floor = floors(graph)
    top = max(graph, key=lambda v: (floor[v], v))
    chain = [top]
    while graph.get(chain[-1]):
        chain.append(max(graph[chain[-1]], key=lambda w: (floor[w], w)))
    return chain
