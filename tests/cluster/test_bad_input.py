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

TF = ["submit", "tf", "--image", "tf:2"]
OK_NAME = ["--name", "ok"]

# (id, argv before the cluster flags, expected exit code, text the one-line message must hold)
CASES = [
    ("no-name", [*TF], 2, "--name is required"),
    ("name-uppercase", [*TF, "--name", "Mnist"], 2, "--name: job name 'Mnist' must start with a lowercase letter"),
    ("name-dots", [*TF, "--name", "a.b"], 2, "--name: job name 'a.b'"),
    ("name-digit-first", [*TF, "--name", "1job"], 2, "--name: job name '1job'"),
    ("name-empty", [*TF, "--name", ""], 2, "--name: the job name is empty"),
    ("name-too-long", [*TF, "--name", "a" * 60], 2, "--name: job name '" + "a" * 60 + "' is 60 characters; at most 53"),
    ("name-too-long-for-pods", ["submit", "tf", "--image", "x", "--name", "a" * 52, "--workers", "2", "--evaluator"],
     2, "at most 51 fit this tfjob"),
    ("name-too-long-for-mpi", ["submit", "mpi", "--image", "x", "--name", "a" * 53], 2, "at most 52 fit this mpijob"),
    ("gpus-negative", [*TF, *OK_NAME, "--gpus", "-1"], 2, "--gpus: Input should be greater than or equal to 0"),
    ("gpus-huge", [*TF, *OK_NAME, "--gpus", "1000"], 2, "--gpus: Input should be less than or equal to 128"),
    ("gpus-not-a-number", [*TF, *OK_NAME, "--gpus", "two"], 2, "Invalid value for '--gpus': Input should be a valid integer"),
    ("workers-negative", [*TF, *OK_NAME, "--workers", "-3"], 2, "--workers: Input should be greater than or equal to 0"),
    ("workers-huge", [*TF, *OK_NAME, "--workers", "100000"], 2, "--workers: Input should be less than or equal to 1000"),
    ("workers-zero-mpi", ["submit", "mpi", "--image", "x", *OK_NAME, "--workers", "0"], 2, "--workers"),
    ("cpu-malformed", [*TF, *OK_NAME, "--cpu", "1x"], 2, "--cpu/--worker-cpu: '1x' is not a valid cpu quantity"),
    ("memory-malformed", [*TF, *OK_NAME, "--memory", "4GB"], 2, "--memory/--worker-memory: '4GB' is not a valid memory"),
    ("ps-memory-malformed", [*TF, *OK_NAME, "--ps", "1", "--ps-memory", "lots"], 2, "--ps-memory: 'lots'"),
    ("ttl-malformed", [*TF, *OK_NAME, "--ttl-after-finished", "5x"], 2, "--ttl-after-finished: '5x' is not a duration"),
    ("timeout-negative", [*TF, *OK_NAME, "--running-timeout", "-5m"], 2, "--running-timeout: '-5m' is not a duration"),
    ("data-no-mount", [*TF, *OK_NAME, "-d", "training-data"], 2, "--data: 'training-data' is not PVC:MOUNT_PATH"),
    ("data-relative-mount", [*TF, *OK_NAME, "-d", "pvc:data"], 2, "--data: mount path 'data' must be absolute"),
    ("data-bad-claim", [*TF, *OK_NAME, "-d", "Bad_Claim:/data"], 2, "--data: PVC name 'Bad_Claim'"),
    ("data-duplicate-claim", [*TF, *OK_NAME, "-d", "a:/d", "-d", "a:/e"], 2, "--data: PVC a is given twice"),
    ("data-duplicate-mount", [*TF, *OK_NAME, "-d", "a:/d", "-d", "b:/d"], 2, "mount path /d is used twice"),
    ("data-dir-relative", [*TF, *OK_NAME, "--data-dir", "host:/c"], 2, "--data-dir: path 'host' must be absolute"),
    ("env-no-equals", [*TF, *OK_NAME, "-e", "NOEQ"], 2, "--env: 'NOEQ' is not an environment variable"),
    ("env-bad-name", [*TF, *OK_NAME, "-e", "1BAD=x"], 2, "--env: environment variable name '1BAD'"),
    ("label-bad-key", [*TF, *OK_NAME, "-l", "bad key!=v"], 2, "--label: label key 'bad key!'"),
    ("label-bad-value", [*TF, *OK_NAME, "-l", "k=bad value"], 2, "--label: label k='bad value'"),
    ("label-long-value", [*TF, *OK_NAME, "-l", "k=" + "v" * 64], 2, "--label: label k="),
    ("annotation-empty-key", [*TF, *OK_NAME, "-a", "=v"], 2, "--annotation: '=v' is not an annotation"),
    ("selector-no-equals", [*TF, *OK_NAME, "--selector", "gpu"], 2, "--selector: 'gpu' is not a node selector (expected KEY=VALUE)"),
    ("toleration-bad-effect", [*TF, *OK_NAME, "--toleration", "k=v:Bad"], 2,
     "--toleration: toleration effect 'Bad' must be one of"),
    ("toleration-empty-effect", [*TF, *OK_NAME, "--toleration", "k:"], 2, "--toleration: 'k:' is not a toleration"),
    ("toleration-bad-operator", [*TF, *OK_NAME, "--toleration", "k=v,Maybe"], 2,
     "--toleration: toleration operator 'Maybe' must be Equal or Exists"),
    ("toleration-exists-with-value", [*TF, *OK_NAME, "--toleration", "k=v,Exists"], 2, "takes no value"),
    ("pull-policy-unknown", [*TF, *OK_NAME, "--image-pull-policy", "Sometimes"], 2,
     "Invalid value for '--image-pull-policy': Value error, 'Sometimes' is not one of 'Always', 'IfNotPresent', 'Never'"),
    ("clean-policy-unknown", [*TF, *OK_NAME, "--clean-task-policy", "Some"], 2, "Invalid value for '--clean-task-policy'"),
    ("sync-mode-unknown", [*TF, *OK_NAME, "--sync-mode", "rsync"], 2,
     "Invalid value for '--sync-mode': Value error, 'rsync' is not one of 'git'"),
    ("sync-branch-alone", [*TF, *OK_NAME, "--sync-branch", "dev"], 2, "--sync-branch needs --sync-source URL"),
    ("sync-source-not-a-url", [*TF, *OK_NAME, "--sync-source", "my repo"], 2, "--sync-source: 'my repo' is not a git URL"),
    ("device-bad-count", [*TF, *OK_NAME, "--device", "amd.com/gpu=x"], 2, "--device: device 'amd.com/gpu=x'"),
    ("device-no-vendor", [*TF, *OK_NAME, "--device", "gpu=1"], 2, "--device: device 'gpu' must be VENDOR/RESOURCE"),
    ("device-nvidia", [*TF, *OK_NAME, "--device", "nvidia.com/gpu=1"], 2, "use --gpus for nvidia.com/gpu"),
    ("set-wrong-type", [*TF, *OK_NAME, "--set", "worker.replicas=many"], 2, "values rejected by the chart schema"),
    ("set-unknown-key", [*TF, *OK_NAME, "--set", "notAValue=1"], 2, "values rejected by the chart schema"),
    ("set-no-equals", [*TF, *OK_NAME, "--set", "worker.replicas"], 2, "--set 'worker.replicas': expected KEY=VALUE"),
    ("values-file-missing", [*TF, *OK_NAME, "-f", "/nonexistent/values.yaml"], 2,
     "-f/--values /nonexistent/values.yaml: cannot read the file"),
    ("values-file-list", [*TF, *OK_NAME, "-f", "{list_file}"], 2, "must hold a YAML mapping of chart values, not a list"),
    ("values-file-bad-yaml", [*TF, *OK_NAME, "-f", "{bad_yaml}"], 2, "not valid YAML at line"),
    ("share-memory-malformed", [*TF, *OK_NAME, "--share-memory", "lots"], 2, "--share-memory: 'lots'"),
    ("priority-bad-name", [*TF, *OK_NAME, "-p", "Bad_Name"], 2, "--priority: 'Bad_Name' must be a lowercase DNS"),
    ("queue-bad", [*TF, *OK_NAME, "--queue", "bad queue"], 2, "--queue: queue 'bad queue'"),
    ("shell-with-args", [*TF, *OK_NAME, "--shell", "bash -x"], 2, "--shell: shell 'bash -x' must be one program"),
    ("working-dir-relative", [*TF, *OK_NAME, "--working-dir", "work"], 2, "--working-dir: working directory 'work'"),
    ("logdir-outside-data", [*TF, *OK_NAME, "--tensorboard", "--logdir", "/elsewhere"], 2,
     "--logdir /elsewhere is not under a --data mount"),
    ("namespace-bad", [*TF, *OK_NAME, "-n", "Bad_NS"], 2, "--namespace: namespace 'Bad_NS'"),
    ("mpi-api-unknown", ["submit", "mpi", "--image", "x", *OK_NAME, "--mpi-api", "v3"], 2,
     "Invalid value for '--mpi-api': Value error, 'v3' is not one of 'auto', 'v2beta1', 'v1'"),
    ("nproc-negative", ["submit", "py", "--image", "x", *OK_NAME, "--nproc-per-node", "-1"], 2,
     "--nproc-per-node: '-1' must be a positive number, auto, cpu or gpu"),
    ("slots-zero", ["submit", "mpi", "--image", "x", *OK_NAME, "--slots-per-worker", "0"], 2, "--slots-per-worker"),
    ("wait-timeout-malformed", [*TF, *OK_NAME, "--wait", "--timeout", "soon"], 2, "--timeout: 'soon' is not a duration"),
    ("unknown-flag", [*TF, *OK_NAME, "--gpu", "1"], 2, "No such option: --gpu"),
    ("unknown-kind", ["submit", "caffe", "--name", "x"], 2, "No such command 'caffe'"),
    ("get-no-name", ["get"], 2, "Missing argument 'NAME'"),
    ("list-bad-type", ["list", "-T", "caffe"], 2, "-T/--type 'caffe'"),
    ("list-bad-output", ["list", "-o", "xml"], 2, "Invalid value for '--output' / '-o': Value error, 'xml' is not one of 'table', 'wide'"),
    ("top-node-bad-output", ["top", "node", "-o", "xml"], 2,
     "Invalid value for '--output' / '-o': Value error, 'xml' is not one of 'table', 'json', 'yaml'"),
    ("prune-no-since", ["prune"], 2, "Missing option '--since'"),
    ("prune-bad-since", ["prune", "--since", "yesterday"], 2, "--since: 'yesterday' is not a duration"),
    ("logs-negative-tail", ["logs", "x", "--tail", "-5"], 2, "--tail -5"),
    ("logs-since-and-since-time", ["logs", "x", "--since", "1m", "--since-time", "2026-01-01T00:00:00Z"], 2,
     "--since and --since-time"),
    ("logs-bad-since-time", ["logs", "x", "--since-time", "yesterday"], 2, "--since-time 'yesterday' is not an RFC3339"),
    ("tensorboard-bad-name", ["tensorboard", "start", "Bad", "--logdir", "pvc:/x"], 2, "tensorboard name 'Bad'"),
]


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
    cid, argv, code, text = case
    list_file = tmp_path / "list.yaml"
    list_file.write_text("- a\n- b\n")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("a: [1, 2\nb: c\n")
    argv = [a.replace("{list_file}", str(list_file)).replace("{bad_yaml}", str(bad_yaml)) for a in argv]
    flags = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin)]
    if "-n" not in argv:
        flags += ["-n", bad_ns]
    before = cluster_state(cluster, bad_ns)
    try:
        # cluster flags go before the training command (which is the last word here)
        res = runner.invoke(app, [*argv, *flags, "python", "train.py"] if argv[0] == "submit" else [*argv, *flags])
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
