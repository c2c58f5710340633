"""``arena-helm doctor`` on a control plane with the Kubeflow CRDs but no operator, no node and no Prometheus
(tests/cluster/bare/): each missing operator is MISSING with what to install, and the exit code is 1."""

from __future__ import annotations

import json

import pytest
from readme import table_columns, text_block_after
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()


def test_doctor_names_the_missing_operators(helm_bin, cluster, namespace):
    base = ["doctor", "--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]
    env = {"PROMETHEUS_ADDRESS": None, "ARENA_HELM_CONFIG": None}
    kinds = ["-T", "pytorch", "-T", "mpi", "-T", "kserve"]
    res = runner.invoke(app, [*base, *kinds, "-o", "json"], env=env)
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    assert report["ready"] is False
    checks = {c["check"]: c for c in report["checks"]}
    assert checks["PyTorchJob"]["status"] == "MISSING"
    assert checks["PyTorchJob"]["detail"] == (
        "kubeflow.org/v1 served; a dry-run create of a job passed, but the operator's webhook "
        "validator.pytorchjob.training-operator.kubeflow.org is not registered: the CRD is there, not its operator: "
        "install the Kubeflow training operator (v1.7+)")
    assert checks["mpi-operator running"] == {
        "check": "mpi-operator running", "status": "MISSING", "needed": True,
        "detail": "no Lease mpi-operator: mpi-operator is not running (it always holds one): install the Kubeflow "
                  "mpi-operator"}
    assert checks["InferenceService"] == {  # KServe's CRD is there, its controller is not
        "check": "InferenceService", "status": "MISSING", "needed": True,
        "detail": "serving.kserve.io/v1beta1 (InferenceService) served; a dry-run create of a serving passed, but the "
                  "operator's webhook inferenceservice.kserve-webhook-server.validator is not registered: the CRD is "
                  "there, not its operator: install KServe (RawDeployment/Standard mode, or Knative)"}
    assert checks["GPUs on nodes"]["detail"] == (
        "none of 0 nodes offers nvidia.com/gpu: install the NVIDIA device plugin (jobs with --gpus would never be "
        "scheduled)")
    assert checks["Prometheus"]["needed"] is False and checks["Kueue"]["status"] == "MISSING"
    table = runner.invoke(app, [*base, *kinds], env=env)
    print(table.stdout)  # the README shows it (pytest -s), the RBAC lines left out
    assert table.exit_code == 1
    assert table.stdout.splitlines()[-1] == ("not ready: 4 needed checks MISSING (PyTorchJob, mpi-operator running, "
                                             "InferenceService, GPUs on nodes)")
    shown = [line for line in table.stdout.splitlines() if not line.startswith("RBAC: ")]
    assert table_columns(text_block_after("`tests/cluster/bare/test_doctor_bare.py`"), 2) == table_columns(shown, 2)
