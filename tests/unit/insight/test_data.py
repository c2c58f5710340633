"""arena_helm.insight.data: the claims a job mounts, and the view of a claim in ``data list``."""

from __future__ import annotations

import datetime as dt

from arena_helm.insight.data import claim_view, claims_of_job

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
JOB = {"kind": "TFJob", "metadata": {"name": "j", "namespace": "n"},
       "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
           "containers": [{"name": "tensorflow"}],
           "volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "data"}}, {"name": "b", "emptyDir": {}}],
       }}}}}}


def test_claims_of_a_job_and_a_claim_view():
    assert claims_of_job(JOB) == {"data"}
    pvc = {"metadata": {"name": "data", "namespace": "n", "creationTimestamp": "2026-01-02T02:04:05Z",
                        "annotations": {"description": "d"}},
           "spec": {"accessModes": ["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"], "storageClassName": "s"},
           "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
    c = claim_view(pvc, ["tfjob/j"], NOW)
    assert (c.status, c.capacity, c.access_modes, c.storage_class, c.age, c.description, c.used_by) == (
        "Bound", "1Gi", ["RWO", "RWOP"], "s", "60m", "d", ["tfjob/j"])


class FakeKube:
    def __init__(self, jobs_forbidden=False):
        self.jobs_forbidden, self.asked = jobs_forbidden, []

    def list_path(self, path, action, **query):
        self.asked.append((path, query))
        if path.endswith("/persistentvolumeclaims"):
            return [_pvc("nb-home", {"app.kubernetes.io/name": "workspace", "app.kubernetes.io/instance": "nb"}),
                    _pvc("models", {}), _pvc("other-home", {"app.kubernetes.io/name": "tfjob",
                                                           "app.kubernetes.io/instance": "x"})]
        if path.endswith("/jobs"):
            if self.jobs_forbidden:
                from arena_helm.core.errors import ForbiddenError

                raise ForbiddenError("jobs is forbidden")
            return [{"metadata": {"namespace": "n", "name": "nb-1", "labels": {"app.kubernetes.io/instance": "nb"}},
                     "spec": {"template": {"spec": {"volumes": [
                         {"name": "home", "persistentVolumeClaim": {"claimName": "nb-home"}},
                         {"name": "d", "persistentVolumeClaim": {"claimName": "models"}}]}}}}]
        return [JOB]

    def served_job_versions(self):
        return {"TFJob": ["v1"]}


def _pvc(name, labels):
    return {"metadata": {"name": name, "namespace": "n", "labels": labels, "creationTimestamp": "2026-01-02T02:04:05Z"},
            "spec": {}, "status": {"phase": "Bound"}}


def test_a_workspace_uses_its_home_and_what_its_job_mounts():
    from arena_helm.insight.data import list_claims

    kube = FakeKube()
    assert [(c.name, c.used_by) for c in list_claims(kube, "n")] == [
        ("models", ["workspace/nb"]), ("nb-home", ["workspace/nb"]), ("other-home", [])]
    assert ("/apis/batch/v1/namespaces/n/jobs", {"labelSelector": "app.kubernetes.io/name=workspace"}) in kube.asked
    # a user who may not list Jobs: the homes still say whose they are
    assert [(c.name, c.used_by) for c in list_claims(FakeKube(jobs_forbidden=True), "n")] == [
        ("models", []), ("nb-home", ["workspace/nb"]), ("other-home", [])]
