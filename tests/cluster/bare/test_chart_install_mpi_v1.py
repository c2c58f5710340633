"""charts/mpijob with ci/v1-values.yaml (MPIJob kubeflow.org/v1, the training operator's CRD), installed with plain
helm (3 and 4), read back and uninstalled, on a cluster of its own (tests/cluster/bare/): it runs no mpi-operator, so its MPIJob CRD can
be swapped for the v1 one (the two share one name: a cluster serves one or the other)."""

from __future__ import annotations

import pytest
from chartinstall import MPI_V1_CASE, install_read_back_uninstall

pytestmark = pytest.mark.cluster


def test_mpijob_v1_chart_installs_reads_back_and_uninstalls(helm_bin, cluster, namespace, tmp_path):
    cluster.swap_mpi_crd("v1")
    try:
        install_read_back_uninstall(*MPI_V1_CASE, helm_bin, cluster, namespace, tmp_path)
    finally:
        cluster.swap_mpi_crd("v2beta1")
