"""The CLI as a cluster test drives it: in-process (CliRunner), with the cluster's kubeconfig, a helm binary and
a namespace appended (before the command words of a submit or an attach, after ``--``)."""

from __future__ import annotations

from collections.abc import Callable

from typer.testing import CliRunner

from arena_helm.cli import app

runner = CliRunner()


def cli(helm_bin, cluster, namespace: str, *, check: bool = False, user: str = "admin") -> Callable:
    """``run(*args)``: the result of ``arena-helm ARGS --kubeconfig ... --helm-binary ... -n NAMESPACE``; with
    ``check``, its stdout once the test has asserted exit 0."""
    base = ["--kubeconfig", str(cluster.users[user].kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]

    def run(*args):
        cmd = list(args)
        i = cmd.index("--") if "--" in cmd else len(cmd)
        res = runner.invoke(app, cmd[:i] + base + cmd[i:])
        if not check:
            return res
        assert res.exit_code == 0, res.output
        return res.stdout
    return run
