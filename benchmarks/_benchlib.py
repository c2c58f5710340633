"""Shared helpers of the benchmark scripts (not a benchmark itself).

Each ``benchmarks/<name>.py`` script puts its own folder first on ``sys.path`` (Python does that for a
script run as ``python benchmarks/<name>.py``), so ``import _benchlib`` works from any working directory.
This module also puts the repository's ``tests/support/`` folder on ``sys.path``, so the scripts find helm,
kubectl and the test API server exactly the way the tests do (``helmtools``, ``kubecluster``).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests" / "support"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
if str(REPO) not in sys.path:
    sys.path.insert(1, str(REPO))

STATS_RE = re.compile(r"stats: helm_calls=(\d+) api_requests=(\d+)")

# Issue "one module per job kind"'s yardstick: an overhead as a multiple of ``python -c "import typer"``
# (the unit), beside the floor: typer plus one one-field pydantic model validated, what any Typer CLI with a
# pydantic spec pays before its own code (pydantic's first validator also runs its plugin discovery,
# importing importlib.metadata).
TYPER_GOAL = 2.0
# Issue "one shape for every family"'s goal, stated above that floor: arena-helm's own share of a dry run (the
# overhead over helm template less the floor) at most 1x the typer import.
OWN_SHARE_GOAL = 1.0
TYPER_CODE = "import typer"
FLOOR_CODE = "import typer\nfrom pydantic import BaseModel\nclass A(BaseModel):\n    x: int\nA(x=1)\n"


class BenchError(Exception):
    """A real error (not a missed goal): the script prints it and exits 1."""


# ---- locating the tools ------------------------------------------------------------------------------
def find_arena_helm(explicit: str | None = None) -> Path:
    """The ``arena-helm`` console script: ``--arena-helm``, else beside this interpreter, else on PATH."""
    if explicit:
        path = Path(explicit)
        if not path.exists():
            raise BenchError(f"--arena-helm {explicit}: no such file")
        return path
    beside = Path(sys.executable).parent / "arena-helm"
    if beside.exists():
        return beside
    found = shutil.which("arena-helm")
    if found:
        return Path(found)
    raise BenchError(
        "arena-helm not found beside this Python nor on PATH: run the script with the project's virtualenv "
        "Python (pip install -e .) or pass --arena-helm PATH"
    )


def script_interpreter(script: Path) -> str:
    """The Python a console script runs with (its ``#!`` line), else this interpreter."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline().decode(errors="replace").strip()
    except OSError:
        return sys.executable
    if first.startswith("#!"):
        parts = first[2:].split()
        if parts and "python" in Path(parts[0]).name and Path(parts[0]).exists():
            return parts[0]
    return sys.executable


def helm_binary(version: str) -> Path:
    from helmtools import helm_path

    path = helm_path(version)
    if not path.exists():
        raise BenchError(f"helm {version} not found at {path} (scripts/install-helm.sh installs it)")
    return path


def kubectl_binary() -> Path:
    from helmtools import kubectl_path

    path = kubectl_path()
    if not path.exists():
        raise BenchError(f"kubectl not found at {path} (scripts/install-helm.sh installs it)")
    return path


def helm_versions() -> tuple[str, ...]:
    from helmtools import HELM_VERSIONS

    return tuple(HELM_VERSIONS)


_PYCACHE: list[str] = []


def _pycache() -> str:
    """One bytecode cache folder for this benchmark run (removed at exit)."""
    if not _PYCACHE:
        import atexit
        import tempfile

        folder = tempfile.mkdtemp(prefix="arena-helm-bench-pycache-")
        atexit.register(shutil.rmtree, folder, True)
        _PYCACHE.append(folder)
    return _PYCACHE[0]


def child_env(**extra: str) -> dict[str, str]:
    """The environment of measured children: ours, minus settings that would change what they do. Every
    measured Python finds its bytecode as an installed package would (pip compiles a wheel's modules at install;
    a checkout installed with -e has none, and PYTHONDONTWRITEBYTECODE would keep it so): the children share one
    cache folder (PYTHONPYCACHEPREFIX), filled by the warm-up runs, for our modules and typer's alike."""
    env = dict(os.environ)
    for key in ("ARENA_HELM_STATS", "ARENA_HELM_DEBUG", "ARENA_HELM_HELM", "PYTHONPROFILEIMPORTTIME",
                "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    env["PYTHONPYCACHEPREFIX"] = _pycache()
    env.update(extra)
    return env


# ---- running and timing --------------------------------------------------------------------------------
def run(argv: Sequence[str | os.PathLike], *, env: dict[str, str] | None = None, input: bytes | None = None,  # noqa: A002
        check: bool = True, what: str | None = None) -> subprocess.CompletedProcess:
    """Run ``argv`` (never through a shell), capturing output; a failure raises BenchError."""
    argv = [str(a) for a in argv]
    proc = subprocess.run(argv, env=env, input=input, capture_output=True, check=False)
    if check and proc.returncode != 0:
        label = what or " ".join(argv[:3])
        err = proc.stderr.decode(errors="replace").strip() or proc.stdout.decode(errors="replace").strip()
        raise BenchError(f"{label} failed (exit {proc.returncode}): {err[-2000:]}")
    return proc


def timed(argv: Sequence[str | os.PathLike], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds of one ``run``."""
    start = time.perf_counter()
    proc = run(argv, **kwargs)
    return time.perf_counter() - start, proc


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (pct in 0..100)."""
    data = sorted(values)
    if not data:
        return math.nan
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * pct / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def parse_stats(stderr: bytes | str) -> tuple[int, int] | None:
    """``(helm_calls, api_requests)`` from an ``ARENA_HELM_STATS=1`` stderr, or None."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    found = STATS_RE.findall(text)
    if not found:
        return None
    calls, requests = found[-1]
    return int(calls), int(requests)


def verdict(ok: bool, text: str) -> str:
    return f"{'PASS' if ok else 'MISS'}: {text}"


def main_guard(fn) -> None:
    """Run ``fn()``; a BenchError (or Ctrl-C) is one line on stderr and exit 1, a missed goal is exit 0."""
    try:
        code = fn()
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)


# ---- the test API server ---------------------------------------------------------------------------------
def start_test_cluster(attempts: int = 3):
    """Start etcd + kube-apiserver + controller-manager (``tests/support/kubecluster.py``); prints how long it took."""
    from kubecluster import start_cluster

    print("starting the test API server (tests/support/kubecluster.py) ...", flush=True)
    for attempt in range(1, attempts + 1):
        start = time.perf_counter()
        try:
            cluster = start_cluster()
        except Exception as exc:  # a build or start failure is a real error, after the retries
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if attempt == attempts:
                raise BenchError(f"could not start the test API server: {first}") from exc
            # A loaded machine sometimes races the server's discovery while the CRDs are installed.
            print(f"  start attempt {attempt} failed ({first}); retrying", flush=True)
            continue
        print(f"  API server ready at {cluster.server} in {time.perf_counter() - start:.1f} s", flush=True)
        return cluster
    raise AssertionError("unreachable")


def stop_test_cluster(cluster) -> None:
    """Stop the processes and remove the server's scratch folder (certificates, kubeconfigs, logs)."""
    try:
        cluster.stop()
    finally:
        shutil.rmtree(cluster.workdir, ignore_errors=True)


# ---- peak memory of a child, measured honestly ----------------------------------------------------------------
_LAUNCHER = r"""
import json, os, subprocess, sys, time
for line in sys.stdin:
    job = json.loads(line)
    with open(job["stdout"], "wb") as out, open(job["stderr"], "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(job["argv"], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=job["env"])
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    print(json.dumps({"code": os.waitstatus_to_exitcode(status), "seconds": seconds,
                      "maxrss_kb": usage.ru_maxrss}), flush=True)
"""


class Launcher:
    """Runs commands from a small process of its own, for their peak RSS.

    The ``ru_maxrss`` that ``wait4()`` reports for a child is at least the RSS of the process that spawned it:
    Linux carries the parent's resident set (the address space the child had until its ``exec``) into the
    child's high-water mark. A benchmark that has read a few thousand objects itself would report that
    size for every command it runs (``/bin/true`` measures 313 MB from a 300 MB parent). This launcher is
    started before the benchmark grows (about 10 MB of RSS) and spawns the measured commands instead."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCHER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.floor_mb = self.run(["/bin/true"], dict(os.environ))[1]

    def run(self, argv: Sequence[str | os.PathLike], env: dict[str, str]) -> tuple[float, float, int, bytes, bytes]:
        """(wall seconds, max RSS MB of the command and the children it waited for, exit code, stdout, stderr)."""
        import json
        import tempfile

        with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
            self.proc.stdin.write(json.dumps({"argv": [str(a) for a in argv], "env": env, "stdout": out.name,
                                              "stderr": err.name}) + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
            if not answer:
                raise BenchError("the measuring launcher process died")
            result = json.loads(answer)
            return (result["seconds"], result["maxrss_kb"] / 1024.0, result["code"], Path(out.name).read_bytes(),
                    Path(err.name).read_bytes())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
