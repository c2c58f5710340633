"""Interop: Kubeflow's own Python SDK (PyPI ``kubeflow`` 0.5.0, ``kubeflow.trainer.TrainerClient``, in the
virtualenv scripts/sdk-venv.sh trainer makes) lists and gets a TrainJob that ``arena-helm submit trainjob``
made and reads its log, against the real API server, with the real Trainer v2.3.0 and JobSet v0.12.0 (and the
job controller) making the pods and kwok running them. The SDK runs in a subprocess: it pins its own kubernetes
client and pydantic."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest
from kubecluster import REPO
from kubernetes import client
from typer.testing import CliRunner
from waits import live_pods, wait_for

from arena_helm.cli import app

pytestmark = pytest.mark.cluster

SDK_SCRIPT = textwrap.dedent("""
    import json, sys
    from kubeflow.common.types import KubernetesBackendConfig
    from kubeflow.trainer import TrainerClient

    kubeconfig, namespace, name = sys.argv[1:4]
    tc = TrainerClient(backend_config=KubernetesBackendConfig(namespace=namespace, config_file=kubeconfig))
    listed = [(j.name, j.runtime.name, j.num_nodes, j.status) for j in tc.list_jobs()]
    job = tc.get_job(name)
    steps = sorted((s.name, s.pod_name, s.status, s.device, s.device_count) for s in job.steps)
    logs = list(tc.get_job_logs(name))
    print(json.dumps({"listed": listed, "status": job.status, "num_nodes": job.num_nodes,
                      "runtime": job.runtime.name, "steps": steps, "logs": logs}))
""")


@pytest.fixture(scope="session")
def sdk_python():
    proc = subprocess.run(["bash", str(REPO / "scripts" / "sdk-venv.sh"), "trainer"], stdout=subprocess.PIPE,
                          text=True)
    assert proc.returncode == 0, "scripts/sdk-venv.sh trainer failed: the kubeflow SDK could not be installed"
    return proc.stdout.strip().splitlines()[-1]


def sdk(sdk_python, cluster, namespace: str, name: str) -> dict:
    proc = subprocess.run([sdk_python, "-c", SDK_SCRIPT, str(cluster.admin.kubeconfig), namespace, name],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kubeflow_sdk_lists_gets_and_reads_logs_of_an_arena_helm_trainjob(sdk_python, helm_bin, cluster, controllers,
                                                                          kubelet, namespace):
    controllers.require("trainer", "jobset")
    node = f"sdk-gpu-{namespace}"
    core = client.CoreV1Api(cluster.api_client())
    res = CliRunner().invoke(app, [
        "submit", "trainjob", "--name", "mnist", "--image", "pytorch/pytorch:2", "--workers", "2", "--gpus", "1",
        "--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace,
        "--", "torchrun", "train.py"])
    assert res.exit_code == 0, res.output
    # Trainer's JobSet, JobSet's Indexed Job, the job controller's 2 pods: no node yet, they stay Pending
    pods = wait_for(lambda: (lambda ps: [p.metadata.name for p in ps] if len(ps) == 2 else None)(
        live_pods(core, namespace, "jobset.sigs.k8s.io/jobset-name=mnist")), "the TrainJob's 2 pods")
    before = sdk(sdk_python, cluster, namespace, "mnist")
    assert before["listed"] == [["mnist", "torch-distributed", 2, "Created"]]
    assert before["logs"] == []  # no node is running yet: the SDK shows no log

    kubelet.add_node(node, pool=namespace, gpus=4)
    try:
        for pod in pods:
            kubelet.run_pod(namespace, pod, node)
        rank0 = next(p for p in pods if core.read_namespaced_pod(p, namespace).metadata.labels[
            "batch.kubernetes.io/job-completion-index"] == "0")
        kubelet.write_log(namespace, rank0, "node", "epoch 1 loss 0.5\nepoch 2 loss 0.25\n")
        kubelet.close_log(namespace, rank0, "node")
        running = sdk(sdk_python, cluster, namespace, "mnist")
        assert running["listed"] == [["mnist", "torch-distributed", 2, "Running"]]
        assert (running["status"], running["num_nodes"], running["runtime"]) == ("Running", 2, "torch-distributed")
        assert [s[:3] for s in running["steps"]] == [["node-0", rank0, "Running"],
                                                      ["node-1", next(p for p in pods if p != rank0), "Running"]]
        assert [s[4] for s in running["steps"]] == ["1", "1"]  # one GPU per node, as --gpus 1 asked
        assert running["logs"] == ["epoch 1 loss 0.5", "epoch 2 loss 0.25"]  # the SDK yields lines

        # and arena-helm reads the same job the same way
        def view():
            res = CliRunner().invoke(app, ["get", "mnist", "-o", "json", "--kubeconfig",
                                           str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin),
                                           "-n", namespace])
            assert res.exit_code == 0, res.output
            return json.loads(res.stdout)

        got = wait_for(lambda: (lambda v: v if v["status"] == "RUNNING" else None)(view()), "arena-helm: RUNNING")
        assert (got["status"], got["requestGPUs"], got["chiefName"]) == ("RUNNING", 2, rank0)

        for pod in pods:
            kubelet.finish_pod(namespace, pod, 0)
        # the Job completes, then the JobSet, then Trainer sets the TrainJob's Complete condition
        wait_for(lambda: view()["status"] == "SUCCEEDED", "arena-helm: SUCCEEDED")
        assert sdk(sdk_python, cluster, namespace, "mnist")["status"] == "Complete"
    finally:
        kubelet.remove_node(node)
