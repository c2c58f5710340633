"""Every chart with every ci/*-values.yaml, installed with plain helm (3 and 4) into the test cluster with the
real controllers and their admission webhooks running, read back and uninstalled: the API server keeps every
field the chart renders (it would silently prune one its CRD does not declare) and leaves nothing behind. The
MPIJob v1 case runs in tests/cluster/bare/test_chart_install_mpi_v1.py: this cluster serves mpi-operator's
MPIJob v2beta1 (the two CRDs share one name)."""

from __future__ import annotations

import pytest
from chartinstall import CASES, MPI_V1_CASE, case_id, install_read_back_uninstall
from kubernetes import client

pytestmark = pytest.mark.cluster
HERE = [c for c in CASES if c != MPI_V1_CASE]
TRAINER = ("trainer.kubeflow.org", "v1alpha1")


def team_runtime(cluster, namespace: str, name: str) -> None:
    """A namespaced TrainingRuntime ``name``, a copy of Trainer's torch-distributed ClusterTrainingRuntime:
    Trainer's admission webhook refuses a TrainJob whose runtime does not exist yet (as charts/trainjob's
    full-values.yaml names one)."""
    custom = client.CustomObjectsApi(cluster.api_client())
    ctr = custom.get_cluster_custom_object(*TRAINER, "clustertrainingruntimes", "torch-distributed")
    custom.create_namespaced_custom_object(*TRAINER, namespace, "trainingruntimes", {
        "apiVersion": "/".join(TRAINER), "kind": "TrainingRuntime",
        "metadata": {"name": name, "labels": ctr["metadata"].get("labels") or {}}, "spec": ctr["spec"]})


@pytest.mark.parametrize(("chart", "values"), HERE, ids=[case_id(c) for c in HERE])
def test_chart_installs_reads_back_and_uninstalls(chart, values, helm_bin, cluster, namespace, tmp_path):
    if (chart, values) == ("trainjob", "full-values.yaml"):
        team_runtime(cluster, namespace, "team-torch")
    install_read_back_uninstall(chart, values, helm_bin, cluster, namespace, tmp_path)


def test_every_ci_values_file_is_installed_by_one_of_the_two_clusters():
    assert MPI_V1_CASE in CASES and len(HERE) == len(CASES) - 1
