"""arena_helm.insight.doctor with a fake adapter: which checks run, their verdicts, and the exit rule (no binaries)."""

from __future__ import annotations

import datetime as dt

from arena_helm.core.errors import ForbiddenError, UnreachableError
from arena_helm.core.jobkinds import BY_KEY
from arena_helm.insight import doctor

NOW = dt.datetime(2026, 12, 2, 12, 0, 0, tzinfo=dt.UTC)


class FakeHelm:
    binary = "/bin/helm"

    def version(self):
        return "v3.17.3"


class FakeKube:
    server = "https://k8s.example:6443"

    def __init__(self, *, unreachable=False, leases=None, nodes=None, forbidden=()):
        self.unreachable, self.leases, self.nodes, self.forbidden = unreachable, leases, nodes, set(forbidden)

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
    allowed = doctor._check_permissions(report, FakeKube(forbidden={"pods"}), "team-a", {"tfjob"})
    assert allowed[("tfjobs", "create")] is True and allowed[("pods", "list")] is False
    by = {c.check: c for c in report.checks}
    assert "RBAC: tfjobs (kubeflow.org)" in by and "RBAC: trainjobs (trainer.kubeflow.org)" not in by  # only the chosen kinds
    pods = by["RBAC: pods, events, persistentvolumeclaims"]
    assert (pods.status, pods.needed) == ("MISSING", True)
    assert pods.detail == ("may not get pods, list pods, watch pods in team-a (pods, events and PVCs (list, get, "
                           "data list)): ask for the Role of docs/rbac/arena-helm-user.yaml")
    metrics = by["RBAC: pods (metrics.k8s.io)"]  # metrics.k8s.io pods: optional
    assert (metrics.status, metrics.needed) == ("MISSING", False)
