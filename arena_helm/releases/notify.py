"""Completion notices (``--notify URL``): one JSON document POSTed when a waited-for job ends.

The document is built from the job's view (pure, ``notice``); ``post`` sends it with the standard library and
never raises: a notice that cannot be delivered is a warning, not a different outcome of the job. The URL is
never written into the release (a webhook URL often carries its secret in its path) and a warning names its
scheme and host only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.grammars import check_http_url, url_shown

if TYPE_CHECKING:
    from .reader import JobDetail

TIMEOUT = 10.0  # seconds for the whole POST
SCHEMA = "arena-helm.notice/v1"  # the document's "schema": bumped when a key changes meaning


def check_url(url: str, flag: str = "--notify") -> str:
    """An http(s) URL with a host, else a UsageError naming the flag."""
    return check_http_url(url, flag, "https://hooks.example.com/ml-team")


def notice(d: JobDetail) -> dict[str, Any]:
    """The document sent for an ended job: who, where, how it ended, how long, how many GPUs, and why it failed."""
    v = d.view
    failure = None
    if v.failure is not None:
        failure = {**v.failure.to_json(), "summary": v.failure.text(), "log": d.log_tail}
    return {
        "schema": SCHEMA,
        "job": v.name,
        "namespace": v.namespace,
        "kind": d.kind,
        "status": v.status,
        "reason": v.reason,
        "durationSeconds": v.duration_seconds,
        "duration": v.duration,
        "gpus": v.requested_gpus,
        "user": user_of(d.job),
        "createdAt": v.created,
        "endedAt": v.ended,
        "failure": failure,
    }


def user_of(job: dict | None) -> str:
    """The submitting user Arena records on the job (annotation ``arena.kubeflow.org/username``)."""
    from ..workload.job_values import USER_NAME_ANNOTATION

    return str((((job or {}).get("metadata") or {}).get("annotations") or {}).get(USER_NAME_ANNOTATION, ""))


def post(url: str, document: dict[str, Any], timeout: float = TIMEOUT) -> str | None:
    """POST the document as JSON; None when the server answered 2xx, else a one-line warning."""
    import urllib.error
    import urllib.request

    from ..__about__ import __version__

    body = json.dumps(document, sort_keys=False).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": f"arena-helm/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - http(s) only (check_url)
            status = answer.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"--notify: POST to {url_shown(url)} failed: {' '.join(str(reason).split()) or type(exc).__name__}"
    if 200 <= status < 300:
        return None
    return f"--notify: POST to {url_shown(url)} answered HTTP {status}"


def send(c, namespace: str, name: str, kind: str | None, url: str, tail: int = 10) -> str | None:
    """Read the ended job (with the last ``tail`` lines of a failing container's log) and POST its notice;
    a warning line when that failed, reading the job included."""
    from ..core.errors import ArenaHelmError
    from .reader import get_job

    try:
        document = notice(get_job(c, namespace, name, kind, tail=tail))
    except ArenaHelmError as exc:
        return f"--notify: not sent: reading {name} failed: {exc}"
    return post(url, document)


__all__ = ["check_url", "notice", "post", "send"]
