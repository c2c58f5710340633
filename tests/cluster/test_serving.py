"""`arena-helm serve custom|list|get|delete` on the test cluster: the real API server, the real Deployment and
ReplicaSet controllers of kube-controller-manager, the real scheduler, kwok running the pods; helm 3 and 4."""

from __future__ import annotations

import json
import re

import clictx
import pytest
import yaml
from kubernetes import client
from waits import wait_for

pytestmark = pytest.mark.cluster


class Cli:
    def __init__(self, helm_bin, cluster, namespace, user="admin"):
        self.run = clictx.cli(helm_bin, cluster, namespace, user=user)
        self.ok = clictx.cli(helm_bin, cluster, namespace, user=user, check=True)

    def __call__(self, *args):
        return self.run(*args)

    def views(self, *args) -> list[dict]:
        return json.loads(self.ok("serve", "list", "-o", "json", *args))


@pytest.fixture
def cli(helm_bin, cluster, namespace):
    return Cli(helm_bin, cluster, namespace)


@pytest.fixture
def node(kubelet, namespace):
    name = f"srv-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=4)
    yield name
    kubelet.remove_node(name)


def norm(text: str) -> list[str]:
    return [re.sub(r" +", " ", line).strip() for line in text.splitlines()]


def test_serve_custom_runs_as_a_deployment_with_a_service_and_delete_leaves_nothing(cli, cluster, namespace, node):
    apps, core = client.AppsV1Api(cluster.api_client()), client.CoreV1Api(cluster.api_client())
    out = cli.ok("serve", "custom", "--name", "mnist", "--version", "v1", "--image", "tensorflow/serving:2.15.0",
                 "--replicas", "2", "--port", "8500", "--restful-port", "8501", "--gpus", "1", "-e", "MODEL=mnist",
                 "--readiness-probe-action", "httpGet", "--readiness-probe-action-option", "path: /v1/models/mnist",
                 "--readiness-probe-action-option", "port: restful", "--readiness-probe-option", "periodSeconds: 7",
                 "--liveness-probe-action", "tcpSocket", "--liveness-probe-action-option", "port: 8500",
                 "--", "tensorflow_model_server", "--port=8500", "--model_name=it's")
    assert out.splitlines()[0] == f"serving mnist version v1 submitted in namespace {namespace} (release mnist-v1)"
    dep = apps.read_namespaced_deployment("mnist-v1", namespace)
    container = dep.spec.template.spec.containers[0]
    assert container.command == ["sh", "-c", "tensorflow_model_server --port=8500 --model_name=it's"]
    ready, live = container.readiness_probe, container.liveness_probe
    assert (ready.http_get.path, ready.http_get.port, ready.period_seconds, live.tcp_socket.port) == (
        "/v1/models/mnist", "restful", 7, 8500)
    assert container.resources.limits["nvidia.com/gpu"] == "1"
    for labels in (dep.metadata.labels, dep.spec.template.metadata.labels):
        assert {k: labels[k] for k in ("servingName", "servingVersion", "servingType", "serviceName", "app",
                                       "release")} == {
            "servingName": "mnist", "servingVersion": "v1", "servingType": "custom-serving", "serviceName": "mnist",
            "app": "custom-serving", "release": "mnist-v1"}
    svc = core.read_namespaced_service("mnist-v1", namespace)
    assert [(p.name, p.port) for p in svc.spec.ports] == [("grpc", 8500), ("restful", 8501)]
    # the real controllers make a ReplicaSet and its two pods; the scheduler binds them, kwok runs them
    wait_for(lambda: cli.views()[0]["availableReplicas"] == 2, "two replicas available")
    (view,) = cli.views()
    assert {k: view[k] for k in ("name", "version", "type", "release", "desiredReplicas", "readyReplicas",
                                 "gpusPerReplica", "address", "ports", "revision", "helmStatus")} == {
        "name": "mnist", "version": "v1", "type": "custom-serving", "release": "mnist-v1", "desiredReplicas": 2,
        "readyReplicas": 2, "gpusPerReplica": 1, "address": svc.spec.cluster_ip,
        "ports": {"grpc": 8500, "restful": 8501}, "revision": 1, "helmStatus": "deployed"}
    assert sorted(p["node"] for p in view["pods"]) == [node, node]
    assert norm(cli.ok("serve", "list")) == [
        "NAME TYPE VERSION DESIRED AVAILABLE ADDRESS PORTS GPU",
        f"mnist custom-serving v1 2 2 {svc.spec.cluster_ip} GRPC:8500,RESTFUL:8501 2"]
    got = cli.ok("serve", "get", "mnist")
    assert "Desired:   2\nAvailable: 2\nReady:     2" in got
    assert f"Address:   {svc.spec.cluster_ip}\nPorts:     GRPC:8500,RESTFUL:8501" in got
    assert [line.split()[1:3] for line in norm(got.split("\n\n")[-1])[1:]] == [["Running", "1/1"]] * 2

    # a second version beside it; the same version again is refused, in one line, with nothing changed
    cli.ok("serve", "custom", "--name", "mnist", "--version", "v2", "--image", "tensorflow/serving:2.16.1",
           "--restful-port", "8501")
    res = cli("serve", "custom", "--name", "mnist", "--version", "v2", "--image", "other:1")
    assert res.exit_code == 1 and res.stderr.strip().splitlines() == [
        f"error: serving mnist version v2 exists in namespace {namespace} (release mnist-v2): give another --version, "
        "or arena-helm serve delete mnist --version v2"], res.output
    assert apps.read_namespaced_deployment("mnist-v2", namespace).spec.template.spec.containers[0].image == \
        "tensorflow/serving:2.16.1"
    assert [v["version"] for v in cli.views()] == ["v1", "v2"]
    res = cli("serve", "get", "mnist", "-o", "json")
    assert [v["version"] for v in json.loads(res.stdout)] == ["v1", "v2"]
    res = cli("serve", "get", "nope")
    assert res.exit_code == 1 and res.stderr.strip() == (
        f"error: no serving nope in namespace {namespace} (see arena-helm serve list)")

    # delete one version, then the rest: everything the releases made goes (the GC takes the pods)
    assert cli.ok("serve", "delete", "mnist", "--version", "v2").splitlines() == [
        "serving mnist version v2 deleted (release mnist-v2)"]
    assert [v["version"] for v in cli.views()] == ["v1"]
    cli.ok("serve", "delete", "mnist")
    assert cli.views() == []
    wait_for(lambda: not core.list_namespaced_pod(namespace, label_selector="servingName=mnist").items,
             "the serving's pods gone")
    assert not apps.list_namespaced_deployment(namespace).items
    assert not apps.list_namespaced_replica_set(namespace).items
    assert not core.list_namespaced_service(namespace, label_selector="servingName=mnist").items


def test_serve_wait_follows_the_rollout_until_ready_or_gives_up(cli, cluster, namespace, node):
    """--wait: exit 0 once every replica is ready (kwok runs them once bound), 3 after --timeout while a replica
    cannot be scheduled (8 GPUs: no node has them)."""
    res = cli("serve", "custom", "--name", "web", "--version", "v1", "--image", "nginx:1.27", "--restful-port", "80",
              "--wait", "--timeout", "60s")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == "serving web version v1 is ready (1/1 replicas)"
    res = cli("serve", "custom", "--name", "big", "--version", "v1", "--image", "nginx:1.27", "--gpus", "8",
              "--wait", "--timeout", "3s")
    assert res.exit_code == 3, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: serving big version v1 is not ready after 3s (0/1 ready: big-v1-"), last
    assert last.endswith(f"Pending; arena-helm serve get big --version v1 -n {namespace})"), last
    cli.ok("serve", "delete", "big")
    cli.ok("serve", "delete", "web")


def test_bad_input_is_one_line_and_leaves_nothing(cli, cluster, namespace):
    for args, line in [
        (("--name", "mnist"), "error: --image: a custom serving runs your image: give --image IMAGE"),
        (("--name", "mnist", "--image", "x:1", "--port", "8500", "--metrics-port", "8500"),
         "error: --port/--restful-port/--metrics-port: two of them are the same port: give each its own"),
        (("--name", "mnist", "--image", "x:1", "--version", "V1"), None),
    ]:
        res = cli("serve", "custom", *args)
        assert res.exit_code == 2, res.output
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
        if line:
            assert res.stderr.strip() == line
        else:
            assert res.stderr.startswith("error: --version: ") and "'V1'" in res.stderr, res.stderr
    assert cli.views() == []
    assert not client.AppsV1Api(cluster.api_client()).list_namespaced_deployment(namespace).items


def test_the_documented_role_is_enough_for_a_servings_life(helm_bin, cluster):
    """alice holds only docs/rbac/arena-helm-user.yaml's Role in her namespace: serve, list, get, delete."""
    from kubecluster import LIMITED_NAMESPACE, LIMITED_USER

    cli = Cli(helm_bin, cluster, LIMITED_NAMESPACE, user=LIMITED_USER)
    name = f"alice-{helm_bin.parent.name.replace('.', '-')}"  # the two helm versions may share the namespace
    try:
        cli.ok("serve", "custom", "--name", name, "--version", "v1", "--image", "nginx:1.27", "--restful-port", "80")
        assert [v["name"] for v in cli.views()].count(name) == 1
        assert json.loads(cli.ok("serve", "get", name, "-o", "json"))[0]["desiredReplicas"] == 1
    finally:
        cli.ok("serve", "delete", name)
    assert name not in [v["name"] for v in cli.views()]


def test_serve_vllm_runs_the_openai_server_as_a_deployment(cli, cluster, namespace, node):
    """`serve vllm`: `vllm serve MODEL ...` with its probes on /health, the port http, one GPU by default; kwok
    runs the pod (no vLLM can run here, so the probes are checked as the API server stored them, not run)."""
    apps = client.AppsV1Api(cluster.api_client())
    res = cli("serve", "vllm", "--name", "qwen", "--version", "v1", "--model", "Qwen/Qwen2.5-0.5B-Instruct",
              "--max-model-len", "4096", "--env-from-secret", "HF_TOKEN=hf", "--wait", "--timeout", "60s", "--",
              "--dtype", "half", "--served-model-name", "it's")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == "serving qwen version v1 is ready (1/1 replicas)"
    c = apps.read_namespaced_deployment("qwen-v1", namespace).spec.template.spec.containers[0]
    assert (c.image, c.command, c.args) == ("vllm/vllm-openai:v0.12.0", ["vllm", "serve"], [
        "Qwen/Qwen2.5-0.5B-Instruct", "--host", "0.0.0.0", "--port", "8000", "--tensor-parallel-size", "1",
        "--max-model-len", "4096", "--dtype", "half", "--served-model-name", "it's"])
    assert c.resources.limits["nvidia.com/gpu"] == "1"
    assert [(p.http_get.path, p.http_get.port) for p in (c.startup_probe, c.readiness_probe, c.liveness_probe)] == [
        ("/health", "http")] * 3
    assert c.startup_probe.failure_threshold * c.startup_probe.period_seconds == 1800
    assert [(e.name, e.value_from.secret_key_ref.name) for e in c.env if e.name == "HF_TOKEN"] == [("HF_TOKEN", "hf")]
    # its GPU among the jobs' (no Prometheus here: the metrics read N/A, with a note)
    res = cli("top", "job")
    assert res.exit_code == 0, res.output
    rows = norm(res.stdout)
    assert rows[1].split()[:5] == ["qwen/v1", "RUNNING", "VLLM-SERVING", "1", "1"], rows
    assert rows[-2:] == ["Total Allocated/Requested GPUs of Training Jobs: 0/0",
                         "Total Allocated/Requested GPUs of Servings: 1/1"]
    cli.ok("serve", "custom", "--name", "web", "--version", "v1", "--image", "nginx:1.27", "--restful-port", "80")
    rows = norm(cli.ok("serve", "list", "-T", "vllm"))
    assert rows[1].split()[:5] == ["qwen", "vllm-serving", "v1", "1", "1"] and rows[1].split()[6:] == ["HTTP:8000", "1"]
    assert len(rows) == 2
    assert [v["name"] for v in cli.views("-T", "custom")] == ["web"]
    cli.ok("serve", "delete", "qwen")
    cli.ok("serve", "delete", "web")
    assert cli.views() == []


def test_serve_sglang_runs_the_launch_server_as_a_deployment(cli, cluster, namespace, node):
    """`serve sglang`: `python3 -m sglang.launch_server --model-path MODEL ...` with its probes on /health, the port
    http (30000), one GPU by default; kwok runs the pod (no SGLang can run here, so the probes are checked as the
    API server stored them, not run); list, get, top job, update and delete as for every serving kind."""
    apps = client.AppsV1Api(cluster.api_client())
    res = cli("serve", "sglang", "--name", "qwen", "--version", "v1", "--model", "Qwen/Qwen2.5-0.5B-Instruct",
              "--context-length", "4096", "--mem-fraction-static", "0.85", "--env-from-secret", "HF_TOKEN=hf",
              "--termination-grace-period", "2m", "--wait", "--timeout", "60s", "--", "--dtype", "half",
              "--served-model-name", "it's")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == "serving qwen version v1 is ready (1/1 replicas)"
    pod_spec = apps.read_namespaced_deployment("qwen-v1", namespace).spec.template.spec
    assert pod_spec.termination_grace_period_seconds == 120
    c = pod_spec.containers[0]
    assert (c.image, c.command, c.args) == ("lmsysorg/sglang:v0.5.16", ["python3"], [
        "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-0.5B-Instruct", "--host", "0.0.0.0", "--port",
        "30000", "--tp-size", "1", "--context-length", "4096", "--mem-fraction-static", "0.85", "--dtype", "half",
        "--served-model-name", "it's"])
    assert c.resources.limits["nvidia.com/gpu"] == "1"
    assert [(p.name, p.container_port) for p in c.ports] == [("http", 30000)]
    assert [(p.http_get.path, p.http_get.port) for p in (c.startup_probe, c.readiness_probe, c.liveness_probe)] == [
        ("/health", "http")] * 3
    assert c.startup_probe.failure_threshold * c.startup_probe.period_seconds == 1800
    assert [(e.name, e.value_from.secret_key_ref.name) for e in c.env if e.name == "HF_TOKEN"] == [("HF_TOKEN", "hf")]
    rows = norm(cli.ok("serve", "list", "-T", "sglang"))
    assert rows[1].split()[:5] == ["qwen", "sglang-serving", "v1", "1", "1"], rows
    assert rows[1].split()[6:] == ["HTTP:30000", "1"], rows
    rows = norm(cli.ok("top", "job"))
    assert rows[1].split()[:5] == ["qwen/v1", "RUNNING", "SGLANG-SERVING", "1", "1"], rows
    assert rows[-2:] == ["Total Allocated/Requested GPUs of Training Jobs: 0/0",
                         "Total Allocated/Requested GPUs of Servings: 1/1"], rows
    res = cli("serve", "update", "sglang", "qwen", "--version", "v1", "--context-length", "8192", "--wait",
              "--timeout", "60s")
    assert res.exit_code == 0, res.output
    c = apps.read_namespaced_deployment("qwen-v1", namespace).spec.template.spec.containers[0]
    assert c.args[c.args.index("--context-length") + 1] == "8192" and c.args[-2:] == ["--served-model-name", "it's"]
    res = cli("serve", "sglang", "--name", "qwen", "--version", "v2", "--model", "org/m", "--gpus", "0")
    assert (res.exit_code, res.stderr) == (2, "error: --gpus 0: the SGLang image runs on NVIDIA GPUs: give each "
                                              "replica one or more\n")
    cli.ok("serve", "delete", "qwen")
    assert cli.views() == []
    assert apps.list_namespaced_deployment(namespace).items == []


def test_update_rolls_out_a_new_replicaset_and_is_revision_two(helm_bin, cli, cluster, namespace, node):
    """`serve update custom`: a helm upgrade with only the given values changed: the real Deployment controller
    rolls out a new ReplicaSet; serve get shows revision 2; the release's history keeps revision 1's values."""
    import subprocess

    apps = client.AppsV1Api(cluster.api_client())
    cli.ok("serve", "custom", "--name", "mnist", "--version", "v1", "--image", "tensorflow/serving:2.15.0",
           "--replicas", "2", "--restful-port", "8501", "-e", "MODEL=mnist", "--wait", "--timeout", "60s")
    first = {rs.metadata.name for rs in apps.list_namespaced_replica_set(namespace).items}
    assert len(first) == 1
    res = cli("serve", "update", "custom", "mnist", "--image", "tensorflow/serving:2.16.1", "--wait",
              "--timeout", "60s")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["serving mnist version v1 updated (release mnist-v1, revision 2)",
                                       "serving mnist version v1 is rolled out (2/2 replicas ready)"]
    dep = apps.read_namespaced_deployment("mnist-v1", namespace)
    c = dep.spec.template.spec.containers[0]
    assert c.image == "tensorflow/serving:2.16.1"
    assert [(e.name, e.value) for e in c.env if e.name == "MODEL"] == [("MODEL", "mnist")]  # kept
    sets = apps.list_namespaced_replica_set(namespace).items
    new = [rs for rs in sets if rs.metadata.name not in first]
    assert len(new) == 1 and new[0].spec.replicas == 2 and new[0].status.ready_replicas == 2
    assert all(rs.spec.replicas == 0 for rs in sets if rs.metadata.name in first)  # the old one scaled down
    (view,) = cli.views()
    assert (view["revision"], view["rolledOut"], view["readyReplicas"]) == (2, True, 2)
    assert "Release:   mnist-v1 (revision 2, deployed)" in cli.ok("serve", "get", "mnist")
    kc = ["--kubeconfig", str(cluster.admin.kubeconfig), "-n", namespace]
    old = json.loads(subprocess.run([str(helm_bin), "get", "values", "mnist-v1", "--revision", "1", "-o", "json",
                                     *kc], capture_output=True, text=True, check=True).stdout)
    assert old["image"] == "tensorflow/serving:2.15.0" and old["replicas"] == 2
    # scale: only replicas changes; back to 1 (the chart's default) is set too
    assert cli.ok("serve", "update", "custom", "mnist", "--replicas", "1").splitlines()[0].endswith("revision 3)")
    wait_for(lambda: cli.views()[0]["desiredReplicas"] == 1, "one replica desired")
    assert apps.read_namespaced_deployment("mnist-v1", namespace).spec.template.spec.containers[0].image == \
        "tensorflow/serving:2.16.1"
    # nothing to change, another kind's update, a missing serving: one line each, nothing changed
    for args, code, line in [
        (("custom", "mnist"), 2, "error: serve update custom: give what to change (e.g. --image, --replicas, --gpus)"),
        (("vllm", "mnist", "--model", "org/x"), 2,
         "error: serving mnist version v1 is a custom-serving, not a vllm-serving: arena-helm serve update custom mnist"),
        (("custom", "nope", "--replicas", "2"), 1, f"error: no serving nope in namespace {namespace} (see arena-helm "
                                                   "serve list)"),
    ]:
        res = cli("serve", "update", *args)
        assert (res.exit_code, res.stderr.strip()) == (code, line), res.output
    assert cli.views()[0]["revision"] == 3
    # the words after -- are the new command (flags may come before or after NAME)
    cli.ok("serve", "update", "custom", "--replicas", "2", "mnist", "--", "python", "serve.py", "--port=8501")
    c = apps.read_namespaced_deployment("mnist-v1", namespace).spec.template.spec.containers[0]
    assert c.command == ["sh", "-c", "python serve.py --port=8501"] and c.image == "tensorflow/serving:2.16.1"
    assert cli.views()[0]["revision"] == 4
    cli.ok("serve", "delete", "mnist")


def test_serve_tensorflow_runs_tensorflow_model_server_as_arena_does(cli, cluster, namespace, node):
    """`serve tensorflow`: tensorflow_model_server with Arena's arguments, the -gpu image with a GPU, the ports
    grpc and restful; kwok runs the pod."""
    apps = client.AppsV1Api(cluster.api_client())
    res = cli("serve", "tensorflow", "--name", "mnist", "--version", "v1", "--model-path", "/models/mnist",
              "--data-dir", "/srv/models:/models", "--gpus", "1", "--wait", "--timeout", "60s", "--",
              "--enable_batching=true")
    assert res.exit_code == 0, res.output
    c = apps.read_namespaced_deployment("mnist-v1", namespace).spec.template.spec.containers[0]
    assert (c.image, c.command, c.args) == ("tensorflow/serving:2.19.0-gpu", ["tensorflow_model_server"], [
        "--port=8500", "--rest_api_port=8501", "--model_name=mnist", "--model_base_path=/models/mnist",
        "--enable_batching=true"])
    assert (c.readiness_probe.tcp_socket.port, [(p.name, p.container_port) for p in c.ports]) == (
        "grpc", [("grpc", 8500), ("restful", 8501)])
    (view,) = cli.views("-T", "tensorflow")
    assert (view["type"], view["ports"], view["readyReplicas"]) == ("tf-serving", {"grpc": 8500, "restful": 8501}, 1)
    res = cli("serve", "update", "tensorflow", "mnist", "--model-path", "/models/mnist2")
    assert res.exit_code == 0, res.output
    c = apps.read_namespaced_deployment("mnist-v1", namespace).spec.template.spec.containers[0]
    assert "--model_base_path=/models/mnist2" in c.args and "--enable_batching=true" in c.args
    res = cli("serve", "update", "custom", "mnist", "--replicas", "2")  # the fix names its kind's command
    assert (res.exit_code, res.stderr) == (2, "error: serving mnist version v1 is a tf-serving, not a custom-serving: "
                                              "arena-helm serve update tensorflow mnist\n")
    cli.ok("serve", "delete", "mnist")
    assert cli.views() == []


def test_serve_triton_runs_tritonserver_with_its_backends_image(cli, cluster, namespace, node):
    """`serve triton`: tritonserver with Arena's arguments (explicit model control for --load-model), the vLLM
    backend's image, the ports http, grpc and metrics, probes on Triton's health endpoints; update changes the
    models to load."""
    apps = client.AppsV1Api(cluster.api_client())
    res = cli("serve", "triton", "--name", "llm", "--version", "v1", "--model-repository", "/models/repo",
              "--data-dir", "/srv/models:/models", "--backend", "vllm", "--gpus", "1", "--allow-metrics",
              "--load-model", "qwen", "--wait", "--timeout", "60s", "--", "--log-verbose=1")
    assert res.exit_code == 0, res.output
    c = apps.read_namespaced_deployment("llm-v1", namespace).spec.template.spec.containers[0]
    assert (c.image, c.command, c.args) == ("nvcr.io/nvidia/tritonserver:25.01-vllm-python-py3", ["tritonserver"], [
        "--model-repository=/models/repo", "--http-port=8000", "--grpc-port=8001", "--allow-metrics=true",
        "--metrics-port=8002", "--model-control-mode=explicit", "--load-model=qwen", "--log-verbose=1"])
    assert (c.readiness_probe.http_get.path, c.liveness_probe.http_get.path, c.startup_probe.failure_threshold) == (
        "/v2/health/ready", "/v2/health/live", 60)
    assert c.resources.limits == {"nvidia.com/gpu": "1"}
    (view,) = cli.views("-T", "triton")
    assert (view["type"], view["ports"], view["readyReplicas"]) == (
        "triton-serving", {"http": 8000, "grpc": 8001, "metrics": 8002}, 1)
    res = cli("serve", "update", "triton", "llm", "--load-model", "llama", "--load-model", "qwen", "--wait",
              "--timeout", "60s")
    assert res.exit_code == 0, res.output
    c = apps.read_namespaced_deployment("llm-v1", namespace).spec.template.spec.containers[0]
    assert c.args[5:] == ["--model-control-mode=explicit", "--load-model=llama", "--load-model=qwen",
                          "--log-verbose=1"]
    res = cli("serve", "triton", "--name", "llm2", "--model-repository", "/m", "--backend", "trt-llm")
    assert (res.exit_code, res.stderr.strip()) == (
        2, "error: --backend trt-llm: Triton's trt-llm backend runs on NVIDIA GPUs: give --gpus 1 or more")
    cli.ok("serve", "delete", "llm")
    assert cli.views() == []


KSERVE = ("serve", "kserve", "--name", "iris", "--version", "v1", "--model-format", "sklearn:1", "--storage-uri",
          "s3://models/iris", "--min-replicas", "2", "--max-replicas", "4", "--scale-metric", "cpu", "--scale-target",
          "80", "--canary-traffic-percent", "20", "--gpus", "1", "-e", "LOG=debug", "--model-name", "iris")
ISVC = ("serving.kserve.io", "v1beta1")


def test_serve_kserve_runs_an_inferenceservice_through_kserve(cli, cluster, namespace, node):
    """`serve kserve` with KServe v0.20.0 running (RawDeployment): its webhooks admit the InferenceService, which
    the API server stores with every field we render (KServe's defaults added); KServe makes the predictor's
    Deployment (the sklearn runtime's image, the storage initializer for the s3:// model, the serving's labels
    on its pods), Service and HPA (whose minReplicas the HPA controller holds); --wait ends once KServe says
    Ready; list and get show the replicas, address and URL; a version no node can take ends --wait with exit 3;
    update changes the canary share and the model's storage; delete leaves nothing (KServe's finalizer, the
    garbage collector)."""
    from chartinstall import is_subset

    api = client.CustomObjectsApi(cluster.api_client())
    apps, core = client.AppsV1Api(cluster.api_client()), client.CoreV1Api(cluster.api_client())
    res = cli(*KSERVE, "--wait", "--timeout", "90s")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1].startswith("serving iris version v1 is ready ("), res.output
    isvc = api.get_namespaced_custom_object(*ISVC, namespace, "inferenceservices", "iris-v1")
    rendered = [d for d in yaml.safe_load_all(cli.ok(*KSERVE, "--dry-run")) if d]
    assert is_subset(rendered[0]["spec"], isvc["spec"]) == []  # nothing pruned or changed
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"], predictor["canaryTrafficPercent"],
            predictor["model"]["modelFormat"], predictor["model"]["storageUri"]) == (
        2, 4, 20, {"name": "sklearn", "version": "1"}, "s3://models/iris")
    url = f"http://iris-v1-{namespace}.example.com"
    assert isvc["status"]["url"] == url
    dep = apps.read_namespaced_deployment("iris-v1-predictor", namespace)
    (container,) = dep.spec.template.spec.containers
    assert container.image.startswith("kserve/sklearnserver:") and container.args[:2] == [
        "--model_name=iris-v1", "--model_dir=/mnt/models"]
    # KServe's defaults (1 CPU, 2Gi) beside the GPU we ask for
    assert container.resources.requests == {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}
    # KServe's pod webhook gives each pod the storage initializer that downloads the model
    pod = core.list_namespaced_pod(namespace, label_selector="serving.kserve.io/inferenceservice=iris-v1").items[0]
    assert [(c.name, c.args[0]) for c in pod.spec.init_containers] == [("storage-initializer", "s3://models/iris")]
    labels = dep.spec.template.metadata.labels
    assert {k: labels[k] for k in ("servingName", "servingVersion", "servingType", "modelName", "release")} == {
        "servingName": "iris", "servingVersion": "v1", "servingType": "kserve", "modelName": "iris",
        "release": "iris-v1"}
    # the HPA controller scales the Deployment to the InferenceService's minReplicas
    wait_for(lambda: (apps.read_namespaced_deployment("iris-v1-predictor", namespace).status.ready_replicas or 0)
             == 2, "iris-v1-predictor 2 ready replicas", 60.0)
    (view,) = cli.views("-T", "kserve")
    assert (view["name"], view["version"], view["type"], view["desiredReplicas"], view["availableReplicas"],
            view["gpusPerReplica"], view["url"]) == ("iris", "v1", "kserve", 2, 2, 1, url)
    assert norm(cli.ok("serve", "list"))[1].split() == ["iris", "kserve", "v1", "2", "2", url,
                                                       "HTTP:80", "2"]  # KServe's port, named by its protocol
    text = norm(cli.ok("serve", "get", "iris"))
    assert f"URL: {url}" in text and "Available: 2" in text
    assert len([line for line in text if line.startswith("iris-v1-predictor-") and " Running 1/1 " in line]) == 2
    rows = norm(cli.ok("top", "job"))  # KServe's Deployment carries the serving's labels: top job finds it
    assert rows[1].split()[:5] == ["iris/v1", "RUNNING", "KSERVE", "2", "2"], rows
    assert rows[-2:] == ["Total Allocated/Requested GPUs of Training Jobs: 0/0",  # a serving, whatever its chart
                         "Total Allocated/Requested GPUs of Servings: 2/2"], rows
    # a version no node can take (8 GPUs): KServe makes it, the scheduler cannot place it
    res = cli("serve", "kserve", "--name", "iris", "--version", "v2", "--image", "registry.example.com/iris:1",
              "--port", "8081", "--gpus", "8", "--wait", "--timeout", "5s", "--", "python", "-m", "server")
    assert res.exit_code == 3, res.output
    assert "error: serving iris version v2 is not ready after 5s (0/1 ready: " in res.stderr, res.stderr
    c = apps.read_namespaced_deployment("iris-v2-predictor", namespace).spec.template.spec.containers[0]
    assert (c.name, c.command, [(p.name, p.container_port) for p in c.ports]) == (
        "kserve-container", ["sh", "-c", "python -m server"], [("http1", 8081)])
    # two versions, two rows of top job named apart (v2 waits: no GPU for it, not counted in the total)
    rows = norm(cli.ok("top", "job"))
    assert [row.split()[:5] for row in rows[1:3]] == [["iris/v2", "PENDING", "KSERVE", "8", "0"],
                                                      ["iris/v1", "RUNNING", "KSERVE", "2", "2"]], rows
    assert rows[-1] == "Total Allocated/Requested GPUs of Servings: 2/2", rows
    # its Service's port (KServe names it after the container's, http1): HTTP too
    wait_for(lambda: any(row.split()[:3] == ["iris", "kserve", "v2"] and row.split()[-2] == "HTTP:80"
                         for row in norm(cli.ok("serve", "list"))[1:]) or None, "iris v2's Service", 30.0)
    res = cli("serve", "update", "kserve", "iris", "--version", "v1", "--canary-traffic-percent", "50",
              "--storage-uri", "s3://models/iris2")
    assert res.exit_code == 0, res.output
    predictor = api.get_namespaced_custom_object(*ISVC, namespace, "inferenceservices", "iris-v1")["spec"]["predictor"]
    assert (predictor["canaryTrafficPercent"], predictor["model"]["storageUri"], predictor["minReplicas"]) == (
        50, "s3://models/iris2", 2)
    cli.ok("serve", "delete", "iris")
    assert cli.views() == []
    wait_for(lambda: api.list_namespaced_custom_object(*ISVC, namespace, "inferenceservices")["items"] == [],
             "the InferenceServices gone", 30.0)
    wait_for(lambda: apps.list_namespaced_deployment(namespace).items == [] and [
        s.metadata.name for s in core.list_namespaced_service(namespace).items] == [], "KServe's objects gone", 60.0)


DISTRIBUTED = ("serve", "distributed", "--name", "llama", "--version", "v1", "--image", "vllm/vllm-openai:v0.12.0",
               "--replicas", "2", "--workers", "3", "--gpus", "4", "--worker-gpus", "2", "--restful-port", "8000",
               "--leader-command", "ray start --head && vllm serve /models/llama",
               "--worker-command", "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block",
               "--data-dir", "/srv/models:/models")
LWS = ("leaderworkerset.x-k8s.io", "v1")


def test_serve_distributed_runs_groups_through_the_leaderworkerset_controller(cli, cluster, kubelet, namespace):
    """`serve distributed` with LWS v0.9.0 running: its webhook admits the LeaderWorkerSet, stored with every field
    we render (its defaults added); LWS makes a StatefulSet of leaders and one of workers a group, each group's
    headless Service (the leader's address resolves: its hostname and subdomain, in that Service's endpoints)
    and gives the pods the group's environment; --wait ends once every group is ready; the Service selects the
    leaders; list and get count the groups (2 x (4 + 3 x 2) GPUs) and show every pod; update of the workers
    regroups; delete leaves nothing."""
    from chartinstall import is_subset

    api = client.CustomObjectsApi(cluster.api_client())
    apps, core = client.AppsV1Api(cluster.api_client()), client.CoreV1Api(cluster.api_client())
    discovery = client.DiscoveryV1Api(cluster.api_client())
    node = f"lws-{namespace}"
    kubelet.add_node(node, pool=namespace, gpus=24)
    try:
        res = cli(*DISTRIBUTED, "--wait", "--timeout", "90s")
        assert res.exit_code == 0, res.output
        assert res.stdout.splitlines()[-1] == "serving llama version v1 is ready (2/2 replicas)"
        lws = api.get_namespaced_custom_object(*LWS, namespace, "leaderworkersets", "llama-v1")
        rendered = next(d for d in yaml.safe_load_all(cli.ok(*DISTRIBUTED, "--dry-run")) if d and
                        d["kind"] == "LeaderWorkerSet")
        assert is_subset(rendered["spec"], lws["spec"]) == []  # nothing pruned or changed
        template = lws["spec"]["leaderWorkerTemplate"]
        assert (lws["spec"]["replicas"], template["size"], template["restartPolicy"],
                lws["spec"]["networkConfig"]) == (2, 4, "RecreateGroupOnPodRestart",
                                                  {"subdomainPolicy": "UniquePerReplica"})
        assert (lws["status"]["readyReplicas"], lws["status"]["replicas"]) == (2, 2)
        assert sorted(s.metadata.name for s in apps.list_namespaced_stateful_set(namespace).items) == [
            "llama-v1", "llama-v1-0", "llama-v1-1"]
        pods = {p.metadata.name: p for p in core.list_namespaced_pod(namespace).items}
        assert sorted(pods) == ["llama-v1-0", "llama-v1-0-1", "llama-v1-0-2", "llama-v1-0-3",
                                "llama-v1-1", "llama-v1-1-1", "llama-v1-1-2", "llama-v1-1-3"]
        assert all(p.status.phase == "Running" and p.spec.node_name == node for p in pods.values())
        worker = pods["llama-v1-1-2"]
        (c,) = worker.spec.containers
        env = {e.name: e.value for e in c.env if e.value is not None}
        assert {k: env[k] for k in ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX", "MASTER_ADDR",
                                    "GPU_COUNT", "ROLE")} == {
            "LWS_LEADER_ADDRESS": f"llama-v1-1.llama-v1-1.{namespace}", "LWS_GROUP_SIZE": "4",
            "LWS_WORKER_INDEX": "2", "MASTER_ADDR": "$(LWS_LEADER_ADDRESS)", "GPU_COUNT": "2", "ROLE": "worker"}
        assert c.command == ["sh", "-c", "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
        assert (worker.metadata.labels["role"], worker.metadata.labels["servingName"],
                c.resources.limits["nvidia.com/gpu"]) == ("worker", "llama", "2")
        assert [(m.mount_path, v.host_path.path) for m in c.volume_mounts for v in worker.spec.volumes
                if v.name == m.name and v.host_path] == [("/models", "/srv/models")]
        # the leader's address resolves: hostname.subdomain of the leader, the headless Service llama-v1-1
        leader = pods["llama-v1-1"]
        assert (leader.spec.hostname, leader.spec.subdomain, leader.metadata.labels["role"]) == (
            "llama-v1-1", "llama-v1-1", "leader")
        headless = core.read_namespaced_service("llama-v1-1", namespace)
        assert headless.spec.cluster_ip == "None"
        wait_for(lambda: leader.status.pod_ip in [a for s in discovery.list_namespaced_endpoint_slice(
            namespace, label_selector="kubernetes.io/service-name=llama-v1-1").items for e in s.endpoints or []
            for a in e.addresses], "the leader in its group's headless Service", 30.0)
        svc = core.read_namespaced_service("llama-v1", namespace)
        assert svc.spec.cluster_ip != "None" and svc.spec.selector["role"] == "leader"
        assert [(p.name, p.port) for p in svc.spec.ports] == [("restful", 8000)]
        (view,) = cli.views("-T", "distributed")
        assert (view["type"], view["desiredReplicas"], view["readyReplicas"], view["gpusPerReplica"],
                view["ports"]) == ("distributed-serving", 2, 2, 10, {"restful": 8000})
        row = norm(cli.ok("serve", "list"))[1].split()
        assert row[:5] + row[-1:] == ["llama", "distributed-serving", "v1", "2", "2", "20"]
        text = norm(cli.ok("serve", "get", "llama"))
        assert sorted(line.split()[0] for line in text if line.startswith("llama-v1-")) == sorted(pods)
        # top job: the serving's groups among the jobs (requested and allocated GPUs of its 8 pods)
        rows = norm(cli.ok("top", "job"))
        assert rows[1].split()[:5] == ["llama/v1", "RUNNING", "DISTRIBUTED-SERVING", "20", "20"], rows
        res = cli("serve", "update", "distributed", "llama", "--workers", "1", "--worker-gpus", "4")
        assert res.exit_code == 0, res.output
        def regrouped():
            now = {p.metadata.name: p.spec.containers[0].resources.limits["nvidia.com/gpu"]
                   for p in core.list_namespaced_pod(namespace).items if not p.metadata.deletion_timestamp}
            return now == {"llama-v1-0": "4", "llama-v1-0-1": "4", "llama-v1-1": "4", "llama-v1-1-1": "4"} or None

        wait_for(regrouped, "two groups of a leader and a worker of 4 GPUs", 90.0)
        cli.ok("serve", "delete", "llama")
        assert cli.views() == []
        wait_for(lambda: api.list_namespaced_custom_object(*LWS, namespace, "leaderworkersets")["items"] == [] and
                 apps.list_namespaced_stateful_set(namespace).items == [] and
                 core.list_namespaced_service(namespace).items == [], "the LeaderWorkerSet's objects gone", 60.0)
    finally:
        kubelet.remove_node(node)


def test_traffic_split_weighs_the_versions_with_an_httproute_or_istio(cli, cluster, namespace, node):
    """serve traffic-split: a release NAME of a Service over every version's pods and an HTTPRoute a shared port
    (the Gateway API, served first) or, with --router istio, a DestinationRule and a VirtualService; the real API
    server validates them against the Gateway API v1.6.3 and Istio 1.32 CRDs (CEL rules included). serve get
    shows each version's share; bad weights change nothing; deleting the serving removes the split."""
    api = client.CustomObjectsApi(cluster.api_client())
    core = client.CoreV1Api(cluster.api_client())
    for version in ("v1", "v2"):
        cli.ok("serve", "custom", "--name", "mnist", "--version", version, "--image", "nginx:1.27",
               "--restful-port", "8501", "--port", "8500" if version == "v1" else "9500")
    out = cli.ok("serve", "traffic-split", "mnist", "-v", "v1:80", "-v", "v2:20")
    assert out.strip() == "traffic of serving mnist split: v1 80%, v2 20% (Gateway API HTTPRoute) (release mnist, " \
                          "revision 1)"
    route = api.get_namespaced_custom_object("gateway.networking.k8s.io", "v1", namespace, "httproutes",
                                             "mnist-restful")
    assert route["spec"]["parentRefs"] == [{"group": "", "kind": "Service", "name": "mnist", "port": 8501}]
    assert [(b["name"], b["port"], b["weight"]) for b in route["spec"]["rules"][0]["backendRefs"]] == [
        ("mnist-v1", 8501, 80), ("mnist-v2", 8501, 20)]
    svc = core.read_namespaced_service("mnist", namespace)
    assert svc.spec.selector == {"servingName": "mnist", "app.kubernetes.io/part-of": "arena-helm"}
    assert [(p.name, p.port) for p in svc.spec.ports] == [("restful", 8501)]  # the one port both versions have
    text = norm(cli.ok("serve", "get", "mnist"))
    assert text[0] == "Traffic: v1 80%, v2 20% (Gateway API HTTPRoute)"
    assert [line for line in text if line.startswith("Traffic:")][1:] == ["Traffic: 80%", "Traffic: 20%"]
    # bad weights: refused before anything changes
    res = cli("serve", "traffic-split", "mnist", "-v", "v1:70", "-v", "v2:20")
    assert (res.exit_code, res.stderr.strip()) == (2, "error: --version-weight: the weights sum to 90, not 100: "
                                                      "v1:70, v2:20")
    res = cli("serve", "traffic-split", "mnist", "-v", "v1:50", "-v", "v3:50")
    assert res.exit_code == 2 and "serving mnist has no version v3" in res.stderr
    # Istio: the release is upgraded, the HTTPRoute goes, the subsets are the versions' labels
    out = cli.ok("serve", "traffic-split", "mnist", "-v", "v1:10", "-v", "v2:90", "--router", "istio")
    assert out.strip().endswith("(Istio VirtualService and DestinationRule) (release mnist, revision 2)")
    vs = api.get_namespaced_custom_object("networking.istio.io", "v1", namespace, "virtualservices", "mnist")
    assert [(r["destination"]["subset"], r["weight"]) for r in vs["spec"]["http"][0]["route"]] == [
        ("subset-v1", 10), ("subset-v2", 90)]
    dr = api.get_namespaced_custom_object("networking.istio.io", "v1", namespace, "destinationrules", "mnist")
    assert dr["spec"]["subsets"][1] == {"name": "subset-v2", "labels": {"servingVersion": "v2"}}
    assert api.list_namespaced_custom_object("gateway.networking.k8s.io", "v1", namespace, "httproutes")[
        "items"] == []
    views = json.loads(cli.ok("serve", "get", "mnist", "-o", "json"))
    assert [(v["version"], v["trafficPercent"]) for v in views] == [("v1", 10), ("v2", 90)]
    assert [v["name"] for v in cli.views()] == ["mnist", "mnist"]  # the split is no serving of its own
    assert cli.ok("serve", "delete", "mnist").splitlines() == [
        "serving mnist version v1 deleted (release mnist-v1)", "serving mnist version v2 deleted (release mnist-v2)",
        "traffic split of serving mnist deleted (release mnist)"]
    assert cli.views() == []
    assert "mnist" not in [s.metadata.name for s in core.list_namespaced_service(namespace).items]
    assert api.list_namespaced_custom_object("networking.istio.io", "v1", namespace, "virtualservices")[
        "items"] == []


def test_serve_logs_and_attach_reach_one_pod_of_the_serving(cli, cluster, kubelet, namespace, node):
    """serve logs prints the server container's log (API server pods/log -> kwok), the first running pod by
    default with a note naming the others, -i another; serve attach runs a command through pods/exec."""
    core = client.CoreV1Api(cluster.api_client())
    cli.ok("serve", "custom", "--name", "web", "--version", "v1", "--image", "nginx:1.27", "--replicas", "2",
           "--restful-port", "80", "--wait", "--timeout", "60s")
    pods = sorted(p.metadata.name for p in core.list_namespaced_pod(namespace, label_selector="release=web-v1").items)
    for i, pod in enumerate(pods):
        kubelet.write_log(namespace, pod, "serving", f"pod {i} line 1\npod {i} line 2")
    res = cli("serve", "logs", "web")
    assert res.exit_code == 0, res.output
    assert res.stdout == "pod 0 line 1\npod 0 line 2\n"
    assert res.stderr.strip() == (f"note: serving web version v1 has 2 instances; showing {pods[0]} "
                                  "(-i/--instance picks another)")
    res = cli("serve", "logs", "web", "-i", pods[1], "--tail", "1")
    assert (res.exit_code, res.stdout, res.stderr) == (0, "pod 1 line 2\n", "")
    res = cli("serve", "logs", "web", "-i", "nope")
    assert res.exit_code == 1 and res.stderr.strip() == (
        f"error: -i/--instance nope: serving web version v1 has no such instance (its pods: {', '.join(pods)})")
    res = cli("serve", "attach", "web", "-i", pods[1], "--", "sh", "-c", "echo in the server $ARENA_HELM_KWOK_EXEC")
    assert (res.exit_code, res.stdout) == (0, "in the server 1\n"), res.output
    cli.ok("serve", "delete", "web")


def test_the_python_api_serves_a_spec_and_renders_it(helm_bin, cli, cluster, namespace):
    """arena_helm.submit_serving: what `serve KIND` does, from Python (a kind's spec: its flags as fields);
    render_serving renders the same without a cluster; a version that exists is refused."""
    from arena_helm import AlreadyExistsError, TritonServeSpec, render_serving, serving_values, submit_serving
    from arena_helm.adapters.helm import Helm, KubeTarget
    from arena_helm.adapters.kube import KubeReader

    kube = KubeReader(str(cluster.admin.kubeconfig))
    helm = Helm(str(helm_bin), KubeTarget(str(cluster.admin.kubeconfig), None))
    spec = TritonServeSpec(name="py", version="v1", namespace=namespace, model_repository="/models",
                           data=["models:/models"], replicas=0)
    manifests = render_serving(str(helm_bin), spec, serving_values(spec))
    assert '"--model-repository=/models"' in manifests and "kind: Deployment" in manifests
    assert submit_serving(spec, helm, kube) == "py-v1"
    (view,) = cli.views()
    assert (view["name"], view["version"], view["type"], view["desiredReplicas"]) == ("py", "v1", "triton-serving", 0)
    with pytest.raises(AlreadyExistsError, match="serving py version v1 exists"):
        submit_serving(spec, helm, kube)
    cli.ok("serve", "delete", "py")


def test_the_distributed_serving_notes_port_forward_reaches_the_leader(cli, cluster, kubelet, namespace, helm_bin):
    """The chart's NOTES (what `helm install` prints; `helm get notes`) of a distributed serving give a `kubectl
    port-forward` command: run with the real kubectl (a free local port beside the Service's), it reaches the
    leader's port through the API server and kwok's port-forward, and a page is fetched through it (a small server
    here stands in for vLLM, which no kwok pod runs)."""
    from helmtools import kubectl_path
    from kubecluster import free_port

    kubelet.add_node(f"fw-{namespace}", pool=namespace, gpus=8)
    try:
        forwarded_page(cli, cluster, kubelet, namespace, helm_bin, kubectl_path(), free_port())
    finally:
        kubelet.remove_node(f"fw-{namespace}")


def forwarded_page(cli, cluster, kubelet, namespace, helm_bin, kubectl, local) -> None:
    import os
    import subprocess
    import urllib.request

    cli.ok("serve", "distributed", "--name", "fw", "--version", "v1", "--image", "vllm/vllm-openai:v0.12.0",
           "--gpus", "1", "--workers", "1", "--restful-port", "8000", "--leader-command", "vllm serve /m",
           "--worker-command", "sleep infinity", "--wait", "--timeout", "90s")
    env = {**os.environ, "KUBECONFIG": str(cluster.admin.kubeconfig)}
    (release,) = [r["name"] for r in json.loads(subprocess.run(
        [str(helm_bin), "list", "-n", namespace, "-o", "json"], env=env, capture_output=True, text=True,
        check=True).stdout)]
    notes = subprocess.run([str(helm_bin), "get", "notes", release, "-n", namespace], env=env, capture_output=True,
                           text=True, check=True).stdout
    (hint,) = [line.split() for line in notes.splitlines() if line.strip().startswith("kubectl port-forward")]
    assert hint == ["kubectl", "port-forward", "-n", namespace, "service/fw-v1", "8000"]
    with kubelet.serving_http(namespace, "fw-v1-0", 8000, b"vllm stand-in") as seen:
        forward = subprocess.Popen([str(kubectl), *hint[1:-1], f"{local}:{hint[-1]}"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert forward.stdout.readline() == f"Forwarding from 127.0.0.1:{local} -> 8000\n", forward.poll()
            with urllib.request.urlopen(f"http://127.0.0.1:{local}/v1/models", timeout=30) as resp:
                assert resp.read() == b"vllm stand-in"
        finally:
            forward.terminate()
            forward.wait(timeout=30)
        assert seen == ["/v1/models"]
    cli.ok("serve", "delete", "fw")
