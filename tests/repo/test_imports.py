"""Every ``from .x import name`` of the package, the lazy ones inside functions included, names something
that exists: a renamed or moved name fails here, not at a user's first call of that command."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "arena_helm"


def test_every_relative_import_resolves():
    missing = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = package[: len(package) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            module = importlib.import_module(target)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{target}.{alias.name}")
                    except ImportError:
                        missing.append(f"{rel}:{node.lineno}: {target}.{alias.name}")
    assert not missing, missing
