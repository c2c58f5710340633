"""arena_helm.views.reasons: the scheduler's verdicts in words, a job's state reasons (Kueue's hold, a suspend not yet
seen by the operator), and replica types from mpi-operator's job-role label (pure)."""

from __future__ import annotations

import pytest
from apiobjects import operator_job

from arena_helm.views.jobs import job_phase, pod_replica_type
from arena_helm.views.queueing import queue_info
from arena_helm.views.reasons import failure_of, pending_reason, scheduler_verdict, state_reason

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


# ---- failure_of: why a job failed or restarts, from its pods ------------------------------------------------------
def failing_pod(name: str, *, state: dict | None = None, last: dict | None = None, restarts: int = 0,
                limits: dict | None = None, status: dict | None = None, image: str = "pt:2") -> dict:
    cs = {"name": "pytorch", "restartCount": restarts, "state": state or {"running": {}}}
    if last:
        cs["lastState"] = {"terminated": last}
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "pytorch", "image": image, "resources": {"limits": limits or {}}}]},
            "status": {"phase": "Running", "containerStatuses": [cs], **(status or {})}}


def test_an_oom_killed_worker_is_named_with_its_memory_limit():
    pods = [failing_pod("lm-master-0"),
            failing_pod("lm-worker-1", state={"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                        limits={"memory": "2Gi", "nvidia.com/gpu": "1"})]
    f = failure_of(pods)
    assert (f.pod, f.container, f.reason, f.exit_code, f.memory_limit, f.previous) == (
        "lm-worker-1", "pytorch", "OOMKilled", 137, "2Gi", False)
    assert f.text() == "pod lm-worker-1 container pytorch: OOMKilled (exit code 137), memory limit 2Gi"
    no_limit = failure_of([failing_pod("a", state={"terminated": {"exitCode": 137, "reason": "OOMKilled"}})])
    assert no_limit.text() == "pod a container pytorch: OOMKilled (exit code 137), no memory limit (the node ran out)"


def test_a_restarting_container_is_read_from_its_last_state_and_its_message_kept():
    pod = failing_pod("w-0", state={"waiting": {"reason": "CrashLoopBackOff"}}, restarts=3,
                      last={"exitCode": 1, "reason": "Error", "message": "Traceback ...\n  KeyError: 'x'"})
    f = failure_of([pod])
    assert (f.previous, f.restarts) == (True, 3)
    assert f.text() == "pod w-0 container pytorch: Error (exit code 1), restarted 3 times: Traceback ... KeyError: 'x'"
    assert f.to_json() == {"instance": "w-0", "container": "pytorch", "reason": "Error", "exitCode": 1,
                           "message": "Traceback ... KeyError: 'x'", "memoryLimit": "", "image": "", "restarts": 3}


def test_an_eviction_a_failed_pull_and_a_container_that_cannot_run():
    evicted = failing_pod("e-0", state={"terminated": {"exitCode": 137, "reason": "Error"}},
                          status={"phase": "Failed", "reason": "Evicted",
                                  "message": "The node was low on resource: memory."})
    assert failure_of([evicted]).text() == "pod e-0: evicted by its node: The node was low on resource: memory."
    pull = failing_pod("p-0", state={"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling"}},
                       image="tf:nope")
    assert failure_of([pull]).text() == "pod p-0 container pytorch: ImagePullBackOff of image tf:nope: Back-off pulling"
    cannot = failing_pod("c-0", state={"terminated": {"exitCode": 128, "reason": "ContainerCannotRun",
                                                      "message": 'exec: "pyhton": executable file not found'}})
    assert failure_of([cannot]).text() == ('pod c-0 container pytorch: ContainerCannotRun (exit code 128): exec: '
                                           '"pyhton": executable file not found')


def test_no_failure_in_pods_that_ran_well_or_are_gone():
    done = failing_pod("ok-0", state={"terminated": {"exitCode": 0, "reason": "Completed"}})
    assert failure_of([done, failing_pod("r-0")]) is None
    assert failure_of([]) is None


def test_state_reasons():
    failed = operator_job(("Failed", "True", "TFJobFailed", "TFJob j has failed\n because x."))
    assert state_reason("FAILED", job=failed, kind="TFJob", name="j", namespace="n") == \
        "TFJobFailed: TFJob j has failed because x."
    queued = operator_job(("Created", "True", "", ""), suspend=True, labels={"kueue.x-k8s.io/queue-name": "q"})
    workload = {"metadata": {"name": "w", "ownerReferences": [{"uid": "u1"}]},
                "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "message": "no\n GPUs"}]}}
    queue = queue_info(queued, workload=workload)
    assert state_reason("QUEUED", job=queued, kind="TFJob", name="j", namespace="n", queue=queue) == \
        "held by Kueue: waiting in queue q (workload w: no GPUs)"
    assert state_reason("RUNNING", job=queued, kind="TFJob", name="j", namespace="n") == ""


def test_state_reasons_before_the_controllers_react():
    """The states the real controllers leave within a moment (no cluster test can hold them): suspend set but the
    operator has not written Suspended yet; a job Kueue's webhook suspended before its Workload exists."""
    asked = operator_job(("Created", "True", "", ""), suspend=True)
    assert job_phase(asked) == "Suspended"
    assert state_reason("SUSPENDED", job=asked, kind="TFJob", name="j", namespace="n") == \
        "spec.runPolicy.suspend is true"
    trainjob = {"kind": "TrainJob", "spec": {"suspend": True}, "status": {}}  # its switch is spec.suspend
    assert state_reason("SUSPENDED", job=trainjob, kind="TrainJob", name="j", namespace="n") == "spec.suspend is true"
    done = operator_job(("Created", "True", "", ""), ("Suspended", "True", "TFJobSuspended", "TFJob j is suspended."),
                suspend=True)
    assert state_reason("SUSPENDED", job=done, kind="TFJob", name="j", namespace="n") == \
        "TFJob j is suspended. (spec.runPolicy.suspend is true)"
    queued = operator_job(("Created", "True", "", ""), suspend=True, labels={"kueue.x-k8s.io/queue-name": "team-q"})
    assert state_reason("QUEUED", job=queued, kind="TFJob", name="j", namespace="n", queue=queue_info(queued)) == \
        "held by Kueue: waiting in queue team-q"
