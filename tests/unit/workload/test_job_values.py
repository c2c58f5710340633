"""Spec -> chart values: exact dicts (pure)."""

from __future__ import annotations

from arena_helm import MPIJobSpec, PyTorchJobSpec, TFJobSpec
from arena_helm.workload.job_values import build_values

BASE = {"imagePullPolicy": "Always", "command": "python train.py", "shell": "sh", "workingDir": "/root",
        "shmSize": "2Gi", "runPolicy": {"cleanPodPolicy": "Running"}}


def test_tfjob_values():
    spec = TFJobSpec(name="mnist", image="tf:2", command="python train.py", workers=2, ps=1, gpus=1,
                     device=["amd.com/gpu=1"], cpu="2", worker_memory_limit="8Gi", retry=3, running_timeout="1h",
                     data=["d:/data/"], tensorboard=True, logdir="/data/logs", queue_name="q")
    assert build_values(spec) == {
        **BASE, "image": "tf:2",
        "data": [{"claimName": "d", "mountPath": "/data", "readOnly": False}],
        "queue": "q",
        "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 3, "activeDeadlineSeconds": 3600},
        "tensorboard": {"enabled": True, "logDir": "/data/logs", "imagePullPolicy": "Always", "service": {"type": "NodePort"},
                        "pvc": {"claimName": "d", "mountPath": "/data"}},
        "chief": {"replicas": 0},
        # Arena's tfjob chart: the limit is the role's -limit flag, else its request
        "worker": {"replicas": 2, "gpus": 1, "devices": {"amd.com/gpu": 1}, "restartPolicy": "Never",
                   "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2", "memory": "8Gi"}}},
        "ps": {"replicas": 1, "gpus": 0, "restartPolicy": "Never"},
        "evaluator": {"replicas": 0},
    }


def test_pytorchjob_and_mpijob_values():
    py = PyTorchJobSpec(name="p", image="i", command="python train.py", workers=2, nproc_per_node="auto")
    assert build_values(py) == {**BASE, "image": "i",
                                "runPolicy": {"cleanPodPolicy": "Running"},
                                "master": {"replicas": 1, "gpus": 0, "restartPolicy": "Never"},
                                "worker": {"replicas": 1, "gpus": 0, "restartPolicy": "Never"},
                                "nprocPerNode": "auto"}
    mpi = MPIJobSpec(name="m", image="i", command="python train.py", workers=2, gpus=2, launcher_cpu="1",
                     slots_per_worker=2)
    assert build_values(mpi) == {**BASE, "image": "i", "mpiApiVersion": "auto",
                                 "runPolicy": {"cleanPodPolicy": "All", "backoffLimit": 0},
                                 "launcher": {"replicas": 1, "gpus": 0, "restartPolicy": "Never",
                                              "resources": {"requests": {"cpu": "1"}}},
                                 "worker": {"replicas": 2, "gpus": 2, "restartPolicy": "Never"}, "slotsPerWorker": 2}
    # no --slots-per-worker: the workers' GPUs, as Arena's hostfile
    assert build_values(mpi.model_copy(update={"slots_per_worker": None}))["slotsPerWorker"] == 2


def test_code_sync_lands_under_the_working_dir_as_in_arena():
    spec = TFJobSpec(name="t", image="i", command="c", sync_source="https://example.com/a/b.git", sync_branch="dev",
                     sync_secret="git.creds")
    values = build_values(spec)
    assert values["workingDir"] == "/root"
    assert values["codeSync"] == {"enabled": True, "repo": "https://example.com/a/b.git", "ref": "dev",
                                  "secretName": "git.creds", "root": "/root/code"}


def test_host_network_reaches_the_values_and_arenas_spelling_is_accepted(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from arena_helm.cli import app

    assert build_values(TFJobSpec(name="t", image="i", command="c", host_network=True))["hostNetwork"] is True
    assert "hostNetwork" not in build_values(TFJobSpec(name="t", image="i", command="c"))
    monkeypatch.setenv("ARENA_HELM_CONFIG", str(tmp_path / "none.yaml"))
    (tmp_path / "none.yaml").write_text("{}\n")
    for flag in ("--host-network", "--hostNetwork"):
        res = CliRunner().invoke(app, ["submit", "tf", "--name", "t", "--image", "i", flag, "--dry-run", "-o", "values",
                                       "python", "train.py"])
        assert res.exit_code == 0, res.output
        assert "hostNetwork: true\n" in res.stdout
    assert "--hostNetwork" not in CliRunner().invoke(app, ["submit", "tf", "--help"]).stdout


def test_secrets_reach_the_values_by_name_only():
    spec = PyTorchJobSpec(name="p", image="i", command="python train.py", env=["A=1"],
                          env_from_secret=["HF_TOKEN=hf", "AWS_ACCESS_KEY_ID=s3:access-key"],
                          env_from=["s3-env", "configmap:cfg"], secret=["gcs:/var/secrets/gcs"])
    values = build_values(spec)
    assert values["env"] == [
        {"name": "A", "value": "1"},
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "HF_TOKEN"}}},
        {"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "access-key"}}},
    ]
    assert values["envFrom"] == [{"secretRef": {"name": "s3-env"}}, {"configMapRef": {"name": "cfg"}}]
    assert values["secretVolumes"] == [{"secretName": "gcs", "mountPath": "/var/secrets/gcs"}]


def test_a_secret_variable_cannot_replace_arenas_job_info():
    import pytest

    from arena_helm.core.errors import UsageError

    spec = PyTorchJobSpec(name="p", image="i", command="c", env_from_secret=["gpus=s"])
    with pytest.raises(UsageError, match=r"^--env-from-secret gpus: arena-helm sets gpus itself"):
        build_values(spec)
