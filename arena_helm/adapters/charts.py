"""Where the charts live, and how a job chart is made installable (its file:// dependencies copied in).

The job charts declare their dependencies (the ``arena-common`` library chart and the ``tensorboard``
chart) with ``repository: file://../<name>``, exactly what ``helm dependency build`` resolves offline.
``assemble_chart`` does the same without running helm: it copies the chart into a folder and places each
file:// dependency under its ``charts/`` folder, so a checkout needs no build step and no packaged
``.tgz`` is ever committed. ``installable`` keeps each assembled chart in the cache folder under the digest of
its files (and its dependencies'): a command reuses it while no file changed, and never changes one in place.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import ArenaHelmError

_IGNORED = ("*.tgz", "Chart.lock", "__pycache__")
_STALE_SECONDS = 3600  # another digest's folder is removed an hour after it was made (a command may still read it)


def charts_root() -> Path:
    """The folder holding every chart: inside the installed package, else the repository root."""
    package = Path(__file__).resolve().parents[1]  # arena_helm/
    for candidate in (package / "charts", package.parent / "charts"):
        if (candidate / "arena-common" / "Chart.yaml").is_file():  # the library chart every chart depends on
            return candidate
    raise ArenaHelmError(f"the arena-helm charts are missing (looked in {package / 'charts'}); reinstall arena-helm")


def chart_source(name: str) -> Path:
    path = charts_root() / name
    if not (path / "Chart.yaml").is_file():
        raise ArenaHelmError(f"no chart named {name!r} in {charts_root()}")
    return path


def _ignored(name: str) -> bool:
    """A file or folder the assembled chart leaves out (as ``_copy_chart``'s ``ignore_patterns``)."""
    return any(fnmatch.fnmatch(name, pattern) for pattern in _IGNORED)


def _copy_chart(src: Path, dest: Path) -> None:
    shutil.copytree(
        src,
        dest,
        ignore=shutil.ignore_patterns(*_IGNORED),
        dirs_exist_ok=False,
    )


def assemble_chart(name: str, workdir: Path) -> Path:
    """Copy chart ``name`` into ``workdir`` with its file:// dependencies in place; return its folder."""
    src = chart_source(name)
    dest = workdir / name
    _copy_chart(src, dest)
    _place_dependencies(src, dest)
    return dest


def _file_dependencies(src: Path) -> list[tuple[str, Path]]:
    """(name, folder) of each file:// dependency chart ``src`` declares."""
    import yaml

    meta = yaml.safe_load((src / "Chart.yaml").read_text(encoding="utf-8")) or {}
    deps = []
    for dep in meta.get("dependencies") or []:
        repo = str(dep.get("repository", ""))
        if repo.startswith("file://"):
            deps.append((str(dep["name"]), (src / repo[len("file://") :]).resolve()))
    return deps


def _place_dependencies(src: Path, dest: Path) -> None:
    for name, dep_src in _file_dependencies(src):
        dep_dest = dest / "charts" / name
        if dep_dest.exists():
            continue
        dep_dest.parent.mkdir(parents=True, exist_ok=True)
        _copy_chart(dep_src, dep_dest)
        _place_dependencies(dep_src, dep_dest)


# ---- the cache of assembled charts ---------------------------------------------------------------------------
def _sources(src: Path) -> list[Path]:
    """Chart ``src`` and every chart its file:// dependencies bring in, each once, in a fixed order."""
    found = [src]
    for _, dep in _file_dependencies(src):
        found += [d for d in _sources(dep) if d not in found]
    return found


def _digest(folders: list[Path]) -> str:
    """The digest of every file the assembled chart copies from ``folders`` (relative path and bytes)."""
    h = hashlib.sha256()
    for folder in folders:
        h.update(folder.name.encode() + b"\0")
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not _ignored(d))
            for f in sorted(f for f in files if not _ignored(f)):
                path = Path(root, f)
                h.update(path.relative_to(folder).as_posix().encode() + b"\0")
                h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def _cached(name: str, cache: Path) -> Path:
    """Chart ``name`` assembled in ``cache``: the folder of its digest, made (atomically) if missing."""
    root = cache / "charts"
    src = chart_source(name)
    index = root / f"{name}.json"  # the folders the digest covers, so that a hit parses no Chart.yaml
    try:
        folders = [Path(p) for p in json.loads(index.read_text(encoding="utf-8"))["sources"]]
        if not folders or folders[0] != src or not all((f / "Chart.yaml").is_file() for f in folders):
            folders = []
    except (OSError, ValueError, KeyError, TypeError):
        folders = []
    if folders:
        hit = root / f"{name}-{_digest(folders)}" / name
        if (hit / "Chart.yaml").is_file():
            return hit
    folders = _sources(src)  # a miss: the dependencies read again (a Chart.yaml may have changed them)
    digest = _digest(folders)
    final = root / f"{name}-{digest}"
    if not (final / name / "Chart.yaml").is_file():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        try:
            assemble_chart(name, tmp)
            try:
                os.rename(tmp, final)
            except OSError:  # another command made it first (or a broken leftover): keep the one there
                if not (final / name / "Chart.yaml").is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _remove_stale(root, name, final)
    tmp_index = root / f".{name}.json.{uuid.uuid4().hex}"
    tmp_index.write_text(json.dumps({"sources": [str(f) for f in folders]}), encoding="utf-8")
    os.replace(tmp_index, index)
    return final / name


def _remove_stale(root: Path, name: str, keep: Path) -> None:
    now = time.time()
    for other in root.glob(f"{name}-*"):
        with contextlib.suppress(OSError):
            if other != keep and other.is_dir() and now - other.stat().st_mtime > _STALE_SECONDS:
                shutil.rmtree(other)


@contextlib.contextmanager
def installable(name: str, cache: Path | None) -> Iterator[Path]:
    """Chart ``name`` made installable: from ``cache`` (kept there under its files' digest), or, without a
    cache or where it cannot be written, assembled in a temporary folder removed afterwards."""
    path = None
    if cache is not None:
        try:
            path = _cached(name, cache)
        except OSError:
            path = None
    if path is not None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="arena-helm-") as tmp:
        yield assemble_chart(name, Path(tmp))
