"""arena_helm.views.pods: the one pod and container picker of ``logs`` and ``attach``."""

from __future__ import annotations

import datetime as dt

import pytest

from arena_helm.core.errors import NotFoundError, UsageError
from arena_helm.views.pods import initialising_container, pick_container, pick_pod

NOW = dt.datetime(2026, 1, 2, 12, 0, 0, tzinfo=dt.UTC)


def pod(name, rtype, index="0", containers=("tensorflow",), inits=(), phase="Running", node="n1", init_done=None):
    labels = {"training.kubeflow.org/replica-type": rtype, "training.kubeflow.org/replica-index": index}
    status = {"phase": phase}
    if init_done is not None:
        status["initContainerStatuses"] = [{"name": i, "state": {"terminated": {"exitCode": 0}} if init_done
                                            else {"running": {}}} for i in inits]
    return {"metadata": {"name": name, "labels": labels, "creationTimestamp": "2026-01-02T11:00:00Z"},
            "spec": {"containers": [{"name": c} for c in containers],
                     "initContainers": [{"name": i} for i in inits], "nodeName": node},
            "status": status}


def test_the_chief_by_default_else_worker_zero_else_the_named_instance():
    pods = [pod("j-worker-1", "worker", "1"), pod("j-chief-0", "chief"), pod("j-worker-0", "worker")]
    assert pick_pod(pods, "j", "ns", None, NOW)["metadata"]["name"] == "j-chief-0"
    assert pick_pod(pods[::2], "j", "ns", None, NOW)["metadata"]["name"] == "j-worker-0"  # no chief: worker 0
    assert pick_pod(pods, "j", "ns", "j-worker-1", NOW)["metadata"]["name"] == "j-worker-1"


def test_the_chief_is_the_first_pod_of_the_kinds_first_main_role():
    # a PaddleJob with parameter servers: the trainers' worker 0, not master 0 (a server)
    paddle = [pod("p-master-0", "master"), pod("p-master-1", "master", "1"), pod("p-worker-1", "worker", "1"),
              pod("p-worker-0", "worker")]
    assert pick_pod(paddle, "p", "ns", None, NOW, "PaddleJob")["metadata"]["name"] == "p-worker-0"
    # the same pods of a PyTorchJob or of an unknown kind: the master
    assert pick_pod(paddle, "p", "ns", None, NOW, "PyTorchJob")["metadata"]["name"] == "p-master-0"
    assert pick_pod(paddle, "p", "ns", None, NOW)["metadata"]["name"] == "p-master-0"
    # an MPIJob before its launcher exists: worker 0; a role without an index 0 pod: its first by name
    mpi = [pod("m-worker-1", "worker", "1"), pod("m-worker-0", "worker")]
    assert pick_pod(mpi, "m", "ns", None, NOW, "MPIJob")["metadata"]["name"] == "m-worker-0"
    assert pick_pod(mpi[:1] + [pod("m-worker-2", "worker", "2")], "m", "ns", None, NOW)["metadata"]["name"] == (
        "m-worker-1")


def test_an_unknown_instance_or_no_pods_say_which_and_how():
    pods = [pod("j-worker-1", "worker", "1"), pod("j-chief-0", "chief")]
    with pytest.raises(NotFoundError) as err:
        pick_pod(pods, "j", "ns", "j-ps-0", NOW)
    assert str(err.value) == "-i/--instance j-ps-0: job j has no such instance (its pods: j-chief-0, j-worker-1)"
    with pytest.raises(NotFoundError) as err:
        pick_pod([], "j", "ns", None, NOW)
    assert str(err.value) == "job j has no pods yet (see arena-helm get j -n ns)"


def test_the_container_is_the_named_one_or_the_first_and_init_containers_only_for_logs():
    p = pod("j-chief-0", "chief", containers=("tensorflow", "sidecar"), inits=("git-sync",))
    assert pick_container(p, None) == "tensorflow"
    assert pick_container(p, "sidecar") == "sidecar"
    assert pick_container(p, "git-sync", init=True) == "git-sync"
    with pytest.raises(UsageError) as err:
        pick_container(p, "git-sync")
    assert str(err.value) == "-c/--container git-sync: pod j-chief-0 has tensorflow, sidecar"
    with pytest.raises(UsageError) as err:
        pick_container(p, "nope", init=True)
    assert str(err.value) == "-c/--container nope: pod j-chief-0 has git-sync, tensorflow, sidecar"


def test_a_scheduled_pod_still_initialising_shows_its_init_container():
    assert initialising_container(pod("p", "chief", inits=("git-sync",), phase="Pending")) == "git-sync"
    assert initialising_container(pod("p", "chief", inits=("git-sync",), phase="Pending", init_done=False)) == "git-sync"
    assert initialising_container(pod("p", "chief", inits=("git-sync",), phase="Pending", init_done=True)) is None
    assert initialising_container(pod("p", "chief", inits=("git-sync",), phase="Pending", node="")) is None
    assert initialising_container(pod("p", "chief", inits=("git-sync",))) is None  # running
    assert initialising_container(pod("p", "chief", phase="Pending")) is None  # none to run
