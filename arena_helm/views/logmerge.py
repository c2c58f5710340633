"""``logs --all``: every instance's log, its lines interleaved by time and each prefixed with its instance.
Pure: bytes in, bytes out.

The API server is asked for each container's log with ``timestamps=true``: the kubelet starts every line
with its RFC 3339 time (nanoseconds, trailing zeros dropped: ``2026-01-02T15:04:05.5Z``), which orders the
lines of all instances; the time is taken off again unless ``--timestamps`` asked for it. The prefix is
kubectl's ``logs --prefix`` one, ``[pod/NAME/CONTAINER]``, coloured on a terminal.

``--follow`` first writes what each log holds already, interleaved by time as without it, then each new line as
it comes: each container's stream opens at the second of the last line read (``sinceTime``, which the API
takes in whole seconds) and the lines of that second already written are skipped (``Resume``), so a line
written between the two reads is neither lost nor written twice.
"""

from __future__ import annotations

import datetime as dt
import heapq
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_STAMP = re.compile(rb"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ")
# the colours of the prefixes, one an instance in turn (ANSI: green, yellow, blue, magenta, cyan, red)
_COLOURS = (b"32", b"33", b"34", b"35", b"36", b"31")


@dataclass(frozen=True)
class Line:
    key: str  # the line's time, sortable as text (UTC, nanoseconds); "" for a line with no time
    stamp: bytes  # the time as the kubelet wrote it, with its space ("" when none)
    text: bytes  # the line itself, with its newline when it had one


def split_stamped(data: bytes) -> list[Line]:
    """A log read with ``timestamps=true`` -> its lines. A line without a time of its own (none should be)
    keeps the time of the line before it, so it stays in place."""
    out: list[Line] = []
    key = ""
    for raw in data.splitlines(keepends=True):
        line = parse_line(raw, key)
        key = line.key
        out.append(line)
    return out


def parse_line(raw: bytes, previous_key: str = "") -> Line:
    found = _STAMP.match(raw)
    if found is None:
        return Line(previous_key, b"", raw)
    return Line(sort_key(found), found.group(0), raw[found.end():])


def sort_key(found: re.Match) -> str:
    base, fraction, zone = (g.decode() if g else "" for g in found.groups())
    if zone != "Z":  # an offset: the same instant in UTC (the kubelet writes UTC; this is for any other)
        when = dt.datetime.fromisoformat(f"{base}{zone}").astimezone(dt.UTC)
        base = when.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{fraction.ljust(9, '0')}"


def prefix(pod: str, container: str, index: int, colour: bool) -> bytes:
    text = f"[pod/{pod}/{container}]".encode()
    if colour:
        text = b"\x1b[" + _COLOURS[index % len(_COLOURS)] + b"m" + text + b"\x1b[0m"
    return text + b" "


def render(line: Line, head: bytes, timestamps: bool) -> bytes:
    text = line.text if line.text.endswith(b"\n") else line.text + b"\n"
    return head + (line.stamp if timestamps else b"") + text


@dataclass(frozen=True)
class Resume:
    """Where a log read whole ended, for the stream that follows it: the time ``key`` of its last timed line
    and the ``count`` lines already written with that time (``after``: None when the log had no timed line)."""
    key: str
    count: int

    @classmethod
    def after(cls, lines: list[Line]) -> Resume | None:
        timed = [line.key for line in lines if line.stamp]
        return cls(timed[-1], timed.count(timed[-1])) if timed else None

    @property
    def since_time(self) -> str:
        """The stream's ``sinceTime``: the second of ``key`` (the API takes whole seconds), UTC."""
        return self.key.split(".")[0] + "Z"

    def skip(self) -> Callable[[Line], bool]:
        """A filter for the followed stream's lines: True for one already written (timed before ``key``, or
        one of the ``count`` lines timed ``key``). A line without a time of its own is never skipped."""
        left = self.count

        def skipped(line: Line) -> bool:
            nonlocal left
            if not line.stamp or line.key > self.key:
                return False
            if line.key < self.key:
                return True
            left -= 1
            return left >= 0

        return skipped


def interleave(logs: Iterable[tuple[bytes, list[Line]]], timestamps: bool) -> bytes:
    """``logs``: (prefix, lines) an instance, in the order ties go (the chief first) -> one log, every line in
    time order (a stable order: an instance's own lines never swap)."""
    streams = [[(line.key, n, head, line) for line in lines] for n, (head, lines) in enumerate(logs)]
    merged = heapq.merge(*streams, key=lambda t: (t[0], t[1]))  # never reorders one instance's own lines
    return b"".join(render(line, head, timestamps) for _, _, head, line in merged)


# ---- reading them (the side effect: the API adapter injected) ------------------------------------------------
def started(pod: dict, container: str) -> bool:
    """Whether ``container`` of the pod has run (running or terminated): only then is there a log to read."""
    status = pod.get("status") or {}
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        if cs.get("name") == container:
            state = cs.get("state") or {}
            return "running" in state or "terminated" in state
    return False


def all_logs(kube, namespace: str, job: str, pods: list[dict], kind: str | None, *, container: str | None,
             follow: bool, tail: int | None, since_seconds: int | None, since_time: str | None, timestamps: bool,
             out, note: Callable[[str], None], colour: bool) -> None:
    """Write every instance's log of ``job`` to ``out`` (a binary stream): read whole and interleaved by time,
    then with ``follow`` each new line as it arrives (as ``kubectl logs -f --prefix`` does with several pods). An
    instance that has not started yet is named in a note and left out; one whose log cannot be read too,
    unless none can be read."""
    from ..core.errors import ArenaHelmError, NotFoundError
    from .jobs import chief_first, instance_of
    from .pods import log_container

    now = dt.datetime.now(dt.UTC)
    by_name = {p["metadata"]["name"]: p for p in pods}
    targets: list[tuple[str, str, bytes]] = []
    for inst in chief_first([instance_of(p, now) for p in pods], pods, kind):
        pod = by_name[inst.name]
        name, _ = log_container(pod, container)
        if not started(pod, name):
            note(f"pod {inst.name} has not started its container {name} yet: no log")
            continue
        targets.append((inst.name, name, prefix(inst.name, name, len(targets), colour)))
    if not targets:
        what = "no pods yet" if not pods else "no instance that has started yet"
        raise NotFoundError(f"job {job} has {what} (see arena-helm get {job} -n {namespace})")
    options = {"tail": tail, "since_seconds": since_seconds, "since_time": since_time, "timestamps": True}
    logs, read, failed = [], [], []
    for pod, name, head in targets:
        try:
            lines = split_stamped(b"".join(kube.stream_log(namespace, pod, container=name, **options)))
        except ArenaHelmError as exc:
            note(f"{exc}; left out")
            failed.append(exc)
            continue
        logs.append((head, lines))
        read.append((pod, name, head, Resume.after(lines)))
    if not logs:
        raise failed[0]
    out.write(interleave(logs, timestamps))
    out.flush()
    if follow:
        _follow(kube, namespace, read, options, timestamps, out, note)


def _follow(kube, namespace: str, read: list[tuple[str, str, bytes, Resume | None]], options: dict,
            timestamps: bool, out, note: Callable[[str], None]) -> None:
    """One thread a container streams its log from where its read ended (its ``Resume``; from ``options``
    when it had no timed line); this one writes each complete line as it comes, until every stream has
    ended."""
    import queue
    import threading

    from ..core.errors import ArenaHelmError

    lines: queue.Queue = queue.Queue()
    done = object()

    def pump(pod: str, container: str, head: bytes, resume: Resume | None) -> None:
        since = options if resume is None else {**options, "tail": None, "since_seconds": None,
                                                "since_time": resume.since_time}
        skipped = resume.skip() if resume is not None else (lambda line: False)
        key, rest = "", b""
        try:
            for chunk in kube.stream_log(namespace, pod, container=container, follow=True, **since):
                *complete, rest = (rest + chunk).split(b"\n")
                for raw in complete:
                    line = parse_line(raw + b"\n", key)
                    key = line.key
                    if not skipped(line):
                        lines.put(render(line, head, timestamps))
            if rest and not skipped(line := parse_line(rest, key)):
                lines.put(render(line, head, timestamps))
        except ArenaHelmError as exc:
            lines.put(exc)
        finally:
            lines.put(done)

    for target in read:
        threading.Thread(target=pump, args=target, daemon=True, name=f"arena-helm-logs-{target[0]}").start()
    running = len(read)
    while running:
        item = lines.get()
        if item is done:
            running -= 1
        elif isinstance(item, ArenaHelmError):
            note(f"{item}; that instance's stream ended")
        else:
            out.write(item)
            out.flush()
