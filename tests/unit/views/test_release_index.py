"""The release index (arena_helm/views/release_index.py) and the LIST cut-down (arena_helm/views/slim.py): pure functions."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import gzip
import json

import pytest

from arena_helm.views.jobs import job_view
from arena_helm.views.nodes import node_view
from arena_helm.views.release_index import (
    ReleaseMeta,
    decode_payload,
    from_list_item,
    helm_time,
    join,
    latest_record,
    latest_releases,
    needs_full_read,
    record_meta,
    release_item,
    sort_key,
    storage_resource,
)
from arena_helm.views.slim import slim_job, slim_pod


def record(name: str, version: int, status: str, ns: str = "team", created: str = "2026-01-02T03:04:05Z",
           rv: str = "100", **labels: str) -> dict:
    return {"name": f"sh.helm.release.v1.{name}.v{version}", "namespace": ns, "creationTimestamp": created,
            "resourceVersion": rv,
            "labels": {"name": name, "owner": "helm", "status": status, "version": str(version), "modifiedAt": "1",
                       **labels}}


def metas(*records: dict) -> list[ReleaseMeta]:
    return [m for m in (record_meta(r) for r in records) if m is not None]


# ---- storage records -> release metadata ---------------------------------------------------------------
def test_record_meta_reads_helms_labels_and_keeps_the_release_labels():
    meta = record_meta(record("train", 3, "deployed", rv="4711", **{"arena-helm-submit": "tok", "team": "a"}))
    assert meta == ReleaseMeta("train", "team", 3, "deployed", "2026-01-02T03:04:05Z", 4711,
                               {"arena-helm-submit": "tok", "team": "a"})
    assert meta.labels == {"arena-helm-submit": "tok", "team": "a"}  # helm's own labels are not release labels
    assert meta.item() == {"name": "train", "namespace": "team", "revision": "3",
                           "updated": "2026-01-02 03:04:05 +0000 UTC", "status": "deployed", "chart": ""}


@pytest.mark.parametrize("labels", [
    {"name": "x", "status": "deployed", "version": "1"},  # no owner=helm
    {"name": "x", "owner": "someone", "status": "deployed", "version": "1"},
    {"owner": "helm", "status": "deployed", "version": "1"},  # no name
    {"name": "x", "owner": "helm", "status": "deployed"},  # no version
])
def test_record_meta_refuses_what_is_not_a_helm_record(labels):
    assert record_meta({"name": "s", "namespace": "n", "labels": labels}) is None


def test_the_latest_revision_wins_then_the_state_filter_applies():
    index = latest_releases(metas(
        record("up", 1, "superseded"), record("up", 3, "deployed"), record("up", 2, "superseded"),
        record("bad", 1, "deployed"), record("bad", 2, "failed"),
        # latest revision uninstalled (--keep-history): not listed, although revision 1 was deployed
        record("gone", 1, "deployed"), record("gone", 2, "uninstalled"),
        record("old", 5, "superseded"),
        record("busy", 1, "pending-install"), record("up2", 1, "deployed"), record("up2", 2, "pending-upgrade"),
        record("bye", 1, "uninstalling"),
    ))
    assert {k: (r.revision, r.status) for k, r in index.items()} == {
        ("team", "up"): (3, "deployed"), ("team", "bad"): (2, "failed"), ("team", "busy"): (1, "pending-install"),
        ("team", "up2"): (2, "pending-upgrade"), ("team", "bye"): (1, "uninstalling"),
    }


def test_revisions_compare_as_numbers_and_namespaces_apart():
    index = latest_releases(metas(record("a", 9, "superseded"), record("a", 10, "deployed"),
                                  record("a", 1, "failed", ns="other")))
    assert {k: r.revision for k, r in index.items()} == {("team", "a"): 10, ("other", "a"): 1}


def test_latest_record_picks_the_highest_version_of_full_records():
    recs = [{"metadata": record("a", v, "superseded" if v < 12 else "deployed"), "data": {"release": str(v)}}
            for v in (2, 12, 9)]
    assert latest_record(recs)["data"]["release"] == "12"
    assert latest_record([]) is None


@pytest.mark.parametrize(("driver", "resource"), [(None, "secrets"), ("", "secrets"), ("secret", "secrets"),
                                                   ("Secrets", "secrets"), ("configmap", "configmaps"),
                                                   ("configmaps", "configmaps"), ("memory", None), ("sql", None)])
def test_storage_resource_follows_helm_driver(driver, resource):
    assert storage_resource(driver) == resource


def helm_release(name: str = "train", status: str = "deployed") -> dict:
    return {"name": name, "namespace": "team", "version": 2,
            "info": {"status": status, "last_deployed": "2026-01-02T03:04:05.123456789Z", "description": "Install complete"},
            "chart": {"metadata": {"name": "tfjob", "version": "0.1.0", "appVersion": "0.1.0"}},
            "config": {}, "manifest": "---"}


@pytest.mark.parametrize("gzipped", [True, False])
def test_decode_payload_of_secrets_and_configmaps(gzipped):
    raw = json.dumps(helm_release()).encode()
    helm_b64 = base64.b64encode(gzip.compress(raw) if gzipped else raw)  # helm's own encoding
    assert decode_payload(base64.b64encode(helm_b64).decode(), "secrets") == helm_release()  # Secret: wrapped
    assert decode_payload(helm_b64.decode(), "configmaps") == helm_release()


def test_release_item_is_a_helm_list_item():
    assert release_item(helm_release()) == {
        "name": "train", "namespace": "team", "revision": "2", "updated": "2026-01-02 03:04:05.123456789 +0000 UTC",
        "status": "deployed", "chart": "tfjob-0.1.0", "app_version": "0.1.0", "description": "Install complete"}


def test_helm_list_items_round_trip_for_drivers_outside_the_api():
    item = {"name": "a", "namespace": "n", "revision": "4", "updated": "2026-01-02 03:04:05.5 +0000 UTC",
            "status": "failed", "chart": "tfjob-0.1.0", "app_version": "0.1.0"}
    meta = from_list_item(item)
    assert (meta.name, meta.namespace, meta.revision, meta.status, meta.chart, meta.created) == (
        "a", "n", 4, "failed", "tfjob-0.1.0", "2026-01-02T03:04:05Z")
    assert helm_time(meta.created) == "2026-01-02 03:04:05 +0000 UTC"


# ---- joining releases and jobs ----------------------------------------------------------------------------
def job(name: str, ns: str = "team", release: str | None = None, chart: str = "tfjob-0.1.0", kind: str = "TFJob",
        created: str = "2026-01-02T03:04:06Z", rv: str = "200") -> dict:
    meta = {"name": name, "namespace": ns, "creationTimestamp": created, "resourceVersion": rv,
            "labels": {"helm.sh/chart": chart} if release else {}}
    if release:
        meta["annotations"] = {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns}
    return {"kind": kind, "apiVersion": "kubeflow.org/v1", "metadata": meta,
            "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "tensorflow", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}}}


def test_join_pairs_jobs_with_the_release_their_annotations_name():
    index = latest_releases(metas(record("a", 1, "deployed"), record("b", 1, "deployed", **{"arena-helm-submit": "t"}),
                                  record("web", 1, "deployed")))
    jobs = [job("a", release="a"), job("by-kubectl"), job("c", release="c")]
    joined = join(index, jobs)
    assert [(r.name if r else None, r.chart if r else None, j["metadata"]["name"]) for r, j in joined.pairs] == [
        ("a", "tfjob-0.1.0", "a"), (None, None, "by-kubectl"), (None, None, "c")]
    # a release no job names: job missing (b, arena-helm's: read in full to learn its chart) or not a job (web)
    assert sorted(r.name for r in joined.unjoined) == ["b", "web"]
    assert [needs_full_read(r) for r in sorted(joined.unjoined, key=lambda r: r.name)] == [True, False]
    # c names release c, which the index did not have (installed while it was read): to look up again
    assert joined.orphans == [("team", "c")]


def test_join_does_not_pair_a_job_with_a_release_of_its_name_that_did_not_make_it():
    index = latest_releases(metas(record("twin", 1, "deployed")))
    joined = join(index, [job("twin")])  # made with kubectl: no helm annotations
    assert joined.pairs[0][0] is None and [r.name for r in joined.unjoined] == ["twin"] and joined.orphans == []


def test_join_across_namespaces_and_kinds():
    index = latest_releases(metas(record("a", 1, "deployed", ns="n1"), record("a", 2, "failed", ns="n2")))
    jobs = [job("a", ns="n2", release="a", chart="pytorchjob-0.2.0", kind="PyTorchJob"), job("a", ns="n1", release="a")]
    joined = join(index, jobs)
    assert [(r.namespace, r.status, r.chart, j["kind"]) for r, j in joined.pairs] == [
        ("n2", "failed", "pytorchjob-0.2.0", "PyTorchJob"), ("n1", "deployed", "tfjob-0.1.0", "TFJob")]
    assert joined.unjoined == []


def test_newest_first_by_revision_time_then_by_resource_version():
    a = record_meta(record("a", 1, "deployed", created="2026-01-02T03:04:05Z", rv="10"))
    b = record_meta(record("b", 1, "deployed", created="2026-01-02T03:04:05Z", rv="12"))
    c = record_meta(record("c", 1, "deployed", created="2026-01-02T03:04:04Z", rv="30"))
    lone = job("lone", created="2026-01-02T03:04:06Z", rv="5")
    rows = [(a, None), (None, lone), (c, None), (b, None)]
    ordered = sorted(rows, key=lambda r: sort_key(*r), reverse=True)
    assert [r.name if r else j["metadata"]["name"] for r, j in ordered] == ["lone", "b", "a", "c"]


# ---- slim objects keep what the views read -----------------------------------------------------------------
def full_pod(name: str, job_name: str, node: str | None, phase: str, gpus: int = 1) -> dict:
    return {
        "metadata": {"name": name, "namespace": "team", "creationTimestamp": "2026-01-02T03:04:05Z",
                     "uid": f"uid-{name}", "resourceVersion": "7",
                     "labels": {"app.kubernetes.io/part-of": "arena-helm", "release": job_name,
                                "training.kubeflow.org/job-name": job_name,
                                "training.kubeflow.org/replica-type": "worker",
                                "training.kubeflow.org/replica-index": name[-1]},
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{" + "x" * 2000 + "}"},
                     "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
                     "ownerReferences": [{"kind": "TFJob", "name": job_name}]},
        "spec": {**({"nodeName": node} if node else {}), "volumes": [{"name": "v", "emptyDir": {}}],
                 "containers": [{"name": "tensorflow", "image": "tf:2", "command": ["python", "train.py"],
                                 "env": [{"name": "A", "value": "1"}],
                                 "resources": {"limits": {"nvidia.com/gpu": str(gpus), "cpu": "2"},
                                               "requests": {"cpu": "1", "memory": "1Gi"}}}]},
        "status": {"phase": phase, "hostIP": "10.0.0.1",
                   **({"podIP": "10.1.0.7", "startTime": "2026-01-02T03:04:08Z"} if node else {}),
                   "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None}],
                   "containerStatuses": [{"name": "tensorflow", "image": "tf:2", "imageID": "sha256:" + "f" * 64,
                                          "ready": phase == "Running", "restartCount": 0,
                                          "state": {"waiting": {"reason": "ImagePullBackOff", "message": "m"}}
                                          if phase == "Pending" else {"running": {"startedAt": "2026-01-02T03:04:09Z"}}}]},
    }


def test_a_view_of_slim_objects_equals_the_view_of_the_full_objects():
    j = job("a", release="a")
    j["status"] = {"conditions": [{"type": "Running", "status": "True"}], "startTime": "2026-01-02T03:04:07Z"}
    j["metadata"]["managedFields"] = [{"manager": "helm"}]
    j["metadata"]["uid"] = "6f1c0e2a-0000-4000-8000-000000000001"
    j["metadata"]["labels"].update({"modelName": "resnet", "modelVersion": "3", "app.kubernetes.io/part-of": "arena-helm"})
    j["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
    pods = [full_pod("a-worker-0", "a", "node-1", "Running"), full_pod("a-worker-1", "a", None, "Pending")]
    now = dt.datetime(2026, 1, 2, 4, 0, tzinfo=dt.UTC)
    release = {"name": "a", "namespace": "team", "revision": "1", "status": "deployed", "chart": "tfjob-0.1.0"}
    full = job_view(release=release, job=copy.deepcopy(j), pods=copy.deepcopy(pods), now=now)
    slim = job_view(release=release, job=slim_job(j), pods=[slim_pod(p) for p in pods], now=now)
    assert slim == full
    assert slim.to_json() == full.to_json()
    assert (full.status, full.requested_gpus, full.allocated_gpus) == ("PENDING", 2, 1)
    assert (full.uid, full.model_name) == ("6f1c0e2a-0000-4000-8000-000000000001", "resnet")
    assert [(i.ip, i.age_seconds) for i in full.instances] == [("10.1.0.7", 3351), ("", 3355)]
    node = {"metadata": {"name": "node-1"}, "status": {"allocatable": {"nvidia.com/gpu": "4", "cpu": "8"}}}
    assert node_view(node, [slim_pod(p) for p in pods]) == node_view(node, pods)


@pytest.mark.parametrize("how", ["oom", "restarted", "evicted", "pull"])
def test_a_failing_jobs_failure_reads_the_same_from_slim_and_full_pods(how):
    j = job("f", release="f")
    j["status"] = {"conditions": [{"type": "Failed" if how != "restarted" else "Restarting", "status": "True"}]}
    pod = full_pod("f-worker-0", "f", "node-1", "Running")
    cs = pod["status"]["containerStatuses"][0]
    pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = "2Gi"
    if how == "oom":
        cs["state"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled", "message": "killed"}}
    elif how == "restarted":
        cs["restartCount"] = 2
        cs["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "message": "KeyError: 'x'"}}
    elif how == "evicted":
        pod["status"].update({"phase": "Failed", "reason": "Evicted", "message": "The node was low on memory."})
    else:
        cs["state"] = {"waiting": {"reason": "ErrImagePull", "message": "not found"}}
    now = dt.datetime(2026, 1, 2, 4, 0, tzinfo=dt.UTC)
    full = job_view(release=None, job=copy.deepcopy(j), pods=[copy.deepcopy(pod)], now=now)
    slim = job_view(release=None, job=slim_job(j), pods=[slim_pod(pod)], now=now)
    assert slim == full and full.failure.text().startswith("pod f-worker-0")
    assert {"oom": "memory limit 2Gi", "restarted": "restarted 2 times: KeyError: 'x'",
            "evicted": "evicted by its node: The node was low on memory.", "pull": "ErrImagePull of image tf:2"}[how] \
        in full.failure.text()


def test_a_suspended_queued_job_views_the_same_slim_and_full():
    j = job("q", release="q")
    j["spec"]["runPolicy"] = {"suspend": True}
    j["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": "team-queue", "heritage": "Helm"})
    now = dt.datetime(2026, 1, 2, 4, 0, tzinfo=dt.UTC)
    full = job_view(release=None, job=copy.deepcopy(j), pods=[], now=now)
    slim = job_view(release=None, job=slim_job(j), pods=[], now=now)
    assert slim == full and full.status == "QUEUED" and full.reason == "held by Kueue: waiting in queue team-queue"
    assert slim_job(j)["metadata"]["labels"] == {"helm.sh/chart": "tfjob-0.1.0", "kueue.x-k8s.io/queue-name": "team-queue"}


def test_slim_objects_drop_what_no_view_reads():
    j = job("a", release="a")
    j["metadata"]["managedFields"] = [{"manager": "helm"}]
    j["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
    s = slim_job(j)
    assert "managedFields" not in s["metadata"]
    assert s["metadata"]["annotations"] == {"meta.helm.sh/release-name": "a", "meta.helm.sh/release-namespace": "team"}
    p = slim_pod(full_pod("a-worker-0", "a", "node-1", "Running"))
    assert set(p["metadata"]) == {"name", "namespace", "labels", "creationTimestamp"}
    assert p["metadata"]["labels"] == {"training.kubeflow.org/job-name": "a", "training.kubeflow.org/replica-type": "worker",
                                       "training.kubeflow.org/replica-index": "0"}  # not app.kubernetes.io/*
    assert (p["status"]["podIP"], p["status"]["startTime"]) == ("10.1.0.7", "2026-01-02T03:04:08Z")
    assert p["spec"] == {"nodeName": "node-1", "containers": [{"name": "tensorflow", "image": "tf:2", "resources": {
        "limits": {"nvidia.com/gpu": "1", "cpu": "2"}, "requests": {"cpu": "1", "memory": "1Gi"}}}]}
    assert p["status"]["containerStatuses"] == [{"name": "tensorflow", "state": {"running": {
        "startedAt": "2026-01-02T03:04:09Z"}}, "ready": True, "restartCount": 0}]
    assert len(json.dumps(p)) < len(json.dumps(full_pod("a-worker-0", "a", "node-1", "Running"))) / 4
