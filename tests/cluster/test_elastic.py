"""Elastic PyTorch (submit pytorchjob --min-workers/--max-workers/--max-restarts; scaleout/scalein) through the CLI
against the real API server and the real training-operator v1.9.3 with kwok's nodes, with both helm versions: the
operator's elasticPolicy (its PET_* env in the Worker pods: torchrun's c10d rendezvous on worker 0, the bounds,
the restarts), the worker count in get, scaleout/scalein as helm upgrades of the release (the operator creates and
deletes the Worker pods), and the refusals (past the bounds, a job that is not elastic)."""

from __future__ import annotations

import json

import pytest
from clictx import cli
from edgetools import one_error
from helmtools import release_values
from kubernetes import client
from waits import wait_for, wait_job_pods

pytestmark = pytest.mark.cluster
# training-operator v1.9.3 pkg/controller.v1/pytorch/elastic.go: the env it gives every pod of an elastic job
PET = ("PET_RDZV_ENDPOINT", "PET_RDZV_BACKEND", "PET_NNODES", "PET_MAX_RESTARTS")


@pytest.fixture
def ctx(helm_bin, cluster, namespace):
    return cli(helm_bin, cluster, namespace)


@pytest.fixture
def node(kubelet, namespace):
    name = f"node-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=4)
    yield name
    kubelet.remove_node(name)


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


def fails(res, code: int, line: str):
    one_error(res, code, f"error: {line}")


def elastic(ctx, name: str, want: dict) -> dict:
    """Until ``arena-helm get NAME -o json`` shows the worker count ``want``."""
    seen = []

    def got():
        data = json.loads(ok(ctx("get", name, "-o", "json")))
        seen.append(data.get("elastic"))
        return data if data.get("elastic") == want else None

    try:
        return wait_for(got, f"arena-helm get {name}: elastic {want}")
    except AssertionError as e:
        raise AssertionError(f"{e}; seen {seen[-3:]}") from None


def test_an_elastic_pytorchjob_runs_on_the_operators_rendezvous_and_scales_within_its_bounds(
        ctx, helm_bin, cluster, namespace, controllers, kubelet, node):
    controllers.require("training-operator")
    ns, core = namespace, client.CoreV1Api(cluster.api_client())
    ok(ctx("submit", "pytorch", "--name", "el", "--image", "img:1", "--gpus", "1", "--min-workers", "1",
           "--max-workers", "3", "--max-restarts", "2", "--", "torchrun", "train.py"))
    assert wait_job_pods(core, ns, "el", ["el-worker-0"]) == ["el-worker-0"]  # no master
    pod = core.read_namespaced_pod("el-worker-0", ns)
    env = {e.name: e.value for e in pod.spec.containers[0].env}
    assert {k: env.get(k) for k in PET} == {"PET_RDZV_ENDPOINT": "el-worker-0:23456", "PET_RDZV_BACKEND": "c10d",
                                            "PET_NNODES": "1:3", "PET_MAX_RESTARTS": "2"}
    kubelet.run_pod(ns, "el-worker-0", node)
    elastic(ctx, "el", {"minWorkers": 1, "maxWorkers": 3, "workers": 1, "activeWorkers": 1})

    assert ok(ctx("scaleout", "el", "--count", "2")) == ("pytorchjob/el scaled from 1 to 3 workers (release el "
                                                         f"revision 2, namespace {ns})\n")
    pods = ["el-worker-0", "el-worker-1", "el-worker-2"]
    assert wait_job_pods(core, ns, "el", pods) == pods
    for pod_name in pods[1:]:
        kubelet.run_pod(ns, pod_name, node)
    data = elastic(ctx, "el", {"minWorkers": 1, "maxWorkers": 3, "workers": 3, "activeWorkers": 3})
    assert (data["status"], data["release"]["revision"], data["requestGPUs"]) == ("RUNNING", 2, 3)
    before, after = (release_values(helm_bin, cluster, ns, "el", revision) for revision in (1, 2))
    assert after["worker"].pop("replicas") == 3 and before["worker"].pop("replicas") == 1
    assert after == before  # every other value kept (--reuse-values)
    assert "Workers:     3 (3 active), elastic 1 to 3\n" in ok(ctx("get", "el"))
    fails(ctx("scaleout", "el"), 2, "--count 1: pytorchjob/el already has 3 workers, its maximum")

    assert ok(ctx("scalein", "el", "--count", "2")) == ("pytorchjob/el scaled from 3 to 1 workers (release el "
                                                        f"revision 3, namespace {ns})\n")
    assert wait_job_pods(core, ns, "el", ["el-worker-0"]) == ["el-worker-0"]  # the operator deletes the others
    elastic(ctx, "el", {"minWorkers": 1, "maxWorkers": 3, "workers": 1, "activeWorkers": 1})
    fails(ctx("scalein", "el", "--count", "1"), 2, "--count 1: pytorchjob/el already has 1 worker, its minimum")
    fails(ctx("scaleout", "el", "--count", "5"), 2,
          "--count 5: pytorchjob/el has 1 worker and keeps at most 3: scaleout by 2 or fewer")


def test_a_job_that_is_not_elastic_is_not_scaled(ctx, cluster, namespace, controllers):
    controllers.require("training-operator")
    ok(ctx("submit", "pytorch", "--name", "fixed", "--image", "img:1", "--workers", "2", "--", "python", "t.py"))
    wait_job_pods(client.CoreV1Api(cluster.api_client()), namespace, "fixed", ["fixed-master-0", "fixed-worker-0"])
    fails(ctx("scaleout", "fixed"), 1, "pytorchjob/fixed is not elastic (its spec has no elasticPolicy): submit it "
          "with --min-workers/--max-workers to make it elastic")
    fails(ctx("scalein", "nosuch", "-T", "pytorchjob"), 1,
          f"no PyTorchJob named nosuch in namespace {namespace} (see arena-helm list)")
