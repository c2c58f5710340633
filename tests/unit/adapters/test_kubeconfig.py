"""arena_helm.adapters.kubeconfig: client-go's merge of a KUBECONFIG list (first file wins, relative paths resolved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_helm.adapters.kubeconfig import load, merge
from arena_helm.core.errors import KubeconfigError


def test_merge_first_file_wins_per_name_and_for_current_context():
    a = {"contexts": [{"name": "x", "context": {"cluster": "c1", "namespace": "a"}}], "current-context": "x"}
    b = {"clusters": [{"name": "c1", "cluster": {"server": "https://b", "certificate-authority": "ca.crt"}}],
         "contexts": [{"name": "x", "context": {"cluster": "c1", "namespace": "b"}},
                      {"name": "y", "context": {"cluster": "c1"}}],
         "users": [{"name": "u", "user": {"client-key": "/abs/key", "tokenFile": "tok"}}],
         "current-context": "y"}
    out = merge([(Path("/h/a/config"), a), (Path("/h/b/config"), b)])
    assert out["current-context"] == "x"
    assert [(c["name"], c["context"].get("namespace")) for c in out["contexts"]] == [("x", "a"), ("y", None)]
    # relative paths are relative to the file that holds them
    assert out["clusters"][0]["cluster"]["certificate-authority"] == "/h/b/ca.crt"
    assert out["users"][0]["user"] == {"client-key": "/abs/key", "tokenFile": "/h/b/tok"}


def test_merge_current_context_from_the_first_file_that_sets_it():
    out = merge([(Path("/a"), {"contexts": []}), (Path("/b"), {"current-context": "from-b"})])
    assert out["current-context"] == "from-b"


def test_an_explicit_list_of_files_is_refused_with_where_lists_go(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("{}")
    b.write_text("{}")
    with pytest.raises(KubeconfigError) as err:
        load(f"{a}:{b}")
    assert str(err.value) == (f"kubeconfig {a}:{b} (from --kubeconfig) does not exist: --kubeconfig takes one file; "
                              "to merge several, list them in KUBECONFIG (:-separated)")
    with pytest.raises(KubeconfigError) as err:
        load(str(tmp_path / "c"))
    assert str(err.value) == (f"kubeconfig {tmp_path / 'c'} (from --kubeconfig) does not exist: give the right one "
                              "with --kubeconfig FILE (or KUBECONFIG)")
