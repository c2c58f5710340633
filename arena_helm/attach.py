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
import re
import select
import sys
from dataclasses import dataclass

from .errors import ArenaHelmError, ClusterError, NotFoundError, UsageError
from .reader import Cluster, find_job
from .views import JOB_NAME_LABEL, chief_first, instance_of, job_phase, job_suspended

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


@dataclass
class Target:
    pod: str
    container: str
    kind: str


def pick_target(c: Cluster, namespace: str, name: str, instance: str | None, container: str | None,
                kind: str | None = None) -> Target:
    """The pod and container to run in: ``instance`` or the chief/master/launcher; its first container."""
    k, _, job, _ = find_job(c, namespace, name, kind)
    ref = f"{k.lower()}/{name}"
    if job is not None:
        phase = job_phase(job)
        if phase in ("Succeeded", "Failed"):
            raise ArenaHelmError(f"{ref} already {phase.lower()}: its pods no longer run; read what they "
                                 f"printed with arena-helm logs {name}")
        if job_suspended(job):
            raise ArenaHelmError(f"{ref} is suspended: it has no running pods (arena-helm resume {name} first)")
    pods = c.kube.list_pods(namespace, selector=f"{JOB_NAME_LABEL}={name}")
    if instance:
        pod = next((p for p in pods if p["metadata"]["name"] == instance), None)
        if pod is None:
            names = ", ".join(sorted(p["metadata"]["name"] for p in pods)) or "none yet"
            raise NotFoundError(f"-i/--instance {instance}: job {name} has no such instance (its pods: {names})")
    else:
        ranked = chief_first([instance_of(p, dt.datetime.now(dt.UTC)) for p in pods], pods)
        if not ranked:
            raise NotFoundError(f"job {name} has no pods yet (see arena-helm get {name} -n {namespace})")
        pod = next(p for p in pods if p["metadata"]["name"] == ranked[0].name)
    pod_name = pod["metadata"]["name"]
    containers = [x["name"] for x in (pod.get("spec") or {}).get("containers") or []]
    if container and container not in containers:
        raise UsageError(f"-c/--container {container}: pod {pod_name} has {', '.join(containers)}")
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    if phase != "Running":
        hint = "it has finished" if phase in ("Succeeded", "Failed") else "wait until it runs"
        raise ArenaHelmError(f"pod {pod_name} is {phase}: {hint} (see arena-helm get {name} -n {namespace})")
    return Target(pod_name, container or containers[0], k)


def _handshake_error(exc, pod: str) -> ArenaHelmError:
    """kubernetes.stream turns a refused upgrade into ApiException(status=0, reason="Handshake status 404
    Not Found -+-+- {headers} -+-+- {status JSON}"): keep the API server's own message."""
    text = str(getattr(exc, "reason", "") or exc)
    body = text.rsplit("-+-+-", 1)[-1].strip()
    if body.startswith(("b'", 'b"')):  # older websocket-client versions print the body as bytes
        body = body[2:-1].encode().decode("unicode_escape")
    try:
        message = json.loads(body).get("message", "")
    except (ValueError, AttributeError):
        message = ""
    status = re.search(r"Handshake status (\d+)", text)
    code = int(status.group(1)) if status else 0
    message = message or text.splitlines()[0]
    if code == 403:
        from .errors import ForbiddenError

        return ForbiddenError(f"exec in pod {pod}: forbidden: {message}")
    if code == 404:
        return NotFoundError(f"exec in pod {pod}: {message}")
    return ClusterError(f"exec in pod {pod}: {message}")


def open_exec(c: Cluster, namespace: str, target: Target, command: list[str], tty: bool):
    """The websocket client (kubernetes.stream.ws_client.WSClient, binary) of one exec."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    from kubernetes.stream import stream

    core = client.CoreV1Api(c.kube.api)
    c.kube.requests += 1
    try:
        return stream(core.connect_get_namespaced_pod_exec, target.pod, namespace, container=target.container,
                      command=command, stdin=True, stdout=True, stderr=not tty, tty=tty,
                      _preload_content=False, binary=True)
    except ApiException as exc:
        raise _handshake_error(exc, target.pod) from None
    except AttributeError as exc:
        # the client's ApiClient decodes ``e.body`` of the handshake's ApiException, which is None: the
        # ApiException with the API server's answer is the context of that AttributeError
        if isinstance(exc.__context__, ApiException):
            raise _handshake_error(exc.__context__, target.pod) from None
        raise
    except OSError as exc:
        raise ClusterError(f"exec in pod {target.pod}: cannot reach the API server at {c.kube.server}: "
                           f"{exc}") from None


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


def pump(ws, pod: str, stdin, stdout, stderr, *, tty: bool = False) -> int:
    """Copy stdin to the remote process and its output to stdout/stderr until it ends; its exit code."""
    from websocket import ABNF, WebSocketConnectionClosedException

    sock = ws.sock.sock
    v5 = ws.subprotocol == "v5.channel.k8s.io"
    fd = _stdin_fd(stdin)
    stdin_open = True
    status = b""
    resize = _ResizeWatcher(ws, fd) if tty and fd is not None else None

    def send_stdin(data: bytes) -> None:
        nonlocal stdin_open
        try:
            if data:
                ws.write_channel(STDIN, data)
            else:
                stdin_open = False
                if v5:
                    ws.close_channel(STDIN)
        except (WebSocketConnectionClosedException, OSError):
            stdin_open = False

    try:
        while True:
            pending = getattr(sock, "pending", lambda: 0)()
            watch = [sock] + ([fd] if stdin_open and fd is not None else [])
            timeout = 0 if pending or (stdin_open and fd is None) else (0.5 if resize else None)
            readable, _, _ = select.select(watch, [], [], timeout)
            if resize:
                resize.check()
            if stdin_open and fd is None:  # an in-memory stream (tests): never blocks
                send_stdin(stdin.read(65536) or b"")
            elif fd is not None and fd in readable:
                send_stdin(os.read(fd, 65536))
            if not pending and sock not in readable:
                continue
            try:
                op, frame = ws.sock.recv_data_frame(True)
            except (WebSocketConnectionClosedException, OSError):
                break
            if op == ABNF.OPCODE_CLOSE:
                break
            data = frame.data or b""
            if not data:
                continue
            channel, body = data[0], data[1:]
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
        try:
            ws.close()
        except Exception:  # noqa: BLE001 - the remote side may be gone already
            pass
    return exit_code(status, pod)


class _ResizeWatcher:
    """Sends the terminal's size on channel 4 at start and whenever it changes (SIGWINCH sets a flag)."""

    def __init__(self, ws, fd: int):
        import signal

        self.ws, self.fd, self.changed, self.last = ws, fd, True, None
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
            try:
                self.ws.write_channel(RESIZE, json.dumps({"Width": size.columns, "Height": size.lines}).encode())
            except OSError:
                pass

    def stop(self) -> None:
        import signal

        signal.signal(signal.SIGWINCH, self._old)


def run_attached(ws, pod: str, *, tty: bool) -> int:
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
        return pump(ws, pod, stdin, sys.stdout.buffer, sys.stderr.buffer, tty=tty)
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
