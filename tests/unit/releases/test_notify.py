"""notify: which URLs --notify takes, what a message shows of one, and the notice built from a job's view (pure)."""

from __future__ import annotations

import datetime as dt

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.core.grammars import url_shown as where
from arena_helm.releases.notify import check_url, notice
from arena_helm.releases.reader import JobDetail
from arena_helm.views.jobs import job_view
from arena_helm.views.reasons import Failure


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "https://hooks.example.com/services/T0/B0/x",
                                 "https://[::1]:9/x?y=1"])
def test_check_url_takes_http_and_https(url):
    assert check_url(url) == url


@pytest.mark.parametrize(("url", "words"), [
    ("hooks.example.com/x", "give an http:// or https:// URL with a host"),
    ("ftp://hooks.example.com/x", "give an http:// or https:// URL with a host"),
    ("https:///path-only", "give an http:// or https:// URL with a host"),
    ("http://h:99999/x", "not a URL (Port out of range 0-65535)"),
])
def test_check_url_refuses_others_in_one_line_naming_the_flag(url, words):
    with pytest.raises(UsageError) as err:
        check_url(url)
    assert str(err.value).startswith("--notify ") and words in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("url", "shown"), [
    ("https://hooks.example.com/services/T0/B0/s3cr3t", "https://hooks.example.com/..."),
    ("http://127.0.0.1:8080/?token=abc", "http://127.0.0.1:8080/..."),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
    ("not a url", "(the URL given)"),
])
def test_where_never_shows_a_path_or_query(url, shown):
    assert where(url) == shown


NOW = dt.datetime(2026, 12, 3, 12, 0, 0, tzinfo=dt.UTC)


def _job(conditions, start="2026-12-03T11:00:00Z", end="2026-12-03T11:30:00Z"):
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
            "metadata": {"name": "mnist", "namespace": "team-a", "creationTimestamp": "2026-12-03T10:59:00Z",
                         "annotations": {"arena.kubeflow.org/username": "ada"}},
            "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "tensorflow", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}}}},
            "status": {"startTime": start, "completionTime": end,
                       "conditions": [{"type": t, "status": "True", "lastTransitionTime": end} for t in conditions]}}


def test_notice_of_a_failed_job_carries_its_failure_and_log():
    job = _job(["Created", "Running", "Failed"])
    view = job_view(release=None, job=job, pods=[], now=NOW, kind="TFJob")
    view.failure = Failure("mnist-worker-1", "tensorflow", "OOMKilled", 137, memory_limit="8Gi")
    doc = notice(JobDetail(view, "TFJob", "v1", job, [], [], "", log_tail=["step 9", "killed"]))
    assert doc == {
        "schema": "arena-helm.notice/v1", "job": "mnist", "namespace": "team-a", "kind": "TFJob",
        "status": "FAILED", "reason": view.reason, "durationSeconds": 1800, "duration": view.duration, "gpus": 4,
        "user": "ada", "createdAt": view.created, "endedAt": view.ended,
        "failure": {"instance": "mnist-worker-1", "container": "tensorflow", "reason": "OOMKilled", "exitCode": 137,
                    "message": "", "memoryLimit": "8Gi", "image": "", "restarts": 0,
                    "summary": "pod mnist-worker-1 container tensorflow: OOMKilled (exit code 137), memory limit 8Gi",
                    "log": ["step 9", "killed"]},
    }


def test_notice_of_a_succeeded_job_has_no_failure():
    job = _job(["Created", "Running", "Succeeded"])
    job["metadata"]["annotations"] = {}
    view = job_view(release=None, job=job, pods=[], now=NOW, kind="TFJob")
    doc = notice(JobDetail(view, "TFJob", "v1", job, [], [], ""))
    assert (doc["status"], doc["failure"], doc["user"], doc["durationSeconds"], doc["gpus"]) == (
        "SUCCEEDED", None, "", 1800, 4)
