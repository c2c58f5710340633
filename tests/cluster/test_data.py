"""data list against the real API server: the namespace's PVCs with status, capacity, access modes, storage class
and the jobs whose pod templates mount them; -A, -o json/yaml, the limited user, and the --data completion."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
import yaml
from kubecluster import make_claim
from kubernetes import client
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
AGE = re.compile(r"(?<=\s)\d+(s|m|h|d|y)$", re.M)


def mask(text: str) -> str:
    return AGE.sub("<age>", text)


@pytest.fixture
def claims(cluster, namespace):
    core = client.CoreV1Api(cluster.api_client())
    make_claim(core, namespace, "training-data", modes=["ReadWriteMany", "ReadOnlyMany"], size="100Gi",
               storage_class="nfs", annotations={"description": "ImageNet", "owner": "team-a"})
    make_claim(core, namespace, "models", modes=["ReadWriteOnce"], size="20Gi", storage_class="")
    make_claim(core, namespace, "scratch", modes=["ReadWriteOnce"], size="5Gi", storage_class="fast", bound=False)
    yield core
    for pv in core.list_persistent_volume().items:  # PVs are cluster-wide: remove this test's
        if pv.metadata.name.startswith(f"pv-{namespace}-"):
            core.delete_persistent_volume(pv.metadata.name)


def run(cluster, *args, user="admin"):
    return runner.invoke(app, [*args, "--kubeconfig", str(cluster.users[user].kubeconfig)])


def test_data_list_shows_each_claim_and_the_jobs_that_mount_it(cluster, claims, helm_bin, namespace):
    ns = namespace
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", ns]
    for argv in (["tf", "--name", "mnist", "--data", "training-data:/data"],
                 ["pytorch", "--name", "bert", "--workers", "2", "--data", "training-data:/data", "--data",
                  "models:/models"],
                 ["mpi", "--name", "hvd", "--data", "models:/m"],
                 ["tf", "--name", "nodata"]):
        res = runner.invoke(app, ["submit", *argv, "--image", "img:1", *base, "--", "true"])
        assert res.exit_code == 0, res.output
    res = run(cluster, "data", "list", "-n", ns)
    assert res.exit_code == 0, res.output
    assert mask(res.stdout) == (
        "NAME           STATUS   CAPACITY  ACCESS MODES  STORAGECLASS  USED BY                      AGE\n"
        "models         Bound    20Gi      RWO           N/A           mpijob/hvd,pytorchjob/bert   <age>\n"
        "scratch        Pending  N/A       RWO           fast          N/A                          <age>\n"
        "training-data  Bound    100Gi     RWX,ROX       nfs           pytorchjob/bert,tfjob/mnist  <age>\n"
    )
    data = json.loads(run(cluster, "data", "list", "-n", ns, "-o", "json").stdout)
    assert [(c["name"], c["status"], c["capacity"], c["accessModes"], c["storageClass"], c["usedBy"]) for c in data] == [
        ("models", "Bound", "20Gi", ["RWO"], "", ["mpijob/hvd", "pytorchjob/bert"]),
        ("scratch", "Pending", "", ["RWO"], "fast", []),
        ("training-data", "Bound", "100Gi", ["RWX", "ROX"], "nfs", ["pytorchjob/bert", "tfjob/mnist"]),
    ]
    assert (data[2]["description"], data[2]["owner"], data[2]["namespace"]) == ("ImageNet", "team-a", ns)
    as_yaml = yaml.safe_load(run(cluster, "data", "list", "-n", ns, "-o", "yaml").stdout)
    assert [{k: v for k, v in c.items() if k != "age"} for c in as_yaml] == [  # the age may tick in between
        {k: v for k, v in c.items() if k != "age"} for c in data]

    # -A: a NAMESPACE column, every namespace's claims
    res = run(cluster, "data", "list", "-A")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "STATUS", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "USED",
                                "BY", "AGE"]
    assert [line.split()[:3] for line in lines if line.startswith(ns + " ")] == [
        [ns, "models", "Bound"], [ns, "scratch", "Pending"], [ns, "training-data", "Bound"]]


def test_data_list_names_a_workspace_s_home_and_what_it_mounts(cluster, claims, helm_bin, namespace):
    ns = namespace
    base = ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", ns]
    res = runner.invoke(app, ["workspace", "start", "nb", "--data", "models:/models", *base])
    assert res.exit_code == 0, res.output
    res = run(cluster, "data", "list", "-n", ns)
    assert res.exit_code == 0, res.output
    rows = {line.split()[0]: line.split()[-2] for line in res.stdout.splitlines()[1:]}
    assert rows == {"models": "workspace/nb", "nb-home": "workspace/nb", "scratch": "N/A", "training-data": "N/A"}
    # stopped: its Job is gone, its home stays its own
    res = runner.invoke(app, ["workspace", "stop", "nb", *base])
    assert res.exit_code == 0, res.output
    data = {c["name"]: c["usedBy"] for c in json.loads(run(cluster, "data", "list", "-n", ns, "-o", "json").stdout)}
    assert data == {"models": [], "nb-home": ["workspace/nb"], "scratch": [], "training-data": []}


def test_data_list_edges(cluster, claims, namespace):
    res = run(cluster, "data", "list", "-n", "team-limited", user="alice")
    assert (res.exit_code, res.stdout) == (0, "no PersistentVolumeClaims in namespace team-limited\n")
    res = run(cluster, "data", "list", "-A", user="alice")
    assert res.exit_code == 1
    assert res.stderr.startswith("error: listing persistentvolumeclaims: forbidden: ") and res.stderr.count("\n") == 1
    res = run(cluster, "data", "list", "-o", "csv")
    assert res.exit_code == 2 and "'csv' is not one of" in res.stderr and res.stderr.count("\n") == 1
    res = run(cluster, "data", "lst")
    assert res.exit_code == 2 and "No such command 'lst'" in res.stderr


def test_data_completion_offers_claim_names(cluster, claims, namespace):
    from arena_helm.cli.common import complete_claims

    ctx = SimpleNamespace(params={"namespace": namespace, "kubeconfig": str(cluster.admin.kubeconfig)})
    assert complete_claims(ctx, "") == ["models", "scratch", "training-data"]
    assert complete_claims(ctx, "tr") == ["training-data"]
    assert complete_claims(ctx, "training-data:") == []
    assert complete_claims(SimpleNamespace(params={"namespace": namespace, "kubeconfig": "/nonexistent"}), "") == []
