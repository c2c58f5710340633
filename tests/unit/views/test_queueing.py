"""arena_helm.views.queueing: a job's place in Kueue from its Workload, its LocalQueue and the visibility API's
pendingworkloads answer (Kueue v0.17 apis/visibility/v1beta2: positions from 0; arena-helm says them from 1)."""

from __future__ import annotations

import datetime as dt

from arena_helm.views.jobs import job_view
from arena_helm.views.output import jobs_table, queue_cells
from arena_helm.views.queueing import QueueInfo, owned_workload, pending_positions, place, queue_info

NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)


def job(name="j", *, uid="u1", queue="lq-a", suspend=True):
    labels = {"helm.sh/chart": "pytorchjob-0.1.0"}
    if queue:
        labels["kueue.x-k8s.io/queue-name"] = queue
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": "team", "uid": uid, "labels": labels,
                         "creationTimestamp": "2026-12-03T11:59:00Z"},
            "spec": {"runPolicy": {"suspend": suspend}, "pytorchReplicaSpecs": {"Master": {"replicas": 1}}},
            "status": {"conditions": [{"type": "Created", "status": "True"}]}}


def workload(name, owner_uid, *, reserved="False", message="", admitted=None):
    conds = [{"type": "QuotaReserved", "status": reserved, "message": message}]
    if admitted:
        conds.append({"type": "Admitted", "status": "True", "lastTransitionTime": admitted})
    status = {"conditions": conds}
    if admitted:
        status["admission"] = {"clusterQueue": "cq-from-admission"}
    return {"metadata": {"name": name, "ownerReferences": [{"uid": owner_uid, "kind": "PyTorchJob"}]},
            "status": status}


def pending_item(name, owner_uid, lq_pos, cq_pos):
    """One item of a pendingworkloads answer, as pkg/visibility/storage/utils.go newPendingWorkload makes it."""
    return {"metadata": {"name": name, "namespace": "team", "creationTimestamp": "2026-12-03T11:59:00Z",
                         "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                                              "name": name, "uid": owner_uid}]},
            "priority": 0, "localQueueName": "lq-a", "positionInClusterQueue": cq_pos,
            "positionInLocalQueue": lq_pos}


def test_a_suspended_job_of_a_local_queue_is_queued_and_a_plain_suspended_one_is_not():
    v = job_view(release=None, job=job(), pods=[], now=NOW)
    assert (v.status, v.reason) == ("QUEUED", "held by Kueue: waiting in queue lq-a")
    assert v.queue == QueueInfo("lq-a")
    plain = job_view(release=None, job=job(queue=""), pods=[], now=NOW)
    assert (plain.status, plain.queue) == ("SUSPENDED", None)
    running = job_view(release=None, job=job(suspend=False), pods=[], now=NOW)
    assert running.status == "PENDING" and running.queue == QueueInfo("lq-a", pending=False)


def test_positions_come_from_the_owner_uid_and_count_from_one():
    items = [pending_item("a", "ua", 0, 2), pending_item("b", "ub", 1, 5)]
    assert pending_positions(items) == {"ua": (1, 3), "ub": (2, 6)}
    info = QueueInfo("lq-a", cluster_queue="cq-a")
    place(info, "ub", pending_positions(items))
    assert (info.position_in_local_queue, info.position_in_cluster_queue, info.positions_served) == (2, 6, True)
    assert info.text() == "lq-a (cluster queue cq-a): position 2 in local queue lq-a, 6 in cluster queue cq-a"
    gone = QueueInfo("lq-a", workload="w")
    place(gone, "other", pending_positions(items))
    assert gone.position_in_local_queue is None
    assert gone.text() == "lq-a: pending, not among the queue's pending workloads (Kueue is placing it)"
    unserved = QueueInfo("lq-a")
    place(unserved, "ua", None)
    assert unserved.positions_served is False
    assert unserved.text() == ("lq-a: pending (position unknown: Kueue's visibility API is not served or not "
                               "readable)")


def test_the_workload_gives_the_message_the_cluster_queue_and_the_admission_time():
    j = job()
    w = workload("pytorchjob-j-1", "u1", message="couldn't assign flavors to pod set master:\n insufficient quota")
    assert owned_workload(j, [workload("x", "u9"), w]) is w
    assert owned_workload(job(uid=""), [w]) is None
    info = queue_info(j, workload=w, local_queue={"spec": {"clusterQueue": "cq-a"}})
    assert info == QueueInfo("lq-a", "cq-a", "pytorchjob-j-1",
                             message="couldn't assign flavors to pod set master: insufficient quota")
    reserved = queue_info(j, workload=workload("w", "u1", reserved="True"))
    assert reserved.message == "quota reserved, admission pending"
    admitted = queue_info(j, workload=workload("w", "u1", reserved="True", admitted="2026-12-03T11:59:30Z"),
                          pending=False)
    assert (admitted.pending, admitted.cluster_queue, admitted.admitted_at, admitted.message) == \
        (False, "cq-from-admission", "2026-12-03T11:59:30Z", "")
    assert admitted.text() == "lq-a (cluster queue cq-from-admission), admitted 2026-12-03T11:59:30Z"
    assert admitted.to_json() == {"localQueue": "lq-a", "clusterQueue": "cq-from-admission", "workload": "w",
                                  "pending": False, "positionInLocalQueue": None, "positionInClusterQueue": None,
                                  "message": "", "admittedAt": "2026-12-03T11:59:30Z"}
    assert queue_info(job(queue=""), workload=w) is None


def test_list_shows_the_queue_columns_only_when_a_job_is_queued():
    queued = job_view(release=None, job=job("q", uid="uq"), pods=[], now=NOW)
    place(queued.queue, "uq", {"uq": (1, 2)})
    running = job_view(release=None, job=job("r", uid="ur", suspend=False), pods=[], now=NOW)
    assert queue_cells(queued) == ["lq-a", "1", "2"] and queue_cells(running) == ["-", "-", "-"]
    header = jobs_table([queued, running], all_namespaces=False, wide=False).splitlines()[0].split()
    assert header[-3:] == ["QUEUE", "POS(LocalQueue)", "POS(ClusterQueue)"]
    assert "QUEUE" not in jobs_table([running], all_namespaces=False, wide=False)
    assert job_view(release=None, job=job("q", uid="uq"), pods=[], now=NOW).to_json()["queue"]["pending"] is True
