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
