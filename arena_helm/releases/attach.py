"""``attach``: run a command (by default a shell) in one of a job's pods, through the API server's exec.

The connection is the API server's ``pods/exec`` websocket (``kubernetes.stream``), offering the
``v5.channel.k8s.io`` protocol (stdin can be closed, so ``cat`` and friends see the end of piped input)
and ``v4.channel.k8s.io`` (what older clusters speak; there the end of stdin cannot be signalled).
Channels: 0 stdin, 1 stdout, 2 stderr, 3 the final status (the remote exit code), 4 terminal size.
One thread: ``select`` over the socket and stdin; data the TLS layer already holds is drained first.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import select
import sys
from dataclasses import dataclass

from ..core.errors import ArenaHelmError, ClusterError
from ..views.jobs import job_phase, job_suspended, pod_job_selector
from ..views.pods import pick_container, pick_pod
from ..workload.gateway import Cluster
from .reader import find_job, no_pods

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


@dataclass
class Target:
    pod: str
    container: str
    kind: str


def pick_target(c: Cluster, namespace: str, name: str, instance: str | None, container: str | None,
                kind: str | None = None) -> Target:
    """The pod and container to run in: ``instance`` or the chief/master/launcher; its first container."""
    k, _, job, release = find_job(c, namespace, name, kind)
    ref = f"{k.lower()}/{name}"
    if job is not None:
        phase = job_phase(job)
        if phase in ("Succeeded", "Failed"):
            raise ArenaHelmError(f"{ref} already {phase.lower()}: its pods no longer run; read what they "
                                 f"printed with arena-helm logs {name}")
        if job_suspended(job):
            raise ArenaHelmError(f"{ref} is suspended: it has no running pods (arena-helm resume {name} first)")
    pods = c.kube.list_pods(namespace, selector=pod_job_selector(k, name))
    if not pods and instance is None:  # why it has none, as logs and get say it
        raise no_pods(c, namespace, name, k, job, release)
    pod = pick_pod(pods, name, namespace, instance, dt.datetime.now(dt.UTC), k)
    pod_name = pod["metadata"]["name"]
    chosen = pick_container(pod, container)
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    if phase != "Running":
        hint = "it has finished" if phase in ("Succeeded", "Failed") else "wait until it runs"
        raise ArenaHelmError(f"pod {pod_name} is {phase}: {hint} (see arena-helm get {name} -n {namespace})")
    return Target(pod_name, chosen, k)


def exit_code(status: bytes, pod: str) -> int:
    """The remote exit code from the status channel's metav1.Status."""
    if not status.strip():
        raise ClusterError(f"exec in pod {pod}: the connection closed without an exit status")
    try:
        data = json.loads(status)
    except ValueError:  # v1-v3 protocols send the error as text
        raise ClusterError(f"exec in pod {pod}: {status.decode(errors='replace').strip()}") from None
    if data.get("status") == "Success":
        return 0
    if data.get("reason") == "NonZeroExitCode":
        for cause in (data.get("details") or {}).get("causes") or []:
            if cause.get("reason") == "ExitCode":
                return int(cause.get("message", "1"))
    raise ClusterError(f"exec in pod {pod}: {' '.join(str(data.get('message', 'failed')).split())}")


def _stdin_fd(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


def pump(ch, pod: str, stdin, stdout, stderr, *, tty: bool = False) -> int:
    """Copy stdin to the remote process and its output to stdout/stderr until it ends; its exit code.
    ``ch`` is a ``kube.ExecChannel``."""
    fd = _stdin_fd(stdin)
    stdin_open = True
    status = b""
    resize = _ResizeWatcher(ch, fd) if tty and fd is not None else None

    def send_stdin(data: bytes) -> None:
        nonlocal stdin_open
        if not data:
            stdin_open = False
            if ch.v5:
                ch.close_stdin()
        elif not ch.send(STDIN, data):
            stdin_open = False

    try:
        while True:
            pending = ch.pending()
            watch = [ch.sock] + ([fd] if stdin_open and fd is not None else [])
            timeout = 0 if pending or (stdin_open and fd is None) else (0.5 if resize else None)
            readable, _, _ = select.select(watch, [], [], timeout)
            if resize:
                resize.check()
            if stdin_open and fd is None:  # an in-memory stream (tests): never blocks
                send_stdin(stdin.read(65536) or b"")
            elif fd is not None and fd in readable:
                send_stdin(os.read(fd, 65536))
            if not pending and ch.sock not in readable:
                continue
            msg = ch.recv()
            if msg is None:
                break
            channel, body = msg
            if channel == STDOUT:
                stdout.write(body)
                stdout.flush()
            elif channel == STDERR:
                stderr.write(body)
                stderr.flush()
            elif channel == ERROR:
                status += body
    finally:
        if resize:
            resize.stop()
        ch.close()
    return exit_code(status, pod)


class _ResizeWatcher:
    """Sends the terminal's size on channel 4 at start and whenever it changes (SIGWINCH sets a flag)."""

    def __init__(self, ch, fd: int):
        import signal

        self.ch, self.fd, self.changed, self.last = ch, fd, True, None
        self._old = signal.signal(signal.SIGWINCH, self._on_winch)
        self.check()

    def _on_winch(self, *_):
        self.changed = True

    def check(self) -> None:
        if not self.changed:
            return
        self.changed = False
        try:
            size = os.get_terminal_size(self.fd)
        except OSError:
            return
        if (size.columns, size.lines) != self.last:
            self.last = (size.columns, size.lines)
            self.ch.send(RESIZE, json.dumps({"Width": size.columns, "Height": size.lines}).encode())

    def stop(self) -> None:
        import signal

        signal.signal(signal.SIGWINCH, self._old)


def run_attached(ch, pod: str, *, tty: bool) -> int:
    """Run with this process's stdin/stdout/stderr; with ``tty``, the local terminal in raw mode."""
    stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
    fd = _stdin_fd(stdin)
    saved = None
    if tty and fd is not None and os.isatty(fd):
        import termios
        import tty as ttymod

        saved = termios.tcgetattr(fd)
        ttymod.setraw(fd)
    try:
        return pump(ch, pod, stdin, sys.stdout.buffer, sys.stderr.buffer, tty=tty)
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
