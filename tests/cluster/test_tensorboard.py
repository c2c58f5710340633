"""TensorBoard: with a job (one release, gone with the job) and standalone, into the real API server, next to
the pods of the real training-operator, placed by the real scheduler and run by kwok."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from controllers import in_metallb_pool, wait_load_balancer_address
from edgetools import with_flags
from kubecluster import make_claim
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_for, wait_job_pods

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()


@pytest.fixture
def cli(helm_bin, cluster, namespace):
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]

    def call(*args):
        return runner.invoke(app, with_flags(args, base))

    return call


def test_submit_with_tensorboard_makes_one_release_and_delete_removes_it(cli, cluster, namespace):
    res = cli("submit", "tf", "--name", "mnist", "--image", "tf:2", "-d", "training-logs:/data", "--tensorboard",
              "--logdir", "/data/mnist/logs", "--tensorboard-image", "tensorflow/tensorflow:2.16.1", "--",
              "python", "train.py", "--logdir", "/data/mnist/logs")
    assert res.exit_code == 0, res.output
    assert "deployment.apps/mnist-tensorboard created" in res.stdout
    assert "service/mnist-tensorboard created" in res.stdout

    apps = client.AppsV1Api(cluster.api_client())
    dep = apps.read_namespaced_deployment("mnist-tensorboard", namespace)
    pod = dep.spec.template.spec
    (c,) = pod.containers
    assert c.image == "tensorflow/tensorflow:2.16.1"
    assert "--logdir" in " ".join(c.args or c.command or []) and "/data/mnist/logs" in " ".join(c.args or [])
    (vol,) = [v for v in pod.volumes if v.persistent_volume_claim]
    assert vol.persistent_volume_claim.claim_name == "training-logs"
    (mount,) = [m for m in c.volume_mounts if m.name == vol.name]
    assert mount.mount_path == "/data" and mount.read_only is True
    assert dep.metadata.labels["app.kubernetes.io/instance"] == "mnist"

    svc = client.CoreV1Api(cluster.api_client()).read_namespaced_service("mnist-tensorboard", namespace)
    assert svc.spec.type == "NodePort"  # as Arena's tensorboardServiceType
    assert svc.metadata.labels["role"] == "tensorboard" and svc.metadata.labels["app"] == "tfjob"
    got = json.loads(cli("get", "mnist", "-o", "json").stdout)
    # the first node's address (any test's node: all are 127.0.0.1), or a placeholder while there is none
    assert re.fullmatch(rf"http://(127\.0\.0\.1|<node-ip>):{svc.spec.ports[0].node_port}", got["tensorboard"])
    listed = cli("tensorboard", "list")
    assert listed.stdout.splitlines()[1].split()[:3] == ["mnist", "job", "mnist"]

    res = cli("delete", "mnist")
    assert res.exit_code == 0, res.output
    assert apps.list_namespaced_deployment(namespace).items == []
    # the TensorBoard's Service goes with the release; the headless Services the real operator made for the
    # TFJob's replicas go with the TFJob (the garbage collector, by their owner reference)
    core = client.CoreV1Api(cluster.api_client())
    assert "mnist-tensorboard" not in [s.metadata.name for s in core.list_namespaced_service(namespace).items]
    wait_for(lambda: core.list_namespaced_service(namespace).items == [], "the operator's Services gone")


def test_tensorboard_without_data_runs_next_to_the_master_on_its_node_directory(cli, cluster, kubelet, namespace):
    """Arena's local logging, with the real operator, scheduler and Deployment controller: TensorBoard waits
    until the pod that writes the logs is placed, then lands on its node and mounts the same node directory.
    The real operator makes the job's pods at once: they ask for a GPU and no node has one yet, so the master
    stays unplaced until a node gets GPUs."""
    core, apps = client.CoreV1Api(cluster.api_client()), client.AppsV1Api(cluster.api_client())
    nodes = [f"{namespace}-a", f"{namespace}-b"]
    for node in nodes:  # the scheduler places by the kubernetes.io/hostname label, as real kubelets set it
        kubelet.add_node(node, pool=namespace, labels={"kubernetes.io/hostname": node})
    try:
        res = cli("submit", "pytorch", "--name", "bert", "--image", "pt:2", "--workers", "2", "--gpus", "1",
                  "--tensorboard", "--", "torchrun", "train.py", "--logdir", "/training_logs")
        assert res.exit_code == 0, res.output
        assert "deployment.apps/bert-tensorboard created" in res.stdout
        host = {"path": f"/arena_logs/{namespace}/bert"}

        dep = apps.read_namespaced_deployment("bert-tensorboard", namespace)
        assert {k: dep.metadata.labels[k] for k in ("role", "app", "release")} == {
            "role": "tensorboard", "app": "pytorchjob", "release": "bert"}
        selector = "app.kubernetes.io/instance=bert,app.kubernetes.io/component=tensorboard"
        (tb,) = wait_for(lambda: core.list_namespaced_pod(namespace, label_selector=selector).items,
                         "the Deployment controller's TensorBoard pod")
        pod = tb.spec
        (logs,) = [v for v in pod.volumes if v.host_path]
        assert (logs.host_path.path, logs.persistent_volume_claim) == (host["path"], None)
        (mount,) = [m for m in pod.containers[0].volume_mounts if m.name == logs.name]
        assert (mount.mount_path, mount.read_only) == ("/training_logs", True)
        (term,) = pod.affinity.pod_affinity.required_during_scheduling_ignored_during_execution
        assert term.topology_key == "kubernetes.io/hostname"
        assert [(e.key, e.operator, e.values) for e in term.label_selector.match_expressions] == [
            ("training.kubeflow.org/job-name", "In", ["bert"]),
            ("training.kubeflow.org/replica-type", "In", ["master"]),
            ("training.kubeflow.org/replica-index", "In", ["0"])]
        # the operator's pods, none placed (no GPUs yet): the affinity cannot be met
        wait_job_pods(core, namespace, "bert", ["bert-master-0", "bert-worker-0"])
        assert "Insufficient nvidia.com/gpu" in kubelet.wait_unschedulable(namespace, "bert-master-0")
        assert "pod affinity" in kubelet.wait_unschedulable(namespace, tb.metadata.name)

        # the first node gets GPUs: the scheduler places the master there, then TensorBoard next to it
        master = core.read_namespaced_pod("bert-master-0", namespace)
        # the real operator's labels on the master: the ones the affinity selects
        assert {k: master.metadata.labels[k] for k in ("training.kubeflow.org/job-name",
                                                       "training.kubeflow.org/replica-type",
                                                       "training.kubeflow.org/replica-index")} == {
            "training.kubeflow.org/job-name": "bert", "training.kubeflow.org/replica-type": "master",
            "training.kubeflow.org/replica-index": "0"}
        (vol,) = [v for v in master.spec.volumes if v.host_path]
        assert vol.host_path.path == host["path"]
        assert [m.mount_path for m in master.spec.containers[0].volume_mounts if m.name == vol.name] == [
            "/training_logs"]
        kubelet.set_allocatable_gpus(nodes[0], 2)
        node = kubelet.run_pod(namespace, "bert-master-0")
        assert node == nodes[0]
        assert kubelet.wait_scheduled(namespace, tb.metadata.name, timeout=90) == node

        svc = core.read_namespaced_service("bert-tensorboard", namespace)
        assert svc.spec.type == "NodePort" and svc.metadata.labels["role"] == "tensorboard"
        got = json.loads(cli("get", "bert", "-o", "json").stdout)
        assert got["tensorboard"] == f"http://127.0.0.1:{svc.spec.ports[0].node_port}"
        res = cli("delete", "bert")
        assert res.exit_code == 0, res.output
    finally:
        for node in nodes:
            kubelet.remove_node(node)


def test_a_logdir_url_needs_no_volume_and_the_service_type_can_be_chosen(cli, cluster, namespace):
    res = cli("submit", "tf", "--name", "s3log", "--image", "tf:2", "--tensorboard", "--logdir", "s3://bucket/run",
              "--tensorboard-service-type", "ClusterIP", "--", "python", "x.py")
    assert res.exit_code == 0, res.output
    dep = client.AppsV1Api(cluster.api_client()).read_namespaced_deployment("s3log-tensorboard", namespace)
    pod = dep.spec.template.spec
    assert [v.name for v in pod.volumes] == ["tmp"] and pod.affinity is None
    assert pod.containers[0].args[:2] == ["--logdir", "s3://bucket/run"]
    svc = client.CoreV1Api(cluster.api_client()).read_namespaced_service("s3log-tensorboard", namespace)
    assert svc.spec.type == "ClusterIP"


def test_dry_run_with_tensorboard_renders_job_deployment_and_service(helm_bin):
    res = runner.invoke(app, ["submit", "pytorch", "--name", "bert", "--image", "pt:2", "-d", "logs:/logs",
                              "--tensorboard", "--logdir", "/logs/bert", "--dry-run", "--helm-binary", str(helm_bin),
                              "torchrun", "x.py"])
    assert res.exit_code == 0, res.output
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(res.stdout) if d)
    assert kinds == ["Deployment", "PyTorchJob", "Service"]


@pytest.mark.parametrize("stype", ["ClusterIP", "NodePort", "LoadBalancer"])
def test_standalone_tensorboard_url_for_each_service_type(cli, cluster, controllers, kubelet, namespace, stype):
    """A LoadBalancer Service's address is the one the real MetalLB controller gives it from its pool
    (tests/support/controllers.py), which `tensorboard list` shows."""
    if stype == "LoadBalancer":
        controllers.require("metallb")
    node = f"tb-{namespace}-{stype.lower()}"
    kubelet.add_node(node, pool=namespace)
    try:
        res = cli("tensorboard", "start", "tb", "--logdir", "training-logs:/runs/7", "--service-type", stype)
        assert res.exit_code == 0, res.output
        core = client.CoreV1Api(cluster.api_client())
        svc = core.read_namespaced_service("tb-tensorboard", namespace)
        assert svc.spec.type == stype
        dep = client.AppsV1Api(cluster.api_client()).read_namespaced_deployment("tb-tensorboard", namespace)
        assert "/logs/runs/7" in " ".join(dep.spec.template.spec.containers[0].args)
        if stype == "LoadBalancer":
            address = wait_load_balancer_address(core, namespace, "tb-tensorboard")
            assert in_metallb_pool(address), address
        rows = cli("tensorboard", "list").stdout.splitlines()
        line = next(r for r in rows if r.startswith("tb "))
        if stype == "ClusterIP":
            assert f"kubectl port-forward -n {namespace} svc/tb-tensorboard 6006:6006" in line
            assert "Open it: kubectl port-forward" in res.stdout
        elif stype == "NodePort":
            assert line.split()[-1] == f"http://127.0.0.1:{svc.spec.ports[0].node_port}"
            assert f"Open it: http://127.0.0.1:{svc.spec.ports[0].node_port}" in res.stdout
        else:
            assert line.split()[-1] == f"http://{address}:6006"
        assert "standalone" in line
        res = cli("tensorboard", "stop", "tb")
        assert res.exit_code == 0, res.output
        assert core.list_namespaced_service(namespace).items == []
    finally:
        kubelet.remove_node(node)


def test_tensorboard_start_needs_exactly_one_log_source(cli):
    res = cli("tensorboard", "start", "tb")
    assert res.exit_code == 2 and "exactly one of --logdir" in res.stderr
    res = cli("tensorboard", "start", "tb", "--logdir", "nopath")
    assert res.exit_code == 2 and "is not PVC:PATH" in res.stderr
    res = cli("tensorboard", "stop", "absent")
    assert res.exit_code == 1 and "no TensorBoard named absent" in res.stderr


def test_tensorboard_open_forwards_a_port_to_the_tensorboard(helm_bin, cli, namespace, cluster, kubelet):
    """`open` runs the real kubectl port-forward (API server -> kwok's pods/portforward) to the job's TensorBoard
    Service once its pod runs; kwok forwards the pod's 6006 to a small HTTP server here, standing in for
    TensorBoard (no TensorBoard image runs on kwok), and a page is fetched through the forward."""
    import os
    import urllib.request

    from edgetools import running_cli
    from kubecluster import free_port

    res = cli("submit", "tf", "--name", "viz", "--image", "tf:2", "-d", "logs:/logs", "--tensorboard", "--logdir",
              "/logs/viz", "--", "python", "x.py")
    assert res.exit_code == 0, res.output
    # the claim the logs live on (bound by the controller-manager's PV binder), a node of this test's pool,
    # and the pod the real Deployment controller makes, placed by the scheduler and run by kwok
    core = client.CoreV1Api(cluster.api_client())
    make_claim(core, namespace, "logs", modes=["ReadWriteOnce"], size="1Gi", storage_class="")
    node = f"tbnode-{namespace}"
    kubelet.add_node(node, pool=namespace)
    pods = wait_for(lambda: core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/instance=viz,"
                                                     "app.kubernetes.io/component=tensorboard").items,
                    "the Deployment controller's TensorBoard pod")
    pod = pods[0].metadata.name
    local = free_port()
    env = {**os.environ, "PATH": f"{helm_bin.parent}:/usr/bin:/bin"}  # the kubectl beside the helm
    with kubelet.serving_http(namespace, pod, 6006, b"tensorboard stand-in") as seen:
        kubelet.run_pod(namespace, pod, node)
        with running_cli("tensorboard", "open", "viz", "--port", str(local), "--kubeconfig",
                         str(cluster.admin.kubeconfig), "-n", namespace, env=env) as opener:
            said = opener.stderr.readline()
            assert said == f"Forwarding http://localhost:{local} to viz-tensorboard (Ctrl-C stops)\n", (
                said, opener.poll())
            # kubectl says when it listens: then the forward is up
            assert opener.stdout.readline() == f"Forwarding from 127.0.0.1:{local} -> 6006\n"
            with urllib.request.urlopen(f"http://localhost:{local}/", timeout=30) as resp:
                assert resp.read() == b"tensorboard stand-in"
        assert seen == ["/"]
    kubelet.remove_node(node)
    core.delete_persistent_volume(f"pv-{namespace}-logs")
