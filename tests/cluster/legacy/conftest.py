"""The cluster tests not yet moved to the real controllers and kwok: here the training operators and the
kubelet are still the Python stand-ins of tests/support/simulators.py (a test steps them), on the same real
control plane (Kubernetes 1.37) as tests/cluster/. Each file moves up to tests/cluster/ once it waits for
what the real operators and kwok do."""

from __future__ import annotations

import pytest
from kubecluster import SKIP_CLUSTER, TestCluster, start_cluster


@pytest.fixture(scope="session")
def cluster():
    """A control plane of its own, with no kwok and no operator: the stand-ins below play them."""
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
