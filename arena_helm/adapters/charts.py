"""Where the charts live, and how a job chart is made installable (its file:// dependencies copied in).

The job charts declare their dependencies (the ``arena-common`` library chart and the ``tensorboard``
chart) with ``repository: file://../<name>``, exactly what ``helm dependency build`` resolves offline.
``assemble_chart`` does the same without running helm: it copies the chart into a folder and places each
file:// dependency under its ``charts/`` folder, so a checkout needs no build step and no packaged
``.tgz`` is ever committed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ..core.errors import ArenaHelmError


def charts_root() -> Path:
    """The folder holding every chart: inside the installed package, else the repository root."""
    package = Path(__file__).resolve().parents[1]  # arena_helm/
    for candidate in (package / "charts", package.parent / "charts"):
        if (candidate / "tfjob" / "Chart.yaml").is_file():
            return candidate
    raise ArenaHelmError(f"the arena-helm charts are missing (looked in {package / 'charts'}); reinstall arena-helm")


def chart_source(name: str) -> Path:
    path = charts_root() / name
    if not (path / "Chart.yaml").is_file():
        raise ArenaHelmError(f"no chart named {name!r} in {charts_root()}")
    return path


def _copy_chart(src: Path, dest: Path) -> None:
    shutil.copytree(
        src,
        dest,
        ignore=shutil.ignore_patterns("*.tgz", "Chart.lock", "__pycache__"),
        dirs_exist_ok=False,
    )


def assemble_chart(name: str, workdir: Path) -> Path:
    """Copy chart ``name`` into ``workdir`` with its file:// dependencies in place; return its folder."""
    src = chart_source(name)
    dest = workdir / name
    _copy_chart(src, dest)
    _place_dependencies(src, dest)
    return dest


def _place_dependencies(src: Path, dest: Path) -> None:
    meta = yaml.safe_load((src / "Chart.yaml").read_text(encoding="utf-8")) or {}
    for dep in meta.get("dependencies") or []:
        repo = str(dep.get("repository", ""))
        if not repo.startswith("file://"):
            continue
        dep_src = (src / repo[len("file://") :]).resolve()
        dep_dest = dest / "charts" / dep["name"]
        if dep_dest.exists():
            continue
        dep_dest.parent.mkdir(parents=True, exist_ok=True)
        _copy_chart(dep_src, dep_dest)
        _place_dependencies(dep_src, dep_dest)
