"""arena_helm.insight.doctor with a fake adapter: which checks run, their verdicts, and the exit rule (no binaries)."""

from __future__ import annotations

import datetime as dt

import pytest

from arena_helm.core.errors import ForbiddenError, UnreachableError, UsageError
from arena_helm.core.jobkinds import BY_KEY
from arena_helm.insight import doctor

NOW = dt.datetime(2026, 12, 2, 12, 0, 0, tzinfo=dt.UTC)


class FakeHelm:
    binary = "/bin/helm"

    def version(self):
        return "v3.17.3"


class FakeKube:
    server = "https://k8s.example:6443"

    def __init__(self, *, unreachable=False, leases=None, nodes=None, forbidden=(), refuse=None):
        self.unreachable, self.leases, self.nodes, self.forbidden = unreachable, leases, nodes, set(forbidden)
        self.refuse, self.created = refuse, []

    def dry_run_create(self, doc, namespace, plural):
        if self.refuse:
            raise ForbiddenError(self.refuse)
        self.created.append((doc, namespace, plural))

    def connect(self):
        if self.unreachable:
            raise UnreachableError("cannot reach the API server at https://k8s.example:6443: connection refused")

    def server_version(self):
        return {"gitVersion": "v1.19.3", "major": "1", "minor": "19+"}

    def access_allowed(self, namespace, verb, group, resource, subresource=""):
        return (resource not in self.forbidden, "")

    def list_leases(self, name):
        if "leases" in self.forbidden:
            raise ForbiddenError("leases is forbidden")
        return self.leases or []

    def list_nodes(self):
        return self.nodes or []


def test_an_unreachable_api_server_skips_the_cluster_checks_and_is_not_ready():
    report = doctor.run(FakeKube(unreachable=True), FakeHelm, "team-a", ["tfjob"])
    assert [(c.check, c.status) for c in report.checks] == [
        ("helm", "OK"), ("API server", "MISSING"), ("permissions", "SKIP"), ("TFJob", "SKIP"), ("GPUs", "SKIP"),
        ("Prometheus", "SKIP"), ("Kueue", "SKIP")]
    assert not report.ready
    assert doctor.table(report).splitlines()[-1] == "not ready: 1 needed check MISSING (API server)"


def test_a_server_older_than_the_charts_is_missing():
    report = doctor.Report("team-a")
    assert doctor._check_api(report, FakeKube())
    assert report.checks[0].to_json() == {
        "check": "API server", "status": "MISSING", "needed": True,
        "detail": "Kubernetes v1.19.3 at https://k8s.example:6443: the charts need 1.20 or newer"}


def test_only_needed_checks_decide_readiness():
    report = doctor.Report("team-a")
    report.add("Kueue", doctor.MISSING, "not served", needed=False)
    report.add("TFJob", doctor.SKIP, "cannot tell")
    assert report.ready
    assert "MISSING (optional)" in doctor.table(report)
    report.add("TFJob", doctor.MISSING, "not served")
    assert not report.ready


def lease(renewed_seconds_ago: float, duration: int = 15) -> dict:
    renewed = (NOW - dt.timedelta(seconds=renewed_seconds_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"metadata": {"namespace": "mpi-operator", "name": "mpi-operator"},
            "spec": {"holderIdentity": "mpi-operator-7d9", "renewTime": renewed, "leaseDurationSeconds": duration}}


MPIJOB = BY_KEY["mpijob"]


def test_mpi_operator_runs_when_its_lease_is_fresh():
    for leases, status, detail in (
        ([lease(3)], "OK", "Lease mpi-operator/mpi-operator renewed 3s ago"),
        ([lease(31)], "MISSING", "Lease mpi-operator/mpi-operator last renewed 31s ago: mpi-operator is not running "
                                 "(MPIJobs would never start): start it"),
        ([], "MISSING", "no Lease mpi-operator: mpi-operator is not running (it always holds one): install the "
                        "Kubeflow mpi-operator"),
    ):
        report = doctor.Report("team-a")
        doctor._check_lease(report, FakeKube(leases=leases), NOW, MPIJOB, MPIJOB.controller("v2beta1"))
        assert (report.checks[0].status, report.checks[0].detail) == (status, detail)
    report = doctor.Report("team-a")
    doctor._check_lease(report, FakeKube(forbidden={"leases"}), NOW, MPIJOB, MPIJOB.controller("v2beta1"))
    assert report.checks[0].status == "SKIP"


def test_gpus_are_counted_per_resource_over_the_nodes():
    nodes = [{"status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "64"}}},
             {"status": {"allocatable": {"amd.com/gpu": "2"}}}, {"status": {"allocatable": {"cpu": "8"}}}]
    report = doctor.Report("team-a")
    doctor._check_gpus(report, FakeKube(nodes=nodes))
    assert report.checks[0].detail == "2 of 3 nodes offer GPUs (2 amd.com/gpu, 8 nvidia.com/gpu allocatable)"


def test_permissions_name_what_is_denied_and_the_fix():
    report = doctor.Report("team-a")
    allowed = doctor._check_permissions(report, FakeKube(forbidden={"pods"}), "team-a", {"tfjob"}, set())
    assert allowed[("tfjobs", "create")] is True and allowed[("pods", "list")] is False
    by = {c.check: c for c in report.checks}
    assert "RBAC: tfjobs (kubeflow.org)" in by and "RBAC: trainjobs (trainer.kubeflow.org)" not in by  # only the chosen kinds
    pods = by["RBAC: pods, events, persistentvolumeclaims"]
    assert (pods.status, pods.needed) == ("MISSING", True)
    assert pods.detail == ("may not get pods, list pods, watch pods in team-a (pods, events and PVCs (list, get, "
                           "data list)): ask for the Role of docs/rbac/arena-helm-user.yaml")
    metrics = by["RBAC: pods (metrics.k8s.io)"]  # metrics.k8s.io pods: optional
    assert (metrics.status, metrics.needed) == ("MISSING", False)
    assert not any("inferenceservices" in name for name in by)  # a serving kind's only when it is chosen


def test_a_serving_kind_s_permission_is_needed_when_t_names_it():
    for named, needed in ((set(), False), ({"kserve"}, True)):
        report = doctor.Report("team-a")
        doctor._check_permissions(report, FakeKube(forbidden={"inferenceservices"}), "team-a", {"kserve"}, named)
        (isvc,) = [c for c in report.checks if c.check == "RBAC: inferenceservices (serving.kserve.io)"]
        assert (isvc.status, isvc.needed) == ("MISSING", needed)
        assert not any("tfjobs" in c.check for c in report.checks)


def test_t_takes_job_kinds_their_aliases_and_the_kinds_of_other_families_that_need_an_api():
    assert doctor.chosen_kinds(["TF", "kserve", "tfjob", "traffic-split", "distributed"]) == [
        "tfjob", "kserve", "traffic-split", "distributed"]
    with pytest.raises(UsageError) as err:
        doctor.chosen_kinds(["custom"])
    assert str(err.value) == (
        "-T/--type 'custom': use tfjob, pytorchjob, mpijob, jaxjob, xgboostjob, paddlejob, trainjob (or tf, pytorch, py, "
        "mpi, mj, jax, xgboost, xgb, paddle, tj), or kserve, distributed, traffic-split")


KSERVE_WEBHOOK = "inferenceservice.kserve-webhook-server.validator"


def check_apis(key, groups, *, webhooks=None, needed=True, kube=None, monkeypatch=None):
    if monkeypatch is not None:  # the probe a serving's chart renders (the cluster tier renders it with helm)
        monkeypatch.setattr(doctor, "doctor_serving", lambda helm, kind, api, ns: {"kind": api.kind, "ns": ns})
    report = doctor.Report("team-a")
    doctor._check_apis(report, kube or FakeKube(), FakeHelm(), doctor.API_KINDS[key], groups, "team-a", {},
                       {} if webhooks is None else webhooks, needed)
    (check,) = report.checks
    return check.to_json()


def test_a_kind_whose_api_is_not_served_is_missing_with_what_to_install():
    assert check_apis("kserve", {"kubeflow.org": ["v1"]}) == {
        "check": "InferenceService", "status": "MISSING", "needed": True,
        "detail": "the cluster does not serve InferenceService (serving.kserve.io/v1beta1) (serve kserve needs it): "
                  "install KServe (RawDeployment/Standard mode, or Knative)"}
    assert check_apis("traffic-split", {"gateway.networking.k8s.io": ["v1beta1"]}, needed=False) == {
        "check": "HTTPRoute or VirtualService", "status": "MISSING", "needed": False,
        "detail": "the cluster serves neither HTTPRoute (gateway.networking.k8s.io/v1) nor VirtualService "
                  "(networking.istio.io/v1) (serve traffic-split needs one): install the Gateway API's CRDs and a "
                  "GAMMA mesh that applies HTTPRoutes or Istio"}


def test_a_traffic_split_router_served_is_all_doctor_can_tell():
    assert check_apis("traffic-split", {"networking.istio.io": ["v1", "v1beta1"]})["detail"] == (
        "networking.istio.io/v1 (VirtualService) served: serve traffic-split makes VirtualServices (whether a mesh "
        "applies them cannot be told from here)")
    both = {"networking.istio.io": ["v1"], "gateway.networking.k8s.io": ["v1"]}
    assert check_apis("traffic-split", both)["detail"] == (
        "gateway.networking.k8s.io/v1 (HTTPRoute) and networking.istio.io/v1 (VirtualService) served: serve "
        "traffic-split makes HTTPRoutes (whether a mesh applies them cannot be told from here)")


def test_a_serving_kind_passes_a_dry_run_through_its_controller_s_webhook(monkeypatch):
    served = {"serving.kserve.io": ["v1beta1", "v1alpha1"]}
    kube = FakeKube()
    ok = check_apis("kserve", served, webhooks={KSERVE_WEBHOOK: {"failurePolicy": "Fail"}}, kube=kube,
                    monkeypatch=monkeypatch)
    assert (ok["status"], ok["detail"]) == ("OK", "serving.kserve.io/v1beta1 (InferenceService) served; a dry-run "
                                            f"create of a serving passed through the operator's webhook {KSERVE_WEBHOOK}")
    assert kube.created == [({"kind": "InferenceService", "ns": "team-a"}, "team-a", "inferenceservices")]
    gone = check_apis("kserve", served, webhooks={}, monkeypatch=monkeypatch)
    assert (gone["status"], gone["detail"]) == (
        "MISSING", "serving.kserve.io/v1beta1 (InferenceService) served; a dry-run create of a serving passed, but the "
        f"operator's webhook {KSERVE_WEBHOOK} is not registered: the CRD is there, not its operator: install KServe "
        "(RawDeployment/Standard mode, or Knative)")
    refused = check_apis("distributed", {"leaderworkerset.x-k8s.io": ["v1"]}, kube=FakeKube(refuse="denied: no"),
                         monkeypatch=monkeypatch)
    assert (refused["check"], refused["status"], refused["detail"]) == (
        "LeaderWorkerSet", "MISSING", "leaderworkerset.x-k8s.io/v1 (LeaderWorkerSet) served, but a dry-run create of a "
        "serving failed: denied: no")
