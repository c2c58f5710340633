"""views: the scheduler's verdicts in words, and replica types from mpi-operator's job-role label (pure)."""

from __future__ import annotations

import pytest

from arena_helm.views import pod_replica_type
from arena_helm.waiting import pending_reason, scheduler_verdict

MESSAGES = [  # kube-scheduler 1.20's FitError wording, then 1.37's
    ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", "not enough GPUs"),
    ("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity.",
     "no node matches its node selector or affinity"),
    ("0/1 nodes are available: 1 node(s) had taint {nvidia.com/gpu: present}, that the pod didn't tolerate.",
     "a node taint it does not tolerate"),
    ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match node selector.",
     "not enough GPUs; no node matches its node selector or affinity"),
    ('0/1 nodes are available: 1 persistentvolumeclaim "data" not found.', "a PVC is missing or unbound"),
    ("0/2 nodes are available: 2 Insufficient cpu.", ""),
    # kube-scheduler 1.37's wording: what preemption found follows the verdicts (not read for them)
    ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: "
     "1 No preemption victims found for incoming pod.", "not enough GPUs"),
    ("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are "
     "available: 1 Preemption is not helpful for scheduling.", "no node matches its node selector or affinity"),
    ("0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: "
     "1 Preemption is not helpful for scheduling.", "a node taint it does not tolerate"),
    ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Insufficient "
     "nvidia.com/gpu, 2 node(s) had untolerated taint(s).", ""),
]


@pytest.mark.parametrize(("message", "words"), MESSAGES)
def test_scheduler_verdict(message, words):
    assert scheduler_verdict(message) == words


def _pod(name, labels=None, status=None, node=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"nodeName": node} if node else {},
            "status": status or {}}


def test_pending_reason_quotes_the_scheduler():
    msg = "0/2 nodes are available: 2 Insufficient cpu."
    pod = _pod("p", status={"conditions": [{"type": "PodScheduled", "status": "False", "message": msg}]})
    assert pending_reason([pod], []) == f"pod p cannot be scheduled: {msg}"
    nominated = _pod("q", status={"nominatedNodeName": "n1"})
    assert pending_reason([nominated], []) == "pod q is preempting lower-priority pods on node n1"


def test_replica_type_from_the_mpi_operator_job_role():
    role = "training.kubeflow.org/job-role"
    assert pod_replica_type(_pod("l", {role: "launcher"})) == "launcher"
    assert pod_replica_type(_pod("w", {role: "worker"})) == "worker"
    assert pod_replica_type(_pod("m", {role: "master", "training.kubeflow.org/replica-type": "chief"})) == "chief"
    assert pod_replica_type(_pod("x", {role: "master"})) == ""
