"""``wait NAME`` and ``--notify URL``: the job followed to its end by what the real training operator makes of the
pods (kwok), then one JSON notice POSTed to a small HTTP server of the test's (on the worker's own loopback)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from clictx import cli
from kubernetes import client
from waits import wait_condition, wait_job_pods

pytestmark = pytest.mark.cluster


class Hook:
    """An HTTP server recording every POST (path, headers, JSON body); ``/broken`` answers 500."""

    def __init__(self):
        self.posts: list[tuple[str, dict, dict]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hook.posts.append((self.path, dict(self.headers), json.loads(body)))
                self.send_response(500 if self.path == "/broken" else 204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook():
    h = Hook()
    yield h
    h.close()


@pytest.fixture
def node(kubelet, namespace):
    name = f"gpu-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=4)
    yield name
    kubelet.remove_node(name)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: a connection is refused
    return port


def in_thread(fn) -> tuple[threading.Thread, list[BaseException]]:
    problems: list[BaseException] = []

    def run():
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            problems.append(exc)

    t = threading.Thread(target=run)
    t.start()
    return t, problems


def test_wait_follows_a_job_to_its_failure_and_posts_one_notice(helm_bin, cluster, namespace, kubelet, node, hook):
    run = cli(helm_bin, cluster, namespace)
    core = client.CoreV1Api(cluster.api_client())
    tfjob = lambda name: client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(  # noqa: E731
        "kubeflow.org", "v1", namespace, "tfjobs", name)
    res = run("submit", "tf", "--name", "oomw", "--image", "tf:2", "--gpus", "1", "--memory", "2Gi",
              "--", "python", "train.py")
    assert res.exit_code == 0, res.output
    (pod,) = wait_job_pods(core, namespace, "oomw", ["oomw-chief-0"])

    # still running after --timeout: exit 3 and no notice (the job has not ended)
    kubelet.run_pod(namespace, pod, node)
    wait_condition(lambda: tfjob("oomw"), "Running")
    res = run("wait", "oomw", "--timeout", "1s", "--notify", f"{hook.url}/team")
    assert res.exit_code == 3, res.output
    assert "tfjob/oomw: Running" in res.stderr and "still Running after --timeout 1s" in res.stderr
    assert hook.posts == []

    def fail():
        kubelet.write_log(namespace, pod, "tensorflow", "\n".join(f"step {i}" for i in range(1, 13)))
        kubelet.finish_pod(namespace, pod, 137, reason="OOMKilled")

    t, problems = in_thread(fail)
    try:
        res = run("wait", "oomw", "--timeout", "90s", "--notify", f"{hook.url}/team/s3cr3t?token=abc")
    finally:
        t.join(60)
    assert not problems, problems
    assert res.exit_code == 1, res.output
    assert res.stderr.splitlines()[-1] == "tfjob/oomw: Failed"
    assert len(hook.posts) == 1
    path, headers, doc = hook.posts[0]
    assert path == "/team/s3cr3t?token=abc"
    assert headers["Content-Type"] == "application/json" and headers["User-Agent"].startswith("arena-helm/")
    assert isinstance(doc.pop("durationSeconds"), int) and doc.pop("duration")
    assert doc.pop("createdAt") and doc.pop("endedAt")
    assert doc == {
        "schema": "arena-helm.notice/v1", "job": "oomw", "namespace": namespace, "kind": "TFJob",
        "status": "FAILED", "reason": doc["reason"], "gpus": 1, "user": "admin",
        "failure": {"instance": "oomw-chief-0", "container": "tensorflow", "reason": "OOMKilled", "exitCode": 137,
                    "message": "", "memoryLimit": "2Gi", "image": "", "restarts": 0,
                    "summary": "pod oomw-chief-0 container tensorflow: OOMKilled (exit code 137), memory limit 2Gi",
                    "log": [f"step {i}" for i in range(3, 13)]},
    }

    # an ended job: wait answers at once; a notice the server refuses is a warning that hides the URL's path
    res = run("wait", "oomw", "--notify", f"{hook.url}/broken")
    assert res.exit_code == 1, res.output
    assert res.stderr.splitlines() == ["tfjob/oomw: Failed",
                                       f"warning: --notify: POST to {hook.url}/... answered HTTP 500"]
    assert [p for p, _, _ in hook.posts] == ["/team/s3cr3t?token=abc", "/broken"]

    res = run("wait", "nosuch")
    assert res.exit_code == 1 and res.stderr == f"error: no job named nosuch in namespace {namespace} (see arena-helm list)\n"
    res = run("wait", "oomw", "--notify", "hooks.example.com/x")
    assert res.exit_code == 2 and res.stderr.startswith("error: --notify (the URL given): give an http:// or https://")


def test_submit_wait_notify_a_failed_post_changes_no_exit_code(helm_bin, cluster, namespace, kubelet, node, hook):
    run = cli(helm_bin, cluster, namespace)
    core = client.CoreV1Api(cluster.api_client())

    def succeed():
        (pod,) = wait_job_pods(core, namespace, "okw", ["okw-chief-0"])
        kubelet.run_pod(namespace, pod, node)
        kubelet.finish_pod(namespace, pod, 0)

    t, problems = in_thread(succeed)
    port = closed_port()
    try:
        res = run("submit", "tf", "--name", "okw", "--image", "tf:2", "--wait", "--timeout", "90s",
                  "--notify", f"http://127.0.0.1:{port}/hook", "--", "python", "train.py")
    finally:
        t.join(60)
    assert not problems, problems
    assert res.exit_code == 0, res.output
    lines = res.stderr.splitlines()
    assert lines[-2] == "tfjob/okw: Succeeded"
    assert lines[-1].startswith(f"warning: --notify: POST to http://127.0.0.1:{port}/... failed: ")
    assert "Connection refused" in lines[-1]

    res = run("wait", "okw", "--notify", f"{hook.url}/done")  # the same job, a server that takes it
    assert res.exit_code == 0, res.output
    ((path, _, doc),) = hook.posts
    assert (path, doc["status"], doc["failure"], doc["gpus"]) == ("/done", "SUCCEEDED", None, 0)

    # --notify without --wait installs nothing
    res = run("submit", "tf", "--name", "nowait", "--image", "tf:2", "--notify", hook.url, "--", "python", "t.py")
    assert res.exit_code == 2 and res.stderr == (
        "error: --notify needs --wait (the notice is sent when the waited-for job ends)\n")
    assert client.CoreV1Api(cluster.api_client()).list_namespaced_secret(
        namespace, label_selector="name=nowait").items == []
