"""attach through the real API server's pods/exec, proxied to the kubelet stand-in's /exec endpoint
(tests/support/kubelet_exec.py, a websocket as a kubelet serves it): output byte for byte, piped stdin,
stderr, the remote exit code, the default pod and container, and the bad cases."""

from __future__ import annotations

import os
import sys

import pytest
from kubernetes import client
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()


class Ctx:
    def __init__(self, helm_bin, cluster, namespace):
        self.base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
        self.ns = namespace

    def __call__(self, *args, input=None):  # noqa: A002 - CliRunner's name
        cmd = list(args)
        cut = cmd.index("--") if "--" in cmd else len(cmd)
        return runner.invoke(app, cmd[:cut] + self.base + cmd[cut:], input=input)


@pytest.fixture
def ctx(helm_bin, cluster, namespace):
    return Ctx(helm_bin, cluster, namespace)


@pytest.fixture
def node(kubelet, namespace):
    name = f"node-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=2)
    yield name
    client.CoreV1Api(kubelet.api_client).delete_node(name)
    kubelet.nodes.discard(name)


@pytest.fixture
def running(ctx, operator, kubelet, node):
    """A PyTorchJob "train" (master + 1 worker), both pods running on the stand-in kubelet's node."""
    res = ctx("submit", "pytorch", "--name", "train", "--image", "img:1", "--workers", "2", "--", "python", "x.py")
    assert res.exit_code == 0, res.output
    pods = operator.create_pods("PyTorchJob", ctx.ns, "train")
    for pod in pods:
        kubelet.run_pod(ctx.ns, pod, node)
    operator.set_condition("PyTorchJob", ctx.ns, "train", "Running")
    return sorted(pods)


def test_one_command_runs_in_the_master_and_its_output_arrives_byte_for_byte(ctx, kubelet, running):
    before = len(kubelet.execs)
    args = ["héllo  wörld", "$HOME", "a;b|c", "'q'", ""]
    res = ctx("attach", "train", "--", "echo", *args)
    assert res.exit_code == 0, res.output
    assert res.stdout_bytes == (" ".join(args) + "\n").encode()
    assert res.stderr_bytes == b""
    (rec,) = kubelet.execs[before:]
    # what reached the kubelet through the API server: the argv as given, stdin/stdout/stderr, no TTY
    assert (rec.namespace, rec.pod, rec.container, rec.command) == (ctx.ns, "train-master-0", "pytorch",
                                                                   ["echo", *args])
    assert (rec.stdin, rec.stdout, rec.stderr, rec.tty, rec.protocol) == (True, True, True, False,
                                                                          "v5.channel.k8s.io")
    assert rec.exit_code == 0

    # -i picks another instance; stderr comes back on stderr
    res = ctx("attach", "train", "-i", "train-worker-0", "-c", "pytorch", "--", "printf-stderr", "oops\n")
    assert (res.exit_code, res.stdout_bytes, res.stderr_bytes) == (0, b"", b"oops\n")
    assert kubelet.execs[-1].pod == "train-worker-0"


def test_stdin_is_piped_to_the_command_and_its_end_is_signalled(ctx, kubelet, running):
    data = bytes(range(256)) * 700 + "end ünïcode\n".encode()  # > 64 KiB: several frames each way
    res = ctx("attach", "train", "--", "cat", input=data)
    assert res.exit_code == 0, res.stderr
    assert res.stdout_bytes == data
    res = ctx("attach", "train", "--", "cat", input=b"")
    assert (res.exit_code, res.stdout_bytes) == (0, b"")


def test_the_remote_exit_code_is_the_exit_code(ctx, kubelet, running):
    for code in (1, 7, 255):
        res = ctx("attach", "train", "--", "exit", str(code))
        assert (res.exit_code, res.stdout_bytes, res.stderr_bytes) == (code, b"", b"")
    res = ctx("attach", "train", "--", "nosuch", "x")
    assert res.exit_code == 1
    assert res.stderr == ('error: exec in pod train-master-0: Internal error occurred: OCI runtime exec failed: exec '
                          'failed: unable to start container process: exec: "nosuch": executable file not found in '
                          '$PATH: unknown\n')


def test_bad_targets_are_one_line_errors(ctx, cluster, operator, kubelet, running, namespace):
    ns = namespace
    before = len(kubelet.execs)

    def fails(res, code, line):
        assert (res.exit_code, res.stdout, res.stderr) == (code, "", f"error: {line}\n"), res.output

    fails(ctx("attach", "nope", "--", "echo"), 1, f"no job named nope in namespace {ns} (see arena-helm list)")
    fails(ctx("attach", "train", "-i", "train-worker-9", "--", "echo"), 1,
          "-i/--instance train-worker-9: job train has no such instance (its pods: train-master-0, train-worker-0)")
    fails(ctx("attach", "train", "-c", "sidecar", "--", "echo"), 2,
          "-c/--container sidecar: pod train-master-0 has pytorch")
    fails(ctx("attach", "train", "-T", "tf", "--", "echo"), 1,
          f"no TFJob named train in namespace {ns} (see arena-helm list)")
    kubelet.set_pod_state(ns, "train-worker-0", "Pending")
    fails(ctx("attach", "train", "-i", "train-worker-0", "--", "echo"), 1,
          f"pod train-worker-0 is Pending: wait until it runs (see arena-helm get train -n {ns})")
    # a job with no pods yet
    assert ctx("submit", "tf", "--name", "fresh", "--image", "img:1", "--", "true").exit_code == 0
    fails(ctx("attach", "fresh"), 1, f"job fresh has no pods yet (see arena-helm get fresh -n {ns})")
    # a finished job
    for pod in running:
        kubelet.set_pod_state(ns, pod, "Succeeded")
    operator.set_condition("PyTorchJob", ns, "train", "Succeeded")
    fails(ctx("attach", "train", "--", "echo", "hi"), 1,
          "pytorchjob/train already succeeded: its pods no longer run; read what they printed with arena-helm logs "
          "train")
    assert len(kubelet.execs) == before  # none of them reached the kubelet


def test_the_api_server_refusal_is_one_line(ctx, cluster, kubelet, running, namespace):
    """A pod deleted between the check and the exec: the API server's own answer, in one line."""
    from arena_helm.errors import NotFoundError
    from arena_helm.kube import KubeReader, open_exec

    with pytest.raises(NotFoundError) as err:
        open_exec(KubeReader(str(cluster.admin.kubeconfig)), namespace, "gone-0", "pytorch", ["echo"], False)
    assert str(err.value) == 'exec in pod gone-0: pods "gone-0" not found'


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pseudo-terminal")
def test_an_interactive_shell_gets_a_terminal(ctx, cluster, kubelet, running, helm_bin, namespace):
    """The default: ``sh`` with a TTY when stdin and stdout are terminals (a real pty here, the CLI in a
    child process): raw mode, the terminal size sent on the resize channel, typed lines reach the shell."""
    import pty
    import select
    import subprocess
    import time

    before = len(kubelet.execs)
    primary, secondary = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "arena_helm", "attach", "train", *ctx.base],
                            stdin=secondary, stdout=secondary, stderr=secondary, close_fds=True)
    os.close(secondary)
    out = b""

    def read_until(marker: bytes, timeout: float = 30.0) -> None:
        nonlocal out
        deadline = time.monotonic() + timeout
        while marker not in out:
            assert time.monotonic() < deadline, out
            r, _, _ = select.select([primary], [], [], 0.2)
            if r:
                try:
                    out += os.read(primary, 4096)
                except OSError:
                    break

    try:
        read_until(b"$ ")
        os.write(primary, b"echo hi there\r")
        read_until(b"hi there\r\n$ ")
        os.write(primary, b"exit 3\r")
        assert proc.wait(timeout=30) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(primary)
    (rec,) = kubelet.execs[before:]
    assert (rec.command, rec.tty, rec.stderr) == (["sh"], True, False)
    assert rec.resizes[:1] == [{"Width": 132, "Height": 40}]
    # the shell's echo of what was typed, not the local terminal's (raw mode): each typed byte once
    assert out.count(b"echo hi there") == 1
