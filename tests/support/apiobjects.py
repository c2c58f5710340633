"""API objects as the API server returns them, cut to what the unit tests read."""

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


def gpu_node(name: str, gpus: int) -> dict:
    """A Ready node with ``gpus`` NVIDIA GPUs, 64 CPUs and 256Gi, all allocatable."""
    return {"metadata": {"name": name, "labels": {}},
            "status": {"capacity": {"nvidia.com/gpu": str(gpus), "cpu": "64", "memory": "256Gi"},
                       "allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "64", "memory": "256Gi"},
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                       "conditions": [{"type": "Ready", "status": "True"}]}}
