"""The invocation's one ``Application`` (cli/groups.py): the global options given before a command, then the
command's own, reach the command; nothing of one invocation is left for the next in the same process."""

from __future__ import annotations

import logging

import pytest
import yaml
from typer.testing import CliRunner

from arena_helm.cli import app
from arena_helm.cli.groups import Application

SUBMIT = ["submit", "tf", "--name", "job", "--image", "tf:2", "--dry-run", "-o", "values", "python", "train.py"]


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path, monkeypatch):
    (tmp_path / "none.yaml").write_text("{}\n")
    monkeypatch.setenv("ARENA_HELM_CONFIG", str(tmp_path / "none.yaml"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def test_global_options_before_the_command_reach_it_and_the_commands_own_win(tmp_path):
    missing = "error: kubeconfig {} (from --kubeconfig) does not exist: give the right one with --kubeconfig FILE " \
              "(or KUBECONFIG)\n"
    before, after = str(tmp_path / "before"), str(tmp_path / "after")
    assert invoke("--kubeconfig", before, "list") == (1, missing.format(before))
    assert invoke("--kubeconfig", before, "list", "--kubeconfig", after) == (1, missing.format(after))


def test_nothing_of_one_invocation_reaches_the_next(tmp_path):
    before = str(tmp_path / "before")
    assert invoke("--kubeconfig", before, "list")[0] == 1
    # the next invocation in the same process reads $KUBECONFIG again, not the earlier --kubeconfig
    assert invoke("list") == (1, f"error: no kubeconfig: none of the files in KUBECONFIG={tmp_path / 'no-kubeconfig'} "
                              "exists: give the right one with --kubeconfig FILE (or KUBECONFIG)\n")


def test_each_invocation_records_its_own_command_line():
    for extra in ([], ["--workers", "2"]):
        code, out = invoke(*SUBMIT[:-2], *extra, *SUBMIT[-2:])
        assert code == 0, out
        assert yaml.safe_load(out)["provenance"]["commandLine"] == ["arena-helm", *SUBMIT[:-2], *extra, *SUBMIT[-2:]]


def test_debug_before_the_command_logs_to_that_invocation_only():
    code, out = invoke("--loglevel", "debug", *SUBMIT)
    assert code == 0, out
    logger = logging.getLogger("arena_helm")
    assert (logger.handlers, logger.propagate, logger.level) == ([], True, logging.NOTSET)
    code, out = invoke(*SUBMIT)
    assert code == 0 and not out.startswith("debug:"), out


def test_given_applies_what_was_given_over_what_was_there():
    application = Application(argv=["list"], namespace="team-a", context="c1")
    assert application.given(namespace="team-b", kubeconfig=None, context=None) is application
    assert (application.namespace, application.kubeconfig, application.context, application.debug) == (
        "team-b", None, "c1", False)
    application.debug = True
    assert application.given(debug=False).debug is True  # once given, --debug stays on
    logging.getLogger("arena_helm").handlers = []
    logging.getLogger("arena_helm").propagate = True
    logging.getLogger("arena_helm").setLevel(logging.NOTSET)
