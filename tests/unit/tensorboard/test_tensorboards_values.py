"""A job's TensorBoard as in Arena (pkg/argsbuilder/submit_tensorboard.go): where it reads the logs from,
the node it must run on, its Service type (exact values; pure)."""

from __future__ import annotations

import pytest

from arena_helm import MPIJobSpec, PyTorchJobSpec, TFJobSpec, TrainJobSpec
from arena_helm.core.errors import UsageError
from arena_helm.core.flagtypes import HostPathVolume
from arena_helm.workload.job_values import build_values
from arena_helm.workload.submission import job_values

JOB = "training.kubeflow.org/job-name"
TYPE = "training.kubeflow.org/replica-type"
INDEX = "training.kubeflow.org/replica-index"
ROLE = "training.kubeflow.org/job-role"


def affinity(*expressions: dict) -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": list(expressions)}, "topologyKey": "kubernetes.io/hostname"}]}}


def is_(key: str, *values: str) -> dict:
    return {"key": key, "operator": "In", "values": list(values)}


def not_(key: str, *values: str) -> dict:
    return {"key": key, "operator": "NotIn", "values": list(values)}


def test_the_default_logdir_is_arenas_local_logging_on_a_node_directory_of_the_job():
    spec = TFJobSpec(name="mnist", namespace="team-a", image="tf:2", command="python train.py", tensorboard=True)
    values = build_values(spec)
    assert values["tensorboard"] == {
        "enabled": True, "logDir": "/training_logs", "imagePullPolicy": "Always", "service": {"type": "NodePort"},
        "hostPath": {"enabled": True, "path": "/arena_logs/team-a/mnist", "mountPath": "/training_logs"},
        # one worker and no PS runs as a single Chief: the chief writes the logs
        "affinity": affinity(is_(JOB, "mnist"), is_(TYPE, "chief"), is_(INDEX, "0")),
    }
    # every training container mounts that directory at --logdir (read-write)
    assert values["hostPaths"] == [{"path": "/arena_logs/team-a/mnist", "mountPath": "/training_logs",
                                    "readOnly": False}]
    # the same job always gets the same directory: --dry-run output is stable
    assert build_values(spec) == values
    assert spec.logdir_host_path() == HostPathVolume(path="/arena_logs/team-a/mnist", mount_path="/training_logs")


@pytest.mark.parametrize(("spec", "writer"), [
    (TFJobSpec(name="j", image="i", command="c", workers=2, tensorboard=True),
     [is_(JOB, "j"), is_(TYPE, "worker"), is_(INDEX, "0")]),
    (TFJobSpec(name="j", image="i", command="c", workers=2, ps=1, chief=True, tensorboard=True),
     [is_(JOB, "j"), is_(TYPE, "chief"), is_(INDEX, "0")]),
    (PyTorchJobSpec(name="j", image="i", command="c", workers=3, tensorboard=True),
     [is_(JOB, "j"), is_(TYPE, "master"), is_(INDEX, "0")]),
    # MPI: not a launcher (job-role launcher in v2beta1, master in v1) and no index but 0
    (MPIJobSpec(name="j", image="i", command="c", workers=3, tensorboard=True),
     [is_(JOB, "j"), not_(ROLE, "launcher", "master"), not_(INDEX, "1", "2")]),
    (MPIJobSpec(name="j", image="i", command="c", workers=1, mpi_api="v1", tensorboard=True),
     [is_(JOB, "j"), not_(ROLE, "launcher", "master")]),
], ids=["tf-worker-0", "tf-chief", "pytorch-master-0", "mpi-worker-0", "mpi-one-worker"])
def test_tensorboard_must_run_on_the_node_of_the_pod_that_writes_the_logs(spec, writer):
    assert build_values(spec)["tensorboard"]["affinity"] == affinity(*writer)


def test_a_logdir_under_a_data_pvc_is_read_from_the_pvc_with_no_host_path_and_no_affinity():
    spec = PyTorchJobSpec(name="bert", image="i", command="c", data=["logs:/logs"], tensorboard=True,
                          logdir="/logs/bert")
    values = build_values(spec)
    assert values["tensorboard"] == {"enabled": True, "logDir": "/logs/bert", "imagePullPolicy": "Always",
                                     "service": {"type": "NodePort"}, "pvc": {"claimName": "logs", "mountPath": "/logs"}}
    assert "hostPaths" not in values and spec.logdir_host_path() is None


def test_a_logdir_url_is_passed_through_with_no_volume():
    for url in ("hdfs://namenode:8020/logs/run1", "s3://bucket/logs", "gs://b/l"):
        spec = TFJobSpec(name="t", image="i", command="c", tensorboard=True, logdir=url)
        values = build_values(spec)
        assert values["tensorboard"] == {"enabled": True, "logDir": url, "imagePullPolicy": "Always",
                                         "service": {"type": "NodePort"}}
        assert "hostPaths" not in values


def test_a_logdir_under_a_data_dir_is_read_from_that_host_directory_without_a_second_mount():
    spec = TFJobSpec(name="t", image="i", command="c", workers=2, data_dir=["/mnt/runs:/runs"], tensorboard=True,
                     logdir="/runs/t")
    values = build_values(spec)
    assert values["hostPaths"] == [{"path": "/mnt/runs", "mountPath": "/runs", "readOnly": False}]
    assert values["tensorboard"]["hostPath"] == {"enabled": True, "path": "/mnt/runs", "mountPath": "/runs"}
    assert values["tensorboard"]["logDir"] == "/runs/t"
    assert values["tensorboard"]["affinity"] == affinity(is_(JOB, "t"), is_(TYPE, "worker"), is_(INDEX, "0"))


def test_the_log_mount_comes_after_the_data_dirs():
    spec = TFJobSpec(name="t", image="i", command="c", data_dir=["/mnt/x:/x"], tensorboard=True, logdir="/out")
    assert build_values(spec)["hostPaths"] == [
        {"path": "/mnt/x", "mountPath": "/x", "readOnly": False},
        {"path": "/arena_logs/default/t", "mountPath": "/out", "readOnly": False}]


@pytest.mark.parametrize("stype", ["ClusterIP", "NodePort", "LoadBalancer"])
def test_the_service_type_is_nodeport_unless_told(stype):
    spec = TFJobSpec(name="t", image="i", command="c", tensorboard=True, tensorboard_service_type=stype)
    assert build_values(spec)["tensorboard"]["service"] == {"type": stype}


def test_the_typed_values_the_chart_gets():
    spec = MPIJobSpec(name="hvd", image="i", command="c", workers=2, tensorboard=True, tensorboard_image="tb:2",
                      image_pull_policy="IfNotPresent")
    values = job_values(spec)
    assert values["tensorboard"] == {  # pulled as the job's images are
        "enabled": True, "image": "tb:2", "imagePullPolicy": "IfNotPresent", "logDir": "/training_logs",
        "hostPath": {"enabled": True, "path": "/arena_logs/default/hvd", "mountPath": "/training_logs"},
        "service": {"type": "NodePort"},
        "affinity": affinity(is_(JOB, "hvd"), not_(ROLE, "launcher", "master"), not_(INDEX, "1")),
    }
    assert values["hostPaths"] == [{"path": "/arena_logs/default/hvd", "mountPath": "/training_logs",
                                    "readOnly": False}]


@pytest.mark.parametrize(("fields", "message"), [
    ({"logdir": "logs"}, "--logdir: 'logs' must be an absolute path or a URL such as s3://bucket/logs"),
    ({"logdir": "s3://"}, "--logdir: 's3://' is not a URL TensorBoard reads"),
    ({"logdir": "/"}, "--logdir / is the container's root: the logs' host directory is mounted there"),
    ({"logdir": "/dev/shm", "share_memory": "1Gi"}, "--logdir /dev/shm is the --share-memory mount"),
    ({"logdir": "/root/code", "sync_source": "https://example.com/a/b.git"},
     "--logdir /root/code is the mount of the --sync-source code"),
    ({"tensorboard": False, "tensorboard_service_type": "ClusterIP"},
     "--tensorboard-service-type needs --tensorboard"),
    ({"tensorboard_service_type": "Ingress"}, "--tensorboard-service-type: 'Ingress'"),
])
def test_bad_logdirs_and_service_types_are_one_usage_error(fields, message):
    with pytest.raises(UsageError) as err:
        TFJobSpec(**{"name": "t", "image": "i", "command": "c", "tensorboard": True, **fields})
    assert str(err.value).startswith(message), str(err.value)


def test_a_trainjob_still_refuses_tensorboard():
    with pytest.raises(UsageError, match="--tensorboard cannot be used with a TrainJob"):
        TrainJobSpec(name="t", tensorboard=True)


def test_a_tensorboard_reading_a_url_gets_the_jobs_env_and_secrets_and_one_reading_a_volume_gets_none():
    common = {"name": "tb", "image": "i", "command": "c", "tensorboard": True, "env": ["AWS_ENDPOINT_URL=http://s3:9000",
              "HOME=/work"], "env_from_secret": ["AWS_ACCESS_KEY_ID=s3:ak"], "env_from": ["configmap:s3cfg"]}
    url = build_values(TFJobSpec(**common, logdir="s3://bucket/logs"))["tensorboard"]
    assert url["env"] == [{"name": "AWS_ENDPOINT_URL", "value": "http://s3:9000"},  # HOME is the chart's
                          {"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "ak"}}}]
    assert url["envFrom"] == [{"configMapRef": {"name": "s3cfg"}}]
    pvc = build_values(TFJobSpec(**common, data=["logs:/logs"], logdir="/logs/run1"))["tensorboard"]
    assert "env" not in pvc and "envFrom" not in pvc
