"""The kubelet stand-in's exec endpoint: ``GET /exec/{namespace}/{pod}/{container}`` upgraded to a websocket.

How a real exec reaches a kubelet (Kubernetes 1.20): the API server's ``pods/exec`` handler
(pkg/registry/core/pod/rest/subresources.go, ExecREST) checks the pod (bound to a node, not finished, the
container exists), builds the kubelet URL with ``streamParams`` (pkg/registry/core/pod/strategy.go:
``input=1``, ``output=1``, ``error=1``, ``tty=1``, one ``command=`` per argument) and proxies the client's
upgrade request as it is (UpgradeAwareHandler): a websocket client's handshake reaches the kubelet
unchanged, and the kubelet answers it. So this stand-in serves the websocket side of the kubelet's
remotecommand server (k8s.io/apiserver/pkg/util/wsstream, k8s.io/kubelet/pkg/cri/streaming/remotecommand):

- subprotocols ``v5.channel.k8s.io`` (v4 plus the CLOSE signal, channel 255, that ends stdin; newer
  kubelets and the API server's stream translator speak it) and ``v4.channel.k8s.io`` (what a 1.20
  kubelet speaks); the first one the client offers wins, as in wsstream's negotiation;
- binary messages whose first byte is the channel: 0 stdin, 1 stdout, 2 stderr, 3 the status (a
  metav1.Status as JSON: ``Success``, or ``Failure`` with reason ``NonZeroExitCode`` and the exit code in
  ``details.causes[0].message``), 4 resize (``{"Width": W, "Height": H}``).

It never runs anything on the host: the "container" knows a fixed set of commands, done in Python:
``echo ARG...`` (the arguments joined by single spaces, then a newline), ``cat`` (stdin back on stdout
until stdin ends), ``printf-stderr TEXT`` (TEXT on stderr), ``exit N`` (nothing, exit code N) and, with a
TTY, ``sh``: a toy prompt that understands ``echo ...`` and ``exit [N]`` lines. Anything else fails
the way the runtime does for a missing executable.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from urllib.parse import parse_qs, urlparse

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class ExecRecord:
    """What one exec asked for (tests assert on it)."""

    def __init__(self, namespace: str, pod: str, container: str, query: dict[str, list[str]], protocol: str):
        self.namespace, self.pod, self.container = namespace, pod, container
        self.command = query.get("command", [])
        self.stdin = query.get("input") == ["1"]
        self.stdout = query.get("output") == ["1"]
        self.stderr = query.get("error") == ["1"]
        self.tty = query.get("tty") == ["1"]
        self.protocol = protocol
        self.resizes: list[dict] = []
        self.exit_code: int | None = None


class _Socket:
    """Websocket framing over the handler's (TLS) stream: server frames unmasked, client frames masked."""

    def __init__(self, rfile, wfile):
        self.rfile, self.wfile = rfile, wfile

    def _read(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if data is None or len(data) < n:
            raise EOFError
        return data

    def recv(self) -> tuple[int, bytes]:
        """One message (fragments joined); control frames answered or returned."""
        chunks, first_op = [], None
        while True:
            b0, b1 = self._read(2)
            fin, op = b0 & 0x80, b0 & 0x0F
            length = b1 & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if b1 & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self._read(length)))
            if op == OP_PING:
                self.send(payload, OP_PONG)
                continue
            if op in (OP_CLOSE, OP_PONG):
                return op, payload
            if first_op is None:
                first_op = op
            chunks.append(payload)
            if fin:
                return first_op, b"".join(chunks)

    def send(self, payload: bytes, op: int = OP_BINARY) -> None:
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x80 | op, n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x80 | op, 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | op, 127, n)
        self.wfile.write(header + payload)
        self.wfile.flush()


class _Session:
    def __init__(self, ws: _Socket, record: ExecRecord):
        self.ws, self.record = ws, record
        self.stdin_open = record.stdin

    def out(self, data: bytes, channel: int = STDOUT) -> None:
        if self.record.tty and channel == STDERR:
            channel = STDOUT  # a terminal has one output stream
        self.ws.send(bytes([channel]) + data)

    def read_stdin(self) -> bytes | None:
        """The next stdin bytes; None once stdin ended (v5 CLOSE of channel 0, or the client closed)."""
        while self.stdin_open:
            try:
                op, data = self.ws.recv()
            except (EOFError, OSError):
                self.stdin_open = False
                return None
            if op == OP_CLOSE:
                self.stdin_open = False
                return None
            if not data:
                continue
            channel, body = data[0], data[1:]
            if channel == CLOSE and body[:1] == bytes([STDIN]) and self.record.protocol.startswith("v5"):
                self.stdin_open = False
                return None
            if channel == RESIZE:
                self.record.resizes.append(json.loads(body))
                continue
            if channel == STDIN and body:
                return body
        return None

    # ---- the container's commands ----------------------------------------------------------------
    def run(self, argv: list[str]) -> int | str:
        """Exit code, or a runtime error message (a command that does not exist)."""
        name, args = (argv[0], argv[1:]) if argv else ("", [])
        if name == "echo":
            self.out((" ".join(args) + "\n").encode())
            return 0
        if name == "cat" and not args:
            while (chunk := self.read_stdin()) is not None:
                self.out(chunk)
            return 0
        if name == "printf-stderr" and len(args) == 1:
            self.out(args[0].encode(), STDERR)
            return 0
        if name == "exit" and len(args) == 1 and args[0].isdigit():
            return int(args[0])
        if name == "sh" and not args and self.record.tty:
            return self.toy_shell()
        return (f'OCI runtime exec failed: exec failed: unable to start container process: exec: "{name}": '
                "executable file not found in $PATH: unknown")

    def toy_shell(self) -> int:
        """A prompt that echoes what is typed (as a terminal does) and runs ``echo`` and ``exit`` lines."""
        line = b""
        self.out(b"$ ")
        while (chunk := self.read_stdin()) is not None:
            for byte in chunk:
                ch = bytes([byte])
                if ch in (b"\r", b"\n"):
                    self.out(b"\r\n")
                    words = line.decode(errors="replace").split()
                    line = b""
                    if words[:1] == ["exit"]:
                        return int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
                    if words[:1] == ["echo"]:
                        self.out((" ".join(words[1:]) + "\r\n").encode())
                    elif words:
                        self.out(f"sh: {words[0]}: not found\r\n".encode())
                    self.out(b"$ ")
                elif ch == b"\x04" and not line:  # ^D on an empty line
                    return 0
                else:
                    line += ch
                    self.out(ch)
        return 0


def status_json(result: int | str) -> bytes:
    """The metav1.Status the kubelet writes on the error channel (remotecommand's v4 protocol)."""
    if result == 0:
        status = {"metadata": {}, "status": "Success"}
    elif isinstance(result, int):
        status = {"metadata": {}, "status": "Failure",
                  "message": f"command terminated with non-zero exit code: exit code {result}",
                  "reason": "NonZeroExitCode",
                  "details": {"causes": [{"reason": "ExitCode", "message": str(result)}]}}
    else:
        status = {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {result}",
                  "reason": "InternalError", "details": {"causes": [{"message": result}]}, "code": 500}
    return json.dumps(status).encode()


def serve_exec(handler, records: list[ExecRecord]) -> None:
    """Answer one ``/exec/...`` request on ``handler`` (a BaseHTTPRequestHandler of the kubelet stand-in)."""
    url = urlparse(handler.path)
    parts = url.path.strip("/").split("/")
    if len(parts) != 4 or handler.headers.get("Upgrade", "").lower() != "websocket":
        handler.send_error(400, "exec needs a websocket upgrade (this stand-in does not speak SPDY)")
        return
    offered = [p.strip() for p in handler.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    protocol = next((p for p in offered if p in PROTOCOLS), None)
    if protocol is None:
        handler.send_error(400, f"none of the subprotocols {offered} is supported (want one of {PROTOCOLS})")
        return
    record = ExecRecord(parts[1], parts[2], parts[3], parse_qs(url.query, keep_blank_values=True), protocol)
    records.append(record)
    key = handler.headers["Sec-WebSocket-Key"]
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()  # noqa: S324 - RFC 6455
    handler.send_response(101, "Switching Protocols")
    handler.send_header("Upgrade", "websocket")
    handler.send_header("Connection", "Upgrade")
    handler.send_header("Sec-WebSocket-Accept", accept)
    handler.send_header("Sec-WebSocket-Protocol", protocol)
    handler.end_headers()
    handler.wfile.flush()
    ws = _Socket(handler.rfile, handler.wfile)
    session = _Session(ws, record)
    try:
        result = session.run(record.command)
        record.exit_code = result if isinstance(result, int) else None
        ws.send(bytes([ERROR]) + status_json(result))
        ws.send(struct.pack("!H", 1000), OP_CLOSE)
    except (EOFError, OSError):
        pass
    handler.close_connection = True
