"""Property test of the whole CLI path (hypothesis): argv -> typer -> spec -> chart values -> helm template.

Any printable text given as the training command (ONE argv word after ``--``: several words would be joined
with single spaces) and as an ``-e NAME=VALUE`` value reaches the rendered container byte for byte, as
``["sh", "-c", <text>]`` and as the env value. Runs ``submit tf --dry-run`` with Helm 3 and Helm 4.
"""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from arena_helm.cli import app

runner = CliRunner()

# Printable text: every Unicode character but surrogates and control characters, plus newline and tab
# (unicode, emoji, quotes, ": ", "#", "{{ }}", leading/trailing spaces all come from this).
PRINTABLE = st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(["\n", "\t"])
TEXT = st.text(PRINTABLE, min_size=1, max_size=80)
# environment variable names the spec accepts; NVIDIA_VISIBLE_DEVICES is the chart's own (no-GPU pods)
ENV_NAME = st.from_regex(r"[-._a-zA-Z][-._a-zA-Z0-9]{0,20}", fullmatch=True).filter(
    lambda n: n != "NVIDIA_VISIBLE_DEVICES")
HOSTILE = "a: b # c\n  {{ .Values.image }} {{ }} {} [] *x &y !z %w @ ` 'q' \"dq\" \\ |> - ? ,\t日本語 🚀 👩‍👩‍👧 "


def render_via_cli(helm_bin, command: str, env_name: str, env_value: str) -> dict:
    res = runner.invoke(app, [
        "submit", "tf", "--name", "prop", "--image", "img:1", "-e", f"{env_name}={env_value}",
        "--dry-run", "--helm-binary", str(helm_bin), "--", command,
    ], env={"KUBECONFIG": "/nonexistent"})
    assert res.exit_code == 0, (res.output, res.exception)
    assert res.stderr == ""
    (job,) = [d for d in yaml.safe_load_all(res.stdout) if d and d.get("kind") == "TFJob"]
    return job


# helm_bin is session-scoped today; should it become function-scoped, it is still the same binary for
# every example, so hypothesis' function-scoped-fixture health check would be a false alarm.
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=TEXT, env_name=ENV_NAME, env_value=st.text(PRINTABLE, max_size=80))
@example(command=HOSTILE, env_name="TEXT", env_value=HOSTILE)
@example(command="  leading and trailing spaces  ", env_name="A", env_value="  ")
@example(command="\n", env_name="B", env_value="\n\n")
@example(command="- item\n---\n...", env_name="C", env_value="null")
@example(command="{{ .Release.Name }}", env_name="D", env_value="{{ .Values.image }}")
@example(command="yes", env_name="E", env_value="0x1F")
@example(command="--help", env_name="F", env_value="=a=b=")
def test_command_and_env_value_reach_the_container_byte_for_byte(helm_bin, command, env_name, env_value):
    job = render_via_cli(helm_bin, command, env_name, env_value)
    # one worker and no PS: the standalone Chief runs the command
    (container,) = job["spec"]["tfReplicaSpecs"]["Chief"]["template"]["spec"]["containers"]
    assert container["command"] == ["sh", "-c", command]
    values = [e.get("value", "") for e in container.get("env", []) if e["name"] == env_name]
    assert values == [env_value]
    for got, want in ((container["command"][2], command), (values[0], env_value)):
        assert got.encode("utf-8") == want.encode("utf-8")
