"""Fault injection against the real test API server, through the CLI, with Helm 3 and Helm 4.

Each fault must end in the exit code of its kind, ONE ``error:`` line on stderr that says what happened (and
what to do), no traceback, and nothing left in the cluster: no ``sh.helm.release.v1.*`` Secret, no job object,
no Deployment or Service — unless the test is about recovering such a leftover, and then the recovery must
leave nothing.

Faults:
- the API server unreachable, or stopped while ``submit --wait`` follows the job;
- helm missing or too old;
- the training operator's CRD not installed, or the API discovery still naming a version just removed;
- the name taken by a release or by a job object, and 10 concurrent submits of one name;
- helm SIGKILLed in the middle of ``helm install`` or ``helm uninstall``: a release left ``pending-install``
  or ``uninstalling``. To hit that state every time, helm talks to the API server through ``HoldingProxy``,
  a TLS-terminating proxy that forwards everything but holds the request creating (or deleting) the TFJob,
  so helm is killed after it wrote its ``pending-install`` (``uninstalling``) record and before it could
  write the next one;
- RBAC: the namespace-limited user outside its namespace.

The real controllers run (training-operator makes a TFJob's pods and headless Services, owned by the job):
"nothing left" waits, bounded, for the garbage collector to remove them with their owner. After a fault that
takes something away from the controllers (the API server, a CRD) the tests check that they act again.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from edgetools import cli, one_error
from kubecluster import CRD_DIR, LIMITED_NAMESPACE, free_port
from kubernetes import client
from kubernetes.client.rest import ApiException

from arena_helm import TFJobSpec
from arena_helm.adapters.charts import assemble_chart
from arena_helm.workload import submission
from arena_helm.workload.submission import job_values

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parents[2]
TFJOB_CRD = CRD_DIR / "training-operator-v1.9.0" / "kubeflow.org_tfjobs.yaml"
RELEASE_PREFIX = "sh.helm.release.v1."


# ---- helpers ---------------------------------------------------------------------------------------------
def target(cluster, namespace: str, helm_bin, user: str = "admin") -> list[str]:
    """The cluster options (they go before a submit's command words)."""
    return ["-n", namespace, "--kubeconfig", str(cluster.users[user].kubeconfig), "--helm-binary", str(helm_bin)]


def submit_argv(name: str, *options: str) -> list[str]:
    return ["submit", "tf", "--name", name, "--image", "tf:2", *options, "--", "python", "train.py"]


def with_options(argv: list[str], options: list[str]) -> list[str]:
    """``options`` placed before a submit's ``--`` (everything after the first positional word is the command)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i] + options + argv[i:]
    return argv + options


class ProductBug(AssertionError):
    """An assertion that a known product bug breaks: tests marked ``xfail(strict=True, raises=ProductBug)``
    fail for that reason only; any other failed assertion in them still fails the run."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise ProductBug(message)


def release_secrets(cluster, namespace: str, name: str | None = None, driver: str = "secret") -> list:
    """helm's storage records in ``namespace`` (Secrets, or ConfigMaps with ``driver="configmap"``)."""
    core = client.CoreV1Api(cluster.api_client())
    selector = "owner=helm" + (f",name={name}" if name else "")
    lister = core.list_namespaced_config_map if driver == "configmap" else core.list_namespaced_secret
    items = lister(namespace, label_selector=selector).items
    return sorted(items, key=lambda s: s.metadata.name)


def leftovers(cluster, namespace: str) -> dict[str, list[str]]:
    """What a fault could leave: helm's release Secrets, job objects, Deployments, Services, batch Jobs."""
    api = cluster.api_client()
    core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
    custom = client.CustomObjectsApi(api)
    found = {
        "release secrets": [s.metadata.name for s in core.list_namespaced_secret(namespace).items
                            if s.metadata.name.startswith(RELEASE_PREFIX)],
        "release configmaps": [c.metadata.name for c in core.list_namespaced_config_map(namespace).items
                               if c.metadata.name.startswith(RELEASE_PREFIX)],
        "deployments": [d.metadata.name for d in apps.list_namespaced_deployment(namespace).items],
        "services": [s.metadata.name for s in core.list_namespaced_service(namespace).items
                     if not (namespace == "default" and s.metadata.name == "kubernetes")],
        "jobs": [j.metadata.name for j in batch.list_namespaced_job(namespace).items],
    }
    for version, plural in (("v1", "tfjobs"), ("v1", "pytorchjobs"), ("v2beta1", "mpijobs")):
        items = custom.list_namespaced_custom_object("kubeflow.org", version, namespace, plural)["items"]
        found[plural] = [j["metadata"]["name"] for j in items]
    return {k: sorted(v) for k, v in found.items() if v}


def no_leftovers(cluster, namespace: str, timeout: float = 60.0) -> dict[str, list[str]]:
    """``leftovers`` once the garbage collector had time (bounded) to remove what a job object owned."""
    deadline = time.monotonic() + timeout
    while True:
        left = leftovers(cluster, namespace)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def controllers_act(cluster, controllers, kubelet, namespace: str, helm_bin, name: str = "alive") -> None:
    """No controller (nor kwok) exited; training-operator makes a new TFJob's pod and kwok runs it (then the
    job is deleted again)."""
    from waits import wait_job_pods

    controllers.restart_if_lease_lost()  # mpi-operator's Deployment would; every other one must have stayed up
    exited = {n: (c.proc.poll(), c.log_tail(5)) for n, c in controllers.running.items() if c.proc.poll() is not None}
    assert exited == {}, exited
    assert kubelet.proc.poll() is None, kubelet.log_tail(10)

    assert cli(*submit_argv(name, *target(cluster, namespace, helm_bin))).exit_code == 0
    if "training-operator" in controllers.running:
        core = client.CoreV1Api(cluster.api_client())
        (pod,) = wait_job_pods(core, namespace, name, count=1, timeout=120)
        node = f"n-{namespace}"
        kubelet.add_node(node, pool=namespace)
        try:
            kubelet.run_pod(namespace, pod, node)
        finally:
            kubelet.remove_node(node)
    assert cli("delete", name, *target(cluster, namespace, helm_bin)).exit_code == 0


def untouched(job: dict) -> tuple:
    """What a write by helm or arena-helm would change in a job object. (Not its resourceVersion: the real
    training-operator keeps writing the status.)"""
    meta = job["metadata"]
    managers = sorted({(m.get("manager"), m.get("operation"), m.get("subresource", "")) for m in
                       meta.get("managedFields") or []})
    return (meta["uid"], meta.get("generation"), meta.get("labels"), meta.get("annotations"), job["spec"], managers)


def operator_saw(cluster, namespace: str, name: str) -> dict:
    """The TFJob once training-operator wrote its Created condition (its status manager is there)."""
    from waits import wait_condition

    (job,) = tfjobs(cluster, namespace)
    if "training-operator" not in cluster.controllers.running:
        return job
    return wait_condition(lambda: next(j for j in tfjobs(cluster, namespace) if j["metadata"]["name"] == name),
                          "Created")


def tfjobs(cluster, namespace: str) -> list[dict]:
    return client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs")["items"]


def discovery_lists(cluster, group_version: str, plural: str) -> bool:
    try:
        resp = cluster.api_client().call_api(
            f"/apis/{group_version}", "GET", auth_settings=["BearerToken"], _preload_content=False,
            _return_http_data_only=True)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return plural in {r["name"] for r in json.loads(resp.data)["resources"]}


def wait_for_condition(check, what: str, timeout: float = 30.0, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def unreachable_kubeconfig(path: Path) -> Path:
    """A kubeconfig whose server is a closed port on 127.0.0.1."""
    port = free_port()  # bound, then closed again: nothing listens there
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": f"https://127.0.0.1:{port}",
                                               "insecure-skip-tls-verify": True}}],
        "users": [{"name": "x", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
    }))
    return path


def server_of(kubeconfig: Path) -> str:
    """The server of a kubeconfig of one cluster (``unreachable_kubeconfig``'s)."""
    (entry,) = yaml.safe_load(kubeconfig.read_text())["clusters"]
    return entry["cluster"]["server"]


class FrozenClock:
    """The ``time`` module, but ``time()`` is ``now``: set as a module's ``time``, its wall clock stands still."""

    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


class HoldingProxy:
    """A TLS-terminating reverse proxy to the test API server.

    Every request is forwarded, except those for which ``hold(method, path)`` is true: such a request is
    never forwarded; its handler waits until the proxy is closed, then drops the connection. ``held`` is
    set when the first one arrives. ``rewrite(path, body)`` may change a forwarded GET's response body.
    """

    HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
           "host", "content-length"}

    def __init__(self, cluster, hold=lambda method, path: False, rewrite=None):
        self.cluster = cluster
        self.hold = hold
        self.rewrite = rewrite
        self.held = threading.Event()
        self.held_requests: list[tuple[str, str]] = []
        self._release = threading.Event()
        self._upstream = ssl.create_default_context(cafile=str(cluster.ca_file))
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes | None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline().strip():
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else None

            def _any(self):
                body = self._body()
                if proxy.hold(self.command, self.path):
                    proxy.held_requests.append((self.command, self.path))
                    proxy.held.set()
                    proxy._release.wait(120)
                    self.close_connection = True
                    return
                conn = http.client.HTTPSConnection("127.0.0.1", proxy.cluster.port, context=proxy._upstream,
                                                   timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in proxy.HOP}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    out_headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in proxy.HOP]
                finally:
                    conn.close()
                if proxy.rewrite and self.command == "GET" and resp.status == 200:
                    new = proxy.rewrite(self.path, data)
                    if new is not None:
                        data = new
                        out_headers = [(k, v) for k, v in out_headers if k.lower() != "content-encoding"]
                self.send_response(resp.status, resp.reason)
                for k, v in out_headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cluster.ca.issue_cert("127.0.0.1").configure_cert(ctx)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def kubeconfig(self, path: Path, user: str = "admin") -> Path:
        """The user's kubeconfig, pointed at the proxy."""
        config = yaml.safe_load(self.cluster.users[user].kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


def tfjob_write(method: str, path: str) -> bool:
    """The request that creates (POST; a server-side apply PATCH for Helm 4) or changes a TFJob."""
    return method != "GET" and "/tfjobs" in urlsplit(path).path


def tfjob_delete(method: str, path: str) -> bool:
    return method == "DELETE" and "/tfjobs/" in urlsplit(path).path


def kill_helm_when(proc: subprocess.Popen, proxy: HoldingProxy, seen, what: str, timeout: float = 60.0) -> None:
    """SIGKILL ``proc`` as soon as ``seen()`` (polled fast) is true; the proxy holds helm's next write meanwhile."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if seen():
                break
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"helm ended ({proc.returncode}) before {what}: {err.decode()}{out.decode()}")
            time.sleep(0.02)
        else:
            raise AssertionError(f"no {what} after {timeout}s")
        # the write after the record (TFJob create/delete) is held, so the record cannot move on meanwhile
        assert proxy.held.wait(30), f"helm did not reach the TFJob after {what}"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def record_status(cluster, namespace: str, name: str, driver: str = "secret") -> list[str]:
    return [s.metadata.labels.get("status") for s in release_secrets(cluster, namespace, name, driver)]


def interrupted_install(helm_bin, cluster, namespace: str, name: str, tmp_path: Path, driver: str = "secret") -> None:
    """Run ``helm install`` of the tfjob chart and SIGKILL it once its ``pending-install`` record exists."""
    work = tmp_path / f"install-{name}"
    work.mkdir()
    chart = assemble_chart("tfjob", work)
    values = work / "values.json"
    values.write_text(json.dumps(job_values(TFJobSpec(name=name, namespace=namespace, image="tf:2",
                                                      command="python train.py"))))
    with HoldingProxy(cluster, hold=tfjob_write) as proxy:
        kubeconfig = proxy.kubeconfig(work / "kubeconfig")
        proc = subprocess.Popen(
            [str(helm_bin), "install", name, str(chart), "--namespace", namespace, "--values", str(values),
             "--kubeconfig", str(kubeconfig)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "HELM_DRIVER": driver})
        kill_helm_when(proc, proxy, lambda: "pending-install" in record_status(cluster, namespace, name, driver),
                       "pending-install release record")
        # the one request held: helm 3 creates the TFJob (POST), helm 4 applies it server-side (PATCH)
        tfjobs_path = f"/apis/kubeflow.org/v1/namespaces/{namespace}/tfjobs"
        assert [(m, urlsplit(p).path) for m, p in proxy.held_requests] == (
            [("PATCH", f"{tfjobs_path}/{name}")] if helm_bin.parent.name.startswith("helm-4.") else
            [("POST", tfjobs_path)])
    # the state an interrupted install leaves: one pending-install record, the TFJob never created
    assert record_status(cluster, namespace, name, driver) == ["pending-install"]
    assert tfjobs(cluster, namespace) == []


# ---- 1. the API server unreachable -----------------------------------------------------------------------
UNREACHABLE_COMMANDS = {
    "submit": submit_argv("unreach"),
    "list": ["list"],
    "get": ["get", "unreach"],
    "delete": ["delete", "unreach"],
    "top-job": ["top", "job"],
}
UNREACHABLE_ACTIONS = {  # what each command was doing when it found nothing listening: its error line's first words
    "submit": "installing release unreach",
    "list": "listing helm releases",
    "get": "reading the API discovery",
    "delete": "reading release unreach",
    "top-job": "listing helm releases",
}


@pytest.mark.parametrize("command", list(UNREACHABLE_COMMANDS), ids=list(UNREACHABLE_COMMANDS))
def test_unreachable_api_server_is_one_line(command, helm_bin, cluster, namespace, tmp_path):
    kubeconfig = unreachable_kubeconfig(tmp_path / "kubeconfig")
    options = ["-n", namespace, "--kubeconfig", str(kubeconfig), "--helm-binary", str(helm_bin)]
    argv = with_options(UNREACHABLE_COMMANDS[command], options)
    started = time.monotonic()
    res = cli(*argv)
    one_error(res, 1, f"error: {UNREACHABLE_ACTIONS[command]}: cannot reach the API server at "
                      f"{server_of(kubeconfig)}: connection refused")
    assert time.monotonic() - started < 30, "an unreachable server must fail fast"
    assert no_leftovers(cluster, namespace) == {}


# ---- 2. the API server stopped while submit --wait polls -------------------------------------------------
def test_api_server_stopped_during_submit_wait(helm_bin, cluster, controllers, kubelet, namespace):
    name = "stopped"
    apiserver = cluster.procs["kube-apiserver"]
    stop_called = threading.Event()
    problems: list[BaseException] = []

    def stop_when_installed():
        try:
            wait_for_condition(lambda: record_status(cluster, namespace, name) == ["deployed"],
                               "the release to be deployed", timeout=60)
            time.sleep(0.3)  # submit --wait is polling the job now
            stop_called.set()
            cluster.stop_apiserver()
        except subprocess.TimeoutExpired:
            pass  # SIGTERM closed the listener at once, but the server drains watches ~60 s: killed below
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            problems.append(exc)

    stopper = threading.Thread(target=stop_when_installed)
    stopper.start()
    try:
        res = cli(*submit_argv(name, *target(cluster, namespace, helm_bin), "--wait", "--timeout", "120s"))
        if stop_called.is_set() and stopper.is_alive():
            # kube-apiserver 1.20 stops listening on SIGTERM but exits only after ~60 s; end it now
            os.killpg(apiserver.pid, signal.SIGKILL)
        stopper.join(60)
        if apiserver.poll() is None and stop_called.is_set():
            os.killpg(apiserver.pid, signal.SIGKILL)
            apiserver.wait(20)
    finally:
        if "kube-apiserver" not in cluster.procs:
            cluster.restart_apiserver()
    assert not problems, problems
    assert stop_called.is_set(), res.output
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    assert f"tfjob.kubeflow.org/{name} created" in res.stdout
    lines = res.stderr.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("error: ")]
    # besides the one error line, only --wait's progress lines ("tfjob/stopped: Created")
    assert len(errors) == 1 and lines[-1] == errors[0], res.stderr
    assert all(ln.startswith(f"tfjob/{name}: ") for ln in lines[:-1]), res.stderr
    assert f"reading TFJob {name}: cannot reach the API server at {cluster.server}" in errors[0], errors[0]

    # the session cluster works again: the CRDs are served, the job and its release are there, intact
    wait_for_condition(lambda: discovery_lists(cluster, "kubeflow.org/v1", "tfjobs"), "tfjobs to be served again")
    assert record_status(cluster, namespace, name) == ["deployed"]
    res = cli("get", name, "-o", "json", *target(cluster, namespace, helm_bin))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["name"] == name
    res = cli("delete", name, *target(cluster, namespace, helm_bin))
    assert res.exit_code == 0, res.output
    # (after an API server restart the garbage collector first re-lists and re-syncs its monitors, the
    # TFJobs' among them, before it removes the operator's Services of a deleted TFJob: a longer bound)
    assert no_leftovers(cluster, namespace, timeout=180) == {}
    # the controllers and kwok reconnected by themselves: none exited, and they act on a new job
    controllers_act(cluster, controllers, kubelet, namespace, helm_bin)
    assert no_leftovers(cluster, namespace) == {}


# ---- 3. helm missing or too old ---------------------------------------------------------------------------
HELM_COMMANDS = {  # list, get and top read the API only: they need no helm (test_reads_need_no_helm)
    "submit": submit_argv("nohelm"),
}
INSTALL_HINT = "install helm 3.8+ or 4"


@pytest.mark.parametrize("command", list(HELM_COMMANDS), ids=list(HELM_COMMANDS))
def test_helm_binary_missing(command, cluster, namespace):
    options = ["-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", "/nonexistent"]
    res = cli(*with_options(HELM_COMMANDS[command], options), env={"ARENA_HELM_HELM": None})
    one_error(res, 1, f"error: helm not found at '/nonexistent' (from --helm-binary): {INSTALL_HINT} (a checkout has "
                      "scripts/install-helm.sh) and put it on PATH, or pass --helm-binary PATH or set ARENA_HELM_HELM")
    assert no_leftovers(cluster, namespace) == {}


@pytest.mark.parametrize("command", list(HELM_COMMANDS), ids=list(HELM_COMMANDS))
def test_helm_not_on_an_empty_path(command, cluster, namespace):
    options = ["-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig)]
    res = cli(*with_options(HELM_COMMANDS[command], options), env={"PATH": "", "ARENA_HELM_HELM": None})
    one_error(res, 1, f"error: helm not found on PATH: {INSTALL_HINT} (a checkout has scripts/install-helm.sh) and "
                      "put it on PATH, or pass --helm-binary PATH or set ARENA_HELM_HELM")
    assert no_leftovers(cluster, namespace) == {}


@pytest.mark.parametrize("env", [{"PATH": "", "ARENA_HELM_HELM": None}, {"ARENA_HELM_HELM": "/nonexistent"}],
                         ids=["empty-path", "missing-binary"])
def test_reads_need_no_helm(env, cluster, namespace):
    options = ["-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig)]
    res = cli("list", *options, env=env)
    assert res.exit_code == 0 and res.stderr == "", res.output
    res = cli("top", "job", *options, env=env)  # no Prometheus here: one note, no error
    assert res.exit_code == 0 and res.stderr.startswith("note: no Prometheus found") and \
        res.stderr.count("\n") == 1, res.output
    res = cli("get", "nohelm", *options, env=env)
    one_error(res, 1, f"error: no job named nohelm in namespace {namespace} (see arena-helm list)")


def too_old(helm: Path) -> str:
    """What every command that runs it says of ``old_helm``."""
    return (f"helm v3.2.0 at {helm} is too old: arena-helm needs helm 3.8 or newer (scripts/install-helm.sh "
            "installs 3.17 and 4.1)")


@pytest.fixture
def old_helm(tmp_path) -> Path:
    """A stand-in helm that says it is v3.2.0 (whatever it is asked)."""
    path = tmp_path / "helm"
    path.write_text("#!/bin/sh\necho v3.2.0\n")
    path.chmod(0o755)
    return path


def test_helm_too_old_stops_submit_and_says_how_to_install_helm(old_helm, cluster, namespace):
    res = cli(*submit_argv("oldhelm", *target(cluster, namespace, old_helm)))
    # the old helm was asked its version only: nothing was installed, so nothing is to be removed or checked
    one_error(res, 1, f"error: {too_old(old_helm)}")
    assert no_leftovers(cluster, namespace) == {}


@pytest.mark.parametrize("argv", [submit_argv("oldhelm", "--dry-run")], ids=["submit-dry-run"])
def test_helm_too_old_for_the_other_commands_is_one_line(argv, old_helm, cluster, namespace):
    res = cli(*with_options(argv, target(cluster, namespace, old_helm)))
    assert no_leftovers(cluster, namespace) == {}
    expect(res.exception is None or isinstance(res.exception, SystemExit), f"crashed: {res.exception!r}")
    expect(res.exit_code == 1, f"exit {res.exit_code}: {res.output}")
    one_error(res, 1, f"error: {too_old(old_helm)}")


def test_list_needs_no_helm_and_delete_checks_its_version(old_helm, helm_bin, cluster, namespace):
    """list reads release metadata through the API (no helm process); delete runs helm uninstall."""
    res = cli(*submit_argv("oldhelm", *target(cluster, namespace, helm_bin)))
    assert res.exit_code == 0, res.output
    res = cli("list", "-o", "json", *target(cluster, namespace, old_helm))
    assert res.exit_code == 0, res.output
    assert [(j["name"], j["release"]["status"]) for j in json.loads(res.stdout)] == [("oldhelm", "deployed")]
    res = cli("delete", "oldhelm", *target(cluster, namespace, old_helm))
    one_error(res, 1, f"error: {too_old(old_helm)}")
    assert [s.metadata.name for s in release_secrets(cluster, namespace, "oldhelm")] == ["sh.helm.release.v1.oldhelm.v1"]
    res = cli("delete", "oldhelm", *target(cluster, namespace, helm_bin))
    assert res.exit_code == 0, res.output
    assert release_secrets(cluster, namespace, "oldhelm") == []


# ---- 4. the training operator's CRD is not installed ------------------------------------------------------
def test_tfjob_crd_missing_names_the_training_operator(helm_bin, cluster, controllers, kubelet, namespace):
    cluster.delete_crd("tfjobs.kubeflow.org")
    try:
        # discovery lags the deletion a moment (see the stale-discovery test below): wait it out here
        wait_for_condition(lambda: not discovery_lists(cluster, "kubeflow.org/v1", "tfjobs"),
                           "tfjobs to leave the discovery")
        res = cli(*submit_argv("nocrd", *target(cluster, namespace, helm_bin)))
    finally:
        operator = controllers.running.get("training-operator")
        if operator is not None:  # the CRD of the running training-operator's release
            from controllers import load_yaml_docs

            (crd,) = [p for p in operator.crds() if p.name == "kubeflow.org_tfjobs.yaml"]
            controllers.apply_crd(load_yaml_docs(crd)[0])
        else:
            cluster.create_crd(TFJOB_CRD)
    one_error(res, 1, "error: the cluster does not serve TFJob (kubeflow.org/v1): install the Kubeflow training "
                      "operator (v1.7+) first")
    assert no_leftovers(cluster, namespace) == {}
    # the running training-operator lost its CRD for a while: it must act on TFJobs again
    controllers_act(cluster, controllers, kubelet, namespace, helm_bin)
    assert no_leftovers(cluster, namespace) == {}


def stale_group(path: str, body: bytes) -> bytes | None:
    """The kubeflow.org group document as the API server serves it for a moment after a CRD whose version no
    other CRD serves was deleted: it still lists that version, whose resource list is already a 404."""
    if urlsplit(path).path != "/apis/kubeflow.org":
        return None
    doc = json.loads(body)
    doc["versions"].append({"groupVersion": "kubeflow.org/v2alpha1", "version": "v2alpha1"})
    return json.dumps(doc).encode()


def test_stale_discovery_of_a_removed_version_does_not_break_list(helm_bin, cluster, namespace, tmp_path):
    assert cli(*submit_argv("stale", *target(cluster, namespace, helm_bin))).exit_code == 0
    try:
        with HoldingProxy(cluster, rewrite=stale_group) as proxy:
            kubeconfig = proxy.kubeconfig(tmp_path / "kubeconfig")
            options = ["-n", namespace, "--kubeconfig", str(kubeconfig), "--helm-binary", str(helm_bin)]
            res = cli("list", "-o", "json", *options)
            expect(res.exit_code == 0, res.output)
            assert [j["name"] for j in json.loads(res.stdout)] == ["stale"]
            res = cli("get", "stale", "-o", "json", *options)
            expect(res.exit_code == 0, res.output)
    finally:
        assert cli("delete", "stale", *target(cluster, namespace, helm_bin)).exit_code == 0
    assert no_leftovers(cluster, namespace) == {}


# ---- 5. the name is taken ---------------------------------------------------------------------------------
def test_name_taken_by_a_release(helm_bin, cluster, namespace):
    argv = submit_argv("taken", *target(cluster, namespace, helm_bin))
    assert cli(*argv).exit_code == 0
    before = [(s.metadata.name, s.metadata.resource_version) for s in release_secrets(cluster, namespace)]
    job_rv = untouched(operator_saw(cluster, namespace, "taken"))
    res = cli(*argv)
    one_error(res, 1, f"error: a release named taken already exists in namespace {namespace}: pick another --name, "
                      f"or delete it first (arena-helm delete taken -n {namespace})")
    # the existing release is untouched
    assert [(s.metadata.name, s.metadata.resource_version) for s in release_secrets(cluster, namespace)] == before
    assert [untouched(j) for j in tfjobs(cluster, namespace)] == [job_rv]
    assert cli("delete", "taken", *target(cluster, namespace, helm_bin)).exit_code == 0
    assert no_leftovers(cluster, namespace) == {}


def test_name_taken_by_a_job_object_made_without_helm(helm_bin, cluster, namespace):
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.create_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "handmade"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "tensorflow", "image": "tf:2"}]}}}}},
    })
    job = operator_saw(cluster, namespace, "handmade")
    res = cli(*submit_argv("handmade", *target(cluster, namespace, helm_bin)))
    # nothing created, the object untouched
    assert release_secrets(cluster, namespace) == []
    assert [untouched(j) for j in tfjobs(cluster, namespace)] == [untouched(job)]
    custom.delete_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", "handmade")
    assert no_leftovers(cluster, namespace) == {}
    # a clear line: which object is in the way and what to do (not helm's ownership-metadata details)
    one_error(res, 1, f"error: TFJob handmade already exists in namespace {namespace} (not from arena-helm): pick "
                      f"another --name, or delete that object first (kubectl delete tfjobs.kubeflow.org handmade -n {namespace})")


# ---- 6. ten concurrent submits of one name ----------------------------------------------------------------
def test_ten_concurrent_submits_of_one_name(helm_bin, cluster, namespace):
    name = "race"
    argv = [sys.executable, "-m", "arena_helm",
            *submit_argv(name, *target(cluster, namespace, helm_bin))]
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARENA_HELM_PENDING_GRACE", "ARENA_HELM_DEBUG", "ARENA_HELM_HELM")}
    barrier = threading.Barrier(10)
    results: list[subprocess.CompletedProcess | None] = [None] * 10

    def one(i: int) -> None:
        barrier.wait()
        results[i] = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=180)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.returncode for r in results)
    report = "\n".join(f"{r.returncode}: {r.stderr.strip()}" for r in results)
    assert codes == [0] + [1] * 9, report
    # exactly one release revision, deployed, and one TFJob
    secrets = release_secrets(cluster, namespace)
    assert [s.metadata.name for s in secrets] == [f"{RELEASE_PREFIX}{name}.v1"]
    assert secrets[0].metadata.labels["status"] == "deployed"
    assert [j["metadata"]["name"] for j in tfjobs(cluster, namespace)] == [name]
    losers = []
    for r in results:
        assert "Traceback" not in r.stderr, r.stderr
        if r.returncode == 0:
            assert f"tfjob.kubeflow.org/{name} created" in r.stdout
            assert r.stderr == ""
            continue
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
        assert "already exists" in lines[0] or "pending-install since" in lines[0], lines[0]
        losers.append(lines[0])
    assert cli("delete", name, *target(cluster, namespace, helm_bin)).exit_code == 0
    assert no_leftovers(cluster, namespace) == {}
    # the name is taken by a release (being installed, or installed): say how to free it
    wrong = [line for line in losers if f"arena-helm delete {name} -n {namespace}" not in line]
    expect(not wrong, "\n".join(wrong))


# ---- 7. helm killed during install: a release left pending-install ----------------------------------------
@pytest.mark.parametrize("driver", ["secret", "configmap"])
def test_submit_over_an_interrupted_install(helm_bin, cluster, namespace, tmp_path, driver):
    """The recovery reads helm's records wherever HELM_DRIVER keeps them."""
    name = "halfway"
    interrupted_install(helm_bin, cluster, namespace, name, tmp_path, driver)
    argv = submit_argv(name, *target(cluster, namespace, helm_bin))

    # within the grace period (the default, 300 s): maybe another install is running; say so and how to recover.
    # The record's age is read off a clock standing 42 s after the record was made: the line is known whole.
    (record,) = release_secrets(cluster, namespace, name, driver)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(submission, "time", FrozenClock(record.metadata.creation_timestamp.timestamp() + 42))
        res = cli(*argv, env={"ARENA_HELM_PENDING_GRACE": None, "HELM_DRIVER": driver})
    one_error(res, 1, f"error: release {name} in namespace {namespace} is pending-install since 42s ago (another "
                      "install may be running); if it was interrupted, retry after 300s or remove it with "
                      f"arena-helm delete {name} -n {namespace}")
    assert record_status(cluster, namespace, name, driver) == ["pending-install"]

    # past the grace period: the leftover is removed first, with a note, and the job installed
    res = cli(*argv, env={"ARENA_HELM_PENDING_GRACE": "0", "HELM_DRIVER": driver})
    assert res.exit_code == 0, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"note: release {name} was left pending-install by an interrupted install"), lines[0]
    assert lines[0].endswith("removing it first"), lines[0]
    assert f"tfjob.kubeflow.org/{name} created" in res.stdout
    secrets = release_secrets(cluster, namespace, name, driver)
    assert [s.metadata.labels["status"] for s in secrets] == ["deployed"]
    assert "arena-helm-submit" in secrets[0].metadata.labels
    assert [j["metadata"]["name"] for j in tfjobs(cluster, namespace)] == [name]

    assert cli("delete", name, *target(cluster, namespace, helm_bin), env={"HELM_DRIVER": driver}).exit_code == 0
    assert no_leftovers(cluster, namespace) == {}


def test_delete_of_a_pending_install(helm_bin, cluster, namespace, tmp_path):
    name = "pending"
    interrupted_install(helm_bin, cluster, namespace, name, tmp_path)
    res = cli("delete", name, *target(cluster, namespace, helm_bin))
    assert res.exit_code == 0, res.output
    assert res.stdout == f"tfjob/{name} deleted (release {name} uninstalled from namespace {namespace})\n"
    assert res.stderr == ""
    assert no_leftovers(cluster, namespace) == {}


# ---- 8. helm killed during uninstall: a release left uninstalling -----------------------------------------
def test_delete_after_an_interrupted_uninstall(helm_bin, cluster, namespace, tmp_path):
    name = "leaving"
    res = cli(*submit_argv(name, *target(cluster, namespace, helm_bin)))
    assert res.exit_code == 0, res.output
    with HoldingProxy(cluster, hold=tfjob_delete) as proxy:
        kubeconfig = proxy.kubeconfig(tmp_path / "kubeconfig")
        proc = subprocess.Popen(
            [str(helm_bin), "uninstall", name, "--namespace", namespace, "--kubeconfig", str(kubeconfig)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        kill_helm_when(proc, proxy, lambda: record_status(cluster, namespace, name) == ["uninstalling"],
                       "uninstalling release record")
    # what the interrupted uninstall left: the record says uninstalling, the TFJob is still there
    assert record_status(cluster, namespace, name) == ["uninstalling"]
    assert [j["metadata"]["name"] for j in tfjobs(cluster, namespace)] == [name]

    res = cli("delete", name, *target(cluster, namespace, helm_bin))
    assert res.exit_code == 0, res.output
    assert res.stdout == f"tfjob/{name} deleted (release {name} uninstalled from namespace {namespace})\n"
    assert res.stderr == ""
    assert no_leftovers(cluster, namespace) == {}


# ---- 9. RBAC: the limited user outside its namespace -------------------------------------------------------
def test_limited_user_submitting_into_default_is_forbidden(helm_bin, cluster):
    before = leftovers(cluster, "default")
    res = cli(*submit_argv("intruder", *target(cluster, "default", helm_bin, user="alice")))
    one_error(res, 1, 'error: installing release intruder: forbidden: User "alice" cannot get tfjobs.kubeflow.org '
                      "in namespace default: ask a cluster admin for that permission (RBAC), or work in a namespace "
                      "where you have it (-n NAMESPACE)")
    assert leftovers(cluster, "default") == before
    assert release_secrets(cluster, "default", "intruder") == []


STAY_IN_ONE_NAMESPACE = ("cluster-wide: ask a cluster admin for that permission (RBAC), or stay in one namespace you "
                         "may use (-n NAMESPACE without -A; top job rather than top node)")


@pytest.mark.parametrize(("argv", "expected"), [
    (["list", "-A"],
     f'error: listing helm releases: forbidden: User "alice" cannot list secrets {STAY_IN_ONE_NAMESPACE}'),
    (["top", "node"], f'error: listing nodes: forbidden: User "alice" cannot list nodes {STAY_IN_ONE_NAMESPACE}'),
], ids=["list-all", "top-node"])
def test_limited_user_cluster_wide_reads_are_forbidden(argv, expected, helm_bin, cluster):
    options = ["--kubeconfig", str(cluster.limited.kubeconfig), "--helm-binary", str(helm_bin)]
    before = leftovers(cluster, LIMITED_NAMESPACE)
    res = cli(*argv, *options)
    one_error(res, 1, expected)
    assert res.stdout == ""
    assert leftovers(cluster, LIMITED_NAMESPACE) == before


# ---- 10. one process, several invocations (the Python API, CliRunner) --------------------------------------
def test_debug_of_one_invocation_does_not_leak_into_the_next(helm_bin, tmp_path):
    kubeconfig = unreachable_kubeconfig(tmp_path / "kubeconfig")
    options = ["--kubeconfig", str(kubeconfig), "--helm-binary", str(helm_bin)]
    cli("list", "--debug", *options)  # fails (nothing listens), with debug output and its traceback
    res = cli("list", *options)
    expect("Logging error" not in res.stderr and "Traceback" not in res.stderr, res.stderr[:600])
    one_error(res, 1, f"error: listing helm releases: cannot reach the API server at {server_of(kubeconfig)}: "
                      "connection refused")
