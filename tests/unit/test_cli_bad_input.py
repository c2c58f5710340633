"""The validation half of the bad-input table, with no helm binary and no API server: each ``cli`` case
fails with one ``error:`` line naming its flag and exit 2, and no helm process is started (the helm runner
fails the test if anything reaches it; PATH holds no helm)."""

from __future__ import annotations

import pytest
from bad_input_cases import CASES, command_line, with_files
from typer.testing import CliRunner

from arena_helm.cli import app
from arena_helm.core import stats

CLI_CASES = [c for c in CASES if c[4] == "cli"]


@pytest.fixture(autouse=True)
def no_helm(monkeypatch, tmp_path):
    async def refuse(argv, stdin):
        raise AssertionError(f"a helm process was started: {argv}")

    monkeypatch.setattr("arena_helm.adapters.helm.exec_runner", refuse)
    monkeypatch.setenv("PATH", str(tmp_path))  # no helm, no kubectl
    monkeypatch.delenv("ARENA_HELM_HELM", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.setenv("ARENA_HELM_CONFIG", str(tmp_path / "defaults.yaml"))
    (tmp_path / "defaults.yaml").write_text("{}\n")


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_input_is_refused_before_helm(case, tmp_path):
    cid, argv, code, text, _ = case
    calls = stats.get("helm_calls")
    res = CliRunner().invoke(app, command_line(with_files(argv, tmp_path), []))
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and text in lines[0], lines[0]
    assert "Traceback" not in res.output and res.stdout == ""
    assert stats.get("helm_calls") == calls


def test_the_table_names_each_case_once():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
