"""Every chart with every ci/*-values.yaml, installed with plain helm (3 and 4) into the test cluster with the
real controllers and their admission webhooks running, read back and uninstalled: the API server keeps every
field the chart renders (it would silently prune one its CRD does not declare) and leaves nothing behind. The
MPIJob v1 case runs in tests/cluster/bare/test_chart_install_mpi_v1.py: this cluster serves mpi-operator's
MPIJob v2beta1 (the two CRDs share one name)."""

from __future__ import annotations

import pytest
from chartinstall import CASES, MPI_V1_CASE, case_id, install_read_back_uninstall, team_runtime

pytestmark = pytest.mark.cluster
HERE = [c for c in CASES if c != MPI_V1_CASE]


@pytest.mark.parametrize(("chart", "values"), HERE, ids=[case_id(c) for c in HERE])
def test_chart_installs_reads_back_and_uninstalls(chart, values, helm_bin, cluster, namespace, tmp_path):
    if (chart, values) == ("trainjob", "full-values.yaml"):
        team_runtime(cluster, namespace)
    install_read_back_uninstall(chart, values, helm_bin, cluster, namespace, tmp_path)


def test_every_ci_values_file_is_installed_by_one_of_the_two_clusters():
    assert MPI_V1_CASE in CASES and len(HERE) == len(CASES) - 1
