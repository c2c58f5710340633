"""Provenance, ``rerun`` and ``export`` against the real API server, helm and training-operator: what a submit
records (values and job annotations), a rerun whose values equal the original's but for the flag given, and the
command line and values that export prints. The truth is read with helm and the API client themselves."""

from __future__ import annotations

import json
import os
import shlex
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

    # export of a rerun's job: the submit line it is equivalent to, which makes the same job once the original
    # and the rerun are gone
    res = run("export", "orig-2")
    assert res.exit_code == 0, res.output
    header, submit_line = res.stdout.splitlines()
    assert header == f"# TFJob orig-2 in namespace {namespace}, made by arena-helm rerun {__version__}:"
    words = shlex.split(submit_line)
    assert words == [*typed[:3], *typed[5:9], *typed[11:-5], "--name", "orig-2", "--gpus", "2", "--", *typed[-4:]]
    for name in ("orig", "orig-2"):
        assert run("delete", name).exit_code == 0
    res = run(*words[1:])
    assert res.exit_code == 0, res.output
    made = helm_values(helm_bin, cluster, namespace, "orig-2")
    assert made.pop("provenance")["spec"] == rprov["spec"]
    assert made == want


def git_repo(path) -> tuple[str, dict[str, str]]:
    """A repository with branches main and dev and an annotated tag v1 (on main): its file:// URL and the
    commits the refs name, as git itself says."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}

    def git(*args):
        return subprocess.run(["git", "-C", str(path), *args], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    path.mkdir()
    git("init", "-q", "-b", "main")
    (path / "train.py").write_text("print(1)\n")
    git("add", "train.py")
    git("commit", "-q", "-m", "one")
    git("tag", "-a", "v1", "-m", "release 1")
    git("checkout", "-q", "-b", "dev")
    (path / "train.py").write_text("print(2)\n")
    git("commit", "-q", "-am", "two")
    return f"file://{path}", {"main": git("rev-parse", "main"), "dev": git("rev-parse", "dev"),
                              "v1": git("rev-parse", "v1^{commit}")}


def test_submit_records_the_commit_of_the_sync_branch_and_get_the_image_digests(helm_bin, cluster, kubelet,
                                                                                 namespace, tmp_path):
    run = cli(helm_bin, cluster, namespace)
    url, commits = git_repo(tmp_path / "repo")
    assert commits["dev"] != commits["main"]
    for name, ref in (("on-dev", "dev"), ("on-tag", "v1")):
        res = run("submit", "tf", "--name", name, "--image", "tf:2", "--sync-source", url, "--sync-branch", ref,
                  "--", "python", "code/train.py")
        assert res.exit_code == 0, res.output
        assert "note:" not in res.stderr, res.stderr
        want = commits[ref]
        assert helm_values(helm_bin, cluster, namespace, name)["provenance"]["gitCommit"] == want
        assert tfjob(cluster, namespace, name)["metadata"]["annotations"]["arena-helm.kubeflow.org/git-commit"] \
            == want
    # a ref the repository does not have: the job is submitted, a note says why no commit is recorded
    res = run("submit", "tf", "--name", "on-none", "--image", "tf:2", "--sync-source", url, "--sync-branch", "nosuch",
              "--", "python", "code/train.py")
    assert res.exit_code == 0, res.output
    assert res.stderr == "note: the commit of sync ref nosuch is not recorded (the repository has no branch or tag " \
                         "nosuch)\n"
    assert "gitCommit" not in helm_values(helm_bin, cluster, namespace, "on-none")["provenance"]
    assert "arena-helm.kubeflow.org/git-commit" not in tfjob(cluster, namespace, "on-none")["metadata"]["annotations"]
    # a dry run names no commit (it reaches no repository, as it reaches no cluster)
    res = run("submit", "tf", "--name", "dry", "--image", "tf:2", "--sync-source", url, "--sync-branch", "dev",
              "--dry-run", "-o", "values", "--", "python", "code/train.py")
    assert res.exit_code == 0 and "gitCommit" not in yaml.safe_load(res.stdout)["provenance"], res.output

    # the digests of the images the pods ran: get shows them and keeps them on the job
    node = f"digests-{namespace}"
    kubelet.add_node(node, pool=namespace)
    core = client.CoreV1Api(cluster.api_client())
    try:
        from waits import wait_for

        def running_ids():
            pods = core.list_namespaced_pod(namespace, label_selector="training.kubeflow.org/job-name=on-dev").items
            ids = {s.image: s.image_id for p in pods for s in (p.status.init_container_statuses or [])
                   + (p.status.container_statuses or []) if s.image_id}
            return ids if pods and all(p.status.phase == "Running" for p in pods) else None

        ids = wait_for(running_ids, "on-dev's pods running with their imageIDs")
        assert set(ids) >= {"tf:2"} and all("@sha256:" in v for v in ids.values()), ids
        doc = json.loads(run("get", "on-dev", "-o", "json").stdout)
        assert doc["imageDigests"] == dict(sorted(ids.items()))
        recorded = tfjob(cluster, namespace, "on-dev")["metadata"]["annotations"]["arena-helm.kubeflow.org/image-digests"]
        assert json.loads(recorded) == doc["imageDigests"]
        out = run("get", "on-dev").stdout
        assert f"Images:      {sorted(ids)[0]} = {ids[sorted(ids)[0]]}\n" in out, out
        # read again: nothing new, so no write
        rv = tfjob(cluster, namespace, "on-dev")["metadata"]["resourceVersion"]
        assert json.loads(run("get", "on-dev", "-o", "json").stdout)["imageDigests"] == doc["imageDigests"]
        assert tfjob(cluster, namespace, "on-dev")["metadata"]["resourceVersion"] == rv  # nothing new: no write
    finally:
        kubelet.remove_node(node)
