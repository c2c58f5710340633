"""list, get, logs, delete, prune and top through the CLI against the real API server, with the real training
operators and kwok as the kubelets. Tables are asserted exactly; only durations and ages (which tick) are masked."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time

import pytest
import yaml
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_condition, wait_for, wait_gone, wait_job_pods

from arena_helm.adapters import kube as kube_mod
from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
TICKING = re.compile(r"(?<=\s)\d+(s|m|h|d|y|h\d+m)(?=\s|$)", re.M)


def mask(text: str) -> str:
    """Durations/ages tick between runs: replace them (keeping columns aligned is not needed after this)."""
    return re.sub(r" +", " ", TICKING.sub("<t>", text))


class Ctx:
    def __init__(self, helm_bin, cluster, namespace, user="admin"):
        self.base = ["--kubeconfig", str(cluster.users[user].kubeconfig), "--helm-binary", str(helm_bin)]
        self.ns = namespace
        self.cluster = cluster

    def __call__(self, *args, ns=True):
        cmd = list(args)
        # options go before a submit's (or an attach's) command words
        if "--" in cmd:
            i = cmd.index("--")
            cmd = cmd[:i] + self.base + (["-n", self.ns] if ns else []) + cmd[i:]
        else:
            cmd = cmd + self.base + (["-n", self.ns] if ns else [])
        return runner.invoke(app, cmd)


@pytest.fixture
def ctx(helm_bin, cluster, namespace):
    return Ctx(helm_bin, cluster, namespace)


@pytest.fixture
def gpu_node(kubelet, namespace):
    name = f"gpu-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=4, labels={"node-role.kubernetes.io/gpu": ""})
    yield name
    kubelet.remove_node(name)


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


def core_api(cluster):
    return client.CoreV1Api(cluster.api_client())


def wait_status(ctx, name: str, status: str, timeout: float = 90.0, note: str = "") -> dict:
    """Until arena-helm reads the job as ``status`` (what it makes of the real operator's status and the pods);
    a timeout names every status read meanwhile and the last view (a busy CI machine's operator may be slow)."""
    seen: list[str] = []
    last: dict = {}

    def got():
        job = json.loads(ok(ctx("get", name, "-o", "json")))
        if not seen or seen[-1] != job["status"]:
            seen.append(job["status"])
        last.update(job)
        return job if job["status"] == status else None

    try:
        return wait_for(got, f"job {name} {status}", timeout)
    except AssertionError as e:
        raise AssertionError(f"{e}; statuses read {seen}; last view {json.dumps(last)[:2000]}\n"
                             f"{note}{cluster_state(ctx, name)}") from None


def cluster_state(ctx, name: str) -> str:
    """What the API server holds for a job that did not reach a status: the operator's status of the job
    object (any kubeflow.org kind) and its pods, each with uid, phase, container states and deletion."""
    api = ctx.cluster.api_client()
    found = []
    for plural in ("tfjobs", "pytorchjobs", "mpijobs", "xgboostjobs", "paddlejobs", "jaxjobs"):
        try:
            obj = client.CustomObjectsApi(api).get_namespaced_custom_object(
                "kubeflow.org", "v2beta1" if plural == "mpijobs" else "v1", ctx.ns, plural, name)
        except client.ApiException:
            continue
        found.append(f"{plural}/{name} status: {json.dumps(obj.get('status'))[:1500]}")
    for pod in core_api(ctx.cluster).list_namespaced_pod(ctx.ns).items:
        states = [(s.name, api.sanitize_for_serialization(s.state), s.restart_count)
                  for s in pod.status.container_statuses or []]
        found.append(f"pod {pod.metadata.name} uid {pod.metadata.uid} created {pod.metadata.creation_timestamp} "
                     f"deleted {pod.metadata.deletion_timestamp} phase {pod.status.phase} containers {states}")
    return "\n".join(found)


def scheduling_verdict(core, ns: str, pod: str) -> str:
    """The real scheduler's last word on a pod it could not place (its PodScheduled=False message), or ""."""
    obj = core.read_namespaced_pod(pod, ns)
    return next((c.message for c in obj.status.conditions or [] if c.type == "PodScheduled"
                 and c.status == "False" and c.reason == "Unschedulable"), "") if not obj.spec.node_name else ""


def assert_arena_keys(view: dict, tfjob: dict, pods: dict) -> None:
    """Arena's TrainingJobInfo/TrainingJobInstance keys (kubeflow/arena pkg/apis/types/training.go) hold the
    live objects' values: the job's uid, its modelName label, its start; each pod's IP and creation time."""
    assert view["uuid"] == tfjob["metadata"]["uid"] and view["uuid"]
    assert (view["modelName"], view["modelVersion"], view["modelSource"]) == ("resnet50", "", "")
    assert re.fullmatch(r"\d+s", view["duration"]), view["duration"]
    start = tfjob["status"].get("startTime") or tfjob["metadata"]["creationTimestamp"]
    assert view["creationTimestamp"] == int(dt.datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp())
    assert sorted(i["name"] for i in view["instances"]) == sorted(pods)
    for inst in view["instances"]:
        pod = pods[inst["name"]]
        assert inst["ip"] == (pod.status.pod_ip or "")
        assert inst["creationTimestamp"] == int(pod.metadata.creation_timestamp.timestamp())
        assert type(inst["creationTimestamp"]) is int and inst["gpuMetrics"] == {}
        assert re.fullmatch(r"\d+s", inst["age"]), inst["age"]


def test_list_and_get_follow_a_job_through_its_life(ctx, kubelet, namespace, cluster):
    ns = namespace
    core = core_api(cluster)
    tfjobs = client.CustomObjectsApi(cluster.api_client())
    gpu_node = f"gpu-{namespace}"
    ok(ctx("submit", "tf", "--name", "train", "--image", "tf:2", "--workers", "2", "--ps", "1", "--gpus", "1",
           "-l", "modelName=resnet50", "--", "python", "train.py"))
    # no node in the namespace's pool yet: whether or not the operator made the pods already, none runs
    out = ok(ctx("list"))
    assert mask(out) == mask(
        "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
        "train PENDING TFJOB 0s 2 0 N/A\n"
    )
    pods = wait_job_pods(core, ns, "train", ["train-ps-0", "train-worker-0", "train-worker-1"])
    for pod in pods:  # each tried once (in the order the operator made them: worker-0 before worker-1)
        wait_for(lambda pod=pod: any(c.type == "PodScheduled" and c.status == "False" for c in
                                     core.read_namespaced_pod(pod, ns).status.conditions or []),
                 f"{pod} tried by the scheduler", timeout=30)
    # room for one of the two 1-GPU workers; the scheduler retries on the new node, worker-0 first
    kubelet.add_node(gpu_node, pool=namespace, gpus=4, allocatable_gpus=1, labels={"node-role.kubernetes.io/gpu": ""})
    try:
        kubelet.run_pod(ns, "train-ps-0", gpu_node)
        kubelet.run_pod(ns, "train-worker-0", gpu_node)
        # the real scheduler's verdict on the other worker
        # (other tests' nodes, outside this namespace's pool, are counted too: "N node(s) didn't match ...")
        shape = re.compile(r"0/(\d+) nodes are available: 1 Insufficient nvidia\.com/gpu"
                           r"(, \d+ node\(s\) didn't match Pod's node affinity/selector)?\. preemption: 0/\1 nodes "
                           r"are available: .*\.")
        verdict = wait_for(lambda: (v := scheduling_verdict(core, ns, "train-worker-1")) and shape.fullmatch(v) and v,
                           "train-worker-1 unschedulable for want of a GPU", timeout=30)
        # the operator's Running condition (worker 0 runs)
        wait_condition(lambda: tfjobs.get_namespaced_custom_object("kubeflow.org", "v1", ns, "tfjobs", "train"),
                       "Running")

        # running job, one pod still pending -> PENDING, with the reason in get
        data = json.loads(ok(ctx("list", "-o", "json")))
        (job,) = data
        assert (job["name"], job["status"], job["trainer"], job["requestGPUs"], job["allocatedGPUs"]) == (
            "train", "PENDING", "tfjob", 2, 1)
        assert job["chiefName"] == "train-worker-0"
        assert {k for k in job} >= {"name", "namespace", "status", "trainer", "duration", "requestGPUs",
                                    "allocatedGPUs", "chiefName", "instances", "tensorboard", "priority",
                                    "creationTimestamp", "release"}
        assert job["release"]["revision"] == 1 and job["release"]["chart"] == "tfjob"
        tfjob = tfjobs.get_namespaced_custom_object("kubeflow.org", "v1", ns, "tfjobs", "train")
        live = {p.metadata.name: p for p in core.list_namespaced_pod(
            ns, label_selector="training.kubeflow.org/job-name=train").items}
        assert_arena_keys(job, tfjob, live)
        got_json = json.loads(ok(ctx("get", "train", "-o", "json")))
        assert_arena_keys(got_json, tfjob, live)
        ips = {i["name"]: i["ip"] for i in got_json["instances"]}
        assert ips["train-worker-0"] == live["train-worker-0"].status.pod_ip != "" and ips["train-worker-1"] == ""
        got_yaml = yaml.safe_load(ok(ctx("get", "train", "-o", "yaml")))
        assert (got_yaml["uuid"], got_yaml["modelName"], got_yaml["modelname"]) == (job["uuid"], "resnet50",
                                                                                     "resnet50")
        # Arena's top job totals RUNNING jobs only: this one is PENDING (a pod still pending)
        assert ok(ctx("top", "job")).endswith("\n\nTotal Allocated/Requested GPUs of Training Jobs: 0/0\n")
        got = ok(ctx("get", "train"))
        assert f"Pending:     pod train-worker-1 cannot be scheduled: not enough GPUs ({verdict})" in got
        assert mask(got.split("\n\n", 1)[1]) == mask(
            "INSTANCE STATUS AGE IS_CHIEF GPU(Requested) NODE\n"
            f"train-worker-0 Running 0s true 1 {gpu_node}\n"
            f"train-ps-0 Running 0s false 0 {gpu_node}\n"
            "train-worker-1 Pending 0s false 1 N/A\n"
        )

        kubelet.set_allocatable_gpus(gpu_node, 4)  # the scheduler retries on the node update
        kubelet.run_pod(ns, "train-worker-1", gpu_node)
        out = ok(ctx("list"))
        assert mask(out) == mask(
            "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
            f"train RUNNING TFJOB 0s 2 2 {gpu_node}\n"
        )
        top = ok(ctx("top", "job"))
        assert mask(top) == mask(
            "NAME STATUS TRAINER GPU(Requested) GPU(Allocated) GPU(Util) GPU_MEMORY(Used/Total) CPU(Requested) "
            "CPU(Usage) MEMORY(Requested) MEMORY(Usage) NODE\n"
            f"train RUNNING TFJOB 2 2 N/A N/A 0 N/A 0 N/A {gpu_node}\n\n"
            "Total Allocated/Requested GPUs of Training Jobs: 2/2\n"
        )
        assert max(len(line) for line in top.splitlines()) <= 170  # with the metric columns (N/A here)

        # worker 0 last: its success is the job's (the operator's default success policy)
        for pod in ("train-ps-0", "train-worker-1", "train-worker-0"):
            kubelet.finish_pod(ns, pod, 0)
        job = wait_status(ctx, "train", "SUCCEEDED")
        assert job["allocatedGPUs"] == 0 and job["endedAt"]
        out = ok(ctx("list"))
        assert mask(out) == mask(
            "NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE\n"
            f"train SUCCEEDED TFJOB 0s 2 N/A {gpu_node}\n"
        )
    finally:
        kubelet.remove_node(gpu_node)


def test_list_shows_failed_and_missing_jobs_and_filters_by_type(ctx, kubelet, gpu_node, cluster, namespace):
    core = core_api(cluster)
    ok(ctx("submit", "pytorch", "--name", "bert", "--image", "pt:2", "--workers", "2", "--gpus", "2", "--",
           "torchrun", "x.py"))
    for pod in wait_job_pods(core, namespace, "bert", ["bert-master-0", "bert-worker-0"]):
        kubelet.run_pod(namespace, pod, gpu_node)
    failed = kubelet.finish_pod(namespace, "bert-master-0", 1)  # restartPolicy Never: the operator fails the job
    wait_status(ctx, "bert", "FAILED", note=f"finish_pod saw pod {failed.metadata.uid} {failed.status.phase} at "
                f"resourceVersion {failed.metadata.resource_version}\n")
    # --retry 0: the failed master is kept, the running worker deleted (clean-pod policy Running)
    wait_for(lambda: [p.metadata.name for p in core.list_namespaced_pod(
        namespace, label_selector="training.kubeflow.org/job-name=bert").items] == ["bert-master-0"] or None,
        "only bert-master-0 left", 60)
    core.patch_node(gpu_node, {"spec": {"unschedulable": True}})  # the jobs below stay Pending
    ok(ctx("submit", "mpi", "--name", "hvd", "--image", "mpi:1", "--workers", "2", "--gpus", "1", "--", "mpirun", "x"))
    ok(ctx("submit", "tf", "--name", "gone", "--image", "tf:2", "--", "python", "x.py"))
    client.CustomObjectsApi(cluster.api_client()).delete_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", "gone")
    rows = {j["name"]: (j["status"], j["trainer"], j["requestGPUs"]) for j in json.loads(ok(ctx("list", "-o", "json")))}
    assert rows == {"bert": ("FAILED", "pytorchjob", 4), "hvd": ("PENDING", "mpijob", 2),
                    "gone": ("JOB-MISSING", "tfjob", 0)}
    for t in ("py", "pytorch", "pytorchjob"):
        assert [j["name"] for j in json.loads(ok(ctx("list", "-T", t, "-o", "json")))] == ["bert"]
    res = ctx("list", "-T", "caffe")
    assert res.exit_code == 2 and "-T/--type 'caffe'" in res.stderr
    # newest first, -A adds the namespace column
    out = ok(ctx("list", "-A", ns=False))
    lines = [mask(line) for line in out.splitlines() if namespace in line or line.startswith("NAMESPACE")]
    want = [
        "NAMESPACE NAME STATUS TRAINER DURATION GPU(Requested) GPU(Allocated) NODE",
        f"{namespace} gone JOB-MISSING TFJOB N/A 0 0 N/A",
        f"{namespace} hvd PENDING MPIJOB <t> 2 0 N/A",
        f"{namespace} bert FAILED PYTORCHJOB <t> 4 N/A {gpu_node}",  # the failed master kept: its node
    ]
    if lines and lines[0].endswith(" RELEASE"):
        # -A lists every namespace: a job there made without helm (another test's) adds the RELEASE column;
        # each of these jobs names its own release
        want = [want[0] + " RELEASE"] + [f"{row} {row.split()[1]}" for row in want[1:]]
    assert lines == want


def test_logs_default_to_the_chief_and_take_kubectl_options(ctx, kubelet, gpu_node, cluster, namespace, monkeypatch):
    ns = namespace
    ok(ctx("submit", "py", "--name", "lm", "--image", "pt:2", "--workers", "2", "--", "python", "x.py"))
    for pod in wait_job_pods(core_api(cluster), ns, "lm", ["lm-master-0", "lm-worker-0"]):
        kubelet.run_pod(ns, pod, gpu_node)
    kubelet.write_log(ns, "lm-master-0", "pytorch", "step 1 loss 0.9\nstep 2 loss 0.7\nstep 3 loss 0.5")
    kubelet.write_log(ns, "lm-worker-0", "pytorch", "worker up")
    assert ok(ctx("logs", "lm")) == "step 1 loss 0.9\nstep 2 loss 0.7\nstep 3 loss 0.5\n"
    assert ok(ctx("logs", "lm", "--tail", "1")) == "step 3 loss 0.5\n"
    assert ok(ctx("logs", "lm", "-i", "lm-worker-0")) == "worker up\n"
    stamped = ok(ctx("logs", "lm", "--timestamps", "--tail", "2")).splitlines()
    assert [line.split(" ", 1)[1] for line in stamped] == ["step 2 loss 0.7", "step 3 loss 0.5"]
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$", line.split(" ")[0]) for line in stamped)
    assert ok(ctx("logs", "lm", "--since", "1h")).count("\n") == 3
    assert ok(ctx("logs", "lm", "--since-time", "2999-01-01T00:00:00Z")) == ""
    res = ctx("logs", "lm", "-i", "nope")
    assert res.exit_code == 1 and "-i/--instance nope: job lm has no such instance" in res.stderr
    assert "lm-master-0" in res.stderr
    assert ctx("logs", "lm", "--since", "soon").exit_code == 2

    # follow: lines written later arrive until the container's output ends (kwok: close_log)
    streamed: list[bytes] = []
    original = kube_mod.KubeReader.stream_log

    def stream_log(self, *args, **kwargs):  # what the API server sent arena-helm, as it arrives
        for chunk in original(self, *args, **kwargs):
            streamed.append(chunk)
            yield chunk

    monkeypatch.setattr(kube_mod.KubeReader, "stream_log", stream_log)
    failures: list[BaseException] = []

    def later():
        try:  # write only once the follow stream is open (its first line arrived)
            wait_for(lambda: b"step 3 loss 0.5\n" in b"".join(streamed), "the follow stream's first line", 30, 0.05)
            kubelet.write_log(ns, "lm-master-0", "pytorch", "step 4 loss 0.3")
            wait_for(lambda: b"step 4 loss 0.3\n" in b"".join(streamed), "step 4 on the follow stream", 30, 0.05)
        except BaseException as exc:  # noqa: BLE001 - reported below, after the stream ended
            failures.append(exc)
        finally:
            kubelet.close_log(ns, "lm-master-0", "pytorch")

    t = threading.Thread(target=later, daemon=True)
    t.start()
    out = ok(ctx("logs", "lm", "-f", "--tail", "1"))
    t.join(30)
    assert not failures, failures
    # kwok ends a follow stream only with its read error as the last text (a kubelet ends it cleanly when
    # the container exits): arena-helm passes the stream through as is, the test takes kwok's text off
    assert out != kubelet.strip_close_marker(out)
    assert kubelet.strip_close_marker(out) == "step 3 loss 0.5\nstep 4 loss 0.3\n"


def test_logs_all_interleaves_every_instance_by_time_and_follows_them_all(ctx, kubelet, gpu_node, cluster, namespace,
                                                                         monkeypatch):
    ns = namespace
    ok(ctx("submit", "py", "--name", "ddp", "--image", "pt:2", "--workers", "3", "--", "python", "x.py"))
    pods = wait_job_pods(core_api(cluster), ns, "ddp", ["ddp-master-0", "ddp-worker-0", "ddp-worker-1"])
    for pod in pods:
        kubelet.run_pod(ns, pod, gpu_node)
    kubelet.set_pod_state(ns, "ddp-worker-1", "Pending", waiting_reason="ImagePullBackOff")  # no log: left out
    for pod, text in (("ddp-master-0", "rank 0 up"), ("ddp-worker-0", "rank 1 up"), ("ddp-master-0", "epoch 1"),
                      ("ddp-worker-0", "epoch 1 done")):  # each write stamped later than the one before
        kubelet.write_log(ns, pod, "pytorch", text)
    res = ctx("logs", "ddp", "--all")
    assert res.exit_code == 0, res.output
    assert res.stdout == ("[pod/ddp-master-0/pytorch] rank 0 up\n[pod/ddp-worker-0/pytorch] rank 1 up\n"
                          "[pod/ddp-master-0/pytorch] epoch 1\n[pod/ddp-worker-0/pytorch] epoch 1 done\n")
    assert "note: pod ddp-worker-1 has not started its container pytorch yet: no log" in res.stderr
    stamped = ok(ctx("logs", "ddp", "-a", "--timestamps", "--tail", "1")).splitlines()
    assert [re.sub(r" \d{4}-\d\d-\d\dT[\d:.]+Z ", " T ", line) for line in stamped] == [
        "[pod/ddp-master-0/pytorch] T epoch 1", "[pod/ddp-worker-0/pytorch] T epoch 1 done"]
    res = ctx("logs", "ddp", "--all", "-i", "ddp-worker-0")
    assert res.exit_code == 2 and res.stderr == "error: --all and -i/--instance: give only one of them\n"

    # follow: what each log holds, in time order (the master's two lines around the worker's), then both
    # streams, each new line as it comes, until both containers' output ends
    streamed: dict[str, list[bytes]] = {"ddp-master-0": [], "ddp-worker-0": []}
    original = kube_mod.KubeReader.stream_log

    def stream_log(self, namespace, pod, **kwargs):
        for chunk in original(self, namespace, pod, **kwargs):
            streamed[pod].append(chunk)
            yield chunk

    monkeypatch.setattr(kube_mod.KubeReader, "stream_log", stream_log)
    failures: list[BaseException] = []

    def later():
        try:
            for pod, last in (("ddp-master-0", b"epoch 1\n"), ("ddp-worker-0", b"epoch 1 done\n")):
                wait_for(lambda p=pod, t=last: b"".join(streamed[p]).endswith(t), f"{pod}'s stream open", 30, 0.05)
            # the logs were read whole: these come through the streams that follow them (opened at the second
            # of the last line read), whether they open before or after the lines are written
            kubelet.write_log(ns, "ddp-worker-0", "pytorch", "epoch 2 done")
            kubelet.write_log(ns, "ddp-master-0", "pytorch", "saved")
            wait_for(lambda: b"saved\n" in b"".join(streamed["ddp-master-0"])
                     and b"epoch 2 done\n" in b"".join(streamed["ddp-worker-0"]), "the new lines streamed", 30, 0.05)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)
        finally:
            for pod in ("ddp-master-0", "ddp-worker-0"):
                kubelet.close_log(ns, pod, "pytorch")

    t = threading.Thread(target=later, daemon=True)
    t.start()
    out = ok(ctx("logs", "ddp", "--all", "-f", "--tail", "2"))
    t.join(30)
    assert not failures, failures
    lines = [kubelet.strip_close_marker(line) for line in out.splitlines()]
    assert lines[:4] == ["[pod/ddp-master-0/pytorch] rank 0 up", "[pod/ddp-worker-0/pytorch] rank 1 up",
                         "[pod/ddp-master-0/pytorch] epoch 1", "[pod/ddp-worker-0/pytorch] epoch 1 done"]
    lines = lines[4:]
    # each stream ends with kwok's close marker (no newline): its own prefixed line, empty once it is stripped
    assert sorted(line for line in lines if line.endswith("] ")) == ["[pod/ddp-master-0/pytorch] ",
                                                                     "[pod/ddp-worker-0/pytorch] "]
    lines = [line for line in lines if not line.endswith("] ")]
    # the new lines arrive as they come (no order between the instances), each once
    for pod, own in (("ddp-master-0", ["saved"]), ("ddp-worker-0", ["epoch 2 done"])):
        head = f"[pod/{pod}/pytorch] "
        assert [line.removeprefix(head) for line in lines if line.startswith(head)] == own
    assert len(lines) == 2, lines


def test_logs_of_an_initialising_pod_show_the_git_sync_container(ctx, kubelet, gpu_node, cluster, namespace):
    ns = namespace
    # kwok holds the pod where a kubelet is while the init container runs: Pending, PodInitializing
    ok(ctx("submit", "tf", "--name", "synced", "--image", "tf:2", "--sync-source", "https://git.example.com/a/b.git",
           "-a", "arena-helm.test/waiting-reason=PodInitializing", "--", "python", "code/b/train.py"))
    (pod,) = wait_job_pods(core_api(cluster), ns, "synced", count=1)
    assert kubelet.wait_scheduled(ns, pod) == gpu_node
    obj = kubelet.wait_pod(ns, pod, lambda p: p.status.phase == "Pending" and p.status.init_container_statuses,
                           "initialising")
    assert [(s.name, s.state.terminated) for s in obj.status.init_container_statuses] == [("git-sync", None)]
    kubelet.write_log(ns, pod, "git-sync", "cloning https://git.example.com/a/b.git")
    res = ctx("logs", "synced")
    assert res.exit_code == 0, res.output
    assert res.stdout == "cloning https://git.example.com/a/b.git\n"
    assert f"note: pod {pod} is still initialising; showing its init container git-sync" in res.stderr


def test_delete_removes_the_release_job_and_pods(ctx, kubelet, gpu_node, cluster, namespace):
    ns = namespace
    core = core_api(cluster)
    ok(ctx("submit", "tf", "--name", "a", "--image", "tf:2", "--workers", "2", "--", "python", "x.py"))
    ok(ctx("submit", "tf", "--name", "b", "--image", "tf:2", "--", "python", "x.py"))
    for pod in wait_job_pods(core, ns, "a", ["a-worker-0", "a-worker-1"]):
        kubelet.run_pod(ns, pod, gpu_node)
    res = ctx("delete", "a", "nope", "b")
    assert res.exit_code == 1
    assert res.stdout == (f"tfjob/a deleted (release a uninstalled from namespace {ns})\n"
                          f"tfjob/b deleted (release b uninstalled from namespace {ns})\n")
    assert res.stderr == f"error: no job named nope in namespace {ns}\n"
    assert [s.metadata.name for s in core.list_namespaced_secret(ns).items if s.metadata.name.startswith("sh.helm")] == []
    jobs = client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kubeflow.org", "v1", ns, "tfjobs")
    assert jobs["items"] == []
    # the garbage collector removes the pods (and the operator's Services) the jobs owned
    wait_for(lambda: not core.list_namespaced_pod(ns).items, "the jobs' pods gone", 30)
    wait_for(lambda: not core.list_namespaced_service(ns).items, "the jobs' Services gone", 30)


def test_delete_refuses_a_release_that_is_not_a_job(ctx, helm_bin, cluster, namespace):
    import subprocess
    from pathlib import Path

    chart = Path(__file__).resolve().parents[1] / "data" / "charts" / "mini-tfjob"
    subprocess.run([str(helm_bin), "install", "other", str(chart), "-n", namespace, "--kubeconfig",
                    str(cluster.admin.kubeconfig)], check=True, capture_output=True)
    res = ctx("delete", "other")
    assert res.exit_code == 2
    assert "release other" in res.stderr and "is not an arena-helm job" in res.stderr


def test_prune_removes_only_jobs_finished_long_enough_ago(ctx, kubelet, gpu_node, cluster, namespace):
    ns = namespace
    for name in ("old-ok", "old-bad", "running"):
        ok(ctx("submit", "tf", "--name", name, "--image", "tf:2", "--", "python", "x.py"))
        (pod,) = wait_job_pods(core_api(cluster), ns, name, [f"{name}-chief-0"])
        kubelet.run_pod(ns, pod, gpu_node)
    kubelet.finish_pod(ns, "old-ok-chief-0", 0)
    kubelet.finish_pod(ns, "old-bad-chief-0", 1)
    for name, status in (("old-ok", "SUCCEEDED"), ("old-bad", "FAILED"), ("running", "RUNNING")):
        wait_status(ctx, name, status)
    res = ctx("prune", "--since", "1h", "-y")
    assert res.exit_code == 0 and "nothing to prune" in res.stdout
    time.sleep(1.1)  # the jobs' age, not a synchronisation: prune --since 1s needs them finished over 1 s ago
    res = ctx("prune", "--since", "1s", "--dry-run")  # lists, asks nothing, deletes nothing
    assert res.exit_code == 0, res.output
    assert sorted(line.split()[:2] for line in res.stdout.splitlines()[:-1]) == [
        [f"{ns}/old-bad", "FAILED"], [f"{ns}/old-ok", "SUCCEEDED"]]
    assert res.stdout.splitlines()[-1] == "dry run: 2 job(s) would be deleted; nothing deleted"
    assert len(json.loads(ok(ctx("list", "-o", "json")))) == 3
    res = ctx("prune", "--since", "1s", "-y")
    assert res.exit_code == 0, res.output
    assert sorted(line.split()[0] for line in res.stdout.splitlines() if "deleted" in line) == [
        "tfjob/old-bad", "tfjob/old-ok"]
    assert [j["name"] for j in json.loads(ok(ctx("list", "-o", "json")))] == ["running"]


def test_get_says_which_instance_failed_why_and_its_last_log_lines(ctx, kubelet, gpu_node, cluster, namespace):
    ns = namespace
    ok(ctx("submit", "tf", "--name", "oom", "--image", "tf:2", "--memory", "2Gi", "--", "python", "x.py"))
    (pod,) = wait_job_pods(core_api(cluster), ns, "oom", ["oom-chief-0"])
    kubelet.run_pod(ns, pod, gpu_node)
    kubelet.write_log(ns, pod, "tensorflow", "\n".join(f"step {i}" for i in range(1, 13)))
    kubelet.finish_pod(ns, pod, 137, reason="OOMKilled")
    wait_status(ctx, "oom", "FAILED")
    out = ok(ctx("get", "oom", "--tail", "3"))
    assert "Failure:     pod oom-chief-0 container tensorflow: OOMKilled (exit code 137), memory limit 2Gi" in out
    assert out.split("Log of pod oom-chief-0 container tensorflow (its last lines):\n", 1)[1].startswith(
        "  step 10\n  step 11\n  step 12\n")
    data = json.loads(ok(ctx("get", "oom", "-o", "json")))  # the default: 10 lines
    assert data["failure"] == {"instance": "oom-chief-0", "container": "tensorflow", "reason": "OOMKilled",
                               "exitCode": 137, "message": "", "memoryLimit": "2Gi", "image": "", "restarts": 0,
                               "log": [f"step {i}" for i in range(3, 13)]}
    assert "Log of pod" not in ok(ctx("get", "oom", "--tail", "0"))
    assert ctx("get", "oom", "--tail", "-1").exit_code == 2
    # a running job has no failure
    ok(ctx("submit", "tf", "--name", "fine", "--image", "tf:2", "--", "python", "x.py"))
    (pod,) = wait_job_pods(core_api(cluster), ns, "fine", ["fine-chief-0"])
    kubelet.run_pod(ns, pod, gpu_node)
    wait_status(ctx, "fine", "RUNNING")
    assert "Failure:" not in ok(ctx("get", "fine"))
    assert json.loads(ok(ctx("get", "fine", "-o", "json")))["failure"] is None
    # list -o wide: a FAILURE column when a listed job failed ("-" for the others); the plain list has none
    wide = ok(ctx("list", "-o", "wide")).splitlines()
    assert wide[0].split()[-1] == "FAILURE"
    rows = {line.split()[0]: line for line in wide[1:]}
    assert rows["oom"].endswith("pod oom-chief-0 container tensorflow: OOMKilled (exit code 137), memory limit 2Gi")
    assert rows["fine"].endswith(" -")
    assert "FAILURE" not in ok(ctx("list")).splitlines()[0]


def test_top_node_shows_gpus_cpu_memory_roles_and_unhealthy(ctx, kubelet, cluster, namespace):
    for node in list(kubelet.nodes):  # a known node set for exact totals
        kubelet.remove_node(node)
    # node-a has 5 of its 8 GPUs allocatable and node-b 4: each fits exactly one 3-GPU worker, so the real
    # scheduler must put one worker on each (which one goes where is its choice)
    kubelet.add_node("node-a", pool=namespace, gpus=8, allocatable_gpus=5, cpu="64", memory="256Gi",
                     labels={"node-role.kubernetes.io/gpu": ""})
    kubelet.add_node("node-b", pool=namespace, gpus=4, cpu="32", memory="128Gi",
                     labels={"node-role.kubernetes.io/worker": ""})
    kubelet.add_node("node-c", pool=namespace, cpu="16", memory="64Gi",
                     labels={"node-role.kubernetes.io/control-plane": ""})
    try:
        ok(ctx("submit", "tf", "--name", "big", "--image", "tf:2", "--workers", "2", "--gpus", "3", "--cpu", "4",
               "--memory", "8Gi", "--", "python", "x.py"))
        pods = wait_job_pods(core_api(cluster), namespace, "big", ["big-worker-0", "big-worker-1"])
        placed = {kubelet.run_pod(namespace, pod): pod for pod in pods}
        assert sorted(placed) == ["node-a", "node-b"]
        out = ok(ctx("top", "node"))
        assert out == (  # no Prometheus in this test: the metric columns read N/A
            "NAME    IPADDRESS  ROLE           STATUS  GPU(Total)  GPU(Allocated)  UNHEALTHY  GPU(Util)  "
            "GPU_MEMORY(Used/Total)  CPU(Requested/Allocatable)  CPU(Usage)  MEMORY(Requested/Allocatable)  "
            "MEMORY(Usage)\n"
            "node-a  127.0.0.1  gpu            Ready   8           3               3          N/A        N/A                     "
            "4/64                        N/A         8Gi/256Gi                      N/A\n"
            "node-b  127.0.0.1  worker         Ready   4           3               0          N/A        N/A                     "
            "4/32                        N/A         8Gi/128Gi                      N/A\n"
            "node-c  127.0.0.1  control-plane  Ready   0           0               0          N/A        N/A                     "
            "0/16                        N/A         0/64Gi                         N/A\n"
            "\n"
            "Allocated/Total GPUs In Cluster: 6/12 (50.0%)\n"
            "Unhealthy/Total GPUs In Cluster: 3/12\n"
        )
        details = ok(ctx("top", "node", "node-a", "-d"))
        assert f"NAMESPACE POD GPU\n{namespace} {placed['node-a']} 3\n\n" in re.sub(" +", " ", details)
        assert placed["node-b"] not in details
        data = json.loads(ok(ctx("top", "node", "-o", "json")))
        assert (data["totalGPUs"], data["allocatedGPUs"]) == (12, 6)
        assert [n["unhealthyGPUs"] for n in data["nodes"]] == [3, 0, 0]
        inst = ok(ctx("top", "job", "big"))
        assert inst.splitlines()[0].split() == ["INSTANCE", "STATUS", "TYPE", "IS_CHIEF", "GPU(Requested)", "NODE",
                                                "NODE_IP", "CPU(Usage)", "MEMORY(Usage)", "GPU(DeviceIndex)",
                                                "GPU(DutyCycle)", "GPU_MEMORY(Used/Total)"]
        assert sorted(line.split()[5] for line in inst.splitlines()[1:]) == ["node-a", "node-b"]
    finally:
        for node in ("node-a", "node-b", "node-c"):
            kubelet.remove_node(node)


def test_the_limited_user_works_in_its_namespace_and_is_told_what_it_may_not_do(helm_bin, cluster, kubelet):
    """alice holds exactly the documented Role (docs/rbac/arena-helm-user.yaml) in her namespace and nothing
    cluster-wide: every command of a job's life works, and what needs the ClusterRole says what it lacks."""
    from kubecluster import LIMITED_NAMESPACE

    lim = Ctx(helm_bin, cluster, LIMITED_NAMESPACE, user="alice")
    core = core_api(cluster)
    ok(lim("submit", "tf", "--name", "mine", "--image", "tf:2", "--tensorboard", "--logdir", "s3://b/logs",
           "--config-file", f"{__file__}:/etc/test_read.py", "--", "python", "x.py"))
    node = f"lim-node-{helm_bin.parent.name}"
    try:
        # no node of its pool yet: the job waits
        assert [j["name"] for j in json.loads(ok(lim("list", "-o", "json")))] == ["mine"]
        assert json.loads(ok(lim("get", "mine", "-o", "json")))["status"] == "PENDING"
        kubelet.add_node(node, pool=LIMITED_NAMESPACE)
        (pod,) = wait_job_pods(core, LIMITED_NAMESPACE, "mine", count=1)
        kubelet.run_pod(LIMITED_NAMESPACE, pod, node)
        log = kubelet.log_file(LIMITED_NAMESPACE, pod, "tensorflow")
        if log.exists():  # same pod name in each helm run: the file kwok serves is the same
            log.write_text("")
        kubelet.write_log(LIMITED_NAMESPACE, pod, "tensorflow", "alice's epoch 1")
        assert ok(lim("logs", "mine")) == "alice's epoch 1\n"
        wait_status(lim, "mine", "RUNNING")  # the operator's Running condition, read by alice
        assert ok(lim("top", "job")).splitlines()[1].split()[:2] == ["mine", "RUNNING"]
        res = lim("attach", "mine", "--", "echo", "alice was here")
        assert (res.exit_code, res.stdout) == (0, "alice was here\n"), res.output
        assert lim("data", "list").exit_code == 0
        res = lim("top", "node", ns=False)
        assert res.exit_code == 1 and len(res.stderr.splitlines()) == 1, res.output
        assert 'User "alice" cannot list nodes' in res.stderr, res.stderr  # the ClusterRole's part
        res = lim("list", "-A", ns=False)
        assert res.exit_code == 1 and "forbidden" in res.stderr.lower() and len(res.stderr.splitlines()) == 1
        # suspend and resume are helm upgrades: the Role lets alice patch her job and read its revisions
        ok(lim("suspend", "mine"))
        wait_gone(core, LIMITED_NAMESPACE, "training.kubeflow.org/job-name=mine")
        assert wait_status(lim, "mine", "SUSPENDED")["status"] == "SUSPENDED"
        ok(lim("resume", "mine"))
        wait_job_pods(core, LIMITED_NAMESPACE, "mine", count=1)
    finally:
        ok(lim("delete", "mine"))
        wait_gone(core, LIMITED_NAMESPACE, "training.kubeflow.org/job-name=mine")  # GC, then kwok's deletion
        kubelet.remove_node(node)


def test_get_asks_for_the_type_when_a_name_is_several_kinds(ctx, cluster, namespace):
    ok(ctx("submit", "tf", "--name", "twin", "--image", "tf:2", "--", "python", "x.py"))
    client.CustomObjectsApi(cluster.api_client()).create_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "pytorchjobs", {
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "twin"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "pytorch", "image": "pt"}]}}}}}})
    res = ctx("get", "twin")
    assert res.exit_code == 2
    assert res.stderr == f"error: twin exists as PyTorchJob and TFJob in namespace {namespace}: pick one with -T/--type\n"
    assert json.loads(ok(ctx("get", "twin", "-T", "tf", "-o", "json")))["trainer"] == "tfjob"
    assert json.loads(ok(ctx("get", "twin", "-T", "pytorch", "-o", "json")))["trainer"] == "pytorchjob"


def test_prune_asks_before_deleting(ctx, kubelet, gpu_node, cluster, namespace):
    ok(ctx("submit", "tf", "--name", "done", "--image", "tf:2", "--", "python", "x.py"))
    (pod,) = wait_job_pods(core_api(cluster), namespace, "done", ["done-chief-0"])
    kubelet.run_pod(namespace, pod, gpu_node)
    kubelet.finish_pod(namespace, pod, 0)
    wait_status(ctx, "done", "SUCCEEDED")
    time.sleep(1.1)  # the job's age, not a synchronisation: prune --since 1s needs it finished over 1 s ago
    res = runner.invoke(app, ["prune", "--since", "1s", *ctx.base, "-n", namespace], input="n\n")
    assert res.exit_code == 1
    assert res.stdout.splitlines()[0].split()[:2] == [f"{namespace}/done", "SUCCEEDED"]
    assert "Delete these 1 jobs? [y/N]: n" in res.stdout and "nothing deleted" in res.stdout
    assert [j["name"] for j in json.loads(ok(ctx("list", "-o", "json")))] == ["done"]
    res = runner.invoke(app, ["prune", "--since", "1s", *ctx.base, "-n", namespace], input="y\n")
    assert res.exit_code == 0 and "tfjob/done deleted" in res.stdout


def test_unreachable_api_server_is_one_line(helm_bin, tmp_path):
    kc = tmp_path / "kc"
    kc.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "x", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
    }))
    for cmd in (["list"], ["get", "x"], ["top", "node"]):
        res = runner.invoke(app, [*cmd, "--kubeconfig", str(kc), "--helm-binary", str(helm_bin)])
        assert res.exit_code == 1, (cmd, res.output)
        assert len(res.stderr.strip().splitlines()) == 1, (cmd, res.stderr)
        assert "unreachable" in res.stderr or "cannot reach" in res.stderr, (cmd, res.stderr)


def test_get_says_why_a_job_waits_and_shows_events(ctx, kubelet, gpu_node, cluster, namespace):
    ns = namespace
    core = core_api(cluster)
    # kwok keeps the pod where a kubelet that cannot pull the image keeps it (the template's annotations)
    ok(ctx("submit", "tf", "--name", "img", "--image", "no-such/image:1",
           "-a", "arena-helm.test/waiting-reason=ImagePullBackOff",
           "-a", "arena-helm.test/waiting-message=Back-off pulling image no-such/image:1", "--", "python", "x.py"))
    (pod,) = wait_job_pods(core, ns, "img", ["img-chief-0"])
    assert kubelet.wait_scheduled(ns, pod) == gpu_node
    kubelet.wait_pod(ns, pod, lambda p: p.status.phase == "Pending" and [
        s.state.waiting.reason for s in p.status.container_statuses or [] if s.state.waiting] == ["ImagePullBackOff"],
        "Pending/ImagePullBackOff")
    got = ok(ctx("get", "img"))
    assert "Pending:     pod img-chief-0 cannot pull its image no-such/image:1 (ImagePullBackOff)" in got

    ok(ctx("submit", "tf", "--name", "pvc", "--image", "tf:2", "-d", "missing-claim:/data", "--", "python", "x.py"))
    (pod,) = wait_job_pods(core, ns, "pvc", ["pvc-chief-0"])
    # the real scheduler's verdict and its FailedScheduling event
    # (1.37 says "not found" twice: volumebinding's message, then the scheduler's own suffix)
    verdict = '0/1 nodes are available: persistentvolumeclaim "missing-claim" not found. not found'
    assert kubelet.wait_unschedulable(ns, pod) == verdict
    # the scheduler's FailedScheduling event on the pod, and training-operator's on the job: the pod and the
    # Service it made, and the pod's Unschedulable condition passed on
    expected = {
        ("Normal", "tfjob/pvc", "SuccessfulCreatePod", f"Created pod: {pod}"),
        ("Normal", "tfjob/pvc", "SuccessfulCreateService", f"Created service: {pod}"),
        ("Warning", "tfjob/pvc", "Unschedulable", f"Error pod {pod} condition message: {verdict}"),
        ("Warning", f"pod/{pod}", "FailedScheduling", verdict),
    }

    def events() -> set:
        evs = core.list_namespaced_event(ns).items
        return {(e.type, f"{e.involved_object.kind.lower()}/{e.involved_object.name}", e.reason, e.message)
                for e in evs}

    wait_for(lambda: events() >= expected, "the scheduler's and the operator's events", 30)
    # The operator may record a race of its own besides (a FailedCreateService "... already exists" when its cache
    # had not yet seen the Service it made): get -e shows every event of the job and its pod that the API holds,
    # the expected ones among them. Read while the API's list stays the same.
    ours = {"tfjob/pvc", f"pod/{pod}"}

    def shown():
        before = {e for e in events() if e[1] in ours}
        table, as_json = ok(ctx("get", "pvc", "-e")), ok(ctx("get", "pvc", "-e", "-o", "json"))
        return (table, json.loads(as_json), before) if {e for e in events() if e[1] in ours} == before else None

    got, data, present = wait_for(shown, "an event list that holds still while get reads it", 30)
    assert present >= expected
    assert f"Pending:     pod pvc-chief-0 cannot be scheduled: a PVC is missing or unbound ({verdict})" in got
    header, *lines = mask(got.split("\n\n")[-1]).splitlines()
    assert header == "LAST SEEN TYPE OBJECT REASON MESSAGE"
    # one line per event (the scheduler's retries count up on its event): all alike but for the time
    assert {re.sub(r"^\S+", "<when>", line) for line in lines} == {
        mask(f"<when> {t} {o} {r} {m}") for t, o, r, m in present}
    assert {(e["type"], e["object"], e["reason"]) for e in data["events"]} == {
        (t, o.split("/")[1], r) for t, o, r, _ in present}
    assert "missing-claim" in data["pendingReason"]


def test_get_never_shows_secret_values(ctx, cluster, namespace):
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_secret(namespace, {"metadata": {"name": "git-creds"},
                                              "stringData": {"username": "bot", "password": "s3cr3t-t0ken"}})
    ok(ctx("submit", "tf", "--name", "priv", "--image", "tf:2", "--sync-source", "https://git.example.com/a/b.git",
           "--sync-secret", "git-creds", "--", "python", "x.py"))
    for fmt in ("yaml", "json"):
        out = ok(ctx("get", "priv", "-o", fmt))
        assert "s3cr3t-t0ken" not in out and "czNjcjN0LXQwa2Vu" not in out


def test_debug_logs_the_helm_calls_on_stderr(ctx):
    # list reads release metadata through the API (no helm); delete runs helm uninstall
    ok(ctx("submit", "tf", "--name", "dbg", "--image", "tf:2", "--", "python", "x.py"))
    res = ctx("delete", "dbg", "--debug")
    assert res.exit_code == 0, res.output
    assert "debug: arena_helm.adapters.helm: helm: " in res.stderr and " uninstall dbg " in res.stderr


def test_shell_completion_offers_job_names(helm_bin, cluster, namespace, ctx):
    ok(ctx("submit", "tf", "--name", "resnet", "--image", "tf:2", "--", "python", "x.py"))
    ok(ctx("submit", "tf", "--name", "rnn", "--image", "tf:2", "--", "python", "x.py"))
    ok(ctx("submit", "tf", "--name", "bert", "--image", "tf:2", "--", "python", "x.py"))
    words = f"arena-helm get -n {namespace} --kubeconfig {cluster.admin.kubeconfig} --helm-binary {helm_bin} r"
    res = runner.invoke(app, [], prog_name="arena-helm", env={
        "_ARENA_HELM_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)})
    assert sorted(res.stdout.split()) == ["resnet", "rnn"], res.output
