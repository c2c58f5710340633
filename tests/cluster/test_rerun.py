"""Provenance, ``rerun`` and ``export`` against the real API server, helm and training-operator: what a submit
records (values and job annotations), a rerun whose values equal the original's but for the flag given, and the
command line and values that export prints. The truth is read with helm and the API client themselves."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml
from clictx import cli
from kubernetes import client

from arena_helm.__about__ import __version__

pytestmark = pytest.mark.cluster


def helm_values(helm_bin, cluster, namespace, name) -> dict:
    env = {**os.environ, "KUBECONFIG": str(cluster.admin.kubeconfig)}
    out = subprocess.run([str(helm_bin), "get", "values", name, "-n", namespace, "-o", "json"], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def tfjob(cluster, namespace, name) -> dict:
    return client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", name)


def test_rerun_changes_only_the_flags_given_and_export_reproduces(helm_bin, cluster, namespace):
    run = cli(helm_bin, cluster, namespace)
    words = ["submit", "tf", "--name", "orig", "--image", "tf:2", "--workers", "2", "--gpus", "1", "--env", "A=1",
             "--set-string", "annotations.team=vision", "--", "python", "train.py", "--lr", "0.1"]
    res = run(*words)
    assert res.exit_code == 0, res.output
    typed = ["arena-helm", *words[:-5], "--kubeconfig", str(cluster.users["admin"].kubeconfig), "--helm-binary",
             str(helm_bin), "-n", namespace, *words[-5:]]

    orig = helm_values(helm_bin, cluster, namespace, "orig")
    prov = orig["provenance"]
    assert prov["version"] == __version__ and prov["commandLine"] == typed
    assert prov["spec"] == {"image": "tf:2", "command": "python train.py --lr 0.1", "workers": 2, "gpus": 1,
                            "env": [{"name": "A", "value": "1"}], "user": "admin"}
    job = tfjob(cluster, namespace, "orig")
    ann = job["metadata"]["annotations"]
    assert ann["arena-helm.kubeflow.org/version"] == __version__
    assert json.loads(ann["arena-helm.kubeflow.org/command-line"]) == typed
    worker_pod_ann = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"]
    assert "arena-helm.kubeflow.org/command-line" not in worker_pod_ann and worker_pod_ann["team"] == "vision"

    # rerun with one flag: the values are the original's but for the worker's GPUs (and the rerun's provenance)
    res = run("rerun", "orig", "--gpus", "2")
    assert res.exit_code == 0, res.output
    assert "tfjob.kubeflow.org/orig-2 created" in res.stdout
    again = helm_values(helm_bin, cluster, namespace, "orig-2")
    rprov = again.pop("provenance")
    want = {k: v for k, v in orig.items() if k != "provenance"}
    want["worker"] = {**want["worker"], "gpus": 2}
    assert again == want
    assert rprov["spec"] == {**prov["spec"], "gpus": 2} and rprov["commandLine"][:4] == [
        "arena-helm", "rerun", "orig", "--gpus"]
    worker = tfjob(cluster, namespace, "orig-2")["spec"]["tfReplicaSpecs"]["Worker"]
    limits = worker["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert (worker["replicas"], limits["nvidia.com/gpu"]) == (2, 2)
    assert worker["template"]["metadata"]["annotations"]["team"] == "vision"  # the user's --set-string kept

    # no flag, a name of one's own, a new training command: only the command changes
    res = run("rerun", "orig", "--name", "orig-b", "--", "python", "train.py", "--lr", "0.2")
    assert res.exit_code == 0, res.output
    b = helm_values(helm_bin, cluster, namespace, "orig-b")
    b.pop("provenance")
    assert b == {**{k: v for k, v in orig.items() if k != "provenance"}, "command": "python train.py --lr 0.2"}
    # the next default name skips the names taken
    res = run("rerun", "orig", "--dry-run", "-o", "values")
    assert res.exit_code == 0, res.output
    dry = yaml.safe_load(res.stdout)
    assert dry["provenance"]["spec"] == prov["spec"]
    assert run("rerun", "orig-2", "--dry-run").stdout.count("name: orig-3\n") >= 1

    # export: the command line as typed, and the values (helm install CHART -f FILE makes the same job)
    res = run("export", "orig")
    assert res.exit_code == 0, res.output
    import shlex

    assert res.stdout == (f"# TFJob orig in namespace {namespace}, submitted with arena-helm {__version__}:\n"
                          f"{shlex.join(typed)}\n")
    assert shlex.split(res.stdout.splitlines()[1]) == typed
    res = run("export", "orig", "-o", "values")
    assert yaml.safe_load(res.stdout) == {k: v for k, v in orig.items() if k != "provenance"}
    doc = json.loads(run("export", "orig", "-o", "json").stdout)
    assert (doc["kind"], doc["commandLine"], doc["spec"]) == ("TFJob", typed, prov["spec"])

    # bad input: one line, nothing installed
    res = run("rerun", "orig", "--gpus", "lots")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "--gpus" in res.stderr
    res = run("rerun", "nosuch")
    assert res.exit_code == 1 and res.stderr == (
        f"error: no job named nosuch in namespace {namespace} (see arena-helm list)\n")
    res = run("rerun", "orig", "--name", "orig-2")
    assert res.exit_code == 1 and "a release named orig-2 already exists" in res.stderr
    releases = subprocess.run([str(helm_bin), "list", "-n", namespace, "-q"], capture_output=True, text=True,
                              env={**os.environ, "KUBECONFIG": str(cluster.admin.kubeconfig)}).stdout.split()
    assert sorted(releases) == ["orig", "orig-2", "orig-b"]
