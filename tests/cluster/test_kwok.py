"""kwok (tests/support/kwok.py, stages in tests/data/kwok/) as the nodes and kubelets of the real control
plane: nodes, the pod lifecycle its stages play, the real scheduler and job controller on top, and logs,
exec and attach through the API server's kubelet proxy."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

pytestmark = pytest.mark.cluster


@pytest.fixture
def kwok(kubelet):
    return kubelet  # the session's kwok (tests/conftest.py)


@pytest.fixture
def core(cluster):
    return client.CoreV1Api(cluster.api_client())


@pytest.fixture
def node(kwok, namespace):
    name = f"kwok-{namespace}"
    kwok.add_node(name, pool=namespace, gpus=4)
    yield name
    kwok.remove_node(name)


def pod_body(name: str, *, restart: str = "Never", gpus: int = 0, annotations: dict | None = None,
             containers: tuple[str, ...] = ("main",)) -> dict:
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "restartPolicy": restart,
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": c, "image": f"registry.example/{c}:1.0", "resources": resources}
                           for c in containers],
        },
    }


def until(check, what: str, timeout: float = 30.0, interval: float = 0.1):
    """Poll ``check()`` until it returns something truthy (returned), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"not {what} after {timeout}s"
        time.sleep(interval)


def terminated(pod, container: str = "main"):
    return next(s for s in pod.status.container_statuses if s.name == container).state.terminated


# ---- nodes ---------------------------------------------------------------------------------------------
def test_a_node_is_made_ready_with_its_gpus_and_a_not_ready_one_gets_no_pods(kwok, core, namespace):
    ready, down = f"gpu-{namespace}", f"down-{namespace}"
    kwok.add_node(ready, pool=namespace, gpus=8, allocatable_gpus=6, labels={"zone": "a"})
    kwok.add_node(down, pool=namespace, gpus=8, ready=False)
    try:
        node = core.read_node(ready)
        conds = {c.type: (c.status, c.reason) for c in node.status.conditions}
        assert conds["Ready"] == ("True", "KubeletReady")
        assert conds["MemoryPressure"] == ("False", "KubeletHasSufficientMemory")
        assert node.status.capacity["nvidia.com/gpu"] == "8"
        assert node.status.allocatable["nvidia.com/gpu"] == "6"  # kept by node-initialize
        assert (node.status.allocatable["cpu"], node.status.allocatable["memory"]) == ("32", "128Gi")
        assert [(a.type, a.address) for a in node.status.addresses] == [("InternalIP", "127.0.0.1")]
        assert node.status.daemon_endpoints.kubelet_endpoint.port == kwok.port
        assert node.status.node_info.kubelet_version == kwok.kube_version
        assert not node.spec.taints  # the admission's not-ready taint lifted
        assert node.metadata.labels["zone"] == "a" and node.metadata.labels["arena-helm.test/pool"] == namespace

        node = core.read_node(down)
        ready_cond = next(c for c in node.status.conditions if c.type == "Ready")
        assert (ready_cond.status, ready_cond.reason) == ("False", "KubeletNotReady")
        assert [t.key for t in node.spec.taints] == ["node.kubernetes.io/not-ready"]

        # the real scheduler: 6 allocatable GPUs; 7 do not fit anywhere (the other node is not ready)
        core.create_namespaced_pod(namespace, pod_body("big", gpus=7))
        msg = kwok.wait_unschedulable(namespace, "big")
        assert "Insufficient nvidia.com/gpu" in msg and "untolerated taint" in msg, msg
        kwok.set_allocatable_gpus(ready, 7)  # a device plugin re-registering: now it fits
        assert kwok.run_pod(namespace, "big") == ready
    finally:
        kwok.remove_node(ready)
        kwok.remove_node(down)


# ---- the pod lifecycle ---------------------------------------------------------------------------------
def test_a_bare_pod_is_scheduled_by_the_scheduler_and_runs(kwok, core, namespace, node):
    for name in ("a", "b"):
        core.create_namespaced_pod(namespace, pod_body(name, gpus=1))
    assert kwok.run_pod(namespace, "a") == node
    assert kwok.run_pod(namespace, "b", node) == node
    a, b = (core.read_namespaced_pod(n, namespace) for n in ("a", "b"))
    st = a.status
    assert st.phase == "Running" and a.spec.node_name == node
    conds = {c.type: c.status for c in st.conditions}
    assert conds == {"PodScheduled": "True", "PodReadyToStartContainers": "True", "Initialized": "True",
                     "ContainersReady": "True", "Ready": "True"}
    assert st.host_ip == "127.0.0.1" and [i.ip for i in st.host_ips] == ["127.0.0.1"]
    assert st.pod_ip.startswith("10.0.") and [i.ip for i in st.pod_ips] == [st.pod_ip]
    assert st.pod_ip != b.status.pod_ip
    assert st.start_time is not None
    (cs,) = st.container_statuses
    assert (cs.name, cs.image, cs.ready, cs.started, cs.restart_count) == (
        "main", "registry.example/main:1.0", True, True, 0)
    assert cs.container_id.startswith("containerd://") and len(cs.container_id) == len("containerd://") + 64
    assert cs.image_id.startswith("registry.example/main@sha256:")
    assert cs.state.running.started_at is not None
    assert cs.container_id != b.status.container_statuses[0].container_id

    with_init = pod_body("c")  # an init container (ran to completion) and a sidecar (restartPolicy Always)
    with_init["spec"]["initContainers"] = [{"name": "setup", "image": "registry.example/setup:1"},
                                           {"name": "proxy", "image": "registry.example/proxy:1",
                                            "restartPolicy": "Always"}]
    core.create_namespaced_pod(namespace, with_init)
    kwok.run_pod(namespace, "c")
    setup, proxy = core.read_namespaced_pod("c", namespace).status.init_container_statuses
    assert (setup.name, setup.state.terminated.exit_code, setup.state.terminated.reason) == ("setup", 0, "Completed")
    assert (proxy.name, proxy.started, proxy.state.running is not None) == ("proxy", True, True)


def test_a_pod_finishes_succeeded_or_failed_with_exit_code_3(kwok, core, namespace, node):
    for name in ("ok", "bad", "raw"):
        core.create_namespaced_pod(namespace, pod_body(name))
        kwok.run_pod(namespace, name)
    running_id = core.read_namespaced_pod("ok", namespace).status.container_statuses[0].container_id

    kwok.set_pod_state(namespace, "ok", "Succeeded")
    pod = core.read_namespaced_pod("ok", namespace)
    term = terminated(pod)
    assert (pod.status.phase, term.exit_code, term.reason) == ("Succeeded", 0, "Completed")
    assert term.container_id == running_id == pod.status.container_statuses[0].container_id
    assert term.started_at <= term.finished_at
    assert {c.type: (c.status, c.reason) for c in pod.status.conditions}["Ready"] == ("False", "PodCompleted")

    kwok.set_pod_state(namespace, "bad", "Failed", exit_code=3)
    pod = core.read_namespaced_pod("bad", namespace)
    assert (pod.status.phase, terminated(pod).exit_code, terminated(pod).reason) == ("Failed", 3, "Error")
    assert {c.type: (c.status, c.reason) for c in pod.status.conditions}["Ready"] == ("False", "ContainersNotReady")

    pod = kwok.finish_pod(namespace, "raw", 3, message="boom")  # the helper: the same through its arguments
    assert (pod.status.phase, terminated(pod).exit_code, terminated(pod).message) == ("Failed", 3, "boom")
    with pytest.raises(AssertionError, match="cannot become Running"):
        kwok.set_pod_state(namespace, "raw", "Running")


def test_oom_killed_is_exit_code_137_with_its_reason_and_only_the_named_container(kwok, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("oom", containers=("trainer", "sidecar")))
    kwok.run_pod(namespace, "oom")
    pod = kwok.finish_pod(namespace, "oom", 137, reason="OOMKilled", container="trainer")
    assert pod.status.phase == "Failed"
    trainer, sidecar = terminated(pod, "trainer"), terminated(pod, "sidecar")
    assert (trainer.exit_code, trainer.reason) == (137, "OOMKilled")
    assert (sidecar.exit_code, sidecar.reason) == (0, "Completed")


def test_an_on_failure_pod_restarts_in_place(kwok, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("flaky", restart="OnFailure"))
    kwok.run_pod(namespace, "flaky")
    first = core.read_namespaced_pod("flaky", namespace).status
    kwok.write_log(namespace, "flaky", "main", "run 1")

    pod = kwok.restart_container(namespace, "flaky", 2)
    (cs,) = pod.status.container_statuses
    assert pod.status.phase == "Running" and cs.ready and cs.state.running is not None
    assert cs.restart_count == 1
    last = cs.last_state.terminated
    assert (last.exit_code, last.reason) == (2, "Error")
    assert last.container_id == first.container_statuses[0].container_id != cs.container_id
    assert pod.status.pod_ip == first.pod_ip  # the same sandbox
    events = until(lambda: [e for e in core.list_namespaced_event(namespace).items
                            if e.involved_object.name == "flaky" and e.reason == "BackOff"], "a BackOff event")
    assert events[0].type == "Warning"

    # the log of the run before the restart is the previous container's
    read = core.read_namespaced_pod_log
    assert read("flaky", namespace, container="main", _preload_content=False).data == b""
    assert read("flaky", namespace, container="main", previous=True, _preload_content=False).data == b"run 1\n"

    pod = kwok.restart_container(namespace, "flaky", 137, reason="OOMKilled")
    cs = pod.status.container_statuses[0]
    assert (cs.restart_count, cs.last_state.terminated.exit_code, cs.last_state.terminated.reason) == (
        2, 137, "OOMKilled")
    assert kwok.finish_pod(namespace, "flaky", 0).status.container_statuses[0].restart_count == 2

    core.create_namespaced_pod(namespace, pod_body("never"))
    kwok.run_pod(namespace, "never")
    with pytest.raises(ValueError, match="restartPolicy Never"):
        kwok.restart_container(namespace, "never", 1)


def test_the_pod_template_can_say_fail_twice_then_succeed(kwok, core, namespace, node):
    ann = {"arena-helm.test/restart-count": "2", "arena-helm.test/restart-exit-code": "1",
           "arena-helm.test/exit-code": "0"}
    core.create_namespaced_pod(namespace, pod_body("retry", restart="OnFailure", annotations=ann))
    pod = kwok.wait_pod(namespace, "retry", lambda p: p.status.phase == "Succeeded", "Succeeded")
    cs = pod.status.container_statuses[0]
    assert (cs.restart_count, cs.last_state.terminated.exit_code, cs.state.terminated.exit_code) == (2, 1, 0)


def test_eviction(kwok, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("victim", restart="Always"))
    kwok.run_pod(namespace, "victim")
    msg = "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 1Gi. "
    pod = kwok.evict_pod(namespace, "victim", msg)
    st = pod.status
    assert (st.phase, st.reason, st.message) == ("Failed", "Evicted", msg)
    target = next(c for c in st.conditions if c.type == "DisruptionTarget")
    assert (target.status, target.reason, target.message) == ("True", "TerminationByKubelet", msg)
    assert (terminated(pod).exit_code, terminated(pod).reason) == (137, "Error")

    core.create_namespaced_pod(namespace, pod_body("victim2"))  # the former stand-in's way: set_pod_state
    kwok.run_pod(namespace, "victim2")
    kwok.set_pod_state(namespace, "victim2", "Failed", reason="Evicted", message="Pod ephemeral local storage usage")
    assert core.read_namespaced_pod("victim2", namespace).status.reason == "Evicted"


def test_image_pull_back_off_keeps_the_pod_pending_until_let_go(kwok, core, namespace, node):
    msg = 'Back-off pulling image "registry.example/main:1.0"'
    core.create_namespaced_pod(namespace, pod_body("pull"))
    kwok.wait_scheduled(namespace, "pull")
    kwok.set_pod_state(namespace, "pull", "Pending", waiting_reason="ImagePullBackOff", message=msg)
    pod = core.read_namespaced_pod("pull", namespace)
    (cs,) = pod.status.container_statuses
    assert pod.status.phase == "Pending" and pod.status.message == msg
    assert (cs.state.waiting.reason, cs.state.waiting.message, cs.ready) == ("ImagePullBackOff", msg, False)
    assert {c.type: c.status for c in pod.status.conditions}["Ready"] == "False"
    # from the pod template: straight to ErrImagePull, never Running
    ann = {"arena-helm.test/waiting-reason": "ErrImagePull", "arena-helm.test/waiting-message": "not found"}
    core.create_namespaced_pod(namespace, pod_body("pull2", annotations=ann))
    pod = kwok.wait_pod(namespace, "pull2", lambda p: kwok._waiting(p, "ErrImagePull"), "ErrImagePull")
    assert pod.status.phase == "Pending" and pod.status.container_statuses[0].state.waiting.message == "not found"
    # still Pending after kwok handled another change of it (an unrelated annotation)
    kwok.annotate(namespace, "pull", {"unrelated": "x"})
    until(lambda: core.read_namespaced_pod("pull", namespace).metadata.annotations.get("unrelated"), "annotated")
    assert core.read_namespaced_pod("pull", namespace).status.phase == "Pending"

    kwok.set_pod_state(namespace, "pull", "Running")  # the image arrived
    pod = core.read_namespaced_pod("pull", namespace)
    assert pod.status.phase == "Running" and pod.status.message is None
    ip = pod.status.pod_ip
    kwok.set_pod_state(namespace, "pull", "Pending")  # back to ContainerCreating (the former stand-in's Pending)
    pod = core.read_namespaced_pod("pull", namespace)
    assert pod.status.container_statuses[0].state.waiting.reason == "ContainerCreating"
    kwok.set_pod_state(namespace, "pull", "Running", waiting_reason="CrashLoopBackOff")
    assert core.read_namespaced_pod("pull", namespace).status.phase == "Running"
    kwok.run_pod(namespace, "pull")
    assert core.read_namespaced_pod("pull", namespace).status.pod_ip == ip  # one IP for the pod's life


def test_a_batch_job_completes_through_the_real_job_controller(kwok, cluster, namespace, node):
    batch = client.BatchV1Api(cluster.api_client())
    for name, code in (("done", "0"), ("broken", "1")):
        template = pod_body(name, annotations={"arena-helm.test/exit-code": code})
        template["metadata"] = {"annotations": template["metadata"]["annotations"]}
        batch.create_namespaced_job(namespace, {
            "metadata": {"name": name},
            "spec": {"backoffLimit": 0, "completions": 1, "template": template},
        })

    def condition(name, ctype):
        job = batch.read_namespaced_job(name, namespace)
        return next((c for c in job.status.conditions or [] if c.type == ctype and c.status == "True"), None)

    until(lambda: condition("done", "Complete"), "Complete")
    job = batch.read_namespaced_job("done", namespace)
    assert (job.status.succeeded, job.status.failed or 0) == (1, 0)
    failed = until(lambda: condition("broken", "Failed"), "Failed")
    assert failed.reason == "BackoffLimitExceeded"


def test_deleting_a_pod_ends_it(kwok, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("doomed", restart="Always"))
    kwok.run_pod(namespace, "doomed")
    core.delete_namespaced_pod("doomed", namespace)  # grace period 30 s: kwok's pod-delete confirms at once

    def gone():
        try:
            core.read_namespaced_pod("doomed", namespace)
        except ApiException as exc:
            return exc.status == 404
        return False

    start = time.monotonic()
    until(gone, "deleted", timeout=15)
    assert time.monotonic() - start < 10


# ---- logs, exec and attach through the API server ----------------------------------------------------
def test_pod_logs_come_through_the_api_server_from_kwok(kwok, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("p", containers=("main", "side")))
    kwok.run_pod(namespace, "p")

    def read(container="main", **kw) -> str:
        return core.read_namespaced_pod_log("p", namespace, container=container, _preload_content=False,
                                            **kw).data.decode()

    assert read() == ""  # nothing written yet
    kwok.write_log(namespace, "p", "main", "epoch 1\nepoch 2\nepoch 3")
    kwok.write_log(namespace, "p", "main", "warning: slow", stream="stderr")
    kwok.write_log(namespace, "p", "side", "sidecar up")
    assert read() == "epoch 1\nepoch 2\nepoch 3\nwarning: slow\n"
    assert read("side") == "sidecar up\n"
    assert read(tail_lines=1) == "warning: slow\n"
    stamped = read(timestamps=True, tail_lines=2).splitlines()
    assert [line.split(" ", 1)[1] for line in stamped] == ["epoch 3", "warning: slow"]
    assert all(line[:4].isdigit() and line.split(" ")[0].endswith("Z") for line in stamped)
    assert read(limit_bytes=10) == "epoch 1\nep"
    assert read(since_seconds=3600).startswith("epoch 1\n")
    with pytest.raises(ApiException) as err:  # no restart: no previous container
        read(previous=True)
    assert err.value.status == 400

    # follow: lines written later arrive on the open stream; close_log ends it (kwok's error text last)
    resp = core.read_namespaced_pod_log("p", namespace, container="main", follow=True, _preload_content=False)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.extend(resp.stream(16)), daemon=True)
    reader.start()
    until(lambda: b"".join(got).count(b"\n") == 4, "the first lines on the stream")
    kwok.write_log(namespace, "p", "main", "epoch 4")
    until(lambda: b"epoch 4\n" in b"".join(got), "epoch 4 on the open stream")
    kwok.close_log(namespace, "p", "main")
    reader.join(15)
    assert not reader.is_alive()
    text = b"".join(got).decode()
    assert kwok.strip_close_marker(text) == "epoch 1\nepoch 2\nepoch 3\nwarning: slow\nepoch 4\n"
    assert text != kwok.strip_close_marker(text)
    assert read() == "epoch 1\nepoch 2\nepoch 3\nwarning: slow\nepoch 4\n"  # later reads: all of it
    with pytest.raises(AssertionError, match="closed"):
        kwok.write_log(namespace, "p", "main", "too late")


def _kubectl() -> Path | None:
    """The kubectl scripts/install-helm.sh puts next to helm (.venv/bin/helm links into its folder)."""
    helm = shutil.which("helm", path=str(Path(sys.executable).parent))
    kubectl = Path(helm).resolve().parent / "kubectl" if helm else None
    return kubectl if kubectl and kubectl.exists() else None


def test_exec_through_the_api_server_runs_on_this_machine(kwok, cluster, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("p"))
    kwok.run_pod(namespace, "p")

    def py_exec(argv, stdin: bytes | None = None, tty: bool = False):
        ws = stream(core.connect_get_namespaced_pod_exec, "p", namespace, container="main", command=argv,
                    stdin=stdin is not None, stdout=True, stderr=not tty, tty=tty, _preload_content=False)
        if stdin is not None:
            ws.write_stdin(stdin.decode())
        out = err = ""
        deadline = time.monotonic() + 30
        while ws.is_open() and time.monotonic() < deadline:
            ws.update(timeout=1)
            out += ws.read_stdout() if ws.peek_stdout() else ""
            err += ws.read_stderr() if ws.peek_stderr() else ""
        status = ws.read_channel(3)
        return out, err, status

    out, err, status = py_exec(["sh", "-c", "echo hi; echo oops >&2; pwd; echo $ARENA_HELM_KWOK_EXEC"])
    assert out == f"hi\n{kwok.exec_dir}\n1\n" and err == "oops\n"
    assert '"Success"' in status
    out, _, status = py_exec(["sh", "-c", "exit 3"])
    # kwok wraps the exit error, so the status is an InternalError: the code only in its message
    assert '"InternalError"' in status and "exit status 3" in status and "NonZeroExitCode" not in status
    _, _, status = py_exec(["no-such-binary"])
    assert "executable file not found" in status
    out, _, _ = py_exec(["head", "-n1"], stdin=b"piped line\n")
    assert out == "piped line\n"

    # a TTY: a pty of its own, stderr on it too. kwok closes the pty as soon as the command exits, racing
    # the copy of its last output: the command answers a typed line, then waits for a second one before it
    # exits, so that only output nobody checks can be lost
    ws = stream(core.connect_get_namespaced_pod_exec, "p", namespace, container="main", tty=True, stdin=True,
                stdout=True, stderr=False, _preload_content=False,
                command=["sh", "-c", "tty; echo to-stderr >&2; read x; echo got $x; read y"])
    out = ""
    deadline = time.monotonic() + 30

    def read_until(text: str) -> None:
        nonlocal out
        while text not in out:
            assert time.monotonic() < deadline and ws.is_open(), out
            ws.update(timeout=0.5)
            out += ws.read_stdout() if ws.peek_stdout() else ""

    read_until("to-stderr")
    ws.write_stdin("typed\r")
    read_until("got typed")
    ws.write_stdin("bye\r")
    while ws.is_open() and time.monotonic() < deadline:
        ws.update(timeout=0.5)
    assert out.startswith("/dev/pts/") and "to-stderr\r\n" in out and "typed\r\n" in out, out
    assert '"Success"' in ws.read_channel(3)

    kubectl = _kubectl()
    if kubectl is None:
        return
    base = [str(kubectl), "--kubeconfig", str(cluster.admin.kubeconfig), "-n", namespace, "exec", "-i", "p", "--"]
    # kwok never closes the command's stdin pipe (pkg/utils/exec Command: io.Copy, no Close): a command
    # that reads to the end of stdin (cat) never ends; one that reads what it needs does
    res = subprocess.run([*base, "sh", "-c", "head -n1; echo done"], input="from stdin\n", capture_output=True,
                         text=True, timeout=60)
    assert (res.returncode, res.stdout) == (0, "from stdin\ndone\n")
    res = subprocess.run([*base, "sh", "-c", "echo before; exit 3"], capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout) == (1, "before\n")  # not 3
    assert "error executing command in container: cmd wait: sh -c echo before; exit 3: exit status 3" in res.stderr


def test_the_projects_exec_client_gets_output_and_the_failure(kwok, cluster, core, namespace, node):
    """arena-helm attach's own client: websocket v5, which the API server turns into SPDY towards kwok."""
    from arena_helm.adapters.kube import KubeReader, open_exec
    from arena_helm.core.errors import ClusterError
    from arena_helm.releases.attach import pump

    core.create_namespaced_pod(namespace, pod_body("p"))
    kwok.run_pod(namespace, "p")
    kube = KubeReader(str(cluster.admin.kubeconfig))
    out, err = io.BytesIO(), io.BytesIO()
    ch = open_exec(kube, namespace, "p", "main", ["head", "-c", "100000"], False)  # not cat: see above
    assert ch.v5
    assert pump(ch, "p", io.BytesIO(b"x" * 100_000), out, err) == 0
    assert out.getvalue() == b"x" * 100_000
    ch = open_exec(kube, namespace, "p", "main", ["sh", "-c", "exit 7"], False)
    with pytest.raises(ClusterError, match="exit status 7"):
        pump(ch, "p", io.BytesIO(b""), out, err)


def test_attach_streams_what_is_written_after_it_connects(kwok, core, namespace, node):
    core.create_namespaced_pod(namespace, pod_body("p"))
    kwok.run_pod(namespace, "p")
    kwok.write_log(namespace, "p", "main", "before attach")  # creates the pod's Logs and Attach objects

    def attach():
        return stream(core.connect_get_namespaced_pod_attach, "p", namespace, container="main", stdout=True,
                      stderr=True, stdin=False, tty=False, _preload_content=False)

    # kwok starts reading at the end of the file once the stream is set up, which the client cannot see:
    # write until a line arrives (a stream closed with a status, i.e. kwok had not seen the Attach object
    # yet, is opened again)
    ws, got, written = attach(), "", []
    deadline = time.monotonic() + 20
    try:
        while not got:
            assert time.monotonic() < deadline, written
            if not ws.is_open() or ws.read_channel(3):
                ws.close()
                ws = attach()
                continue
            written.append(f"line {len(written)}")
            kwok.write_log(namespace, "p", "main", written[-1])
            ws.update(timeout=0.5)
            got += ws.read_stdout() if ws.peek_stdout() else ""
        assert set(got.splitlines()) <= set(written)  # only what came after the connection
        kwok.write_log(namespace, "p", "main", "final")
        while "final\n" not in got:  # the stream is live now: this one line arrives
            assert time.monotonic() < deadline, got
            ws.update(timeout=0.5)
            got += ws.read_stdout() if ws.peek_stdout() else ""
        kwok.close_log(namespace, "p", "main")  # the attached stream reads the same file: it ends too
        while ws.is_open():
            assert time.monotonic() < deadline, "attach still open after close_log"
            ws.update(timeout=0.5)
        assert "is a directory" in ws.read_channel(3)  # kwok's read error, as the exec status
    finally:
        ws.close()
