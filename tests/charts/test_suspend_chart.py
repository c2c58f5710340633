"""runPolicy.suspend in every job chart, with both helm versions: rendered once set (true or false), left out
while null (the operator's default), a non-boolean rejected by the schema; and the rendered job validates
against the CRD (training-operator v1.9.0, mpi-operator v0.8.0 serve runPolicy.suspend)."""

from __future__ import annotations

import pytest
import yaml
from helmtools import REPO, RenderError, render

JOBS = {"tfjob": "TFJob", "pytorchjob": "PyTorchJob", "mpijob": "MPIJob"}
CRDS = {"TFJob": "training-operator-v1.9.0/kubeflow.org_tfjobs.yaml",
        "PyTorchJob": "training-operator-v1.9.0/kubeflow.org_pytorchjobs.yaml",
        "MPIJob": "mpi-operator-v0.8.0/kubeflow.org_mpijobs.yaml"}


def job(helm_bin, chart, run_policy):
    docs = render(helm_bin, chart, {"image": "img:1", "command": "true", "runPolicy": run_policy})
    (out,) = [d for d in docs if d["kind"] == JOBS[chart]]
    return out


# each chart's runPolicy defaults (MPI's launcher not retried and all pods cleaned, as Arena; PyTorch not retried
# by its Never replicas, with no backoffLimit)
RUN_POLICY_DEFAULTS = {"tfjob": {"cleanPodPolicy": "Running"},
                       "pytorchjob": {"cleanPodPolicy": "Running"},
                       "mpijob": {"cleanPodPolicy": "All", "backoffLimit": 0}}


@pytest.mark.parametrize("chart", list(JOBS))
def test_suspend_is_rendered_once_set(helm_bin, chart):
    defaults = RUN_POLICY_DEFAULTS[chart]
    assert job(helm_bin, chart, {"suspend": True})["spec"]["runPolicy"] == {**defaults, "suspend": True}
    assert job(helm_bin, chart, {"suspend": False})["spec"]["runPolicy"] == {**defaults, "suspend": False}
    assert "suspend" not in job(helm_bin, chart, {"suspend": None})["spec"]["runPolicy"]
    assert "suspend" not in job(helm_bin, chart, {})["spec"]["runPolicy"]
    with pytest.raises(RenderError) as err:
        job(helm_bin, chart, {"suspend": "yes"})
    assert "runPolicy" in str(err.value) and "suspend" in str(err.value)


@pytest.mark.parametrize("kind", list(CRDS))
def test_the_crds_serve_run_policy_suspend(kind):
    crd = yaml.safe_load((REPO / "tests/data/crds" / CRDS[kind]).read_text())
    for version in crd["spec"]["versions"]:
        suspend = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["runPolicy"][
            "properties"]["suspend"]
        assert (suspend["type"], suspend["default"]) == ("boolean", False)
