"""The real controllers (tests/support/controllers.py) act on the test cluster: training-operator v1.9.3 makes the
pods and Services of a TFJob and a PyTorchJob and handles suspend, mpi-operator v0.8.0 the workers and the
launcher Job of an MPIJob v2beta1, Trainer v2.3.0 a JobSet for a TrainJob whose JobSet v0.12.0 controller makes
Indexed Jobs (and the job controller their pods), and Kueue v0.17.0 holds a job over its quota and admits one
within it. There are no nodes: the pods stay Pending, which is all these checks need."""

from __future__ import annotations

import pytest
from controllers import ALL
from kubernetes import client
from kubernetes.client.rest import ApiException
from waits import wait_for

pytestmark = pytest.mark.cluster

KUBEFLOW = ("kubeflow.org", "v1")
MPI_V2 = ("kubeflow.org", "v2beta1")
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOBSET = ("jobset.x-k8s.io", "v1alpha2")
KUEUE = ("kueue.x-k8s.io", "v1beta2")
JOB_NAME = "training.kubeflow.org/job-name"
OPERATOR_NAME = "training.kubeflow.org/operator-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
JOB_ROLE = "training.kubeflow.org/job-role"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def apis(cluster):
    api = cluster.api_client()
    return client.CoreV1Api(api), client.BatchV1Api(api), client.CustomObjectsApi(api)


def live_pods(core, namespace: str, selector: str) -> list:
    return [p for p in core.list_namespaced_pod(namespace, label_selector=selector).items
            if not p.metadata.deletion_timestamp]


def condition(obj: dict, ctype: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), None)


def container(name: str, gpus: int = 0) -> dict:
    c = {"name": name, "image": "train:test", "command": ["python", "train.py"]}
    if gpus:
        c["resources"] = {"limits": {GPU: str(gpus)}}
    return c


def replica(name: str, replicas: int, gpus: int = 0, restart: str = "Never") -> dict:
    return {"replicas": replicas, "restartPolicy": restart, "template": {"spec": {"containers": [container(name, gpus)]}}}


def pytorchjob(name: str, *, workers: int = 1, gpus: int = 0, master_gpus: int = 0, labels=None, suspend=None) -> dict:
    spec = {"pytorchReplicaSpecs": {"Master": replica("pytorch", 1, master_gpus, "OnFailure"),
                                    "Worker": replica("pytorch", workers, gpus, "OnFailure")}}
    if suspend is not None:
        spec["runPolicy"] = {"suspend": suspend}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def get(custom, api, namespace: str, plural: str, name: str) -> dict:
    return custom.get_namespaced_custom_object(*api, namespace, plural, name)


# ---- the processes ----------------------------------------------------------------------------------------
def test_every_controller_runs(controllers):
    controllers.require(*ALL)
    assert set(controllers.start_seconds) == set(ALL), controllers.errors
    for name in ALL:  # still alive after start
        assert controllers.running[name].proc.poll() is None, controllers.running[name].log_tail()


# ---- training-operator ------------------------------------------------------------------------------------
def test_tfjob_gets_pods_services_and_created_condition(controllers, apis, namespace):
    controllers.require("training-operator")
    core, _, custom = apis
    body = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "mnist"},
            "spec": {"tfReplicaSpecs": {"PS": replica("tensorflow", 1), "Worker": replica("tensorflow", 2)}}}
    job = custom.create_namespaced_custom_object(*KUBEFLOW, namespace, "tfjobs", body)
    uid = job["metadata"]["uid"]

    pods = wait_for(lambda: (lambda ps: ps if len(ps) == 3 else None)(live_pods(core, namespace, f"{JOB_NAME}=mnist")),
                    "the TFJob's 3 pods")
    by_name = {p.metadata.name: p for p in pods}
    assert set(by_name) == {"mnist-ps-0", "mnist-worker-0", "mnist-worker-1"}
    labels = {n: {k: v for k, v in p.metadata.labels.items() if k.startswith("training.kubeflow.org/")}
              for n, p in by_name.items()}
    assert labels == {
        "mnist-ps-0": {JOB_NAME: "mnist", OPERATOR_NAME: "tfjob-controller", REPLICA_TYPE: "ps", REPLICA_INDEX: "0"},
        # no Chief/Master: worker 0 is the master role (tensorflow/tfjob_controller.go IsMasterRole)
        "mnist-worker-0": {JOB_NAME: "mnist", OPERATOR_NAME: "tfjob-controller", REPLICA_TYPE: "worker",
                           REPLICA_INDEX: "0", JOB_ROLE: "master"},
        "mnist-worker-1": {JOB_NAME: "mnist", OPERATOR_NAME: "tfjob-controller", REPLICA_TYPE: "worker",
                           REPLICA_INDEX: "1"},
    }
    for p in pods:
        [owner] = p.metadata.owner_references
        assert (owner.kind, owner.name, owner.uid, owner.controller) == ("TFJob", "mnist", uid, True)
        assert p.status.phase == "Pending"
        assert p.spec.restart_policy == "Never"

    services = wait_for(lambda: (lambda ss: ss if len(ss) == 3 else None)(
        core.list_namespaced_service(namespace, label_selector=f"{JOB_NAME}=mnist").items), "the TFJob's 3 Services")
    assert {s.metadata.name for s in services} == set(by_name)
    for s in services:
        assert s.spec.cluster_ip == "None"  # headless: one per replica, for TF_CONFIG's host names
        assert s.spec.selector[JOB_NAME] == "mnist"
        assert s.metadata.owner_references[0].uid == uid

    job = wait_for(lambda: (lambda j: j if condition(j, "Created") else None)(
        get(custom, KUBEFLOW, namespace, "tfjobs", "mnist")), "a Created condition")
    created = condition(job, "Created")
    assert (created["status"], created["reason"], created["message"]) == ("True", "TFJobCreated",
                                                                          "TFJob mnist is created.")
    # no queue label: Kueue leaves it alone (manageJobsWithoutQueueName: false)
    assert not (job["spec"].get("runPolicy") or {}).get("suspend")
    if "kueue" in controllers.running:
        assert custom.list_namespaced_custom_object(*KUEUE, namespace, "workloads")["items"] == []


def test_pytorchjob_gets_master_and_worker_pods(controllers, apis, namespace):
    controllers.require("training-operator")
    core, _, custom = apis
    custom.create_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs", pytorchjob("torch", workers=2))
    pods = wait_for(lambda: (lambda ps: ps if len(ps) == 3 else None)(live_pods(core, namespace, f"{JOB_NAME}=torch")),
                    "the PyTorchJob's 3 pods")
    roles = {p.metadata.name: (p.metadata.labels[REPLICA_TYPE], p.metadata.labels.get(JOB_ROLE)) for p in pods}
    assert roles == {"torch-master-0": ("master", "master"), "torch-worker-0": ("worker", None),
                     "torch-worker-1": ("worker", None)}
    by_name = {p.metadata.name: p for p in pods}
    env = {e.name: e.value for e in by_name["torch-worker-1"].spec.containers[0].env or []}
    assert env["MASTER_ADDR"] == "torch-master-0" and env["RANK"] == "2" and env["WORLD_SIZE"] == "3"
    assert env["PET_NNODES"] == "3"
    # the workers wait for the master's DNS name in an init container (pytorch/initcontainer.go)
    assert [c.name for c in by_name["torch-worker-0"].spec.init_containers or []] == ["init-pytorch"]
    assert not by_name["torch-master-0"].spec.init_containers
    assert {s.metadata.name for s in wait_for(
        lambda: core.list_namespaced_service(namespace, label_selector=f"{JOB_NAME}=torch").items,
        "the master's Service")} >= {"torch-master-0"}


def test_pytorchjob_suspend_deletes_pods_and_sets_suspended(controllers, apis, namespace):
    controllers.require("training-operator")
    core, _, custom = apis
    custom.create_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs", pytorchjob("pause"))
    wait_for(lambda: len(live_pods(core, namespace, f"{JOB_NAME}=pause")) == 2, "the pods before suspend")

    custom.patch_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs", "pause",
                                          {"spec": {"runPolicy": {"suspend": True}}})
    wait_for(lambda: not core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME}=pause").items,
             "the pods deleted on suspend")
    job = wait_for(lambda: (lambda j: j if (condition(j, "Suspended") or {}).get("status") == "True" else None)(
        get(custom, KUBEFLOW, namespace, "pytorchjobs", "pause")), "a Suspended condition")
    suspended = condition(job, "Suspended")
    assert (suspended["reason"], suspended["message"]) == ("PyTorchJobSuspended", "PyTorchJob pause is suspended.")
    assert all(rs.get("active", 0) == 0 for rs in (job["status"].get("replicaStatuses") or {}).values())
    assert not core.list_namespaced_service(namespace, label_selector=f"{JOB_NAME}=pause").items

    custom.patch_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs", "pause",
                                          {"spec": {"runPolicy": {"suspend": False}}})
    wait_for(lambda: len(live_pods(core, namespace, f"{JOB_NAME}=pause")) == 2, "the pods again on resume")
    job = wait_for(lambda: (lambda j: j if (condition(j, "Suspended") or {}).get("status") == "False" else None)(
        get(custom, KUBEFLOW, namespace, "pytorchjobs", "pause")), "Suspended=False on resume")
    resumed = condition(job, "Suspended")
    assert (resumed["reason"], resumed["message"]) == ("PyTorchJobResumed", "PyTorchJob pause is resumed.")


# ---- mpi-operator -----------------------------------------------------------------------------------------
def test_mpijob_v2beta1_gets_workers_and_launcher_job(controllers, apis, namespace):
    controllers.require("mpi-operator")
    core, batch, custom = apis
    body = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi"},
            "spec": {"slotsPerWorker": 1,
                     "mpiReplicaSpecs": {
                         "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                             {"name": "launcher", "image": "mpi-pi:test", "command": ["mpirun", "-n", "2", "pi"]}]}}},
                         "Worker": {"replicas": 2, "template": {"spec": {"containers": [
                             {"name": "worker", "image": "mpi-pi:test"}]}}}}}}
    job = custom.create_namespaced_custom_object(*MPI_V2, namespace, "mpijobs", body)
    uid = job["metadata"]["uid"]

    workers = wait_for(lambda: (lambda ps: ps if len(ps) == 2 else None)(
        live_pods(core, namespace, f"{JOB_NAME}=pi,{JOB_ROLE}=worker")), "the 2 worker pods")
    assert {p.metadata.name: (p.metadata.labels[OPERATOR_NAME], p.metadata.labels[REPLICA_INDEX]) for p in workers} \
        == {"pi-worker-0": ("mpi-operator", "0"), "pi-worker-1": ("mpi-operator", "1")}
    assert all(REPLICA_TYPE not in p.metadata.labels for p in workers)
    assert all(p.metadata.owner_references[0].uid == uid for p in workers)

    launcher = wait_for(lambda: next(iter(batch.list_namespaced_job(namespace, field_selector="metadata.name=pi-launcher")
                                          .items), None), "the launcher batch Job")
    assert launcher.metadata.labels == {"app": "pi"}
    assert (launcher.metadata.owner_references[0].kind, launcher.metadata.owner_references[0].uid) == ("MPIJob", uid)
    assert not launcher.spec.suspend
    tpl = launcher.spec.template.metadata.labels
    assert (tpl[JOB_NAME], tpl[JOB_ROLE], tpl[OPERATOR_NAME]) == ("pi", "launcher", "mpi-operator")
    # the job controller of kube-controller-manager makes the launcher's pod
    [lpod] = wait_for(lambda: live_pods(core, namespace, "batch.kubernetes.io/job-name=pi-launcher"), "the launcher pod")
    assert lpod.metadata.name.startswith("pi-launcher-") and lpod.status.phase == "Pending"
    # what the launcher needs: the workers' Service, the hostfile ConfigMap and the SSH Secret
    assert core.read_namespaced_service("pi", namespace).spec.cluster_ip == "None"
    assert "hostfile" in core.read_namespaced_config_map("pi-config", namespace).data
    assert core.read_namespaced_secret("pi-ssh", namespace).type == "kubernetes.io/ssh-auth"

    job = wait_for(lambda: (lambda j: j if condition(j, "Created") else None)(
        get(custom, MPI_V2, namespace, "mpijobs", "pi")), "a Created condition")
    created = condition(job, "Created")
    assert (created["status"], created["reason"], created["message"]) == ("True", "MPIJobCreated",
                                                                          f"MPIJob {namespace}/pi is created.")


# ---- Trainer + JobSet -------------------------------------------------------------------------------------
def test_trainjob_gets_jobset_indexed_jobs_and_pods(controllers, apis, namespace):
    controllers.require("trainer", "jobset")
    core, batch, custom = apis
    assert "torch-distributed" in controllers.running["trainer"].runtime_names
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "llm"},
            "spec": {"runtimeRef": {"name": "torch-distributed"},
                     "trainer": {"numNodes": 2, "image": "train:test", "command": ["torchrun", "train.py"]}}}
    tj = custom.create_namespaced_custom_object(*TRAINER, namespace, "trainjobs", body)
    assert tj["spec"]["runtimeRef"] == {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org",
                                        "kind": "ClusterTrainingRuntime"}  # CRD defaults

    def jobset():
        try:
            return get(custom, JOBSET, namespace, "jobsets", "llm")
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    js = wait_for(jobset, "the TrainJob's JobSet")
    [owner] = js["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("TrainJob", "llm", tj["metadata"]["uid"])
    [rjob] = js["spec"]["replicatedJobs"]
    assert rjob["name"] == "node"
    # JobSet's mutating webhook defaulted what the CRD does not: Indexed, and the network for stable host names
    assert rjob["template"]["spec"]["completionMode"] == "Indexed"
    assert js["spec"]["network"]["enableDNSHostnames"] is True

    jobs = wait_for(lambda: batch.list_namespaced_job(namespace, label_selector="jobset.sigs.k8s.io/jobset-name=llm")
                    .items, "the JobSet's Jobs")
    [job] = jobs
    assert job.metadata.name == "llm-node-0"
    assert (job.spec.completion_mode, job.spec.parallelism, job.spec.completions) == ("Indexed", 2, 2)
    assert job.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node"

    pods = wait_for(lambda: (lambda ps: ps if len(ps) == 2 else None)(
        live_pods(core, namespace, "batch.kubernetes.io/job-name=llm-node-0")), "the Job's 2 indexed pods")
    by_index = {p.metadata.labels["batch.kubernetes.io/job-completion-index"]: p for p in pods}
    assert set(by_index) == {"0", "1"}
    for index, p in by_index.items():
        assert p.metadata.name.startswith(f"llm-node-0-{index}-")
        assert (p.spec.hostname, p.spec.subdomain) == (f"llm-node-0-{index}", "llm")
        assert p.metadata.labels["jobset.sigs.k8s.io/jobset-name"] == "llm"
        node = next(c for c in p.spec.containers if c.name == "node")
        assert node.image == "train:test" and node.command == ["torchrun", "train.py"]
        env = {e.name: e for e in node.env or []}
        assert env["PET_NNODES"].value == "2"
        assert env["PET_MASTER_ADDR"].value == "llm-node-0-0.llm"
        assert env["PET_NODE_RANK"].value_from.field_ref.field_path == \
            "metadata.annotations['batch.kubernetes.io/job-completion-index']"


# ---- Kueue ------------------------------------------------------------------------------------------------
@pytest.fixture
def queue(controllers, apis, namespace):
    """ResourceFlavor + ClusterQueue (4 GPUs, this namespace only) + LocalQueue ``lq``; removed afterwards while
    Kueue still runs (it holds them with its resource-in-use finalizer)."""
    controllers.require("kueue", "training-operator")
    _, _, custom = apis
    flavor, cq = f"rf-{namespace}", f"cq-{namespace}"
    custom.create_cluster_custom_object(*KUEUE, "resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": flavor}})
    custom.create_cluster_custom_object(*KUEUE, "clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cq},
        "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                 "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU], "flavors": [{
                     "name": flavor, "resources": [{"name": "cpu", "nominalQuota": "8"},
                                                   {"name": "memory", "nominalQuota": "32Gi"},
                                                   {"name": GPU, "nominalQuota": "4"}]}]}]}})
    custom.create_namespaced_custom_object(*KUEUE, namespace, "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
        "spec": {"clusterQueue": cq}})
    wait_for(lambda: (condition(custom.get_cluster_custom_object(*KUEUE, "clusterqueues", cq), "Active") or {})
             .get("status") == "True", "the ClusterQueue Active")
    try:
        yield {"flavor": flavor, "cluster_queue": cq, "local_queue": "lq"}
    finally:
        for plural in ("pytorchjobs",):
            for j in custom.list_namespaced_custom_object(*KUBEFLOW, namespace, plural)["items"]:
                custom.delete_namespaced_custom_object(*KUBEFLOW, namespace, plural, j["metadata"]["name"])
        custom.delete_namespaced_custom_object(*KUEUE, namespace, "localqueues", "lq")
        custom.delete_cluster_custom_object(*KUEUE, "clusterqueues", cq)
        custom.delete_cluster_custom_object(*KUEUE, "resourceflavors", flavor)


def workload_of(custom, namespace: str, uid: str) -> dict | None:
    items = custom.list_namespaced_custom_object(*KUEUE, namespace, "workloads",
                                                 label_selector=f"kueue.x-k8s.io/job-uid={uid}")["items"]
    return items[0] if items else None


def test_kueue_holds_a_job_over_quota_and_admits_one_within(controllers, apis, namespace, queue):
    core, _, custom = apis
    labels = {QUEUE_LABEL: queue["local_queue"]}
    big = custom.create_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs",
                                                 pytorchjob("big", workers=2, gpus=4, labels=labels))
    # Kueue's mutating webhook suspended it at creation
    assert big["spec"]["runPolicy"]["suspend"] is True
    small = custom.create_namespaced_custom_object(*KUBEFLOW, namespace, "pytorchjobs",
                                                   pytorchjob("small", workers=1, gpus=1, master_gpus=1, labels=labels))

    wl = wait_for(lambda: (lambda w: w if condition(w or {}, "QuotaReserved") else None)(
        workload_of(custom, namespace, big["metadata"]["uid"])), "the big job's Workload with QuotaReserved")
    assert wl["metadata"]["name"].startswith("pytorchjob-big-")
    assert wl["metadata"]["ownerReferences"][0]["uid"] == big["metadata"]["uid"]
    assert wl["spec"]["queueName"] == "lq"
    assert [ps["name"] for ps in wl["spec"]["podSets"]] == ["master", "worker"]
    reserved = condition(wl, "QuotaReserved")
    assert (reserved["status"], reserved["reason"]) == ("False", "Pending")
    assert reserved["message"] == (
        f"couldn't assign flavors to pod set worker: insufficient quota for {GPU} in flavor {queue['flavor']}, "
        "previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)")
    assert condition(wl, "Admitted") is None

    # the small one is admitted: unsuspended, and training-operator makes its pods
    wl_small = wait_for(lambda: (lambda w: w if (condition(w or {}, "Admitted") or {}).get("status") == "True" else None)(
        workload_of(custom, namespace, small["metadata"]["uid"])), "the small job's Workload admitted")
    reserved = condition(wl_small, "QuotaReserved")
    assert (reserved["status"], reserved["reason"], reserved["message"]) == (
        "True", "QuotaReserved", f"Quota reserved in ClusterQueue {queue['cluster_queue']}")
    assert wl_small["status"]["admission"]["clusterQueue"] == queue["cluster_queue"]
    wait_for(lambda: get(custom, KUBEFLOW, namespace, "pytorchjobs", "small")["spec"]["runPolicy"]["suspend"] is False,
             "the small job unsuspended")
    wait_for(lambda: len(live_pods(core, namespace, f"{JOB_NAME}=small")) == 2, "the small job's pods")

    # the big one stays suspended, without pods, with training-operator's Suspended condition
    job = wait_for(lambda: (lambda j: j if (condition(j, "Suspended") or {}).get("status") == "True" else None)(
        get(custom, KUBEFLOW, namespace, "pytorchjobs", "big")), "the big job Suspended")
    assert job["spec"]["runPolicy"]["suspend"] is True
    assert condition(job, "Suspended")["reason"] == "PyTorchJobSuspended"
    assert not live_pods(core, namespace, f"{JOB_NAME}=big")
    events = core.list_namespaced_event(namespace, field_selector="involvedObject.name=big").items
    assert any(e.reason == "CreatedWorkload" for e in events), [(e.reason, e.message) for e in events]
