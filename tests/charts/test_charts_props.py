"""Property-based tests of the job charts (hypothesis): any text survives the chart byte for byte.

Each example runs helm once, so the example count is small (25 per helm version); the tests run with
Helm 3 and Helm 4 through the ``helm_bin`` fixture.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_charts import env_of, job_of, main_container, render_docs

# Printable text: every Unicode character but surrogates and control characters, plus newline and tab.
PRINTABLE = st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(["\n", "\t"])
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HOSTILE = "a: b # c\n  {{ .Values.image }} {} [] *x &y !z %w @ ` 'q' \"dq\" \\ |> - ? ,\t日本語 🚀"


@SETTINGS
@given(command=st.text(PRINTABLE, min_size=1, max_size=80), value=st.text(PRINTABLE, max_size=80))
@example(command=HOSTILE, value=HOSTILE)
@example(command="  leading spaces and trailing  ", value="")
@example(command="yes", value="0x1F")
@example(command="y", value="N")
@example(command="- item\n---\n...", value="null")
def test_command_and_env_value_survive_byte_for_byte(helm_bin, command, value):
    docs = render_docs(helm_bin, "pytorchjob", {
        "image": "img:1", "command": command, "env": [{"name": "TEXT", "value": value}],
        "worker": {"replicas": 1, "command": command + "\n# worker"}})
    job = job_of(docs)
    assert main_container(job, "Master")["command"] == ["sh", "-c", command]
    assert main_container(job, "Worker")["command"] == ["sh", "-c", command + "\n# worker"]
    for rtype in ("Master", "Worker"):
        assert env_of(main_container(job, rtype))["TEXT"] == value


@SETTINGS
@given(text=st.text(PRINTABLE, min_size=1, max_size=60))
@example(text=HOSTILE)
def test_mpi_launcher_command_survives(helm_bin, text):
    job = job_of(render_docs(helm_bin, "mpijob", {"image": "img:1", "command": text, "mpiApiVersion": "v1"}))
    assert main_container(job, "Launcher")["command"] == ["sh", "-c", text]
    assert main_container(job, "Worker")["command"] == ["sleep", "infinity"]


@pytest.mark.parametrize("chart", ["tfjob", "mpijob"])
def test_hostile_text_in_other_strings(helm_bin, chart):
    """Other free-text values (working dir, labels' neighbours, annotations, the git ref) are quoted too."""
    annotations = {"example.com/note": HOSTILE}
    job = job_of(render_docs(helm_bin, chart, {
        "image": "img:1", "command": "x", "workingDir": "/w #x {y} 'q'", "annotations": annotations,
        "codeSync": {"enabled": True, "repo": "https://example.com/r.git", "ref": "feature/#1: {x}"}}))
    rtype = "Worker" if chart == "tfjob" else "Launcher"
    assert main_container(job, rtype)["workingDir"] == "/w #x {y} 'q'"
    rendered = annotations | {"requestGPUsOfJobOwner": "0"}  # with Arena's: the chart's defaults request no GPU
    assert job["metadata"]["annotations"] == rendered
    spec = job["spec"][{"tfjob": "tfReplicaSpecs", "mpijob": "mpiReplicaSpecs"}[chart]][rtype]["template"]
    assert spec["metadata"]["annotations"] == rendered
    assert "--ref=feature/#1: {x}" in spec["spec"]["initContainers"][0]["args"]
