"""The CLI's edges against the real API server, with Helm 3 and Helm 4: kubeconfig lists as kubectl reads
them, errors classified with one wording for helm- and API-backed commands, every state explained, --debug's
request log, output forms, and TensorBoard conveniences. Job status is what the real training-operator
(v1.9.3) and Kueue derive from pods that kwok runs and ends."""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml
from edgetools import cli, one_error, running_cli, write_kubeconfig
from kubecluster import LIMITED_NAMESPACE, free_port, make_claim
from kubernetes import client
from kubernetes.client.rest import ApiException
from waits import conditions, create_quota, live_pods, wait_condition, wait_for, wait_gone, wait_job_pods

from arena_helm import TFJobSpec
from arena_helm.adapters.charts import assemble_chart
from arena_helm.workload.submission import job_values

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parents[2]
KUEUE = ("kueue.x-k8s.io", "v1beta2")
GPU = "nvidia.com/gpu"


def opts(cluster, namespace, helm_bin, user="admin"):
    return ["-n", namespace, "--kubeconfig", str(cluster.users[user].kubeconfig), "--helm-binary", str(helm_bin)]


def submit(name, *options):
    return ["submit", "tf", "--name", name, "--image", "tf:2", *options, "--", "python", "train.py"]


def ok(res):
    assert res.exit_code == 0, (res.output, res.exception)
    return res.stdout


def releases(cluster, namespace, driver="secret"):
    """The names of the releases helm recorded in ``namespace`` with storage ``driver`` (secret, configmap)."""
    core = client.CoreV1Api(cluster.api_client())
    lister = core.list_namespaced_config_map if driver == "configmap" else core.list_namespaced_secret
    return sorted(s.metadata.labels.get("name") for s in lister(namespace, label_selector="owner=helm").items)


def tfjob_names(cluster, namespace):
    custom = client.CustomObjectsApi(cluster.api_client())
    return sorted(j["metadata"]["name"] for j in
                  custom.list_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs")["items"])


def reason_line(text: str) -> str:
    return next((ln for ln in text.splitlines() if ln.startswith("Reason:")), "")


# ---- kubeconfig lists --------------------------------------------------------------------------------------
def test_a_kubeconfig_list_is_merged_as_kubectl_merges_it(helm_bin, cluster, namespace, tmp_path):
    """KUBECONFIG=a:missing:b: the context (and its namespace) from a, the cluster and user from b, b's own
    current-context and same-named context ignored; helm (given no --kubeconfig) reads the same list."""
    admin = cluster.admin
    a = write_kubeconfig(tmp_path / "a.yaml", contexts=[("edge", "test", "admin", namespace)], current="edge")
    b = write_kubeconfig(tmp_path / "b.yaml", clusters=[("test", cluster.server, cluster.ca_file)],
                         users=[("admin", admin.token)],
                         contexts=[("edge", "test", "admin", "default"), ("other", "test", "admin", "default")],
                         current="other")
    env = {"KUBECONFIG": f"{a}:{tmp_path / 'missing.yaml'}:{b}"}
    h = ["--helm-binary", str(helm_bin)]

    out = ok(cli(*submit("merged", *h, "--dry-run"), env=env))
    namespaces = {d["metadata"].get("namespace") for d in yaml.safe_load_all(out) if d}
    assert namespaces == {namespace}
    ok(cli(*submit("merged", *h), env=env))
    assert releases(cluster, namespace) == ["merged"] and tfjob_names(cluster, namespace) == ["merged"]
    assert "merged" not in releases(cluster, "default")
    listed = ok(cli("list", "-o", "name", *h, env=env))
    assert listed == "tfjob/merged\n"
    assert json.loads(ok(cli("get", "merged", "-o", "json", *h, env=env)))["namespace"] == namespace
    # --context picks another context of the merged view (its namespace: default)
    assert "merged" not in ok(cli("list", "-o", "name", "--context", "other", *h, env=env))
    ok(cli("delete", "merged", *h, env=env))
    assert releases(cluster, namespace) == []


def test_an_explicit_kubeconfig_is_one_file(helm_bin, cluster, namespace, tmp_path):
    a = cluster.admin.kubeconfig
    res = cli("list", "--kubeconfig", f"{a}:{a}", "-n", namespace, "--helm-binary", str(helm_bin))
    # (list has no --dry-run to offer)
    one_error(res, 1, f"error: kubeconfig {a}:{a} (from --kubeconfig) does not exist: --kubeconfig takes one file; "
                      "to merge several, list them in KUBECONFIG (:-separated)")
    # --kubeconfig wins over KUBECONFIG
    res = cli("list", "--kubeconfig", str(a), "-n", namespace, "--helm-binary", str(helm_bin),
              env={"KUBECONFIG": str(tmp_path / "nope.yaml")})
    assert res.exit_code == 0, res.output


# ---- errors: one classifier, one wording -------------------------------------------------------------------
CLUSTER_COMMANDS = {
    "submit": submit("edge"),
    "list": ["list"],
    "get": ["get", "edge"],
    "delete": ["delete", "edge"],
    "top-job": ["top", "job"],
    "top-node": ["top", "node"],
    "tensorboard-list": ["tensorboard", "list"],
}


def with_opts(argv, options):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i] + options + argv[i:]
    return argv + options


# what each of CLUSTER_COMMANDS was doing when the API server failed it: its error line's first words
ACTIONS = {
    "submit": "installing release edge",
    "list": "listing helm releases",
    "get": "reading the API discovery",
    "delete": "reading release edge",
    "top-job": "listing helm releases",
    "top-node": "listing nodes",
    "tensorboard-list": "listing services",
}


@pytest.mark.parametrize("command", list(CLUSTER_COMMANDS))
def test_a_wrong_token_is_401_in_every_command(command, helm_bin, cluster, namespace, tmp_path):
    bad = write_kubeconfig(tmp_path / "bad-token.yaml", clusters=[("test", cluster.server, cluster.ca_file)],
                           users=[("admin", "not-the-token")], contexts=[("c", "test", "admin", namespace)],
                           current="c")
    res = cli(*with_opts(CLUSTER_COMMANDS[command], ["--kubeconfig", str(bad), "--helm-binary", str(helm_bin)]))
    one_error(res, 1, f"error: {ACTIONS[command]}: the API server at {cluster.server} rejected the kubeconfig's "
                      "credentials (401 Unauthorized): renew the token or certificate of the context's user, or pick "
                      "another context with --context")
    assert releases(cluster, namespace) == []


@pytest.mark.parametrize("command", ["list", "delete", "top-node", "submit"])
def test_unreachable_is_worded_alike_by_helm_and_api_commands(command, helm_bin, cluster, tmp_path):
    from kubecluster import free_port

    server = f"https://127.0.0.1:{free_port()}"
    dead = write_kubeconfig(tmp_path / "dead.yaml", clusters=[("dead", server, cluster.ca_file)],
                            users=[("u", "t")], contexts=[("c", "dead", "u", "default")], current="c")
    res = cli(*with_opts(CLUSTER_COMMANDS[command], ["--kubeconfig", str(dead), "--helm-binary", str(helm_bin)]))
    one_error(res, 1, f"error: {ACTIONS[command]}: cannot reach the API server at {server}: connection refused")


FORBIDDEN = {
    # argv (as the limited user), the expected error line
    "list-all": (["list", "-A"], 'error: listing helm releases: forbidden: User "alice" cannot list secrets '
                 "cluster-wide: ask a cluster admin for that permission (RBAC), or stay in one namespace you may use "
                 "(-n NAMESPACE without -A; top job rather than top node)"),
    "top-node": (["top", "node"], 'error: listing nodes: forbidden: User "alice" cannot list nodes cluster-wide: ask '
                 "a cluster admin for that permission (RBAC), or stay in one namespace you may use (-n NAMESPACE "
                 "without -A; top job rather than top node)"),
    "fit": (["fit", "tf", "--workers", "2"], 'error: listing nodes: forbidden: User "alice" cannot list nodes '
            "cluster-wide: fit reads every node and the pods of every namespace (what the nodes have allocated): "
            "ask a cluster admin for the ClusterRole of docs/rbac/arena-helm-user.yaml"),
    "delete-default": (["delete", "x", "-n", "default"], 'error: reading release x: forbidden: User "alice" cannot '
                       "list secrets in namespace default: ask a cluster admin for that permission (RBAC), or work "
                       "in a namespace where you have it (-n NAMESPACE)"),
    "get-default": (["get", "x", "-n", "default"], 'error: reading release x: forbidden: User "alice" cannot list '
                    "secrets in namespace default: ask a cluster admin for that permission (RBAC), or work in a "
                    "namespace where you have it (-n NAMESPACE)"),
}


@pytest.mark.parametrize("case", list(FORBIDDEN))
def test_forbidden_names_verb_resource_namespace_and_what_to_do(case, helm_bin, cluster):
    argv, expected = FORBIDDEN[case]
    res = cli(*argv, "--kubeconfig", str(cluster.limited.kubeconfig), "--helm-binary", str(helm_bin))
    one_error(res, 1, expected)


def test_forbidden_submit_is_one_line_and_names_the_secrets(helm_bin, cluster):
    before = releases(cluster, "default")
    res = cli(*submit("intruder", "-n", "default", "--kubeconfig", str(cluster.limited.kubeconfig),
                      "--helm-binary", str(helm_bin)))
    # one line, with no word of a cleanup
    one_error(res, 1, 'error: installing release intruder: forbidden: User "alice" cannot get tfjobs.kubeflow.org '
                      "in namespace default: ask a cluster admin for that permission (RBAC), or work in a namespace "
                      "where you have it (-n NAMESPACE)")
    assert releases(cluster, "default") == before


MISSING_NS = "no-such-ns"


@pytest.mark.parametrize(("command", "action"), [
    (submit("lost"), "installing release lost"),
    (["serve", "custom", "--name", "lost", "--version", "v1", "--image", "nginx:1.27", "--restful-port", "80"],
     "installing release lost-v1"),
    (["workspace", "start", "lost"], "creating secret lost-token"),  # its token, before helm: the API's answer
    (["tensorboard", "start", "lost", "--logdir", "logs:/x"], "installing release lost"),
], ids=["submit", "serve", "workspace", "tensorboard"])
def test_a_namespace_that_does_not_exist_is_named_once(command, action, helm_bin, cluster):
    """Every family's install into a namespace that does not exist: one line naming it and the fix, alike from
    helm and from the API client, exit 1, nothing written anywhere (helm's release record is its first write)."""
    i = command.index("--") if "--" in command else len(command)
    res = cli(*command[:i], *opts(cluster, MISSING_NS, helm_bin), *command[i:])
    assert (res.exit_code, res.stdout) == (1, ""), res.output
    assert res.stderr == (f"error: {action}: namespace {MISSING_NS} does not exist: create it (kubectl create "
                          f"namespace {MISSING_NS}) or give another with -n NAMESPACE\n")
    assert MISSING_NS not in [n.metadata.name for n in client.CoreV1Api(cluster.api_client()).list_namespace().items]


def test_list_in_a_namespace_that_does_not_exist_says_so(helm_bin, cluster, namespace):
    """list -n of a namespace that does not exist (a mistyped -n): one line naming it, exit 1, where an
    existing namespace with no job lists none, exit 0."""
    res = cli("list", *opts(cluster, MISSING_NS, helm_bin))
    assert (res.exit_code, res.stdout, res.stderr) == (1, "", (
        f"error: namespace {MISSING_NS} does not exist (kubectl get namespaces lists them): give another with -n "
        "NAMESPACE, or -A for every namespace\n")), res.output
    res = cli("list", *opts(cluster, namespace, helm_bin))
    assert (res.exit_code, res.stdout, res.stderr) == (
        0, "NAME  STATUS  TRAINER  DURATION  GPU(Requested)  GPU(Allocated)  NODE\n", ""), res.output


@pytest.fixture
def tfjob_quota(cluster, namespace):
    """A ResourceQuota allowing no TFJob: the API server refuses the TFJob after helm wrote its record."""
    import time

    api = cluster.api_client()
    core = client.CoreV1Api(api)
    hard = {"count/tfjobs.kubeflow.org": "0"}
    assert create_quota(core, namespace, "no-tfjobs", hard) == {"count/tfjobs.kubeflow.org": "0"}
    probe = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "probe"},
             "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
                 {"name": "tensorflow", "image": "tf:2"}]}}}}}}
    deadline = time.monotonic() + 20
    while True:  # until the quota admission (its informer) sees the quota: a server-side dry run is refused
        try:
            client.CustomObjectsApi(api).create_namespaced_custom_object(
                "kubeflow.org", "v1", namespace, "tfjobs", probe, dry_run="All")
        except ApiException as exc:
            assert exc.status == 403, exc
            return "no-tfjobs"
        assert time.monotonic() < deadline, "the quota never took effect"
        time.sleep(0.1)


def test_a_submit_failing_after_the_release_record_is_one_line_and_leaves_nothing(helm_bin, cluster, namespace,
                                                                                 tfjob_quota):
    res = cli(*submit("quota", *opts(cluster, namespace, helm_bin)))
    # one line, with no word of a cleanup
    one_error(res, 1, f'error: installing release quota: the ResourceQuota {tfjob_quota} refuses tfjobs.kubeflow.org '
                      '"quota" (requested count/tfjobs.kubeflow.org=1, used count/tfjobs.kubeflow.org=0, limited '
                      "count/tfjobs.kubeflow.org=0): free some of it or ask a cluster admin for more (kubectl describe "
                      f"resourcequota {tfjob_quota} in the release's namespace)")
    assert releases(cluster, namespace) == [] and tfjob_names(cluster, namespace) == []


@pytest.mark.parametrize("driver", ["secret", "configmap"])
def test_a_failed_release_says_helms_reason(helm_bin, cluster, namespace, tfjob_quota, tmp_path, driver):
    """helm's reason is read from its record of the latest revision, wherever HELM_DRIVER keeps it."""
    env = {"HELM_DRIVER": driver}
    spec = TFJobSpec(name="hfail", image="tf:2", command="python train.py", namespace=namespace)
    chart = assemble_chart("tfjob", tmp_path)
    values = tmp_path / "values.json"
    values.write_text(json.dumps(job_values(spec)))
    proc = subprocess.run([str(helm_bin), "install", "hfail", str(chart), "-n", namespace, "-f", str(values),
                           "--kubeconfig", str(cluster.admin.kubeconfig)], capture_output=True, text=True,
                          env={**os.environ, **env})
    assert proc.returncode != 0 and releases(cluster, namespace, driver) == ["hfail"], proc.stderr
    got = ok(cli("get", "hfail", *opts(cluster, namespace, helm_bin), env=env))
    assert "Status:      RELEASE-FAILED" in got
    reason = reason_line(got)
    assert reason.startswith('Reason:      helm: Release "hfail" failed: '), got
    assert "no-tfjobs" in reason and "forbidden" in reason, reason
    assert "Instances:   none (there is no job object)" in got
    data = json.loads(ok(cli("get", "hfail", "-o", "json", *opts(cluster, namespace, helm_bin), env=env)))
    assert data["statusReason"] == reason.removeprefix("Reason:      ")
    ok(cli("delete", "hfail", *opts(cluster, namespace, helm_bin), env=env))
    assert releases(cluster, namespace, driver) == []


# ---- states explained ----------------------------------------------------------------------------------------
def _submit(cluster, namespace, helm_bin, name, *extra):
    ok(cli(*submit(name, *extra, *opts(cluster, namespace, helm_bin))))


def tfjob(cluster, namespace, name):
    return client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", name)


def cordon(cluster, node, unschedulable: bool) -> None:
    client.CoreV1Api(cluster.api_client()).patch_node(node, {"spec": {"unschedulable": unschedulable or None}})


def list_status(o, name):
    rows = [ln.split() for ln in ok(cli("list", *o)).splitlines()[1:]]
    return next((r[1] for r in rows if r and r[0] == name), None)


def test_restarting_failed_and_events(helm_bin, cluster, namespace, kubelet):
    """restartPolicy ExitCode: a retryable exit code (137) makes training-operator delete and recreate the pods
    (Restarting, while no replica runs: their new pods are held Pending by a cordoned node); a non-retryable one
    (1) fails the job. The texts are training-operator v1.9.3's (pkg/controller.v1/common/pod.go), not what the
    stand-in wrote."""
    o = opts(cluster, namespace, helm_bin)
    read = lambda: tfjob(cluster, namespace, "rs")  # noqa: E731
    core = client.CoreV1Api(cluster.api_client())
    node = f"n-{namespace}"
    workers = ["rs-worker-0", "rs-worker-1"]
    kubelet.add_node(node, pool=namespace)
    try:
        _submit(cluster, namespace, helm_bin, "rs", "--workers", "2", "--set", "worker.restartPolicy=ExitCode")
        wait_job_pods(core, namespace, "rs", workers)
        for pod in workers:
            kubelet.run_pod(namespace, pod, node)
        wait_condition(read, "Running")
        first = {p.metadata.uid for p in core.list_namespaced_pod(namespace).items}
        cordon(cluster, node, True)
        # (not finish_pod: the operator deletes a retryable Failed pod at once, before it could be seen Failed).
        # One worker at a time, each once the operator has replaced the one before: two failures in one burst let
        # training-operator's reconciles race (a status update that conflicts is retried from the pods alone, and
        # the Restarting condition of the lost update is gone: seen in CI with both pods replaced and Running kept)
        for pod in workers:
            kubelet.annotate(namespace, pod, {"arena-helm.test/exit-code": "137", "arena-helm.test/reason": "OOMKilled"})
            wait_for(lambda pod=pod: any(p.metadata.name == pod and p.metadata.uid not in first
                                         for p in live_pods(core, namespace, "training.kubeflow.org/job-name=rs")),
                     f"{pod} replaced by the operator")
        # the operator's filterOutCondition: Restarting replaces Running (and stays while no replica runs)
        try:
            wait_for(lambda: list_status(o, "rs") == "RESTARTING", "rs RESTARTING in list")
        except AssertionError as exc:  # what the operator and kwok had done by then, for the next reader
            pods = [(p.metadata.name, p.metadata.uid in first, p.status.phase, bool(p.metadata.deletion_timestamp),
                     [(c.state.terminated.exit_code if c.state and c.state.terminated else None)
                      for c in p.status.container_statuses or []])
                    for p in core.list_namespaced_pod(namespace).items]
            raise AssertionError(f"{exc}; list says {list_status(o, 'rs')}; conditions {conditions(read())}; "
                                 f"pods (name, first, phase, deleting, exit codes) {pods}") from None
        wait_for(lambda: (lambda ps: len(ps) == 2 and not {p.metadata.uid for p in ps} & first)(
            live_pods(core, namespace, "training.kubeflow.org/job-name=rs")), "the pods recreated")
        job = read()
        (restarting,) = [c for c in conditions(job) if c[0] == "Restarting"]
        assert restarting == ("Restarting", "True", "TFJobRestarting",
                              "job rs is restarting because Worker replica(s) failed."), conditions(job)
        assert ok(cli("list", *o)).splitlines()[1].split()[:3] == ["rs", "RESTARTING", "TFJOB"]
        # the operator's event recorder sends its events after the status update: wait until the API has it
        wait_for(lambda: any(e.reason == "TFJobRestarting" and e.involved_object.name == "rs"
                             for e in core.list_namespaced_event(namespace).items), "the TFJobRestarting event")
        got = ok(cli("get", "rs", "-e", *o))
        assert reason_line(got) == "Reason:      job rs is restarting because Worker replica(s) failed."
        # the real operator records events (the stand-in made none): -e lists them, as a table
        assert "Events:      none" not in got
        rows = got.split("\n\n")[-1].splitlines()
        assert rows[0].split() == ["LAST", "SEEN", "TYPE", "OBJECT", "REASON", "MESSAGE"], got
        reasons = {tuple(r.split()[1:4]) for r in rows[1:]}
        assert {("Normal", "tfjob/rs", "SuccessfulCreatePod"), ("Warning", "tfjob/rs", "TFJobRestarting")} <= reasons, got

        cordon(cluster, node, False)
        for pod in workers:
            kubelet.run_pod(namespace, pod, node)
        wait_for(lambda: list_status(o, "rs") == "RUNNING", "rs RUNNING again in list")
        kubelet.finish_pod(namespace, "rs-worker-0", 1)
        job = wait_condition(read, "Failed")
        (failed,) = [c for c in conditions(job) if c[0] == "Failed"]
        assert failed[2:] == ("TFJobFailed", 'job "rs" is failing because "Worker" replica(s) failed.'), failed
        got = ok(cli("get", "rs", *o))
        assert "Status:      FAILED" in got
        assert reason_line(got) == 'Reason:      TFJobFailed: job "rs" is failing because "Worker" replica(s) failed.'
    finally:
        kubelet.remove_node(node)


def test_suspended_by_the_run_policy(helm_bin, cluster, namespace):
    """training-operator answers runPolicy.suspend with its Suspended condition (and Running false)."""
    api = cluster.api_client()
    o = opts(cluster, namespace, helm_bin)
    _submit(cluster, namespace, helm_bin, "sus")
    wait_condition(lambda: tfjob(cluster, namespace, "sus"), "Created")
    client.CustomObjectsApi(api).patch_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", "sus", {"spec": {"runPolicy": {"suspend": True}}})
    job = wait_condition(lambda: tfjob(cluster, namespace, "sus"), "Suspended")
    (suspended,) = [c for c in conditions(job) if c[0] == "Suspended"]
    assert suspended[2:] == ("TFJobSuspended", "TFJob sus is suspended."), conditions(job)
    got = ok(cli("get", "sus", *o))
    assert "Status:      SUSPENDED" in got
    assert reason_line(got) == "Reason:      TFJob sus is suspended. (spec.runPolicy.suspend is true)"
    assert ok(cli("list", *o)).splitlines()[1].split()[:2] == ["sus", "SUSPENDED"]


@pytest.fixture
def team_queue(cluster, controllers, namespace):
    """Kueue's LocalQueue team-q in the namespace, on a ClusterQueue of its own with no GPU quota."""
    controllers.require("kueue", "training-operator")
    custom = client.CustomObjectsApi(cluster.api_client())
    flavor, cq = f"rf-{namespace}", f"cq-{namespace}"
    custom.create_cluster_custom_object(*KUEUE, "resourceflavors", {
        "apiVersion": f"{KUEUE[0]}/{KUEUE[1]}", "kind": "ResourceFlavor", "metadata": {"name": flavor}})
    custom.create_cluster_custom_object(*KUEUE, "clusterqueues", {
        "apiVersion": f"{KUEUE[0]}/{KUEUE[1]}", "kind": "ClusterQueue", "metadata": {"name": cq},
        "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                 "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU], "flavors": [{
                     "name": flavor, "resources": [{"name": "cpu", "nominalQuota": "64"},
                                                   {"name": "memory", "nominalQuota": "256Gi"},
                                                   {"name": GPU, "nominalQuota": "0"}]}]}]}})
    custom.create_namespaced_custom_object(*KUEUE, namespace, "localqueues", {
        "apiVersion": f"{KUEUE[0]}/{KUEUE[1]}", "kind": "LocalQueue", "metadata": {"name": "team-q"},
        "spec": {"clusterQueue": cq}})
    wait_for(lambda: any(c["type"] == "Active" and c["status"] == "True" for c in (
        custom.get_cluster_custom_object(*KUEUE, "clusterqueues", cq).get("status") or {}).get("conditions") or []),
        "the ClusterQueue Active")
    try:
        yield flavor
    finally:  # while Kueue runs: it holds them with its resource-in-use finalizer until no workload is left
        for j in custom.list_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs")["items"]:
            custom.delete_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", j["metadata"]["name"])
        custom.delete_namespaced_custom_object(*KUEUE, namespace, "localqueues", "team-q")
        custom.delete_cluster_custom_object(*KUEUE, "clusterqueues", cq)
        custom.delete_cluster_custom_object(*KUEUE, "resourceflavors", flavor)


def test_queued_by_kueue_names_the_queue_and_why(helm_bin, cluster, namespace, team_queue):
    o = opts(cluster, namespace, helm_bin)
    _submit(cluster, namespace, helm_bin, "queued", "--queue-name", "team-q", "--workers", "2", "--gpus", "1")
    custom = client.CustomObjectsApi(cluster.api_client())
    job = tfjob(cluster, namespace, "queued")
    # Kueue's webhook suspended it at creation
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-q"
    assert job["spec"]["runPolicy"]["suspend"] is True

    def held():
        items = custom.list_namespaced_custom_object(*KUEUE, namespace, "workloads", label_selector=(
            f"kueue.x-k8s.io/job-uid={job['metadata']['uid']}"))["items"]
        quota = [c for w in items for c in (w.get("status") or {}).get("conditions") or []
                 if c["type"] == "QuotaReserved" and c["status"] == "False" and "insufficient" in c["message"]]
        return (items[0]["metadata"]["name"], quota[0]["message"]) if quota else None

    workload, message = wait_for(held, "Kueue's Workload of queued without quota")
    assert workload.startswith("tfjob-queued-"), workload
    assert message.startswith(f"couldn't assign flavors to pod set worker: insufficient quota for {GPU} in flavor "
                              f"{team_queue}"), message
    got = ok(cli("get", "queued", *o))
    assert "Status:      QUEUED" in got
    assert reason_line(got) == f"Reason:      held by Kueue: waiting in queue team-q (workload {workload}: " \
                               f"{message})"
    cq = f"cq-{namespace}"
    assert f"Queue:       team-q (cluster queue {cq}): position 1 in local queue team-q, 1 in cluster queue {cq}\n" \
        in got, got


def test_a_job_object_deleted_outside_says_how_to_clean_up(helm_bin, cluster, namespace):
    o = opts(cluster, namespace, helm_bin)
    _submit(cluster, namespace, helm_bin, "gone")
    client.CustomObjectsApi(cluster.api_client()).delete_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", "gone")
    got = ok(cli("get", "gone", *o))
    assert "Status:      JOB-MISSING" in got
    assert reason_line(got) == (f"Reason:      the TFJob object is gone (deleted outside arena-helm) but its release "
                                f"gone remains: remove the release with arena-helm delete gone -n {namespace}")
    # its pods go with it, once the garbage collector has removed them (kubectl's background propagation)
    wait_gone(client.CoreV1Api(cluster.api_client()), namespace, "training.kubeflow.org/job-name=gone")
    got = ok(cli("get", "gone", *o))
    assert "Status:      JOB-MISSING" in got
    assert "Instances:   none (there is no job object)" in got
    ok(cli("delete", "gone", *o))  # the command the reason gives
    assert releases(cluster, namespace) == []


# ---- --debug -------------------------------------------------------------------------------------------------
def test_debug_logs_every_api_request_and_helm_call(helm_bin, cluster, namespace):
    o = opts(cluster, namespace, helm_bin)
    _submit(cluster, namespace, helm_bin, "dbg")
    res = cli("get", "dbg", "--debug", *o)
    assert res.exit_code == 0, res.output
    api = re.findall(r"^debug: arena_helm\.adapters\.kube: api: (GET|POST|PUT|PATCH|DELETE) (\S+) (\d{3}) (\d+)ms$",
                     res.stderr, re.M)
    paths = [p for _, p, _, _ in api]
    assert f"/apis/kubeflow.org/v1/namespaces/{namespace}/tfjobs/dbg" in paths, res.stderr
    assert any(p.startswith(f"/api/v1/namespaces/{namespace}/pods?labelSelector=") for p in paths), paths
    assert all(s in ("200", "404") for _, _, s, _ in api), api
    assert not re.findall(r"^debug: arena_helm\.adapters\.helm: helm: ", res.stderr, re.M)  # get reads the API only
    res = cli("delete", "dbg", "--debug", *o)  # delete runs helm: its argv is logged
    assert res.exit_code == 0, res.output
    helm_lines = re.findall(r"^debug: arena_helm\.adapters\.helm: helm: (\S+) uninstall dbg .*", res.stderr, re.M)
    assert helm_lines == [str(helm_bin)], res.stderr
    _submit(cluster, namespace, helm_bin, "dbg")
    res = cli("get", "dbg", *o)  # the next invocation logs nothing
    assert res.exit_code == 0 and res.stderr == "", res.stderr


def test_debug_logs_the_failing_request_with_its_status(helm_bin, cluster):
    res = cli("top", "node", "--debug", "--kubeconfig", str(cluster.limited.kubeconfig))
    assert re.search(r"^debug: arena_helm\.adapters\.kube: api: GET /api/v1/nodes\?limit=500 403 \d+ms$", res.stderr,
                     re.M), res.stderr


# ---- output forms ----------------------------------------------------------------------------------------------
def test_get_wide_and_name_list_name(helm_bin, cluster, namespace, kubelet):
    o = opts(cluster, namespace, helm_bin)
    _submit(cluster, namespace, helm_bin, "forms", "--workers", "2", "--cpu", "2", "--memory", "1Gi")
    _submit(cluster, namespace, helm_bin, "forms2")
    assert ok(cli("get", "forms", "-o", "name", *o)) == "tfjob/forms\n"
    assert ok(cli("list", "-o", "name", *o)) == "tfjob/forms2\ntfjob/forms\n"
    node = f"n-{namespace}"
    kubelet.add_node(node, pool=namespace)
    try:
        core = client.CoreV1Api(cluster.api_client())
        wait_job_pods(core, namespace, "forms", ["forms-worker-0", "forms-worker-1"])
        kubelet.run_pod(namespace, "forms-worker-0", node)
        kubelet.run_pod(namespace, "forms-worker-1", node)
        wide = ok(cli("get", "forms", "-o", "wide", *o))
        assert "Requests:    cpu 4, memory 2Gi" in wide
        table = wide.split("\n\n", 1)[1].splitlines()
        assert table[0].split() == ["INSTANCE", "STATUS", "AGE", "TYPE", "IS_CHIEF", "GPU(Requested)", "NODE",
                                    "NODE_IP"]
        row = dict(zip(table[0].split(), table[1].split(), strict=True))
        assert (row["INSTANCE"], row["TYPE"], row["NODE"], row["NODE_IP"]) == ("forms-worker-0", "worker", node,
                                                                               "127.0.0.1")
    finally:
        kubelet.remove_node(node)


# ---- TensorBoard -----------------------------------------------------------------------------------------------
def test_delete_of_a_standalone_tensorboard_points_to_tensorboard_stop(helm_bin, cluster, namespace):
    o = opts(cluster, namespace, helm_bin)
    ok(cli("tensorboard", "start", "tb", "--logdir", "logs:/run1", *o))
    one_error(cli("delete", "tb", *o), 2,
              f"error: tb in namespace {namespace} is a standalone TensorBoard, not a job: stop it with arena-helm "
              f"tensorboard stop tb -n {namespace}")
    ok(cli("tensorboard", "stop", "tb", *o))
    assert releases(cluster, namespace) == []


def test_tensorboard_open_waits_for_the_pod_and_gives_up(helm_bin, cluster, namespace, kubelet, tmp_path):
    o = opts(cluster, namespace, helm_bin)
    ok(cli("tensorboard", "start", "tbo", "--logdir", "logs:/run1", *o))
    # the real kubectl beside the helm; its cache ($HOME/.kube/cache) in the test's folder
    env = {"PATH": f"{helm_bin.parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    # the Deployment controller makes the pod, but it cannot run (no node, no claim yet): open gives up
    res = cli("tensorboard", "open", "tbo", "--timeout", "2s", *o, env=env)
    assert res.exit_code == 3, res.output
    lines = res.stderr.strip().splitlines()
    assert lines[0] == "waiting for the TensorBoard pod of tbo to run (up to 2s; --timeout)"
    assert len(lines) == 2 and re.fullmatch(
        r"error: the TensorBoard pod of tbo is not running after 2s \((no pod yet|tbo-tensorboard-\S+ Pending)\): "
        rf"see kubectl get pods -n {namespace} -l app\.kubernetes\.io/instance=tbo", lines[1]), res.stderr

    # the claim bound and a node there: the Deployment's pod is scheduled and kwok runs it: open port-forwards
    # (kubectl's port-forward through the API server to kwok's, to a stand-in of TensorBoard's port)
    node = f"tb-{namespace}"
    core = client.CoreV1Api(cluster.api_client())
    make_claim(core, namespace, "logs", modes=["ReadWriteOnce"], size="1Gi", storage_class="")
    kubelet.add_node(node, pool=namespace)
    local = free_port()
    try:
        (pod,) = wait_for(lambda: [p.metadata.name for p in core.list_namespaced_pod(
            namespace, label_selector="app.kubernetes.io/instance=tbo").items], "the TensorBoard pod")
        with kubelet.serving_http(namespace, pod, 6006, b"standalone tensorboard") as seen:
            kubelet.run_pod(namespace, pod, node)
            with running_cli("tensorboard", "open", "tbo", "--port", str(local), *o, env=env) as opener:
                assert opener.stderr.readline() == (
                    f"Forwarding http://localhost:{local} to tbo-tensorboard (Ctrl-C stops)\n"), opener.poll()
                assert opener.stdout.readline() == f"Forwarding from 127.0.0.1:{local} -> 6006\n"
                with urllib.request.urlopen(f"http://localhost:{local}/", timeout=30) as resp:
                    assert resp.read() == b"standalone tensorboard"
            assert seen == ["/"]
    finally:
        kubelet.remove_node(node)
        core.delete_persistent_volume(f"pv-{namespace}-logs")
    ok(cli("tensorboard", "stop", "tbo", *o))


def test_limited_user_namespace_comes_from_its_context(helm_bin, cluster):
    """The limited user's kubeconfig context names its namespace: commands use it without -n."""
    res = cli("list", "--kubeconfig", str(cluster.limited.kubeconfig), "--helm-binary", str(helm_bin))
    assert res.exit_code == 0, res.output
    out = ok(cli(*submit("ctxns", "--dry-run", "--kubeconfig", str(cluster.limited.kubeconfig),
                         "--helm-binary", str(helm_bin))))
    assert {d["metadata"].get("namespace") for d in yaml.safe_load_all(out) if d} == {LIMITED_NAMESPACE}
