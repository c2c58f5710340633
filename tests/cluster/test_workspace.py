"""`arena-helm workspace` through the real CLI, helm and the test cluster: the real Job controller runs the
workspace's Job, the real PV binder binds its home, kwok runs its pod. A workspace's server ending itself
when idle is its container exiting 0 (kwok's finish_pod here; the shell watcher's own exit is checked for real
in tests/charts/test_workspace_chart.py): the Job completes, the workspace is STOPPED, its home stays bound;
start runs it again on the same home; stop ends it; delete leaves only what --keep-home keeps."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import clictx
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from waits import create_quota, wait_for

pytestmark = pytest.mark.cluster


class Cli:
    """The CLI as clictx drives it, and the workspaces as `workspace list -o json` shows them."""

    def __init__(self, helm_bin, cluster, namespace, user="admin"):
        self.run = clictx.cli(helm_bin, cluster, namespace, user=user)
        self.ok = clictx.cli(helm_bin, cluster, namespace, user=user, check=True)

    def __call__(self, *args):
        return self.run(*args)

    def views(self) -> dict[str, dict]:
        return {v["name"]: v for v in json.loads(self.ok("workspace", "list", "-o", "json"))}


@pytest.fixture
def cli(helm_bin, cluster, namespace):
    return Cli(helm_bin, cluster, namespace)


@pytest.fixture
def node(kubelet, namespace):
    name = f"ws-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=4)
    yield name
    kubelet.remove_node(name)


def job_pod(core, namespace: str, job: str) -> str:
    def one():
        pods = core.list_namespaced_pod(namespace, label_selector=f"job-name={job}").items
        return pods[0].metadata.name if pods else None

    return wait_for(one, f"the pod of Job {job}")


def test_a_workspace_runs_stops_itself_starts_again_on_its_home_and_is_deleted(cli, cluster, kubelet, namespace,
                                                                               node):
    core = client.CoreV1Api(cluster.api_client())
    batch = client.BatchV1Api(cluster.api_client())
    out = cli.ok("workspace", "start", "nb", "--gpus", "2", "--idle-stop", "30m", "-e", "EPOCHS=3")
    assert out.splitlines()[0] == f"workspace/nb started in namespace {namespace}"
    # the token: a Secret of its own, named (not held) by the release's values
    token = base64.b64decode(core.read_namespaced_secret("nb-token", namespace).data["token"]).decode()
    assert len(token) >= 32
    job = batch.read_namespaced_job("nb-1", namespace)
    container = job.spec.template.spec.containers[0]
    assert container.command is None  # the image's entrypoint (tini, start.sh) runs start-notebook.py
    assert container.args[:2] == ["start-notebook.py", "--ServerApp.ip=0.0.0.0"]
    assert "--ServerApp.shutdown_no_activity_timeout=1800" in container.args
    assert [(e.name, e.value_from.secret_key_ref.name if e.value_from else e.value) for e in container.env] == [
        ("HOME", "/home/jovyan"), ("JUPYTER_TOKEN", "nb-token"), ("EPOCHS", "3")]
    assert token not in json.dumps(cli.ok("workspace", "get", "nb", "-o", "json"))
    pod = job_pod(core, namespace, "nb-1")
    assert kubelet.run_pod(namespace, pod) == node
    wait_for(lambda: cli.views()["nb"]["status"] == "RUNNING", "nb RUNNING")
    # the home: provisioned by the cluster's default StorageClass (no volume made for it), bound
    wait_for(lambda: core.read_namespaced_persistent_volume_claim("nb-home", namespace).status.phase == "Bound",
             "the home bound")
    home_pv = core.read_persistent_volume(core.read_namespaced_persistent_volume_claim("nb-home", namespace)
                                          .spec.volume_name)
    assert home_pv.spec.claim_ref.name == "nb-home" and Path(home_pv.spec.host_path.path).is_dir()
    view = cli.views()["nb"]
    assert view == {"name": "nb", "namespace": namespace, "type": "jupyter", "status": "RUNNING", "reason": "",
                    "gpus": 2, "idleStopSeconds": 1800, "home": "nb-home (Bound)", "run": 1, "pod": pod,
                    "idleForSeconds": None}
    # no Prometheus here: how long its GPUs have idled is not known (N/A, one note; tests/cluster/test_metrics.py
    # reads it from a real Prometheus)
    res = cli("workspace", "list")
    assert res.exit_code == 0, res.output
    table = res.stdout.splitlines()
    assert table[0].split() == ["NAME", "TYPE", "STATUS", "GPUS", "IDLE-FOR", "IDLE-STOP", "HOME", "AGE"]
    assert table[1].split()[:8] == ["nb", "jupyter", "RUNNING", "2", "N/A", "30m", "nb-home", "(Bound)"]
    assert res.stderr.splitlines() == [
        "note: no Prometheus found (no Service labelled as Arena looks for, no --prometheus-url or "
        "--prometheus-service); idle times read N/A"]
    # a workspace is no training job: list leaves it out
    assert "nb" not in cli.ok("list").split()
    # starting it while it runs is refused, in one line, with nothing changed
    res = cli("workspace", "start", "nb")
    assert res.exit_code == 1 and res.stderr.strip().splitlines() == [
        "error: workspace nb is RUNNING already (arena-helm workspace stop nb first to start it anew)"]
    # with other values: the advice that holds once it is stopped too (it starts again only as it was)
    res = cli("workspace", "start", "nb", "--gpus", "1", "--idle-stop", "1h")
    assert (res.exit_code, res.stderr) == (2, (
        "error: workspace nb is RUNNING already: it starts again only with its own values (no --gpus, --idle-stop); "
        f"to start it with these, delete it first (arena-helm workspace delete nb -n {namespace}; --keep-home keeps "
        "its home)\n")), res.output

    # idle: the server ends itself (exit 0): the Job completes, the GPUs are free, the home stays
    kubelet.finish_pod(namespace, pod, 0)
    wait_for(lambda: cli.views()["nb"]["status"] == "STOPPED", "nb STOPPED after its server ended")
    stopped = cli.views()["nb"]
    assert (stopped["reason"], stopped["home"]) == ("ended itself (idle, or its server exited 0)", "nb-home (Bound)")
    assert batch.read_namespaced_job("nb-1", namespace).status.succeeded == 1

    # start again: a new Job with the same values, on the same home
    res = cli("workspace", "start", "nb", "--gpus", "1")
    assert (res.exit_code, res.stderr) == (2, (
        "error: workspace nb exists: it starts again only with its own values (no --gpus); to start it with these, "
        f"delete it first (arena-helm workspace delete nb -n {namespace}; --keep-home keeps its home)\n")), res.output
    assert cli.ok("workspace", "start", "nb").splitlines()[0] == f"workspace/nb restarted in namespace {namespace}"
    wait_for(lambda: [j.metadata.name for j in batch.list_namespaced_job(namespace).items] == ["nb-2"],
             "helm replaced Job nb-1 by nb-2")
    pod2 = job_pod(core, namespace, "nb-2")
    kubelet.run_pod(namespace, pod2)
    wait_for(lambda: cli.views()["nb"]["status"] == "RUNNING", "nb RUNNING again")
    again = batch.read_namespaced_job("nb-2", namespace).spec.template.spec
    assert again.volumes[0].persistent_volume_claim.claim_name == "nb-home"
    assert again.containers[0].resources.limits["nvidia.com/gpu"] == "2"
    assert cli.views()["nb"]["run"] == 2

    # stop: the Job goes, the home and the release stay
    assert cli.ok("workspace", "stop", "nb").startswith("workspace/nb stopped")
    wait_for(lambda: not batch.list_namespaced_job(namespace).items, "the Job gone")
    assert cli.views()["nb"]["status"] == "STOPPED"
    assert core.read_namespaced_persistent_volume_claim("nb-home", namespace).status.phase == "Bound"

    # delete: the release, the token and the home
    assert cli.ok("workspace", "delete", "nb") == "workspace/nb deleted\n"
    assert cli.views() == {}
    assert gone(lambda: core.read_namespaced_secret("nb-token", namespace))
    # the home is gone for good: the claim (once nothing uses it: the pvc-protection controller), then its
    # volume and its folder (the StorageClass' Delete reclaim policy)
    wait_for(lambda: gone(lambda: core.read_namespaced_persistent_volume_claim("nb-home", namespace)), "nb-home gone")
    wait_for(lambda: gone(lambda: core.read_persistent_volume(home_pv.metadata.name)), "its volume gone")
    assert not Path(home_pv.spec.host_path.path).exists()


def gone(read) -> bool:
    """Deleted for good: not found (a claim's pvc-protection finalizer removed, a Secret at once)."""
    try:
        read()
    except ApiException as exc:
        return exc.status == 404
    return False


def test_a_shell_workspace_on_an_existing_home_and_delete_keep_home(cli, cluster, kubelet, namespace, node):
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_persistent_volume_claim(namespace, {"metadata": {"name": "mine"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    cli.ok("workspace", "start", "sh1", "--type", "shell", "--home", "mine", "--idle-stop", "10m",
           "--termination-grace-period", "45s")
    with pytest.raises(ApiException):  # a shell has no token
        core.read_namespaced_secret("sh1-token", namespace)
    batch = client.BatchV1Api(cluster.api_client())
    spec = batch.read_namespaced_job("sh1-1", namespace).spec.template.spec
    assert spec.containers[0].command[:2] == ["sh", "-c"] and spec.containers[0].command[3:] == ["idle-watch", "600"]
    assert spec.volumes[0].persistent_volume_claim.claim_name == "mine"
    assert spec.termination_grace_period_seconds == 45
    assert not core.list_namespaced_service(namespace, label_selector="app.kubernetes.io/instance=sh1").items
    cli.ok("workspace", "start", "sh2", "--type", "shell", "--idle-stop", "0")
    views = cli.views()
    assert (views["sh1"]["type"], views["sh1"]["idleStopSeconds"], views["sh2"]["idleStopSeconds"]) == ("shell", 600, 0)
    # the default StorageClass provisions both (the one made here, and the one the chart made)
    wait_for(lambda: (lambda v: (v["sh1"]["home"], v["sh2"]["home"]))(cli.views()) == ("mine (Bound)",
                                                                                     "sh2-home (Bound)"),
             "both homes bound")
    assert cli.ok("workspace", "delete", "sh1") == "workspace/sh1 deleted\n"
    assert core.read_namespaced_persistent_volume_claim("mine", namespace).metadata.deletion_timestamp is None
    assert cli.ok("workspace", "delete", "sh2", "--keep-home") == "workspace/sh2 deleted (home sh2-home kept)\n"
    assert core.read_namespaced_persistent_volume_claim("sh2-home", namespace).metadata.deletion_timestamp is None
    res = cli("workspace", "stop", "sh2")
    assert res.exit_code == 1 and res.stderr.strip() == (
        f"error: no workspace named sh2 in namespace {namespace} (arena-helm workspace list)")
    # a job's release is no workspace: neither started over nor stopped
    cli.ok("submit", "tf", "--name", "taken", "--image", "tf:2", "--", "python", "train.py")
    res = cli("workspace", "start", "taken")
    assert res.exit_code == 1 and res.stderr.strip() == (
        f"error: a release named taken already exists in namespace {namespace} (chart tfjob-0.1.0): pick another "
        "name")
    res = cli("workspace", "stop", "taken")
    assert res.exit_code == 2 and res.stderr.strip() == "error: release taken is not a workspace (chart tfjob-0.1.0)"
    assert "taken" not in cli.views()


def test_a_failed_start_leaves_nothing_behind(cli, cluster, namespace):
    """The API server refuses the Job (a ResourceQuota of no Jobs): no release, no token Secret, no home."""
    core = client.CoreV1Api(cluster.api_client())
    assert create_quota(core, namespace, "no-jobs", {"count/jobs.batch": "0"}) == {"count/jobs.batch": "0"}
    res = cli("workspace", "start", "nb")
    assert res.exit_code == 1 and res.stderr.strip() == (
        'error: installing release nb: the ResourceQuota no-jobs refuses jobs.batch "nb-1" (requested '
        "count/jobs.batch=1, used count/jobs.batch=0, limited count/jobs.batch=0): free some of it or ask a cluster "
        "admin for more (kubectl describe resourcequota no-jobs in the release's namespace)"), res.output
    assert cli.views() == {}
    assert not core.list_namespaced_secret(namespace, label_selector="app.kubernetes.io/instance=nb").items
    claims = core.list_namespaced_persistent_volume_claim(namespace).items
    assert all(c.metadata.deletion_timestamp for c in claims), [c.metadata.name for c in claims]


def test_the_documented_role_is_enough_for_a_workspaces_life(helm_bin, cluster):
    """alice holds only docs/rbac/arena-helm-user.yaml's Role in her namespace: start, list, get, stop, start
    again, delete."""
    from kubecluster import LIMITED_NAMESPACE, LIMITED_USER

    cli = Cli(helm_bin, cluster, LIMITED_NAMESPACE, user=LIMITED_USER)
    ok = cli.ok
    name = f"alice-{helm_bin.parent.name.replace('.', '-')}"  # the two helm versions may share the namespace
    try:
        ok("workspace", "start", name, "--idle-stop", "1h")
        assert json.loads(ok("workspace", "get", name, "-o", "json"))["status"] in ("PENDING", "RUNNING")
        ok("workspace", "stop", name)
        assert json.loads(ok("workspace", "get", name, "-o", "json"))["status"] == "STOPPED"
        assert ok("workspace", "start", name).startswith(f"workspace/{name} restarted")
    finally:
        ok("workspace", "delete", name)
    assert name not in cli.views()


def test_open_forwards_a_port_to_the_server_with_its_token_and_attach_runs_in_the_workspace(helm_bin, cli, cluster,
                                                                                              kubelet, namespace, node):
    """`workspace open` runs the real kubectl port-forward (API server -> kwok's pods/portforward) to the
    workspace's Service; kwok forwards the pod's 8888 to a small HTTP server here, standing in for Jupyter
    (no Jupyter image can run on kwok). `workspace attach` runs a command through pods/exec."""
    import os
    import urllib.request

    from edgetools import running_cli
    from kubecluster import free_port

    core = client.CoreV1Api(cluster.api_client())
    cli.ok("workspace", "start", "nb", "--idle-stop", "1h")
    token = base64.b64decode(core.read_namespaced_secret("nb-token", namespace).data["token"]).decode()
    pod = job_pod(core, namespace, "nb-1")
    local = free_port()
    env = {**os.environ, "PATH": f"{helm_bin.parent}:{os.environ['PATH']}"}  # the kubectl beside the helm
    with kubelet.serving_http(namespace, pod, 8888, b"jupyter stand-in") as seen:
        kubelet.run_pod(namespace, pod)
        with running_cli("workspace", "open", "nb", "--port", str(local), "--timeout", "60s",
                         *clictx_base(helm_bin, cluster, namespace), env=env) as opener:
            url = opener.stdout.readline().strip()
            assert url == f"http://localhost:{local}/lab?token={token}", (url, opener.poll())
            with urllib.request.urlopen(url, timeout=30) as resp:
                assert resp.read() == b"jupyter stand-in"
        assert seen == [f"/lab?token={token}"]
    assert cli.ok("workspace", "attach", "nb", "--", "sh", "-c", "echo in the workspace $ARENA_HELM_KWOK_EXEC") == (
        "in the workspace 1\n")
    res = cli("workspace", "open", "nb2")
    assert res.exit_code == 1 and "no workspace named nb2" in res.stderr
    cli.ok("workspace", "stop", "nb")
    res = cli("workspace", "attach", "nb", "--", "true")
    assert res.exit_code == 1 and res.stderr.strip() == (
        f"error: workspace nb is STOPPED (stopped (workspace stop)): arena-helm workspace start nb -n {namespace} "
        "first")


def clictx_base(helm_bin, cluster, namespace) -> list[str]:
    return ["--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "-n", namespace]


def test_start_wait_follows_the_workspace_until_it_runs_or_gives_up(cli, cluster, kubelet, namespace, node):
    """--wait: exit 0 once its pod runs (kwok runs it once the scheduler binds it), 3 after --timeout while it
    is pending (no node takes a pod of 8 GPUs), 1 when it stops first (its server exits before it is ready)."""
    res = cli("workspace", "start", "nb", "--wait", "--timeout", "60s")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1].startswith("workspace/nb is RUNNING (pod nb-1-")
    res = cli("workspace", "start", "big", "--type", "shell", "--gpus", "8", "--home", "nb-home", "--wait",
              "--timeout", "3s")
    assert res.exit_code == 3, res.output
    assert res.stderr.strip().splitlines()[-1] == (
        "error: workspace big is not running after 3s (PENDING: Unschedulable: 0/1 nodes are available: 1 "
        "Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
        f"scheduling.; arena-helm workspace get big -n {namespace})")
    cli.ok("workspace", "delete", "big")
    cli.ok("workspace", "delete", "nb")


def test_the_python_api_starts_a_workspace_and_starts_it_again(helm_bin, cli, cluster, namespace):
    """arena_helm.start_workspace: what `workspace start` does, from Python (the spec's fields are its flags);
    a stopped workspace starts again with its own values, and a spec that sets more is refused."""
    from arena_helm import UsageError, WorkspaceSpec, start_workspace
    from arena_helm.adapters.helm import Helm, KubeTarget
    from arena_helm.adapters.kube import KubeReader

    kube = KubeReader(str(cluster.admin.kubeconfig))
    helm = Helm(str(helm_bin), KubeTarget(str(cluster.admin.kubeconfig), None))
    spec = WorkspaceSpec(name="py", namespace=namespace, type="shell", home="mine", idle_stop="10m", gpus=1)
    assert start_workspace(spec, helm, kube) == "started"
    assert (cli.views()["py"]["type"], cli.views()["py"]["gpus"], cli.views()["py"]["idleStopSeconds"]) == (
        "shell", 1, 600)
    cli.ok("workspace", "stop", "py")
    with pytest.raises(UsageError) as err:
        start_workspace(spec, helm, kube)
    assert str(err.value) == (  # the message names the Python API's parameters
        "workspace py exists: it starts again only with its own values (no gpus=, home=, idle_stop=, type=); to "
        f"start it with these, delete it first (arena-helm workspace delete py -n {namespace}; --keep-home keeps "
        "its home)")
    assert start_workspace(WorkspaceSpec(name="py", namespace=namespace), helm, kube) == "restarted"
    assert cli.views()["py"]["run"] == 2
    cli.ok("workspace", "delete", "py")
