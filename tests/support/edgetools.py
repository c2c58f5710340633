"""Helpers of the CLI-edge tests: in-process CLI runs, kubeconfig files, job status written through the API."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

runner = CliRunner()


def cli(*args: str, env: dict | None = None):
    from arena_helm.cli import app

    return runner.invoke(app, list(args), env=env)


def with_flags(args, flags: list[str]) -> list[str]:
    """``args`` with ``flags`` added: before a ``--`` (the training command follows it), else at the end."""
    args = list(args)
    if "--" in args:
        i = args.index("--")
        return args[:i] + flags + args[i:]
    return args + flags


def one_error(res, code: int, line: str) -> str:
    """Exit ``code``; stderr is exactly one line, ``line`` (the whole of it, ``error: `` included); no traceback.
    Returns the line."""
    assert line.startswith("error: "), f"give the whole line, 'error: ' included: {line!r}"
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0] == line, (lines[0], line)
    return lines[0]


def write_kubeconfig(path: Path, *, clusters=(), users=(), contexts=(), current: str | None = None) -> Path:
    """A kubeconfig file of these entries: clusters (name, server, ca), users (name, token), contexts (name,
    cluster, user, namespace)."""
    doc: dict = {"apiVersion": "v1", "kind": "Config", "preferences": {}}
    if clusters:
        doc["clusters"] = [{"name": n, "cluster": {"server": s, **({"certificate-authority": str(ca)} if ca else {})}}
                           for n, s, ca in clusters]
    if users:
        doc["users"] = [{"name": n, "user": {"token": t}} for n, t in users]
    if contexts:
        doc["contexts"] = [{"name": n, "context": {"cluster": c, "user": u, **({"namespace": ns} if ns else {})}}
                           for n, c, u, ns in contexts]
    if current:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


def write_job_status(api_client, kind_plural: str, namespace: str, name: str, conditions: list[dict],
                     version: str = "v1") -> None:
    """Write the job's status conditions through the API, as the training operator writes them."""
    from kubernetes import client

    stamp = "2026-01-02T03:04:05Z"
    conds = [{"lastUpdateTime": stamp, "lastTransitionTime": stamp, **c} for c in conditions]
    client.CustomObjectsApi(api_client).patch_namespaced_custom_object_status(
        "kubeflow.org", version, namespace, kind_plural, name, {"status": {"conditions": conds}})


@contextlib.contextmanager
def running_cli(*args: str, env: dict):
    """The installed ``arena-helm`` console script run with ``args`` as a process of its own, for the commands
    that run until stopped (``tensorboard open``, ``workspace open``: a real ``kubectl port-forward``); yields
    the Popen (text pipes); it is stopped (SIGTERM) afterwards."""
    proc = subprocess.Popen([str(Path(sys.executable).parent / "arena-helm"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
