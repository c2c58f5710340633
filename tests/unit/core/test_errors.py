"""arena_helm.core.errors: one message, in the words of its reader: the CLI's flags, the Python API's parameters."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena_helm import TFJobSpec, UsageError
from arena_helm.cli import app
from arena_helm.core.errors import for_python


@pytest.mark.parametrize(("cli", "python"), [
    ("--workers: the job has no replicas: give --workers 1 or more (or --ps/--chief)",
     "workers=: the job has no replicas: give workers=1 or more (or ps=/chief=)"),
    ("--sync-branch needs --sync-source URL", "sync_branch= needs sync_source= URL"),
    ("give the right one with --kubeconfig FILE (or KUBECONFIG)",
     "give the right one with KubeReader(kubeconfig=FILE) (or KUBECONFIG)"),
    ("pick one with --context NAME", "pick one with KubeReader(context=NAME)"),
    ("pass --helm-binary PATH or set ARENA_HELM_HELM", "pass Helm(PATH) or set ARENA_HELM_HELM"),
    ("or use --dry-run to render without a cluster", "or use render() to render without a cluster"),
    ("--set a: helm cannot parse it", "--set a: helm cannot parse it"),  # not a parameter: as it is
    ("COMMAND: give the training command", "COMMAND: give the training command"),
])
def test_flags_become_parameters_for_a_python_caller(cli, python, python_words):
    assert for_python(cli) == python
    assert str(UsageError(cli)) == python  # the Python API's default reader


def test_the_same_error_names_the_flag_on_the_command_line_and_the_parameter_in_python(python_words):
    with pytest.raises(UsageError) as err:
        TFJobSpec(name="a", image="busybox:1.36", workers=0, command="true")
    assert str(err.value) == "workers=: the job has no replicas: give workers=1 or more (or ps=/chief=)"
    res = CliRunner().invoke(app, ["submit", "tf", "--name", "a", "--image", "busybox:1.36", "--workers", "0",
                                   "--dry-run", "--", "true"])
    assert res.exit_code == 2
    assert res.stderr == "error: --workers: the job has no replicas: give --workers 1 or more (or --ps/--chief)\n"
    # after the command, the Python API reads parameters again
    assert str(UsageError("--data-dir X")) == "data_dir= X"


def test_the_python_api_hands_the_kube_adapters_kubeconfig_to_helm(monkeypatch):
    """``submit(spec, kube=KubeReader(kubeconfig=F, context=C))``: helm reaches the same cluster."""
    from arena_helm import KubeReader
    from arena_helm.workload import submission

    seen = {}

    class FakeHelm:
        def __init__(self, binary=None, target=None):
            seen["target"] = (target.kubeconfig, target.context)

        def install(self, *args, **kwargs):
            raise UsageError("stop here")

    monkeypatch.setattr(submission, "Helm", FakeHelm)
    with pytest.raises(UsageError):
        submission.submit(TFJobSpec(name="a", image="busybox:1.36", command="true"),
                          kube=KubeReader(kubeconfig="/k/config", context="prod"))
    assert seen["target"] == ("/k/config", "prod")
