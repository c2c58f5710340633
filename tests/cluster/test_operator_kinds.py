"""The training-operator kinds Arena lacks, against the real API server: training-operator v1.9.3's JAXJob,
XGBoostJob and PaddleJob controllers make the pods (with the distributed environment each sets) and Services,
kwok runs them. The flags follow the operator's examples (docs/compatibility.md)."""

from __future__ import annotations

import json

import pytest
from clictx import cli
from kubernetes import client
from waits import wait_for, wait_gone, wait_job_pods

pytestmark = pytest.mark.cluster
JOB_NAME = "training.kubeflow.org/job-name"


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture
def ctx(helm_bin, cluster, namespace, controllers):
    controllers.require("training-operator")
    return cli(helm_bin, cluster, namespace)


def view(ctx, name: str) -> dict:
    return json.loads(ok(ctx("get", name, "-o", "json")))


def wait_status(ctx, name: str, status: str, timeout: float = 90.0) -> dict:
    return wait_for(lambda: (lambda v: v if v["status"] == status else None)(view(ctx, name)),
                    f"arena-helm get {name}: {status}", timeout)


def job_containers(core, namespace: str, job: str) -> dict[str, tuple[client.V1Container, dict[str, str]]]:
    """pod name -> (its only container, that container's env as the operator set it)."""
    out = {}
    for pod in core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME}={job}").items:
        (c,) = pod.spec.containers
        out[pod.metadata.name] = (c, {e.name: e.value for e in c.env or []})
    return out


def run_pods(kubelet, namespace: str, names: list[str], node: str, log: tuple[str, str, str]) -> None:
    """kwok runs every pod; ``log`` = (pod, container, line) is what that container has written."""
    for name in names:
        kubelet.run_pod(namespace, name, node)
    kubelet.write_log(namespace, *log)


def delete_job(ctx, core, namespace: str, name: str, kind: str) -> None:
    """arena-helm delete uninstalls the release, and the job's pods go with it."""
    assert ok(ctx("delete", name)) == f"{kind}/{name} deleted (release {name} uninstalled from namespace {namespace})\n"
    wait_gone(core, namespace, f"{JOB_NAME}={name}")


def test_a_jaxjob_runs_its_workers_with_the_coordinators_environment(ctx, cluster, kubelet, gpu_node, namespace):
    out = ok(ctx("submit", "jax", "--name", "spmd", "--image", "jax:0.4.30", "--workers", "2", "--gpus", "1",
                 "--", "python3", "train.py", "--steps", "10"))
    assert "jaxjob.kubeflow.org/spmd created" in out, out
    core = client.CoreV1Api(cluster.api_client())
    names = wait_job_pods(core, namespace, "spmd", count=2)
    assert sorted(names) == ["spmd-worker-0", "spmd-worker-1"]
    containers = job_containers(core, namespace, "spmd")
    for index in (0, 1):
        c, env = containers[f"spmd-worker-{index}"]
        # training-operator v1.9.3 pkg/controller.v1/jax/envvar.go: worker 0 is the coordinator
        assert (env["COORDINATOR_ADDRESS"], env["COORDINATOR_PORT"], env["NUM_PROCESSES"], env["PROCESS_ID"]) == (
            "spmd-worker-0", "6666", "2", str(index))
        assert (c.name, c.command, [(p.name, p.container_port) for p in c.ports]) == (
            "jax", ["sh", "-c", "python3 train.py --steps 10"], [("jaxjob-port", 6666)])
        assert c.resources.limits["nvidia.com/gpu"] == "1"
    run_pods(kubelet, namespace, names, gpu_node, ("spmd-worker-0", "jax", "process 0 of 2: step 10"))
    data = wait_status(ctx, "spmd", "RUNNING")
    assert (data["trainer"], data["requestGPUs"], data["allocatedGPUs"], data["chiefName"]) == (
        "jaxjob", 2, 2, "spmd-worker-0")
    assert sorted(i["name"] for i in data["instances"]) == ["spmd-worker-0", "spmd-worker-1"]
    rows = {j["name"]: (j["status"], j["trainer"]) for j in json.loads(ok(ctx("list", "-o", "json")))}
    assert rows == {"spmd": ("RUNNING", "jaxjob")}
    assert ok(ctx("logs", "spmd")) == "process 0 of 2: step 10\n"  # worker 0, the coordinator

    for name in names:
        kubelet.finish_pod(namespace, name, 0)
    wait_status(ctx, "spmd", "SUCCEEDED")
    delete_job(ctx, core, namespace, "spmd", "jaxjob")
    wait_gone(core, namespace, f"{JOB_NAME}=spmd")


def test_a_jaxjob_is_suspended_and_resumed_through_its_release(ctx, cluster, kubelet, gpu_node, namespace):
    ok(ctx("submit", "jaxjob", "--name", "later", "--image", "jax:0.4.30", "--workers", "2", "--", "python3", "t.py"))
    core = client.CoreV1Api(cluster.api_client())
    wait_job_pods(core, namespace, "later", count=2)
    out = ok(ctx("suspend", "later"))
    assert out == f"jaxjob/later suspended: the operator deletes its pods (release later revision 2, namespace {namespace})\n"
    wait_gone(core, namespace, f"{JOB_NAME}=later")  # the operator deletes a suspended job's pods
    assert wait_status(ctx, "later", "SUSPENDED")["status"] == "SUSPENDED"
    ok(ctx("resume", "later"))
    assert sorted(wait_job_pods(core, namespace, "later", count=2)) == ["later-worker-0", "later-worker-1"]
    ok(ctx("delete", "later"))


def test_an_xgboostjob_runs_a_master_and_workers_with_their_ranks(ctx, cluster, kubelet, gpu_node, namespace):
    out = ok(ctx("submit", "xgb", "--name", "iris", "--image", "xgb:2.1", "--workers", "3", "--cpu", "1",
                 "--", "python3", "train.py", "--n-estimators", "10"))
    assert "xgboostjob.kubeflow.org/iris created" in out, out
    core = client.CoreV1Api(cluster.api_client())
    names = wait_job_pods(core, namespace, "iris", count=3)
    assert sorted(names) == ["iris-master-0", "iris-worker-0", "iris-worker-1"]
    ranks = {}
    for name, (c, env) in job_containers(core, namespace, "iris").items():
        # training-operator v1.9.3 pkg/controller.v1/xgboost/xgboost.go: the master is rank 0
        assert (env["MASTER_ADDR"], env["MASTER_PORT"], env["WORLD_SIZE"]) == ("iris-master-0", "9999", "3"), env
        assert env["WORKER_ADDRS"] == "iris-worker-0,iris-worker-1"
        ranks[name] = env["RANK"]
        assert (c.name, c.command, [(p.name, p.container_port) for p in c.ports]) == (
            "xgboost", ["sh", "-c", "python3 train.py --n-estimators 10"], [("xgboostjob-port", 9999)])
    assert ranks == {"iris-master-0": "0", "iris-worker-0": "1", "iris-worker-1": "2"}
    run_pods(kubelet, namespace, names, gpu_node, ("iris-master-0", "xgboost", "[9] train-mlogloss:0.12"))
    data = wait_status(ctx, "iris", "RUNNING")
    assert (data["trainer"], data["chiefName"]) == ("xgboostjob", "iris-master-0")
    assert sorted(i["name"] for i in data["instances"]) == sorted(names)
    assert ok(ctx("logs", "iris")) == "[9] train-mlogloss:0.12\n"  # the master's

    # the job succeeds when its master does; cleanPodPolicy Running (the chart's) then deletes the workers
    kubelet.finish_pod(namespace, "iris-master-0", 0)
    wait_status(ctx, "iris", "SUCCEEDED")
    wait_for(lambda: sorted(p.metadata.name for p in core.list_namespaced_pod(
        namespace, label_selector=f"{JOB_NAME}=iris").items) == ["iris-master-0"], "the workers deleted")
    delete_job(ctx, core, namespace, "iris", "xgboostjob")


def paddle_env(core, namespace: str, job: str) -> dict[str, dict]:
    """pod name -> the env of its container, which is the chart's paddle container with its port master."""
    out = {}
    for name, (c, env) in job_containers(core, namespace, job).items():
        assert (c.name, [(p.name, p.container_port) for p in c.ports]) == ("paddle", [("master", 36543)])
        out[name] = env
    return out


def test_a_collective_paddlejob_runs_its_workers_around_worker_0(ctx, cluster, kubelet, gpu_node, namespace):
    out = ok(ctx("submit", "paddle", "--name", "ernie", "--image", "paddle:2.6", "--workers", "3", "--gpus", "1",
                 "--", "python3", "-m", "paddle.distributed.launch", "train.py"))
    assert "paddlejob.kubeflow.org/ernie created" in out, out
    core = client.CoreV1Api(cluster.api_client())
    names = wait_job_pods(core, namespace, "ernie", count=3)
    assert sorted(names) == ["ernie-worker-0", "ernie-worker-1", "ernie-worker-2"]
    env = paddle_env(core, namespace, "ernie")
    # training-operator v1.9.3 pkg/controller.v1/paddlepaddle/envvar.go: no Master, so collective mode with
    # worker 0 the rendezvous (its own address through the downward API)
    assert env["ernie-worker-0"]["PADDLE_MASTER"] == "$(POD_IP_DUMMY):36543"
    assert env["ernie-worker-1"]["PADDLE_MASTER"] == env["ernie-worker-2"]["PADDLE_MASTER"] == "ernie-worker-0:36543"
    assert {(e["PADDLE_NNODES"], e["PADDLE_JOB_ID"]) for e in env.values()} == {("3", "ernie")}
    assert not any("PADDLE_SERVER_NUM" in e or "PADDLE_TRAINER_NUM" in e for e in env.values())
    run_pods(kubelet, namespace, names, gpu_node, ("ernie-worker-0", "paddle", "[Epoch 1] loss 0.42"))
    data = wait_status(ctx, "ernie", "RUNNING")
    assert (data["trainer"], data["requestGPUs"], data["allocatedGPUs"], data["chiefName"]) == (
        "paddlejob", 3, 3, "ernie-worker-0")
    assert ok(ctx("logs", "ernie")) == "[Epoch 1] loss 0.42\n"
    # the job succeeds when every worker has: two done is still RUNNING
    for name in ("ernie-worker-0", "ernie-worker-1"):
        kubelet.finish_pod(namespace, name, 0)
    wait_for(lambda: sum(i["status"] == "Succeeded" for i in view(ctx, "ernie")["instances"]) == 2,
             "two workers succeeded")
    assert view(ctx, "ernie")["status"] == "RUNNING"
    kubelet.finish_pod(namespace, "ernie-worker-2", 0)
    wait_status(ctx, "ernie", "SUCCEEDED")
    delete_job(ctx, core, namespace, "ernie", "paddlejob")


def test_a_paddlejob_with_servers_runs_in_parameter_server_mode(ctx, cluster, kubelet, gpu_node, namespace):
    ok(ctx("submit", "paddlejob", "--name", "ctr", "--image", "paddle:2.6", "--workers", "2", "--servers", "2",
           "--cpu", "1", "--", "python3", "-m", "paddle.distributed.launch", "train.py"))
    core = client.CoreV1Api(cluster.api_client())
    names = wait_job_pods(core, namespace, "ctr", count=4)
    assert sorted(names) == ["ctr-master-0", "ctr-master-1", "ctr-worker-0", "ctr-worker-1"]
    env = paddle_env(core, namespace, "ctr")
    # envvar.go: with a Master, master 0 is the rendezvous; each master one server, each worker one trainer
    assert env["ctr-master-0"]["PADDLE_MASTER"] == "$(POD_IP_DUMMY):36543"
    assert {env[n]["PADDLE_MASTER"] for n in ("ctr-master-1", "ctr-worker-0", "ctr-worker-1")} == {"ctr-master-0:36543"}
    assert {n: (e.get("PADDLE_SERVER_NUM"), e.get("PADDLE_TRAINER_NUM"), e["PADDLE_NNODES"]) for n, e in env.items()} == {
        "ctr-master-0": ("1", None, "4"), "ctr-master-1": ("1", None, "4"),
        "ctr-worker-0": (None, "1", "4"), "ctr-worker-1": (None, "1", "4")}
    run_pods(kubelet, namespace, names, gpu_node, ("ctr-worker-0", "paddle", "trainer 0: batch 100"))
    data = wait_status(ctx, "ctr", "RUNNING")
    assert data["chiefName"] == "ctr-worker-0"  # a trainer's logs, not a server's
    assert ok(ctx("logs", "ctr")) == "trainer 0: batch 100\n"
    # the operator's rule for a job with a Master: it succeeds when every master has
    for name in ("ctr-master-0", "ctr-master-1"):
        kubelet.finish_pod(namespace, name, 0)
    wait_status(ctx, "ctr", "SUCCEEDED")
    delete_job(ctx, core, namespace, "ctr", "paddlejob")


@pytest.mark.parametrize(("kind", "container", "pods", "failing"), [
    ("pytorch", "pytorch", ["fail-master-0", "fail-worker-0", "fail-worker-1"], "fail-worker-1"),
    ("xgboost", "xgboost", ["fail-master-0", "fail-worker-0", "fail-worker-1"], "fail-master-0"),
    ("jax", "jax", ["fail-worker-0", "fail-worker-1", "fail-worker-2"], "fail-worker-2"),
    ("paddle", "paddle", ["fail-worker-0", "fail-worker-1", "fail-worker-2"], "fail-worker-0"),
])
def test_a_failed_job_keeps_its_failed_pod_and_get_says_why(ctx, cluster, kubelet, gpu_node, namespace, kind,
                                                            container, pods, failing):
    """--retry 0 (the default): every replica restartPolicy Never and no backoffLimit, so training-operator fails
    the job from its first failed pod and keeps that pod (clean-pod policy Running: the running ones go), where
    backoffLimit 0 had it delete every pod first. get names the pod, the reason and exit code, and the log's
    last lines; list -o wide the same line."""
    core = client.CoreV1Api(cluster.api_client())
    ok(ctx("submit", kind, "--name", "fail", "--image", f"{kind}:1", "--workers", "3", "--", "python", "t.py"))
    run_pods(kubelet, namespace, wait_job_pods(core, namespace, "fail", pods), gpu_node,
             (failing, container, "step 1\nstep 2\nTraceback: CUDA error: out of memory"))
    kubelet.finish_pod(namespace, failing, 3)
    wait_status(ctx, "fail", "FAILED")
    # the running pods deleted by the clean-pod policy, the failed one kept
    wait_for(lambda: [p.metadata.name for p in core.list_namespaced_pod(
        namespace, label_selector=f"{JOB_NAME}=fail").items] == [failing] or None, f"only {failing} left", 60)
    line = f"pod {failing} container {container}: Error (exit code 3)"
    out = ok(ctx("get", "fail", "--tail", "2")).splitlines()
    assert f"Failure:     {line}" in out
    assert out[out.index(f"Log of pod {failing} container {container} (its last lines):") + 1:][:2] == [
        "  step 2", "  Traceback: CUDA error: out of memory"]
    assert view(ctx, "fail")["failure"]["exitCode"] == 3
    wide = ok(ctx("list", "-o", "wide")).splitlines()
    assert (wide[0].split()[-1], wide[1].split()[:2], wide[1].endswith(line)) == ("FAILURE", ["fail", "FAILED"], True)
