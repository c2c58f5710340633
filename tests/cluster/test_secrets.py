"""Secrets into jobs, against the real API server and training-operator: ``--env-from-secret``, ``--env-from``
and ``--secret`` reach every pod the operator makes (and a URL-reading TensorBoard's), by name only: neither
helm's release nor anything arena-helm writes holds a Secret's data."""

from __future__ import annotations

import base64
import json
import subprocess

import pytest
from clictx import cli
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_for, wait_gone, wait_job_pods

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
JOB_NAME = "training.kubeflow.org/job-name"
TOKEN = "hf_s3cr3t-token-value"  # the Secret's data: it must appear nowhere but in the Secret


@pytest.fixture
def ctx(helm_bin, cluster, namespace, controllers):
    controllers.require("training-operator")
    return cli(helm_bin, cluster, namespace, check=True)


@pytest.fixture
def secrets(cluster, namespace):
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_secret(namespace, client.V1Secret(
        metadata=client.V1ObjectMeta(name="hf-token"), string_data={"token": TOKEN, "HF_HOME": "/cache/hf"}))
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="train-cfg"), data={"EPOCHS": "3"}))
    return core


def helm_record(helm_bin, cluster, namespace: str, release: str) -> str:
    """All helm keeps of the release: its values and manifest, and the raw release Secret, decoded."""
    kube = ["-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig)]
    values = subprocess.run([str(helm_bin), "get", "all", release, *kube], check=True, capture_output=True,
                            text=True).stdout
    stored = client.CoreV1Api(cluster.api_client()).list_namespaced_secret(
        namespace, label_selector=f"owner=helm,name={release}").items
    assert stored, "helm keeps its release in a Secret"
    raw = [base64.b64decode(s.data["release"]) for s in stored]
    return values + "".join(r.decode("latin-1") for r in raw)


def test_secrets_reach_every_pod_by_name_and_never_the_release(ctx, secrets, helm_bin, cluster, namespace):
    out = ctx("submit", "pytorch", "--name", "llm", "--image", "pytorch:2.3", "--workers", "2",
              "--env-from-secret", "HF_TOKEN=hf-token:token", "--env-from", "hf-token", "--env-from",
              "configmap:train-cfg", "--secret", "hf-token:/var/secrets/hf", "-e", "A=1",
              "--tensorboard", "--logdir", "s3://bucket/llm", "--", "python", "train.py")
    assert "pytorchjob.kubeflow.org/llm created" in out, out
    core = secrets
    names = wait_job_pods(core, namespace, "llm", count=2)
    assert sorted(names) == ["llm-master-0", "llm-worker-0"]
    for pod in core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME}=llm").items:
        (c,) = pod.spec.containers
        env = {e.name: e for e in c.env}
        ref = env["HF_TOKEN"].value_from.secret_key_ref
        assert (ref.name, ref.key, env["HF_TOKEN"].value) == ("hf-token", "token", None)
        assert env["A"].value == "1"
        assert [(s.secret_ref and s.secret_ref.name, s.config_map_ref and s.config_map_ref.name)
                for s in c.env_from] == [("hf-token", None), (None, "train-cfg")]
        mounts = {m.name: m for m in c.volume_mounts}
        assert (mounts["secret-0"].mount_path, mounts["secret-0"].read_only) == ("/var/secrets/hf", True)
        volumes = {v.name: v for v in pod.spec.volumes}
        assert volumes["secret-0"].secret.secret_name == "hf-token"

    # the TensorBoard reads s3:// with the job's env: the same references, through its Deployment's pod
    selector = "app.kubernetes.io/instance=llm,app.kubernetes.io/component=tensorboard"
    tb = wait_for(lambda: core.list_namespaced_pod(namespace, label_selector=selector).items,
                  "the TensorBoard pod of llm")[0]
    (c,) = tb.spec.containers
    env = {e.name: e for e in c.env}
    assert env["HF_TOKEN"].value_from.secret_key_ref.name == "hf-token" and env["A"].value == "1"
    assert env["HOME"].value == "/tmp"  # the chart's
    assert [s.secret_ref.name if s.secret_ref else s.config_map_ref.name for s in c.env_from] == [
        "hf-token", "train-cfg"]

    record = helm_record(helm_bin, cluster, namespace, "llm")
    assert "hf-token" in record and TOKEN not in record
    assert TOKEN not in json.dumps(json.loads(ctx("get", "llm", "-o", "json")))
    ctx("delete", "llm")
    wait_gone(core, namespace, f"{JOB_NAME}=llm")
    # the user's Secret is theirs: deleting the job leaves it
    assert core.read_namespaced_secret("hf-token", namespace).data["token"] == base64.b64encode(
        TOKEN.encode()).decode()


def test_bad_secret_flags_are_refused_before_anything_reaches_the_cluster(helm_bin, cluster, namespace):
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
    for flags, message in [
        (["--env-from-secret", "HF_TOKEN"], "error: --env-from-secret: 'HF_TOKEN' is not NAME=SECRET[:KEY]"),
        (["--secret", "s:/data", "-d", "d:/data"], "error: --secret s:/data: /data is a --data mount"),
        (["--env-from-secret", "workers=s"], "error: --env-from-secret workers: arena-helm sets workers itself"),
    ]:
        res = runner.invoke(app, ["submit", "pytorch", "--name", "bad", "--image", "i", *flags, *base, "python"])
        assert res.exit_code == 2 and res.output.startswith(message) and res.output.count("\n") == 1, res.output
    core = client.CoreV1Api(cluster.api_client())
    assert not core.list_namespaced_secret(namespace, label_selector="owner=helm,name=bad").items
