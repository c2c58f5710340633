"""The helm adapter with an injected runner: the argument vectors it builds, values on stdin, the user's
helm value flags after them, and helm's errors translated into one line. No helm binary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena_helm.adapters.helm import Helm, KubeTarget, ValueSources
from arena_helm.core import stats
from arena_helm.core.errors import AlreadyExistsError, ClusterError, ForbiddenError, HelmError, NotFoundError, UsageError


class FakeHelm:
    """Answers like helm: ``replies`` maps a sub-command to (returncode, stdout, stderr)."""

    def __init__(self, **replies):
        self.calls: list[tuple[list[str], bytes | None]] = []
        self.replies = {"version": (0, b"v3.17.3", b""), **replies}

    async def __call__(self, argv, stdin):
        self.calls.append((argv, stdin))
        return self.replies.get(argv[1], (0, b"", b""))


def helm_with(**replies):
    fake = FakeHelm(**replies)
    return Helm("helm", KubeTarget("/kc", "ctx"), runner=fake), fake


def test_template_sends_values_on_stdin_then_the_users_flags_in_order(tmp_path):
    values_file = tmp_path / "v.yaml"
    values_file.write_text("a: 1\n")
    helm, fake = helm_with(template=(0, b"---\nkind: X\n", b""))
    sources = ValueSources.of([str(values_file)], ["worker.replicas=3", "b=2"], ["image=1.10"])
    before = stats.get("helm_calls")
    out = helm.template("job", Path("/charts/tfjob"), {"command": "echo 'a' \"b\" $X"}, "ns", sources)
    assert out == "---\nkind: X\n"
    argv, stdin = fake.calls[-1]
    assert argv == ["helm", "template", "job", "/charts/tfjob", "--namespace", "ns", "--values", "-",
                    "--values", str(values_file), "--set", "worker.replicas=3", "--set", "b=2",
                    "--set-string", "image=1.10", "--kubeconfig", "/kc", "--kube-context", "ctx"]
    assert json.loads(stdin) == {"command": "echo 'a' \"b\" $X"}
    assert stats.get("helm_calls") == before + 2  # version, template


def test_uninstall_and_list_use_pyhelm3s_commands():
    helm, fake = helm_with(list=(0, b'[{"name": "a"}]', b""))
    helm.uninstall("job", "ns", wait=True)
    assert fake.calls[-1][0] == ["helm", "uninstall", "job", "--timeout", "5m", "--namespace", "ns", "--wait",
                                 "--kubeconfig", "/kc", "--kube-context", "ctx"]
    assert helm.list("ns") == [{"name": "a"}]


@pytest.mark.parametrize(("stderr", "cls", "text"), [
    (b"Error: INSTALLATION FAILED: cannot re-use a name that is still in use", AlreadyExistsError, "cannot re-use"),
    (b"Error: Kubernetes cluster unreachable: Get \"https://x\": dial tcp: connection refused", ClusterError,
     "cannot reach the API server at https://x: connection refused"),
    (b"Error: secrets is forbidden: User \"alice\" cannot list", ForbiddenError, "forbidden"),
    (b"Error: uninstall: Release not loaded: job: release: not found", NotFoundError, "release: not found"),
    (b"Error: values don't meet the specifications of the schema(s) in the following chart(s):\ntfjob:\n"
     b"- worker.replicas: Invalid type. Expected: integer, given: string\n", UsageError,
     "values rejected by the chart schema: worker.replicas: Invalid type"),
    (b"Error: values don't meet the specifications of the schema(s) in the following chart(s):\ntfjob:\n"
     b"- at '/runPolicy/backoffLimit': minimum: got -3, want 0\n- at '/labels/a~1b': 'x!' does not match pattern\n",
     UsageError,  # helm 4's paths read as helm 3's, the problems in order
     "values rejected by the chart schema: labels.a/b: 'x!' does not match pattern; runPolicy.backoffLimit: minimum: "
     "got -3, want 0"),
    (b"Error: execution error at (tfjob/templates/tfjob.yaml:1:4): no replicas", UsageError, "no replicas"),
    (b"Error: something else\n", HelmError, "something else"),
])
def test_helm_errors_become_one_line_of_the_project(stderr, cls, text):
    helm, _ = helm_with(install=(1, b"", stderr))
    with pytest.raises(cls) as err:
        helm.install("job", Path("/c"), {}, "ns")
    assert text in str(err.value) and "\n" not in str(err.value)


def test_too_old_a_helm_is_refused():
    helm, _ = helm_with(version=(0, b"v3.7.0", b""))
    with pytest.raises(HelmError, match="too old"):
        helm.template("job", Path("/c"), {}, "ns")


def test_value_sources_are_checked_before_helm_runs(tmp_path):
    with pytest.raises(UsageError, match="--set 'x': expected KEY=VALUE"):
        ValueSources.of(set_=["x"])
    with pytest.raises(UsageError, match="-f/--values /nonexistent.yaml: cannot read the file"):
        ValueSources.of(["/nonexistent.yaml"]).check_files()
    assert not ValueSources() and ValueSources.of(set_=["a=b"]).argv() == ["--set", "a=b"]



def test_the_unit_tier_starts_no_helm_process():
    """The unit tier's guard (tests/unit/conftest.py) refuses the adapter's real runners: a unit test that
    reaches helm fails instead of depending on a binary."""
    import asyncio

    from arena_helm.adapters.helm import exec_runner, run_local

    with pytest.raises(AssertionError, match="^the unit tier starts no process"):
        asyncio.run(exec_runner(["helm", "version"], None))
    with pytest.raises(AssertionError, match="^the unit tier starts no process"):
        run_local(["helm", "version"], None)
