from __future__ import annotations

from pathlib import Path

import pytest
from helmtools import HELM_VERSIONS, helm_path


@pytest.fixture(params=HELM_VERSIONS, ids=[f"helm{v.split('.')[0]}" for v in HELM_VERSIONS], scope="session")
def helm_bin(request) -> Path:
    """Every helm-touching test runs once with Helm 3 and once with Helm 4."""
    return helm_path(request.param)


# ---- the real API server ---------------------------------------------------------------------------
import itertools  # noqa: E402
import os  # noqa: E402

from kubecluster import TestCluster, start_cluster  # noqa: E402

SKIP_CLUSTER = os.environ.get("ARENA_HELM_SKIP_CLUSTER") == "1" and not os.environ.get("CI")
_ns_counter = itertools.count()


@pytest.fixture(scope="session")
def cluster():
    """etcd + kube-apiserver + kube-controller-manager for the whole session.

    Local quick runs may set ARENA_HELM_SKIP_CLUSTER=1 to skip these tests; under CI they never skip:
    a failed API server build fails the run.
    """
    if SKIP_CLUSTER:
        pytest.skip("ARENA_HELM_SKIP_CLUSTER=1: tests that need the API server are skipped")
    c: TestCluster = start_cluster()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def kubelet(cluster):
    from simulators import KubeletSim

    sim = KubeletSim(cluster.api_client(), cluster.ca)
    try:
        yield sim
    finally:
        sim.close()


@pytest.fixture
def operator(cluster):
    from simulators import TrainingOperatorSim

    return TrainingOperatorSim(cluster.api_client())


@pytest.fixture
def namespace(cluster, request):
    """A fresh namespace per test (deleted afterwards; the namespace controller empties it)."""
    from kubernetes import client

    name = f"t{next(_ns_counter)}-{os.getpid() % 10000}"
    cluster.create_namespace(name)
    yield name
    client.CoreV1Api(cluster.api_client()).delete_namespace(name)


@pytest.fixture(autouse=True)
def _arena_helm_logger_restored():
    """``--debug`` reconfigures the ``arena_helm`` logger in-process: undo it after each test."""
    import logging

    logger = logging.getLogger("arena_helm")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]
