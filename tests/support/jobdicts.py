"""A training-operator job as the API server returns it, cut to what the state tests read."""

from __future__ import annotations


def operator_job(*conds: tuple[str, str, str, str], suspend: bool | None = None,
                 labels: dict[str, str] | None = None) -> dict:
    """A TFJob named ``j`` with conditions ``(type, status, reason, message)`` and, when given,
    ``spec.runPolicy.suspend``."""
    job = {"kind": "TFJob", "metadata": {"name": "j", "labels": labels or {}, "uid": "u1"},
           "status": {"conditions": [{"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conds]}}
    if suspend is not None:
        job["spec"] = {"runPolicy": {"suspend": suspend}}
    return job
