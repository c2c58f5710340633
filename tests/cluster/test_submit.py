"""``arena-helm submit``: every flag checked at the field it produces, through the CLI (CliRunner) and the real
helm binary: rendered with ``--dry-run`` and installed into the real test API server (helm 3 and 4), read back
with the kubernetes client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from typer.testing import CliRunner
from waits import wait_condition, wait_job_pods

from arena_helm.cli import app

runner = CliRunner()
REPLICA_KEY = {"TFJob": "tfReplicaSpecs", "PyTorchJob": "pytorchReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}
PLURAL = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs"}


def run(*args: str, env: dict | None = None):
    return runner.invoke(app, list(args), env=env)


def tpl(job: dict, rtype: str) -> dict:
    return job["spec"][REPLICA_KEY[job["kind"]]][rtype]["template"]


def pod(job: dict, rtype: str) -> dict:
    return tpl(job, rtype)["spec"]


def ctr(job: dict, rtype: str) -> dict:
    return pod(job, rtype)["containers"][0]


def envmap(container: dict) -> dict:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def mounts(container: dict) -> dict:
    return {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}


def volumes(p: dict) -> dict:
    return {v["name"]: v for v in p.get("volumes", [])}


def q(value) -> str:
    """Quantities come back as the chart wrote them (int or string): compare as text."""
    return str(value)


# ---- the cases: (id, kind command, extra args, check(job)) ------------------------------------------
def check_gpus_workers(job):
    assert job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 2
    res = ctr(job, "Worker")["resources"]
    assert q(res["limits"]["nvidia.com/gpu"]) == "2" and q(res["requests"]["nvidia.com/gpu"]) == "2"
    assert "NVIDIA_VISIBLE_DEVICES" not in envmap(ctr(job, "Worker"))


def check_cpu_memory(job):
    assert {k: q(v) for k, v in ctr(job, "Worker")["resources"]["requests"].items()} == {"cpu": "2", "memory": "4Gi"}


def check_env(job):
    env = envmap(ctr(job, "Worker"))
    assert env["SPECIAL"] == "a=b, c d=e"
    assert env["EMPTY"] == ""
    assert env["NVIDIA_VISIBLE_DEVICES"] == "void"  # no GPU asked


def check_data(job):
    p, c = pod(job, "Worker"), ctr(job, "Worker")
    name = mounts(c)["/mnt/data"]
    assert volumes(p)[name]["persistentVolumeClaim"]["claimName"] == "training-data"


def check_data_dir(job):
    p, c = pod(job, "Worker"), ctr(job, "Worker")
    assert volumes(p)[mounts(c)["/in/container"]]["hostPath"]["path"] == "/host/dir"
    assert volumes(p)[mounts(c)["/same"]]["hostPath"]["path"] == "/same"


def check_annotation(job):
    assert job["metadata"]["annotations"]["team.example.com/owner"] == "ml: team #1"
    assert tpl(job, "Worker")["metadata"]["annotations"]["team.example.com/owner"] == "ml: team #1"


def check_label(job):
    assert job["metadata"]["labels"]["experiment"] == "exp-1"
    assert tpl(job, "Worker")["metadata"]["labels"]["experiment"] == "exp-1"


def check_selector(job):
    assert pod(job, "Worker")["nodeSelector"] == {"accelerator": "a100"}


def check_toleration(job):
    tols = pod(job, "Worker")["tolerations"]
    assert {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in tols
    assert {"key": "spot", "operator": "Exists"} in tols


def check_priority(job):
    assert pod(job, "Worker")["priorityClassName"] == "high"


def check_grace(job):
    assert pod(job, "Worker")["terminationGracePeriodSeconds"] == 300


def check_pull(job):
    assert pod(job, "Worker")["imagePullSecrets"] == [{"name": "regcred"}]
    assert ctr(job, "Worker")["imagePullPolicy"] == "Always"


def check_workdir_shell(job):
    c = ctr(job, "Worker")
    assert c["workingDir"] == "/workspace"
    assert c["command"][:2] == ["bash", "-c"]


def check_run_policy(job):
    rp = job["spec"]["runPolicy"]
    assert rp["backoffLimit"] == 3
    assert rp["ttlSecondsAfterFinished"] == 3600
    assert rp["activeDeadlineSeconds"] == 5400
    assert rp["cleanPodPolicy"] == "All"


def check_shm(job):
    p, c = pod(job, "Worker"), ctr(job, "Worker")
    vol = volumes(p)[mounts(c)["/dev/shm"]]
    assert vol["emptyDir"]["medium"] == "Memory" and q(vol["emptyDir"]["sizeLimit"]) == "2Gi"


def check_device(job):
    res = ctr(job, "Worker")["resources"]
    assert q(res["limits"]["amd.com/gpu"]) == "1"


def check_sync(job):
    p = pod(job, "Worker")
    (init,) = [c for c in p["initContainers"] if c["name"] == "git-sync"]
    assert init["image"] == "git-sync:v4.4.0"
    assert "--repo=https://git.example.com/team/models.git" in init["args"]
    assert "--ref=dev" in init["args"]
    assert {e["name"]: e["valueFrom"]["secretKeyRef"] for e in init["env"] if "valueFrom" in e} == {
        "GITSYNC_USERNAME": {"name": "git-creds", "key": "username"},
        "GITSYNC_PASSWORD": {"name": "git-creds", "key": "password"},
    }
    c = ctr(job, "Worker")
    assert c["workingDir"] == "/root"
    assert "/root/code" in mounts(c)


def check_queue_scheduler(job):
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-queue"
    assert pod(job, "Worker")["schedulerName"] == "volcano"


def check_values_and_set(job):
    assert job["metadata"]["labels"]["from-file"] == "yes"
    assert job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 4


def check_tf_roles(job):
    specs = job["spec"]["tfReplicaSpecs"]
    assert sorted(specs) == ["Chief", "Evaluator", "PS", "Worker"]
    assert specs["PS"]["replicas"] == 2
    assert ctr(job, "PS")["image"] == "ps:1"
    assert ctr(job, "Worker")["image"] == "worker:1"
    assert ctr(job, "Chief")["image"] == "worker:1"
    ps_res = ctr(job, "PS")["resources"]
    assert q(ps_res["limits"]["nvidia.com/gpu"]) == "1"
    assert {k: q(v) for k, v in ps_res["requests"].items() if k != "nvidia.com/gpu"} == {"cpu": "1", "memory": "2Gi"}
    assert {k: q(v) for k, v in ps_res["limits"].items() if k != "nvidia.com/gpu"} == {"cpu": "2", "memory": "3Gi"}
    assert ctr(job, "PS")["ports"][0]["containerPort"] == 3333
    assert ctr(job, "Worker")["ports"][0]["containerPort"] == 4444
    w = ctr(job, "Worker")["resources"]
    assert q(w["limits"]["cpu"]) == "8" and q(w["limits"]["memory"]) == "16Gi"
    c = ctr(job, "Chief")["resources"]
    assert q(c["requests"]["cpu"]) == "3" and q(c["requests"]["memory"]) == "5Gi"
    assert q(c["limits"]["cpu"]) == "4" and q(c["limits"]["memory"]) == "6Gi"
    e = ctr(job, "Evaluator")["resources"]
    assert q(e["requests"]["cpu"]) == "1500m" and q(e["limits"]["memory"]) == "7Gi"
    assert pod(job, "PS")["nodeSelector"] == {"pool": "cpu"}
    assert pod(job, "Worker")["nodeSelector"] == {"pool": "gpu"}
    assert pod(job, "Chief")["nodeSelector"] == {"pool": "chief"}
    assert pod(job, "Evaluator")["nodeSelector"] == {"pool": "eval"}
    assert job["spec"]["successPolicy"] == "AllWorkers"


def check_tf_standalone(job):
    assert list(job["spec"]["tfReplicaSpecs"]) == ["Chief"]
    assert job["spec"]["tfReplicaSpecs"]["Chief"]["replicas"] == 1
    assert q(ctr(job, "Chief")["resources"]["limits"]["nvidia.com/gpu"]) == "1"


def check_pytorch(job):
    specs = job["spec"]["pytorchReplicaSpecs"]
    assert specs["Master"]["replicas"] == 1 and specs["Worker"]["replicas"] == 2
    assert job["spec"]["nprocPerNode"] == "2"
    for r in ("Master", "Worker"):
        assert ctr(job, r)["name"] == "pytorch"
        assert q(ctr(job, r)["resources"]["limits"]["nvidia.com/gpu"]) == "1"
        assert q(ctr(job, r)["resources"]["limits"]["cpu"]) == "4"


def check_mpi(job):
    specs = job["spec"]["mpiReplicaSpecs"]
    assert specs["Worker"]["replicas"] == 2 and specs["Launcher"]["replicas"] == 1
    assert job["spec"]["slotsPerWorker"] == 4
    assert {k: q(v) for k, v in ctr(job, "Launcher")["resources"]["requests"].items()} == {"cpu": "1", "memory": "1Gi"}
    assert "nvidia.com/gpu" not in ctr(job, "Launcher")["resources"].get("limits", {})
    assert envmap(ctr(job, "Launcher"))["NVIDIA_VISIBLE_DEVICES"] == "void"
    assert q(ctr(job, "Worker")["resources"]["limits"]["nvidia.com/gpu"]) == "1"
    assert ctr(job, "Launcher")["command"] == ["sh", "-c", "mpirun -np 8 python train.py"]


def _run_policy(job):
    """The runPolicy the chart wrote (the CRDs' schema adds suspend: false on the API server)."""
    return {k: v for k, v in job["spec"]["runPolicy"].items() if k != "suspend"}


def _labels(job, rtype):
    return tpl(job, rtype)["metadata"].get("labels", {})


def check_arena_defaults(job):
    """Arena's defaults (kubeflow/arena pkg/argsbuilder/submit*.go and charts/pytorchjob), but --retry 0: no
    backoffLimit and the workers Never (docs/compatibility.md, "Job manifests")."""
    spec = job["spec"]
    assert _run_policy(job) == {"cleanPodPolicy": "Running"}
    master, worker = spec["pytorchReplicaSpecs"]["Master"], spec["pytorchReplicaSpecs"]["Worker"]
    assert (master["restartPolicy"], worker["restartPolicy"]) == ("Never", "Never")
    c = ctr(job, "Master")
    assert (c["imagePullPolicy"], c["workingDir"]) == ("Always", "/root")
    res = {k: {r: q(v) for r, v in d.items()} for k, d in c["resources"].items()}
    assert res == {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}}
    assert volumes(pod(job, "Master"))[mounts(c)["/dev/shm"]]["emptyDir"] == {"medium": "Memory", "sizeLimit": "2Gi"}
    assert (envmap(c)["workers"], envmap(c)["gpus"]) == ("2", "0")
    for holder in (job["metadata"], tpl(job, "Master")["metadata"]):
        assert {k: holder["labels"][k] for k in ("chart", "heritage", "createdBy")} == {
            "chart": "pytorchjob-0.1.0", "heritage": "Helm", "createdBy": "PyTorchJob"}
        assert holder["annotations"]["requestGPUsOfJobOwner"] == "0"


def check_arena_metadata(job):
    meta = job["metadata"]
    assert meta["annotations"]["scheduling.x-k8s.io/suspend"] == "true"  # --queue: kube-queue
    assert meta["annotations"]["job-role-sequence"] == "Worker,Chief"
    assert (meta["labels"]["modelName"], meta["annotations"]["modelSource"]) == ("bert", "s3://models/bert")
    assert "pod-group.scheduling.sigs.k8s.io/name" not in meta["labels"]  # on the pods only, as Arena
    for rtype in ("Chief", "Worker"):
        assert _labels(job, rtype)["pod-group.scheduling.sigs.k8s.io/name"] == "tfjob-job-arena-metadata"
        assert _labels(job, rtype)["pod-group.scheduling.sigs.k8s.io/min-available"] == "3"
    assert job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] == "OnFailure"  # with a chief
    (term,) = pod(job, "Worker")["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == {
        "training.kubeflow.org/job-name": "job-arena-metadata", "training.kubeflow.org/replica-type": "worker"}


def check_arena_camel(job):
    tf = job["spec"]["tfReplicaSpecs"]
    assert (ctr(job, "Worker")["image"], ctr(job, "PS")["image"]) == ("w:1", "p:1")
    assert ctr(job, "Worker")["ports"][0]["containerPort"] == 3000 and ctr(job, "PS")["ports"][0]["containerPort"] == 3001
    assert job["spec"]["runPolicy"]["cleanPodPolicy"] == "All"
    assert ctr(job, "Worker")["workingDir"] == "/ws"
    assert volumes(pod(job, "PS"))[mounts(ctr(job, "PS"))["/x"]]["hostPath"]["path"] == "/host/x"
    assert pod(job, "Worker")["hostIPC"] is True and pod(job, "Worker")["hostPID"] is True
    assert (tf["Worker"]["restartPolicy"], tf["PS"]["restartPolicy"]) == ("Never", "Never")


def check_arena_mpi(job):
    spec = job["spec"]
    assert spec["slotsPerWorker"] == 2  # the workers' GPUs
    assert _run_policy(job) == {"cleanPodPolicy": "All", "backoffLimit": 0}
    assert spec["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] == "Never"
    worker = ctr(job, "Worker")
    assert q(worker["resources"]["limits"]["rdma/hca"]) == "1"
    assert worker["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]


def check_git_env(job):
    (sync,) = pod(job, "Worker")["initContainers"]
    assert "--ref=dev" in sync["args"]
    assert envmap(sync)["GIT_SYNC_USERNAME"] == "bob" and "GIT_SYNC_BRANCH" not in envmap(sync)
    assert mounts(ctr(job, "Worker"))["/root/code"] == "code-sync"


COMMAND = "python train.py --lr 0.1"
CASES = [
    ("arena-defaults", "pytorch", ["--workers", "2", "--cpu", "2", "--memory", "4Gi"], check_arena_defaults),
    ("arena-metadata", "tf", ["--workers", "2", "--chief", "--queue", "--gang", "--model-name", "bert",
                              "--model-source", "s3://models/bert", "--role-sequence", "w,c",
                              "--worker-affinity-policy", "spread"], check_arena_metadata),
    ("arena-camel", "tf", ["--workers", "2", "--ps", "1", "--workerImage", "w:1", "--psImage", "p:1",
                           "--workerPort", "3000", "--psPort", "3001", "--cleanTaskPolicy", "All", "--workingDir",
                           "/ws", "--dataDir", "/host/x:/x", "--hostIPC", "--hostPID"], check_arena_camel),
    ("arena-mpi", "mpi", ["--workers", "2", "--gpus", "2", "--rdma"], check_arena_mpi),
    ("git-env", "tf", ["--workers", "2", "--sync-source", "https://git.example.com/team/models.git", "-e",
                       "GIT_SYNC_BRANCH=dev", "-e", "GIT_SYNC_USERNAME=bob"], check_git_env),
    ("gpus-workers", "tf", ["--gpus", "2", "--workers", "2"], check_gpus_workers),
    ("cpu-memory", "tf", ["--workers", "2", "--cpu", "2", "--memory", "4Gi"], check_cpu_memory),
    ("env", "tf", ["--workers", "2", "-e", "SPECIAL=a=b, c d=e", "--env", "EMPTY="], check_env),
    ("data", "tf", ["--workers", "2", "-d", "training-data:/mnt/data"], check_data),
    ("data-dir", "tf", ["--workers", "2", "--data-dir", "/host/dir:/in/container", "--data-dir", "/same"],
     check_data_dir),
    ("annotation", "tf", ["--workers", "2", "-a", "team.example.com/owner=ml: team #1"], check_annotation),
    ("label", "tf", ["--workers", "2", "-l", "experiment=exp-1"], check_label),
    ("selector", "tf", ["--workers", "2", "--selector", "accelerator=a100"], check_selector),
    ("toleration", "tf", ["--workers", "2", "--toleration", "gpu=true:NoSchedule", "--toleration", "spot"],
     check_toleration),
    ("priority", "tf", ["--workers", "2", "-p", "high"], check_priority),
    ("termination-grace-period", "tf", ["--workers", "2", "--termination-grace-period", "5m"], check_grace),
    ("pull", "tf", ["--workers", "2", "--image-pull-secret", "regcred", "--image-pull-policy", "Always"], check_pull),
    ("workdir-shell", "tf", ["--workers", "2", "--working-dir", "/workspace", "--shell", "bash"], check_workdir_shell),
    ("run-policy", "tf", ["--workers", "2", "--retry", "3", "--ttl-after-finished", "1h", "--running-timeout",
                          "1h30m", "--clean-task-policy", "All"], check_run_policy),
    ("share-memory", "tf", ["--workers", "2", "--share-memory", "2Gi"], check_shm),
    ("device", "tf", ["--workers", "2", "--device", "amd.com/gpu=1"], check_device),
    ("sync", "tf", ["--workers", "2", "--sync-mode", "git", "--sync-source", "https://git.example.com/team/models.git",
                    "--sync-branch", "dev", "--sync-image", "git-sync:v4.4.0", "--sync-secret", "git-creds"],
     check_sync),
    ("queue-scheduler", "tf", ["--workers", "2", "--queue-name", "team-queue", "--scheduler", "volcano"],
     check_queue_scheduler),
    ("values-set", "tf", ["--workers", "2", "-f", "{values_file}", "--set", "worker.replicas=4"], check_values_and_set),
    ("tf-roles", "tf", ["--workers", "2", "--ps", "2", "--ps-image", "ps:1", "--worker-image", "worker:1",
                        "--chief", "--evaluator", "--ps-port", "3333", "--worker-port", "4444", "--ps-gpus", "1",
                        "--ps-cpu", "1", "--ps-memory", "2Gi", "--ps-cpu-limit", "2", "--ps-memory-limit", "3Gi",
                        "--worker-cpu-limit", "8", "--worker-memory-limit", "16Gi", "--chief-cpu", "3",
                        "--chief-memory", "5Gi", "--chief-cpu-limit", "4", "--chief-memory-limit", "6Gi",
                        "--evaluator-cpu", "1500m", "--evaluator-memory", "1Gi", "--evaluator-cpu-limit", "2",
                        "--evaluator-memory-limit", "7Gi", "--ps-selector", "pool=cpu", "--worker-selector",
                        "pool=gpu", "--chief-selector", "pool=chief", "--evaluator-selector", "pool=eval",
                        "--success-policy", "AllWorkers"], check_tf_roles),
    ("tf-standalone", "tf", ["--gpus", "1"], check_tf_standalone),
    ("pytorch", "pytorch", ["--workers", "3", "--gpus", "1", "--cpu-limit", "4", "--nproc-per-node", "2"],
     check_pytorch),
    ("mpi", "mpi", ["--workers", "2", "--gpus", "1", "--slots-per-worker", "4", "--launcher-cpu", "1",
                    "--launcher-memory", "1Gi"], check_mpi),
]
MPI_COMMAND = "mpirun -np 8 python train.py"


@pytest.fixture
def values_file(tmp_path) -> Path:
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump({"labels": {"from-file": "yes"}, "worker": {"replicas": 3}}))
    return path


def case_args(kind, args, name, values_file, *options):
    """Options first: as in Arena, everything after the first positional word is the training command."""
    cmd = MPI_COMMAND if kind == "mpi" else COMMAND
    args = [a.replace("{values_file}", str(values_file)) for a in args]
    return ["submit", kind, "--name", name, "--image", "img:1", *args, *options, *cmd.split(" ")]


def find_job(docs: list[dict]) -> dict:
    (job,) = [d for d in docs if d.get("apiVersion", "").startswith("kubeflow.org/")]
    return job


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_flag_renders_with_dry_run(case, helm_bin, values_file):
    cid, kind, args, check = case
    res = run(*case_args(kind, args, "job-" + cid, values_file, "--dry-run", "--helm-binary", str(helm_bin)))
    assert res.exit_code == 0, res.output
    docs = [d for d in yaml.safe_load_all(res.stdout) if d]
    job = find_job(docs)
    check(job)
    cmd = MPI_COMMAND if kind == "mpi" else COMMAND
    main = "Launcher" if kind == "mpi" else ("Chief" if cid == "tf-standalone" else ("Master" if kind == "pytorch" else "Worker"))
    assert ctr(job, main)["command"][1:] == ["-c", cmd]


@pytest.mark.cluster
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_flag_reaches_the_api_server(case, helm_bin, cluster, namespace, values_file):
    cid, kind, args, check = case
    name = "job-" + cid
    if "-p" in args:  # submit checks that the PriorityClass exists (the Priority admission would refuse the pods)
        pc = args[args.index("-p") + 1]
        sched = client.SchedulingV1Api(cluster.api_client())
        if pc not in {c.metadata.name for c in sched.list_priority_class().items}:
            sched.create_priority_class({"metadata": {"name": pc}, "value": 1000})
    if "--queue-name" in args:  # and that the LocalQueue exists (Kueue would hold the job for ever)
        client.CustomObjectsApi(cluster.api_client()).create_namespaced_custom_object(
            "kueue.x-k8s.io", "v1beta2", namespace, "localqueues", {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                "metadata": {"name": args[args.index("--queue-name") + 1]}, "spec": {"clusterQueue": "none"}})
    res = run(*case_args(kind, args, name, values_file, "-n", namespace, "--kubeconfig",
                         str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin)))
    assert res.exit_code == 0, res.output
    kind_name = {"tf": "TFJob", "pytorch": "PyTorchJob", "mpi": "MPIJob"}[kind]
    version = "v2beta1" if kind == "mpi" else "v1"
    assert f"{kind_name.lower()}.kubeflow.org/{name} created" in res.stdout
    assert f"arena-helm get {name} -n {namespace}" in res.stdout
    job = client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", version, namespace, PLURAL[kind_name], name
    )
    check(job)
    assert job["metadata"]["labels"]["release"] == name


def test_dry_run_needs_no_cluster_and_prints_only_yaml(helm_bin, tmp_path):
    env = {"KUBECONFIG": str(tmp_path / "does-not-exist"), "HOME": str(tmp_path)}
    res = run("submit", "tfjob", "--name", "mnist", "--image", "tf:2", "--workers", "2", "--dry-run",
              "--helm-binary", str(helm_bin), "python", "train.py", env=env)
    assert res.exit_code == 0, res.output
    docs = [d for d in yaml.safe_load_all(res.stdout) if d]
    assert [d["kind"] for d in docs] == ["TFJob"]
    assert docs[0]["metadata"]["namespace"] == "default"


def test_dry_run_output_values_prints_the_chart_values(helm_bin):
    res = run("submit", "pytorch", "--name", "bert", "--image", "pt:2", "--workers", "3", "--gpus", "2",
              "--dry-run", "--output", "values", "--helm-binary", str(helm_bin), "torchrun", "train.py")
    assert res.exit_code == 0, res.output
    values = yaml.safe_load(res.stdout)
    assert values["master"] == {"replicas": 1, "gpus": 2, "restartPolicy": "Never"}
    assert values["worker"] == {"replicas": 2, "gpus": 2, "restartPolicy": "Never"}
    assert values["runPolicy"] == {"cleanPodPolicy": "Running"}
    assert values["command"] == "torchrun train.py"


def test_command_after_double_dash_and_hostile_text_is_byte_exact(helm_bin):
    hostile = "echo 'a: b' \"#c\" {d} * & ! % --x=1 ünï ✓\nsecond line"
    res = run("submit", "tf", "--name", "hostile", "--image", "tf:2", "--dry-run", "--helm-binary", str(helm_bin),
              "--", hostile)
    assert res.exit_code == 0, res.output
    job = find_job([d for d in yaml.safe_load_all(res.stdout) if d])
    assert ctr(job, "Chief")["command"] == ["sh", "-c", hostile]


def test_defaults_file_sets_namespace_image_and_pull_secrets(helm_bin, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({"namespace": "from-config", "imagePullSecrets": ["cfg-secret"],
                                   "images": {"tfjob": "cfg/tf:1"}}))
    env = {"ARENA_HELM_CONFIG": str(cfg), "KUBECONFIG": str(tmp_path / "none")}
    res = run("submit", "tf", "--name", "d", "--dry-run", "--helm-binary", str(helm_bin), "python", "x.py", env=env)
    assert res.exit_code == 0, res.output
    job = find_job([d for d in yaml.safe_load_all(res.stdout) if d])
    assert job["metadata"]["namespace"] == "from-config"
    assert ctr(job, "Chief")["image"] == "cfg/tf:1"
    assert pod(job, "Chief")["imagePullSecrets"] == [{"name": "cfg-secret"}]
    # flags win
    res = run("submit", "tf", "--name", "d", "-n", "flag-ns", "--image", "flag/tf:2", "--dry-run",
              "--helm-binary", str(helm_bin), "python", "x.py", env=env)
    job = find_job([d for d in yaml.safe_load_all(res.stdout) if d])
    assert job["metadata"]["namespace"] == "flag-ns" and ctr(job, "Chief")["image"] == "flag/tf:2"


def test_kubeconfig_context_namespace_is_the_default(helm_bin, tmp_path):
    kc = tmp_path / "kubeconfig"
    kc.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "a",
        "contexts": [{"name": "a", "context": {"namespace": "ns-a"}}, {"name": "b", "context": {"namespace": "ns-b"}}],
    }))
    for extra, want in (([], "ns-a"), (["--context", "b"], "ns-b"), (["--kube-context", "b"], "ns-b")):
        res = run("submit", "tf", "--name", "k", "--image", "x", "--dry-run", "--kubeconfig", str(kc), *extra,
                  "--helm-binary", str(helm_bin), "true", env={"HOME": str(tmp_path)})
        assert res.exit_code == 0, res.output
        assert find_job([d for d in yaml.safe_load_all(res.stdout) if d])["metadata"]["namespace"] == want


def test_python_api_renders_the_same_as_the_cli(helm_bin):
    from arena_helm import Helm, TFJobSpec, render

    spec = TFJobSpec(name="api", image="tf:2", workers=2, gpus=1, command="python train.py")
    text = render(spec, Helm(str(helm_bin)))
    res = run("submit", "tf", "--name", "api", "--image", "tf:2", "--workers", "2", "--gpus", "1", "--dry-run",
              "--helm-binary", str(helm_bin), "python", "train.py", env={"KUBECONFIG": "/nonexistent"})
    # the same but for the command line the CLI records (the API records the version and the spec as well)
    (line,) = [x for x in res.stdout.splitlines(keepends=True) if "arena-helm.kubeflow.org/command-line" in x]
    assert res.stdout.replace(line, "", 1) == text
    assert "arena-helm.kubeflow.org/version" in text


# ---- the cluster side: existing names, missing CRDs, --wait -------------------------------------------
@pytest.mark.cluster
def test_existing_release_or_job_is_a_clear_error(helm_bin, cluster, namespace):
    base = ["submit", "tf", "--name", "dup", "--image", "x", "-n", namespace, "--kubeconfig",
            str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "true"]
    assert run(*base).exit_code == 0
    res = run(*base)
    assert res.exit_code == 1
    assert "already exists in namespace" in res.stderr and "arena-helm delete dup" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.cluster
def test_missing_crd_names_the_operator_and_creates_nothing(helm_bin, cluster, controllers, namespace):
    cluster.delete_crd("mpijobs.kubeflow.org")
    try:
        res = run("submit", "mpi", "--name", "nocrd", "--image", "x", "-n", namespace, "--kubeconfig",
                  str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "mpirun", "x")
    finally:
        cluster.create_crd(cluster.mpi_crd_file("v2beta1"))
    assert res.exit_code == 1
    assert "does not serve MPIJob" in res.stderr and "mpi-operator" in res.stderr
    secrets = client.CoreV1Api(cluster.api_client()).list_namespaced_secret(namespace).items
    assert [s.metadata.name for s in secrets if s.metadata.name.startswith("sh.helm")] == []
    mpi_operator_acts_again(helm_bin, cluster, controllers, namespace)


@pytest.mark.cluster
def test_mpi_api_auto_picks_what_the_cluster_serves(helm_bin, cluster, controllers, namespace):
    cluster.swap_mpi_crd("v1")
    try:
        res = run("submit", "mpi", "--name", "auto", "--image", "x", "-n", namespace, "--kubeconfig",
                  str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "mpirun", "x")
        assert res.exit_code == 0, res.output
        job = client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
            "kubeflow.org", "v1", namespace, "mpijobs", "auto")
        assert job["apiVersion"] == "kubeflow.org/v1"
        assert ctr(job, "Launcher")["command"] == ["sh", "-c", "mpirun x"]
    finally:
        helm_uninstall(helm_bin, cluster, "auto", namespace)
        cluster.swap_mpi_crd("v2beta1")
    mpi_operator_acts_again(helm_bin, cluster, controllers, namespace)


def helm_uninstall(helm_bin, cluster, name, namespace):
    subprocess.run([str(helm_bin), "uninstall", name, "-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig)],
                   capture_output=True)


def mpi_operator_acts_again(helm_bin, cluster, controllers, namespace):
    """The running mpi-operator lost its CRD for a while: it must make an MPIJob's pods again (for the tests
    after this one); when it does not run in this session (its fixed health port was taken) there is none."""
    if "mpi-operator" not in controllers.running:
        return
    res = run("submit", "mpi", "--name", "again", "--image", "x", "--workers", "1", "-n", namespace, "--kubeconfig",
              str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "mpirun", "x")
    assert res.exit_code == 0, res.output
    wait_job_pods(client.CoreV1Api(cluster.api_client()), namespace, "again", count=2, timeout=120)
    helm_uninstall(helm_bin, cluster, "again", namespace)


@pytest.mark.cluster
def test_failed_install_leaves_nothing_behind(helm_bin, cluster, namespace):
    """The API server rejects the job (a schema bound only the CRD knows): the release is rolled back."""
    res = run("submit", "tf", "--name", "rejected", "--image", "x", "-n", namespace, "--kubeconfig",
              str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin),
              "--set", "runPolicy.schedulingPolicy.minAvailable=-5", "--set", "worker.port=70000", "true")
    assert res.exit_code in (1, 2)
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    secrets = client.CoreV1Api(cluster.api_client()).list_namespaced_secret(namespace).items
    assert [s.metadata.name for s in secrets if s.metadata.name.startswith("sh.helm")] == []
    jobs = client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs")
    assert jobs["items"] == []
    core = client.CoreV1Api(cluster.api_client())  # the operator never saw a job: no pod, no Service
    assert core.list_namespaced_pod(namespace).items == [] and core.list_namespaced_service(namespace).items == []


@pytest.mark.cluster
def test_wait_follows_the_job_to_its_end(helm_bin, cluster, namespace, kubelet):
    """--wait follows what the training operator derives from the pods: its Chief runs (kwok), then exits 0."""
    import threading

    core = client.CoreV1Api(cluster.api_client())
    # no node for the pool yet: the operator's pod stays Pending, the job Created (Pending) past --timeout
    res = run("submit", "tf", "--name", "slow", "--image", "x", "-n", namespace, "--kubeconfig",
              str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "--wait", "--timeout", "1s", "true")
    assert res.exit_code == 3
    assert "still Pending after --timeout 1s" in res.stderr

    kubelet.add_node(f"n-{namespace}", pool=namespace)
    problems: list[BaseException] = []

    def finish():
        try:
            wait_job_pods(core, namespace, "waited", ["waited-chief-0"])
            kubelet.run_pod(namespace, "waited-chief-0", f"n-{namespace}")
            read = lambda: client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(  # noqa: E731
                "kubeflow.org", "v1", namespace, "tfjobs", "waited")
            wait_condition(read, "Running")
            kubelet.finish_pod(namespace, "waited-chief-0", 0)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            problems.append(exc)

    t = threading.Thread(target=finish)
    t.start()
    try:
        res = run("submit", "tf", "--name", "waited", "--image", "x", "-n", namespace, "--kubeconfig",
                  str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin), "--wait", "--timeout", "60s",
                  "true")
    finally:
        t.join(90)
        kubelet.remove_node(f"n-{namespace}")
    assert not problems, problems
    assert res.exit_code == 0, res.output
    assert "tfjob/waited: Succeeded" in res.stderr


def _json(o):
    return json.loads(json.dumps(o))


@pytest.mark.cluster
def test_config_file_and_the_submitting_user_reach_the_api_server(helm_bin, cluster, namespace, tmp_path):
    """--config-file's ConfigMap, and Arena's user label/annotation: the admin's token is reviewed by the API
    server (TokenReview), which names the user admin."""
    import hashlib

    conf = tmp_path / "train.yaml"
    conf.write_bytes(b"lr: 0.1\nname: 'a b' # not a comment for YAML here\n")
    res = run("submit", "pytorch", "--name", "conf", "--image", "pt:2", "--config-file", f"{conf}:/etc/train/t.yaml",
              "-n", namespace, "--kubeconfig", str(cluster.admin.kubeconfig), "--helm-binary", str(helm_bin),
              "python", "train.py")
    assert res.exit_code == 0, res.output
    api = cluster.api_client()
    cm = client.CoreV1Api(api).read_namespaced_config_map("conf-config", namespace)
    assert cm.data == {"config-0": conf.read_text()}
    job = client.CustomObjectsApi(api).get_namespaced_custom_object("kubeflow.org", "v1", namespace,
                                                                    "pytorchjobs", "conf")
    m = {x["mountPath"]: x for x in ctr(job, "Master")["volumeMounts"]}["/etc/train/t.yaml"]
    assert (m["subPath"], m["readOnly"]) == ("config-0", True)
    assert job["metadata"]["labels"]["arena.kubeflow.org/uid"] == hashlib.md5(b"admin").hexdigest()
    assert job["metadata"]["annotations"]["arena.kubeflow.org/username"] == "admin"
    assert tpl(job, "Master")["metadata"]["annotations"]["arena.kubeflow.org/username"] == "admin"
