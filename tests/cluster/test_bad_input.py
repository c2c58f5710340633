"""Bad input: one line naming the flag and the fix, exit 2 (usage), no traceback, and the cluster unchanged
(no release Secret, no job object) — each case run for real against the test API server, both helm versions."""

from __future__ import annotations

import subprocess

import pytest
from kubernetes import client
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()

from bad_input_cases import CASES, command_line, with_files  # noqa: E402


@pytest.fixture(scope="module")
def bad_ns(cluster):
    cluster.create_namespace("bad-input")
    yield "bad-input"
    client.CoreV1Api(cluster.api_client()).delete_namespace("bad-input")


def cluster_state(cluster, ns):
    core = client.CoreV1Api(cluster.api_client())
    custom = client.CustomObjectsApi(cluster.api_client())
    secrets = sorted(s.metadata.name for s in core.list_namespaced_secret(ns).items
                     if s.metadata.name.startswith("sh.helm"))
    jobs = [
        custom.list_namespaced_custom_object("kubeflow.org", v, ns, p)["items"]
        for v, p in (("v1", "tfjobs"), ("v1", "pytorchjobs"), ("v2beta1", "mpijobs"))
    ]
    objs = (core.list_namespaced_pod(ns).items, core.list_namespaced_service(ns).items)
    return secrets, [len(j) for j in jobs], [len(o) for o in objs]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line_and_changes_nothing(case, helm_bin, cluster, bad_ns, tmp_path):
    cid, argv, code, text, _where = case
    argv = with_files(argv, tmp_path)
    flags = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin)]
    if "-n" not in argv:
        flags += ["-n", bad_ns]
    before = cluster_state(cluster, bad_ns)
    try:
        res = runner.invoke(app, command_line(argv, flags))
        assert res.exit_code == code, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1, res.stderr
        assert lines[0].startswith("error: ")
        assert text in lines[0], lines[0]
        assert "Traceback" not in res.output
        assert res.stdout == ""
        assert cluster_state(cluster, bad_ns) == before == ([], [0, 0, 0], [0, 0])
    finally:  # a case that wrongly installs something must not spoil the next ones
        for name in {s.split(".")[-2] for s in cluster_state(cluster, bad_ns)[0]}:
            subprocess.run([str(helm_bin), "uninstall", name, "-n", bad_ns, "--kubeconfig",
                            str(cluster.admin.kubeconfig)], capture_output=True)
