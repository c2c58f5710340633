"""``arena-helm doctor`` against the test cluster: the real API server, the real operators' webhooks and
mpi-operator's Lease, kwok GPU nodes, Debian's Prometheus with DCGM's series, Kueue; as the admin (everything
OK, exit 0) and as the namespace-limited user who holds exactly the documented Role (what needs the ClusterRole
is MISSING or SKIP, and optional: exit 0)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from promsim import Gpu
from readme import table_columns, text_block_after
from typer.testing import CliRunner

from arena_helm.adapters.metrics import GPU_QUERY
from arena_helm.cli import app
from arena_helm.core.jobkinds import KINDS
from arena_helm.core.servekinds import SERVE_KINDS

pytestmark = pytest.mark.cluster
runner = CliRunner()

NAMESPACED_RBAC = ["RBAC: secrets, configmaps", "RBAC: services", "RBAC: deployments (apps)", "RBAC: jobs (batch)",
                   "RBAC: persistentvolumeclaims",
                   "RBAC: tfjobs, pytorchjobs, mpijobs, jaxjobs, xgboostjobs, paddlejobs (kubeflow.org)",
                   "RBAC: trainjobs (trainer.kubeflow.org)", "RBAC: inferenceservices (serving.kserve.io)",
                   "RBAC: leaderworkersets (leaderworkerset.x-k8s.io)", "RBAC: httproutes (gateway.networking.k8s.io)",
                   "RBAC: virtualservices, destinationrules (networking.istio.io)",
                   "RBAC: trainingruntimes (trainer.kubeflow.org)", "RBAC: pods, events, persistentvolumeclaims", "RBAC: pods/log",
                   "RBAC: pods/exec", "RBAC: workloads, localqueues (kueue.x-k8s.io)",
                   "RBAC: localqueues/pendingworkloads (visibility.kueue.x-k8s.io)", "RBAC: pods (metrics.k8s.io)"]
CLUSTER_RBAC = ["RBAC: nodes", "RBAC: pods", "RBAC: namespaces", "RBAC: clusterqueues (kueue.x-k8s.io)",
                "RBAC: nodes (metrics.k8s.io)", "RBAC: priorityclasses (scheduling.k8s.io)",
                "RBAC: clustertrainingruntimes (trainer.kubeflow.org)", "RBAC: leases (coordination.k8s.io)",
                "RBAC: validatingwebhookconfigurations (admissionregistration.k8s.io)"]
KIND_CHECKS = [k.kind for k in KINDS]
API_CHECKS = ["InferenceService", "LeaderWorkerSet", "HTTPRoute or VirtualService"]
ALL_CHECKS = ["helm", "API server", *NAMESPACED_RBAC, *CLUSTER_RBAC, *KIND_CHECKS, "JobSet", "mpi-operator running",
              *API_CHECKS, "GPUs on nodes", "Prometheus", "CPU/memory metrics", "Kueue"]
KSERVE_OK = ("serving.kserve.io/v1beta1 (InferenceService) served; a dry-run create of a serving passed through the "
             "operator's webhook inferenceservice.kserve-webhook-server.validator")
LWS_OK = ("leaderworkerset.x-k8s.io/v1 (LeaderWorkerSet) served; a dry-run create of a serving passed through the "
          "operator's webhook vleaderworkerset.kb.io")
ROUTES_OK = ("gateway.networking.k8s.io/v1 (HTTPRoute) and networking.istio.io/v1 (VirtualService) served: serve "
             "traffic-split makes HTTPRoutes (whether a mesh applies them cannot be told from here)")


def doctor(helm_bin, cluster, namespace, *args, user="admin"):
    return runner.invoke(app, ["doctor", "--kubeconfig", str(cluster.users[user].kubeconfig), "--helm-binary",
                               str(helm_bin), "-n", namespace, *args],
                         env={"PROMETHEUS_ADDRESS": None, "ARENA_HELM_CONFIG": None})


def test_doctor_finds_everything_on_the_test_cluster(helm_bin, cluster, controllers, kubelet, namespace, prometheus):
    for name in ("training-operator", "mpi-operator", "jobset", "trainer", "kueue", "kserve", "lws"):
        controllers.require(name)
    node = f"doc-{namespace}"
    kubelet.add_node(node, pool=namespace, gpus=4)
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.create_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", namespace, "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "team-queue"},
        "spec": {"clusterQueue": "doctor-cq"}})
    try:
        prometheus.sim.set_gpu(Gpu(node, 0, 40, 1024, 15360))
        prometheus.wait_for(GPU_QUERY, {("DCGM_FI_DEV_GPU_UTIL", node): 40},
                            lambda m: (m["__name__"], m.get("Hostname")))
        res = doctor(helm_bin, cluster, namespace, "--prometheus-url", prometheus.url, "-o", "json")
        assert res.exit_code == 0, res.output
        report = json.loads(res.stdout)
        assert (report["namespace"], report["ready"], report["server"]) == (namespace, True, cluster.server)
        checks = report["checks"]
        assert [c["check"] for c in checks] == ALL_CHECKS
        assert {c["check"]: c["status"] for c in checks if c["status"] != "OK"} == {}, checks
        by = {c["check"]: c["detail"] for c in checks}
        assert by["API server"] == f"Kubernetes v1.37.2 at {cluster.server}"
        assert by["TFJob"] == ("kubeflow.org/v1 served; a dry-run create of a job passed through the operator's "
                               "webhook validator.tfjob.training-operator.kubeflow.org")
        assert by["TrainJob"].endswith("through the operator's webhook validator.trainjob.trainer.kubeflow.org")
        assert by["MPIJob"].startswith("kubeflow.org/v2beta1 (mpi-operator) served; a dry-run create of a job passed")
        assert by["mpi-operator running"].startswith("Lease ") and "/mpi-operator renewed " in by["mpi-operator running"]
        assert by["Kueue"] == f"LocalQueues in {namespace}: team-queue (ClusterQueue doctor-cq)"
        assert by["Prometheus"].startswith(f"{prometheus.url}: ") and by["Prometheus"].endswith(
            " GPUs report DCGM's series")
        assert "offer GPUs" in by["GPUs on nodes"]
        assert [by[c] for c in API_CHECKS] == [KSERVE_OK, LWS_OK, ROUTES_OK]
        assert {c["check"]: c["needed"] for c in checks if c["check"] in API_CHECKS} == dict.fromkeys(API_CHECKS, False)
        # nothing was written: the dry runs left no job and no serving behind
        apis = [(k.group, {"mpijob": "v2beta1"}.get(k.key, k.versions[0]), k.plural, k.kind) for k in KINDS]
        for group, version, plural, kind in apis + [(*a.resource, a.kind) for k in SERVE_KINDS for a in k.apis]:
            items = custom.list_namespaced_custom_object(group, version, namespace, plural)["items"]
            assert items == [], (kind, items)
        table = doctor(helm_bin, cluster, namespace, "--prometheus-url", prometheus.url)
        assert table.exit_code == 0, table.output
        print(table.stdout)  # the README shows it (pytest -s)
        lines = table.stdout.splitlines()
        assert lines[0].split() == ["CHECK", "STATUS", "DETAIL"] and len(lines) == len(ALL_CHECKS) + 3
        assert lines[-1] == f"ready: everything arena-helm needs is there (context admin, namespace {namespace})"
        sample = text_block_after("Against the test cluster (`tests/cluster/test_doctor.py`")  # the README's
        assert table_columns(sample, 2)[:-1] == table_columns(lines, 2)[:-1]
    finally:
        kubelet.remove_node(node)


def test_doctor_t_names_servings_and_traffic_splits_whose_checks_are_then_needed(helm_bin, cluster, controllers,
                                                                                kubelet, namespace):
    controllers.require("kserve", "lws")
    kubelet.add_node(f"doc-{namespace}", pool=namespace, gpus=2)
    try:
        res = doctor(helm_bin, cluster, namespace, "-T", "kserve", "-T", "distributed", "-T", "traffic-split", "-o",
                     "json")
    finally:
        kubelet.remove_node(f"doc-{namespace}")
    assert res.exit_code == 0, res.output
    checks = json.loads(res.stdout)["checks"]
    rbac = [c["check"] for c in checks if c["check"].startswith("RBAC: ")]
    assert [c["check"] for c in checks] == ["helm", "API server", *rbac, *API_CHECKS, "GPUs on nodes", "Prometheus",
                                            "CPU/memory metrics", "Kueue"]
    assert not any("kubeflow.org" in name for name in rbac)  # no job kind was named
    by = {c["check"]: c for c in checks}
    assert [(by[c]["status"], by[c]["needed"], by[c]["detail"]) for c in API_CHECKS] == [
        ("OK", True, KSERVE_OK), ("OK", True, LWS_OK), ("OK", True, ROUTES_OK)]
    for name in ("RBAC: inferenceservices (serving.kserve.io)", "RBAC: leaderworkersets (leaderworkerset.x-k8s.io)"):
        assert (by[name]["status"], by[name]["needed"]) == ("OK", True)


def test_doctor_as_the_documented_role_says_what_the_cluster_role_would_add(helm_bin, cluster, controllers):
    from kubecluster import LIMITED_NAMESPACE, LIMITED_USER

    controllers.require("training-operator")
    res = doctor(helm_bin, cluster, LIMITED_NAMESPACE, "-T", "tf", "-T", "mpi", "-o", "json", user=LIMITED_USER)
    assert res.exit_code == 0, res.output  # nothing needed is missing: the Role is enough for every command
    checks = {c["check"]: c for c in json.loads(res.stdout)["checks"]}
    for name in ("RBAC: secrets, configmaps", "RBAC: tfjobs, mpijobs (kubeflow.org)", "RBAC: pods/exec", "RBAC: pods/log"):
        assert (checks[name]["status"], checks[name]["needed"]) == ("OK", True), checks[name]
    priority = checks["RBAC: priorityclasses (scheduling.k8s.io)"]
    assert (priority["status"], priority["needed"]) == ("MISSING", False)
    assert priority["detail"] == (
        "may not get priorityclasses, list priorityclasses cluster-wide (submit --priority checks its PriorityClass) "
        "(only these commands need it): ask for the ClusterRole of docs/rbac/arena-helm-user.yaml")
    # what the Role cannot see is SKIP, with the reason; the dry run itself passed
    assert checks["TFJob"]["status"] == "SKIP"
    assert checks["TFJob"]["detail"].startswith(
        "kubeflow.org/v1 served; a dry-run create of a job passed; whether its operator runs needs its webhook "
        "validator.tfjob.training-operator.kubeflow.org, and ")
    assert checks["mpi-operator running"]["status"] == "SKIP"
    assert checks["GPUs on nodes"] == {"check": "GPUs on nodes", "status": "SKIP", "needed": True, "detail":
                                       "cannot list nodes: ask for the ClusterRole of docs/rbac/arena-helm-user.yaml"}
