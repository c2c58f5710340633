"""Cluster tests that need a control plane with no controllers at all (tests/cluster/ runs the real ones): here
the MPIJob CRD can be swapped for training-operator's v1 one (the two share a name) without mpi-operator, which
serves only v2beta1, seeing its CRD go."""

from __future__ import annotations

import pytest
from kubecluster import SKIP_CLUSTER, TestCluster, start_cluster


@pytest.fixture(scope="session")
def cluster():
    """A control plane of its own (etcd, API server, controller-manager, scheduler): no kwok, no operator."""
    if SKIP_CLUSTER:
        pytest.skip("ARENA_HELM_SKIP_CLUSTER=1: tests that need the API server are skipped")
    c: TestCluster = start_cluster()
    try:
        yield c
    finally:
        c.stop()
