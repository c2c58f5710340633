"""The assembled charts and their cache (adapters/charts.py): files only, no helm."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest

from arena_helm.adapters import charts


@pytest.fixture()
def root(tmp_path, monkeypatch) -> Path:
    """A copy of the charts a job chart needs (tfjob and its file:// dependencies), as the charts' root."""
    src = charts.charts_root()
    dest = tmp_path / "charts"
    for name in ("tfjob", "arena-common", "tensorboard"):
        shutil.copytree(src / name, dest / name)
    monkeypatch.setattr(charts, "charts_root", lambda: dest)
    return dest


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def test_assemble_places_each_file_dependency_under_charts(root, tmp_path):
    out = charts.assemble_chart("tfjob", tmp_path / "work")
    assert sorted(p.name for p in (out / "charts").iterdir()) == ["arena-common", "tensorboard"]
    assert (out / "charts" / "arena-common" / "Chart.yaml").read_bytes() == \
        (root / "arena-common" / "Chart.yaml").read_bytes()


def test_installable_keeps_the_assembled_chart_under_its_digest_and_reuses_it(root, tmp_path):
    cache = tmp_path / "cache"
    with charts.installable("tfjob", cache) as first:
        made = first.stat().st_mtime_ns
    assert first.parent.parent == cache / "charts" and first.parent.name.startswith("tfjob-")
    assert _same_tree(first, charts.assemble_chart("tfjob", tmp_path / "fresh"))
    index = json.loads((cache / "charts" / "tfjob.json").read_text())
    assert index == {"sources": [str(root / "tfjob"), str(root / "arena-common"), str(root / "tensorboard")]}
    with charts.installable("tfjob", cache) as second:
        pass
    assert second == first and second.stat().st_mtime_ns == made  # reused as it was, not made again
    assert first.is_dir()  # the cache keeps it after the command


def test_a_changed_file_of_a_dependency_makes_a_new_folder(root, tmp_path):
    cache = tmp_path / "cache"
    with charts.installable("tfjob", cache) as first:
        pass
    helper = root / "arena-common" / "templates" / "_metadata.tpl"
    helper.write_text(helper.read_text() + "\n{{/* changed */}}\n")
    with charts.installable("tfjob", cache) as second:
        assert second != first
        assert (second / "charts" / "arena-common" / "templates" / "_metadata.tpl").read_text() == helper.read_text()
    assert first.is_dir()  # another command may still read the old one: it is left to expire


def test_a_broken_index_is_read_again(root, tmp_path):
    cache = tmp_path / "cache"
    with charts.installable("tfjob", cache) as first:
        pass
    (cache / "charts" / "tfjob.json").write_text("{not json")
    with charts.installable("tfjob", cache) as second:
        assert second == first
    assert json.loads((cache / "charts" / "tfjob.json").read_text())["sources"][0] == str(root / "tfjob")


def test_without_a_writable_cache_the_chart_is_assembled_in_a_temporary_folder(root, tmp_path):
    cache = tmp_path / "not-a-folder"
    cache.write_text("")  # the cache folder cannot be made
    with charts.installable("tfjob", cache) as path:
        assert (path / "charts" / "tensorboard" / "Chart.yaml").is_file()
        assert not path.is_relative_to(cache)
    assert not path.exists()  # removed afterwards
    with charts.installable("tfjob", None) as path:
        assert (path / "Chart.yaml").is_file()
    assert not path.exists()
