"""Arena's flags of submit tfjob/pytorchjob/mpijob (issue #11), through the real CLI: ``--dry-run -o values``
prints the generated chart values (no helm process, no cluster), which are asserted exactly by path.

Each Arena flag here has Arena's meaning (kubeflow/arena pkg/argsbuilder/submit*.go and its charts); the
deprecated camelCase spellings Arena still accepts are hidden from --help.
"""

from __future__ import annotations

import base64
import hashlib

import pytest
import yaml
from typer.testing import CliRunner

from arena_helm.cli import app

KIND_ARGS = {"tf": ["--image", "tf:2"], "pytorch": ["--image", "pt:2"], "mpi": ["--image", "mpi:1"],
             "xgboost": ["--image", "xgb:2"], "jax": ["--image", "jax:0.4"], "paddle": ["--image", "paddle:2.6"]}


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path, monkeypatch):
    (tmp_path / "none.yaml").write_text("{}\n")
    monkeypatch.setenv("ARENA_HELM_CONFIG", str(tmp_path / "none.yaml"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))


def run(*args: str, kind: str = "tf") -> tuple[int, str]:
    res = CliRunner().invoke(app, ["submit", kind, "--name", "job", *KIND_ARGS[kind], *args, "--dry-run", "-o",
                                   "values", "python", "train.py"])
    return res.exit_code, res.output


def values(*args: str, kind: str = "tf") -> dict:
    code, out = run(*args, kind=kind)
    assert code == 0, out
    data = yaml.safe_load(out)
    # the command line is recorded as typed (provenance); what the words mean is the rest, spec included
    assert data["provenance"].pop("commandLine") == ["arena-helm", "submit", kind, "--name", "job", *KIND_ARGS[kind],
                                                     *args, "--dry-run", "-o", "values", "python", "train.py"]
    return data


def error(*args: str, kind: str = "tf") -> str:
    code, out = run(*args, kind=kind)
    assert code == 2, out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    return lines[0]


# (kind, Arena's deprecated spelling, the flag it stands for, a value or None for a switch)
CAMEL = [
    ("tf", "--workingDir", "--working-dir", "/work"),
    ("pytorch", "--dataDir", "--data-dir", "/mnt/data"),
    ("tf", "--syncMode", "--sync-mode", "rsync"),
    ("tf", "--syncSource", "--sync-source", "https://example.com/a/b.git"),
    ("tf", "--syncImage", "--sync-image", "git-sync:v4"),
    ("tf", "--workerImage", "--worker-image", "tf:w"),
    ("tf", "--psImage", "--ps-image", "tf:p"),
    ("tf", "--workerPort", "--worker-port", "3000"),
    ("tf", "--psPort", "--ps-port", "3001"),
    ("tf", "--chiefPort", "--chief-port", "3002"),
    ("tf", "--workerCpu", "--worker-cpu", "3"),
    ("tf", "--workerMemory", "--worker-memory", "3Gi"),
    ("tf", "--psCpu", "--ps-cpu", "2"),
    ("tf", "--psMemory", "--ps-memory", "2Gi"),
    ("tf", "--ChiefCpu", "--chief-cpu", "1"),
    ("tf", "--ChiefMemory", "--chief-memory", "1Gi"),
    ("tf", "--evaluatorCpu", "--evaluator-cpu", "1"),
    ("tf", "--evaluatorMemory", "--evaluator-memory", "1Gi"),
    ("pytorch", "--cleanTaskPolicy", "--clean-task-policy", "None"),
    ("mpi", "--cleanTaskPolicy", "--clean-task-policy", "Running"),
    ("pytorch", "--hostNetwork", "--host-network", None),
    ("pytorch", "--hostIPC", "--host-ipc", None),
    ("mpi", "--hostPID", "--host-pid", None),
]
NEEDS = {"--sync-mode": ["--sync-source", "git@host:code.git", "--sync-image", "rsync:3"],
         "--sync-image": ["--sync-source", "https://example.com/a/b.git"],
         "--ps-image": ["--ps", "1", "--workers", "2"], "--ps-port": ["--ps", "1", "--workers", "2"],
         "--ps-cpu": ["--ps", "1", "--workers", "2"], "--ps-memory": ["--ps", "1", "--workers", "2"],
         "--chief-port": ["--chief", "--workers", "2"], "--chief-cpu": ["--chief", "--workers", "2"],
         "--chief-memory": ["--chief", "--workers", "2"], "--evaluator-cpu": ["--evaluator", "--workers", "2"],
         "--evaluator-memory": ["--evaluator", "--workers", "2"], "--worker-image": ["--workers", "2"],
         "--worker-port": ["--workers", "2"], "--worker-cpu": ["--workers", "2"],
         "--worker-memory": ["--workers", "2"]}


@pytest.mark.parametrize(("kind", "camel", "flag", "value"), CAMEL, ids=[c[1] + "-" + c[0] for c in CAMEL])
def test_arenas_camelcase_spelling_means_the_flag_and_is_hidden(kind, camel, flag, value):
    extra = NEEDS.get(flag, [])
    given = [camel] if value is None else [camel, value]
    wanted = [flag] if value is None else [flag, value]
    assert values(*extra, *given, kind=kind) == values(*extra, *wanted, kind=kind)
    assert values(*extra, *given, kind=kind) != values(*extra, kind=kind)
    help_text = CliRunner().invoke(app, ["submit", kind, "--help"]).output
    assert camel + " " not in help_text and flag in help_text


def test_arenas_defaults_reach_the_values():
    v = values("--workers", "2", "--gpus", "1", kind="pytorch")
    assert (v["imagePullPolicy"], v["workingDir"], v["shmSize"]) == ("Always", "/root", "2Gi")
    # --retry 0 (Arena's default): no restarts, every replica Never and no backoffLimit (see compatibility.md)
    assert v["runPolicy"] == {"cleanPodPolicy": "Running"}
    assert (v["master"]["restartPolicy"], v["worker"]["restartPolicy"]) == ("Never", "Never")
    r = values("--workers", "2", "--retry", "3", kind="pytorch")
    assert (r["runPolicy"], r["master"]["restartPolicy"], r["worker"]["restartPolicy"]) == (
        {"cleanPodPolicy": "Running", "backoffLimit": 3}, "Never", "OnFailure")
    for kind, roles, with_retry in (("xgboost", ("worker",), "ExitCode"), ("jax", ("worker",), "OnFailure"),
                                    ("paddle", ("master", "worker"), "OnFailure")):
        extra = ("--servers", "1") if kind == "paddle" else ()
        assert [values("--workers", "2", *extra, kind=kind)[r]["restartPolicy"] for r in roles] == ["Never"] * len(roles)
        retried = values("--workers", "2", "--retry", "1", *extra, kind=kind)
        assert [retried[r]["restartPolicy"] for r in roles] == [with_retry] * len(roles)
        assert retried["runPolicy"]["backoffLimit"] == 1
    # Arena's job info (env workers and gpus, requestGPUsOfJobOwner) is the chart's, from the values it renders
    assert "env" not in v and "annotations" not in v
    assert values("--share-memory", "0", kind="pytorch")["shmSize"] == ""
    assert values("--share-memory", "8Gi", kind="pytorch")["shmSize"] == "8Gi"
    m = values("--workers", "2", "--gpus", "4", kind="mpi")
    assert (m["slotsPerWorker"], m["runPolicy"]) == (4, {"cleanPodPolicy": "All", "backoffLimit": 0})
    assert values("--retry", "2", kind="mpi")["runPolicy"]["backoffLimit"] == 2


def test_limits_follow_the_requests_as_in_arena():
    res = values("--cpu", "2", "--memory", "4Gi", kind="pytorch")["master"]["resources"]
    assert res == {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}}
    res = values("--cpu", "2", "--memory-limit", "8Gi", "--memory", "4Gi", kind="mpi")["worker"]["resources"]
    assert res == {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "8Gi"}}
    tf = values("--workers", "2", "--ps", "1", "--ps-cpu", "1", "--ps-cpu-limit", "2", "--worker-memory", "1Gi")
    assert tf["ps"]["resources"] == {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    assert tf["worker"]["resources"] == {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}


def test_tf_layout_follows_arenas_standalone_rule():
    v = values("--evaluator")  # one worker, no PS: a Chief (and the Evaluator), no Worker
    assert (v["chief"]["replicas"], v["worker"]["replicas"], v["evaluator"]["replicas"]) == (1, 0, 1)
    assert v["annotations"]["arena.kubeflow.org/disable-tf-config"] == "true"
    v = values("--chief")
    assert (v["chief"]["replicas"], v["worker"]["replicas"]) == (1, 0)
    v = values("--chief", "--workers", "2")
    assert (v["chief"]["restartPolicy"], v["worker"]["restartPolicy"]) == ("Never", "OnFailure")
    v = values("--workers", "2", "--ps", "1")
    assert (v["worker"]["restartPolicy"], v["ps"]["restartPolicy"]) == ("Never", "Never")
    assert "annotations" not in v


def test_a_role_selector_replaces_the_selector_for_that_role():
    v = values("--workers", "2", "--ps", "1", "--selector", "pool=a", "--ps-selector", "pool=cpu",
               "--worker-selector", "gpu=v100")
    assert "nodeSelector" not in v
    assert v["ps"]["nodeSelector"] == {"pool": "cpu"}
    assert v["worker"]["nodeSelector"] == {"gpu": "v100"}
    v = values("--workers", "2", "--ps", "1", "--selector", "pool=a", "--ps-selector", "pool=cpu")
    assert (v["worker"]["nodeSelector"], v["ps"]["nodeSelector"]) == ({"pool": "a"}, {"pool": "cpu"})


def test_queue_is_kube_queue_and_queue_name_is_kueue():
    v = values("--queue")
    assert v["annotations"]["scheduling.x-k8s.io/suspend"] == "true" and "queue" not in v
    v = values("--queue-name", "team-a")
    assert v["queue"] == "team-a" and "scheduling.x-k8s.io/suspend" not in v["annotations"]
    # Arena's --queue takes no value: the next word is the training command's
    res = CliRunner().invoke(app, ["submit", "tf", "--name", "job", "--image", "i", "--queue", "--dry-run", "-o",
                                   "values", "python train.py"])
    assert res.exit_code == 0 and yaml.safe_load(res.output)["command"] == "python train.py"


def test_gang_adds_the_coscheduling_pod_group_labels():
    assert "labels" not in values("--gang", kind="pytorch")  # on the pods only, as Arena's charts
    assert values("--gang", "--workers", "3", kind="pytorch")["podLabels"] == {
        "pod-group.scheduling.sigs.k8s.io/name": "pytorchjob-job",
        "pod-group.scheduling.sigs.k8s.io/min-available": "3"}
    assert values("--gang", "--workers", "2", kind="mpi")["podLabels"][
        "pod-group.scheduling.sigs.k8s.io/min-available"] == "2"  # the launcher is not counted, as in Arena
    assert values("--gang", "--workers", "2", "--ps", "1", "--chief")["podLabels"][
        "pod-group.scheduling.sigs.k8s.io/min-available"] == "4"


def test_rdma_requests_the_device_with_ipc_lock():
    v = values("--rdma", "--workers", "2", kind="pytorch")
    assert v["master"]["devices"] == {"rdma/hca": 1} and v["worker"]["devices"] == {"rdma/hca": 1}
    assert v["securityContext"]["capabilities"] == {"add": ["IPC_LOCK"], "drop": ["NET_RAW"]}
    assert {"name": "MASTER_ADDR", "value": "job-master-0"} in v["env"]


def test_host_namespaces():
    v = values("--hostIPC", "--hostPID", "--hostNetwork", kind="pytorch")
    assert (v["hostIPC"], v["hostPID"], v["hostNetwork"]) == (True, True, True)


def test_config_file_goes_into_a_configmap(tmp_path):
    f = tmp_path / "train.yaml"
    f.write_text("lr: 0.1\nname: 'a b'\n")
    v = values("--config-file", f"{f}:/etc/train/conf.yaml", "--config-file", str(f), kind="pytorch")
    assert v["configFiles"] == [{"mountPath": "/etc/train/conf.yaml", "content": "lr: 0.1\nname: 'a b'\n"},
                                {"mountPath": str(f), "content": "lr: 0.1\nname: 'a b'\n"}]
    assert "--config-file" in error("--config-file", str(tmp_path / "missing.yaml"))
    assert "must be absolute" in error("--config-file", f"{f}:relative.yaml")


def test_model_name_and_source():
    v = values("--model-name", "bert", "--model-source", "pvc://default/models/bert", kind="pytorch")
    assert v["labels"] == {"modelName": "bert"}
    assert v["annotations"]["modelSource"] == "pvc://default/models/bert"
    assert "--model-name needs --model-source" in error("--model-name", "bert", kind="pytorch")


def test_tf_ports_role_sequence_success_policy_and_affinity():
    v = values("--chief", "--workers", "2", "--chief-port", "2300", "--role-sequence", "w,p,c",
               "--success-policy", "ChiefWorker")
    assert v["chief"]["port"] == 2300
    assert v["annotations"]["job-role-sequence"] == "Worker,PS,Chief"
    assert "successPolicy" not in v  # ChiefWorker is the operator's "" (Arena's own default)
    assert values("--workers", "2", "--success-policy", "AllWorkers")["successPolicy"] == "AllWorkers"
    assert "unknown role 'x'" in error("--role-sequence", "w,x")
    v = values("--workers", "3", "--worker-affinity-policy", "spread", "--worker-affinity-constraint", "required")
    assert v["worker"]["affinity"] == {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"training.kubeflow.org/job-name": "job",
                                           "training.kubeflow.org/replica-type": "worker"}},
         "topologyKey": "kubernetes.io/hostname"}]}}
    v = values("--workers", "2", "--ps", "2", "--ps-affinity-policy", "binpack")
    assert list(v["ps"]["affinity"]["podAffinity"]) == ["preferredDuringSchedulingIgnoredDuringExecution"]


def test_flags_the_upstream_operators_cannot_honour_are_one_line_errors():
    assert "startingDeadlineSeconds" in error("--starting-timeout", "10m")
    assert "gputopology" in error("--gputopology", kind="mpi") or "GPU topology" in error("--gputopology", kind="mpi")
    assert "hdfs" in error("--sync-mode", "hdfs", "--sync-source", "hdfs://x/y")
    assert values("--mounts-on-launcher", kind="mpi")  # the launcher mounts the data here anyway


def test_git_sync_takes_arenas_env():
    v = values("--sync-source", "https://example.com/a/b.git", "-e", "GIT_SYNC_BRANCH=dev", "-e",
               "GIT_SYNC_USERNAME=bob", "-e", "GIT_SYNC_PASSWORD=tok")
    assert v["codeSync"]["ref"] == "dev"
    assert v["codeSync"]["env"] == [{"name": "GIT_SYNC_USERNAME", "value": "bob"},
                                    {"name": "GIT_SYNC_PASSWORD", "value": "tok"}]
    assert v["codeSync"]["root"] == "/root/code"
    assert "say different things" in error("--sync-source", "https://example.com/a/b.git", "--sync-branch", "main",
                                           "-e", "GIT_SYNC_BRANCH=dev")


def test_rsync_sync_mode():
    v = values("--sync-mode", "rsync", "--sync-source", "10.0.0.1::backup/code", "--sync-image", "rsync:3")
    assert v["codeSync"] == {"enabled": True, "mode": "rsync", "repo": "10.0.0.1::backup/code", "root": "/root/code",
                             "image": "rsync:3"}
    # without --sync-image: Arena's own rsync image (its charts' values.yaml rsyncImage)
    v = values("--sync-mode", "rsync", "--sync-source", "10.0.0.1::backup/code")
    assert v["codeSync"]["image"] == "registry.cn-zhangjiakou.aliyuncs.com/acs/rsync:v3.1.0-aliyun"


def test_the_defaults_file_names_the_git_and_the_rsync_images_apart(tmp_path, monkeypatch):
    (tmp_path / "d.yaml").write_text("images:\n  sync: git-sync:v4.5\n  rsync: rsync:3.2\n")
    monkeypatch.setenv("ARENA_HELM_CONFIG", str(tmp_path / "d.yaml"))
    assert values("--sync-source", "https://example.com/a.git")["codeSync"]["image"] == "git-sync:v4.5"
    assert values("--sync-mode", "rsync", "--sync-source", "h::m/code")["codeSync"]["image"] == "rsync:3.2"


def test_durations_are_gos_as_arenas_flags():
    run_policy = values("--running-timeout", "1.5h", "--ttl-after-finished", "90s")["runPolicy"]
    assert (run_policy["activeDeadlineSeconds"], run_policy["ttlSecondsAfterFinished"]) == (5400, 90)
    assert values("--running-timeout", "2h30m1.9s")["runPolicy"]["activeDeadlineSeconds"] == 9001  # truncated
    assert error("--running-timeout", "300ms") == ("error: --running-timeout: '300ms' is under one second: give 1s "
                                                   "or more (or 0)")
    assert "'2' is not a duration: it has no unit" in error("--running-timeout", "2")


def test_global_flags_before_the_command_and_loglevel():
    res = CliRunner().invoke(app, ["-n", "team-a", "--loglevel", "info", "submit", "tf", "--name", "job", "--image",
                                   "i", "--dry-run", "-o", "values", "python", "train.py"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["--loglevel", "loud", "submit", "tf", "--name", "job", "--image", "i",
                                   "--dry-run", "python", "train.py"])
    assert res.exit_code == 2 and "--loglevel" in res.output


def _kubeconfig(tmp_path, user: dict) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "users": [{"name": "u", "user": user}]}))
    return str(path)


def test_the_submitting_user_is_recorded_as_arena_does(tmp_path, monkeypatch):
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("alice.example", common_name="alice")
    pem = cert.cert_chain_pems[0].bytes()
    monkeypatch.setenv("KUBECONFIG", _kubeconfig(tmp_path, {"client-certificate-data": base64.b64encode(pem).decode(),
                                                            "client-key-data": "eA=="}))
    v = values()
    assert v["labels"]["arena.kubeflow.org/uid"] == hashlib.md5(b"alice").hexdigest()
    assert v["annotations"]["arena.kubeflow.org/username"] == "alice"
    monkeypatch.setenv("KUBECONFIG", _kubeconfig(tmp_path, {"username": "bob", "password": "x"}))
    assert values()["annotations"]["arena.kubeflow.org/username"] == "kubecfg:basicauth:bob"
    monkeypatch.setenv("KUBECONFIG", _kubeconfig(tmp_path, {"token": "abc"}))
    assert "arena.kubeflow.org/username" not in values()["annotations"]  # a token needs the API: not in --dry-run


def test_arenas_global_flags_after_the_command_name():
    assert values("--loglevel", "info", "--arena-namespace", "arena-system")["image"] == "tf:2"
    assert "does not read Arena's config file" in error("--config", "/root/.arena/config")
    res = CliRunner().invoke(app, ["--config", "/root/.arena/config", "list"])
    assert res.exit_code == 2 and res.output.startswith("error: --config: ")
