"""Stand-ins for the parts of a cluster the test API server lacks, acting only through the API.

- ``TrainingOperatorSim``: what the Kubeflow training operator (TFJob, PyTorchJob, MPIJob v1) and the
  mpi-operator (MPIJob v2beta1) do for a job, following their source (each method cites the file):
  the pods with the replica type/index, job-name, operator-name and job-role labels and the owner
  reference, the launcher batch Job for MPIJob v2beta1, and the conditions Created, Running,
  Restarting, Succeeded, Failed and Suspended with the operators' reasons and messages. ``reconcile``
  is one pass of the controller's sync loop.
- ``KubeletSim``: Node objects with GPU capacity (loopback addresses only), pod status for the pods
  the real kube-scheduler bound to its nodes (it never binds them itself), reaping of node-bound pods
  being deleted (grace period 0), and the kubelet's ``/containerLogs/NS/POD/CONTAINER`` endpoint over
  HTTPS on 127.0.0.1 so that the API server's real log path (API server -> kubelet) is used, follow and
  tail included.

Tests drive them step by step (no background reconciling of jobs), so every state is deterministic.
"""

from __future__ import annotations

import datetime as dt
import json
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

KINDS = {
    # kind: (plural, replica-spec key)
    "TFJob": ("tfjobs", "tfReplicaSpecs"),
    "PyTorchJob": ("pytorchjobs", "pytorchReplicaSpecs"),
    "MPIJob": ("mpijobs", "mpiReplicaSpecs"),
}
# training-operator v1.9.0 pkg/apis/kubeflow.org/v1/{tensorflow,pytorch,mpi}_types.go: *DefaultRestartPolicy
DEFAULT_RESTART = {"TFJob": "Never", "PyTorchJob": "OnFailure", "MPIJob": "Never"}
# training-operator v1.9.0 pkg/controller.v1/{tensorflow,pytorch,mpi}/*_controller.go: controllerName
CONTROLLER_NAME = {"TFJob": "tfjob-controller", "PyTorchJob": "pytorchjob-controller", "MPIJob": "mpijob-controller"}
# training-operator v1.9.0 pkg/apis/kubeflow.org/v1/common_types.go (same keys in mpi-operator v0.8.0
# pkg/apis/kubeflow/v2beta1/constants.go)
JOB_NAME = "training.kubeflow.org/job-name"
OPERATOR_NAME = "training.kubeflow.org/operator-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
JOB_ROLE = "training.kubeflow.org/job-role"
# training-operator v1.9.0 tensorflow/tfjob_controller.go UpdateJobStatus: the order replica types are visited
TF_ORDER = ("Chief", "Evaluator", "Master", "PS", "Worker")


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- conditions: training-operator v1.9.0 pkg/util/status.go --------------------------------------------
def _true(status: dict, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in status.get("conditions") or [])


def update_condition(status: dict, ctype: str, cstatus: str, reason: str, message: str) -> None:
    """``UpdateJobConditions`` -> ``setCondition``/``filterOutCondition`` (pkg/util/status.go, v1.9.0):
    nothing changes once Failed; an unchanged (status, reason) is kept; Running and Restarting replace each
    other; Succeeded or Failed turn Running to False; the new condition goes last."""
    conds = [dict(c) for c in status.get("conditions") or []]
    if _true(status, "Failed"):
        return
    current = next((c for c in conds if c.get("type") == ctype), None)
    if current and current.get("status") == cstatus and current.get("reason") == reason:
        return
    stamp = now_rfc3339()
    new = {"type": ctype, "status": cstatus, "reason": reason, "message": message, "lastUpdateTime": stamp,
           "lastTransitionTime": stamp}
    if current and current.get("status") == cstatus:
        new["lastTransitionTime"] = current.get("lastTransitionTime", stamp)
    kept = []
    for c in conds:
        if {ctype, c.get("type")} == {"Running", "Restarting"} or c.get("type") == ctype:
            continue
        if ctype in ("Failed", "Succeeded") and c.get("type") == "Running":
            c["status"] = "False"
        kept.append(c)
    status["conditions"] = [*kept, new]


def default_message(kind: str, ctype: str, namespace: str, name: str, *, mpi_v2: bool = False) -> str:
    """The operators' own wording for each condition (first replica type named for the failure ones)."""
    if mpi_v2:  # mpi-operator v0.8.0 pkg/controller/mpi_job_controller.go
        return {
            "Created": f"MPIJob {namespace}/{name} is created.",
            "Running": f"MPIJob {namespace}/{name} is running.",
            "Succeeded": f"MPIJob {namespace}/{name} successfully completed.",
            "Failed": f"MPIJob {namespace}/{name} has failed",
            "Suspended": "MPIJob suspended",
        }.get(ctype, f"MPIJob {namespace}/{name} is {ctype.lower()}.")
    if ctype == "Created":  # */..._controller.go onOwnerCreateFunc
        return f"{kind} {name} is created."
    if ctype == "Suspended":  # common/job.go ReconcileJobs
        return f"{kind} {name} is suspended."
    if ctype == "Restarting":  # common/pod.go ReconcilePods
        return f"job {name} is restarting because Worker replica(s) failed."
    if kind == "TFJob":  # tensorflow/tfjob_controller.go UpdateJobStatus
        return {"Running": f"TFJob {namespace}/{name} is running.",
                "Succeeded": f"TFJob {namespace}/{name} successfully completed.",
                "Failed": f"TFJob {namespace}/{name} has failed because 1 Worker replica(s) failed."}[ctype]
    if kind == "PyTorchJob":  # pytorch/pytorchjob_controller.go UpdateJobStatus (with a Master)
        return {"Running": f"PyTorchJob {name} is running.",
                "Succeeded": f"PyTorchJob {name} is successfully completed.",
                "Failed": f"PyTorchJob {name} is failed because 1 Master replica(s) failed."}[ctype]
    # mpi/mpijob_controller.go updateMPIJobStatus (MPIJob v1)
    return {"Running": f"MPIJob {namespace}/{name} is running.",
            "Succeeded": f"MPIJob {namespace}/{name} successfully completed.",
            "Failed": f"MPIJob {namespace}/{name} has failed"}[ctype]


def _exit_code(pod: dict) -> int | None:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated")
        if term is not None:
            return int(term.get("exitCode", 0))
    return None


class TrainingOperatorSim:
    """One reconcile pass of the real operators, run when a test asks for it.

    TFJob, PyTorchJob and MPIJob v1 follow kubeflow/training-operator v1.9.0:
    ``pkg/controller.v1/common/job.go`` (``ReconcileJobs``: Created, suspend and resume, finished jobs left
    alone), ``common/pod.go`` (``ReconcilePods``/``createNewPod``: one pod per replica index named
    ``<job>-<type>-<index>``, labels from ``GenLabels`` plus replica type and index, job-role ``master``
    from ``IsMasterRole``; a failed pod of a restartable replica is deleted and the job is Restarting),
    ``tensorflow/tfjob_controller.go`` (``IsMasterRole``: Chief or Master, else worker 0;
    ``UpdateJobStatus``), ``pytorch/pytorchjob_controller.go`` (Master is the master role;
    ``UpdateJobStatus``) and ``mpi/mpijob_controller.go`` (``<job>-launcher`` pod with job-role master,
    ``<job>-worker-<i>`` pods without an index label; ``updateMPIJobStatus``).

    MPIJob v2beta1 follows kubeflow/mpi-operator v0.8.0 ``pkg/controller/mpi_job_controller.go``: worker
    pods ``<job>-worker-<i>`` (job-role ``worker``, replica-index ``i``, no replica-type label), the
    launcher as a batch Job ``<job>-launcher`` whose pods the real job controller creates (job-role
    ``launcher``), the job's status from the launcher Job's conditions. Kubernetes 1.20 has no
    ``Job.spec.suspend`` (1.21+), so while an MPIJob v2beta1 is suspended its launcher Job is deleted,
    and created again on resume; the workers are deleted and recreated as upstream does.

    Not simulated: the headless Services, gang scheduling (PodGroups), elastic PyTorch, ActiveDeadline,
    backoff counting across syncs and TTL clean-up.
    """

    def __init__(self, api_client):
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)

    def get_job(self, kind: str, namespace: str, name: str, version: str = "v1") -> dict:
        plural, _ = KINDS[kind]
        return self.custom.get_namespaced_custom_object("kubeflow.org", version, namespace, plural, name)

    @staticmethod
    def _mpi_v2(kind: str, version: str) -> bool:
        return kind == "MPIJob" and version == "v2beta1"

    def job_pods(self, namespace: str, name: str) -> list[dict]:
        pods = self.core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME}={name}").items
        return [self.core.api_client.sanitize_for_serialization(p) for p in pods]

    # ---- pods --------------------------------------------------------------------------------------------
    def _owner(self, job: dict, kind: str) -> dict:
        return {"apiVersion": job["apiVersion"], "kind": kind, "name": job["metadata"]["name"],
                "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}

    def desired_pods(self, kind: str, job: dict, version: str = "v1") -> dict[str, tuple[str, dict]]:
        """pod name -> (replica type, pod body) as the operator would create them (no launcher Job)."""
        name = job["metadata"]["name"]
        _, key = KINDS[kind]
        specs = job["spec"].get(key) or {}
        out: dict[str, tuple[str, dict]] = {}
        for rtype, spec in specs.items():
            rlow = rtype.lower()
            if self._mpi_v2(kind, version) and rtype == "Launcher":
                continue  # a batch Job, see _ensure_launcher_job
            template = spec.get("template") or {}
            for index in range(int(spec.get("replicas", 1))):
                labels = dict((template.get("metadata") or {}).get("labels") or {})
                if self._mpi_v2(kind, version):
                    # mpi-operator v0.8.0 newWorker + defaultLabels
                    pod_name = f"{name}-worker-{index}"
                    labels.update({OPERATOR_NAME: "mpi-operator", JOB_NAME: name, JOB_ROLE: "worker",
                                   REPLICA_INDEX: str(index)})
                elif kind == "MPIJob":
                    # training-operator v1.9.0 mpi/mpijob_controller.go newLauncher/newWorker
                    pod_name = f"{name}-launcher" if rtype == "Launcher" else f"{name}-worker-{index}"
                    labels.update({OPERATOR_NAME: CONTROLLER_NAME[kind], JOB_NAME: name, REPLICA_TYPE: rlow})
                    if rtype == "Launcher":
                        labels[JOB_ROLE] = "master"
                else:
                    # training-operator v1.9.0 common/pod.go createNewPod
                    pod_name = f"{name}-{rlow}-{index}"
                    labels.update({OPERATOR_NAME: CONTROLLER_NAME[kind], JOB_NAME: name, REPLICA_TYPE: rlow,
                                   REPLICA_INDEX: str(index)})
                    if self.is_master_role(kind, specs, rtype, index):
                        labels[JOB_ROLE] = "master"
                pod_spec = json.loads(json.dumps(template.get("spec") or {}))
                policy = spec.get("restartPolicy") or DEFAULT_RESTART[kind]
                # common/pod.go -> core.SetRestartPolicy: ExitCode is the operator's, the pod gets Never
                pod_spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy
                out[pod_name] = (rtype, {
                    "metadata": {"name": pod_name, "labels": labels,
                                 "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                                 "ownerReferences": [self._owner(job, kind)]},
                    "spec": pod_spec,
                })
        return out

    @staticmethod
    def is_master_role(kind: str, specs: dict, rtype: str, index: int) -> bool:
        """``IsMasterRole`` of tensorflow/tfjob_controller.go and pytorch/pytorchjob_controller.go (v1.9.0)."""
        if kind == "TFJob":
            if "Chief" in specs or "Master" in specs:
                return rtype in ("Chief", "Master")
            return rtype == "Worker" and index == 0
        if kind == "PyTorchJob":
            if "Master" in specs:
                return rtype == "Master"
            return rtype == "Worker" and index == 0
        return rtype == "Launcher"

    def create_pods(self, kind: str, namespace: str, name: str, version: str = "v1") -> list[str]:
        """One reconcile; returns the names of the job's pods that exist afterwards (for MPIJob v2beta1
        the launcher's pod too, once the job controller has made it)."""
        self.reconcile(kind, namespace, name, version)
        names = sorted(p["metadata"]["name"] for p in self.job_pods(namespace, name))
        if self._mpi_v2(kind, version):
            launcher = self.launcher_pod(namespace, name)
            names = sorted({*names, launcher})
        return names

    def _create_pod(self, namespace: str, body: dict, job: dict, kind: str, timeout: float = 20.0) -> bool:
        """Create a pod; a refusal (e.g. the Priority admission) becomes the operator's Warning event
        ``FailedCreatePod`` "Error creating: ..." (training-operator v1.9.0 control/pod_control.go)."""
        from kubernetes.client.rest import ApiException

        deadline = time.monotonic() + timeout
        while True:
            try:
                self.core.create_namespaced_pod(namespace, body)
                return True
            except ApiException as exc:
                text = exc.body or ""
                if exc.status == 409:
                    return True
                # The ServiceAccount admission needs the namespace's default account, which the
                # controller-manager creates a moment after the namespace.
                waiting = (exc.status == 403 and "serviceaccount" in text) or "No API token found" in text
                if waiting and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                try:
                    message = json.loads(text).get("message", text)
                except ValueError:
                    message = text
                self.record_event(job, kind, "Warning", "FailedCreatePod", f"Error creating: {message}")
                return False

    def record_event(self, job: dict, kind: str, etype: str, reason: str, message: str) -> None:
        meta = job["metadata"]
        stamp = now_rfc3339()
        self.core.create_namespaced_event(meta["namespace"], {
            "metadata": {"generateName": f"{meta['name']}."},
            "involvedObject": {"apiVersion": job["apiVersion"], "kind": kind, "name": meta["name"],
                               "namespace": meta["namespace"], "uid": meta["uid"]},
            "type": etype, "reason": reason, "message": message, "count": 1,
            "firstTimestamp": stamp, "lastTimestamp": stamp,
            "source": {"component": CONTROLLER_NAME[kind] if kind != "MPIJob" else "mpi-job-controller"},
        })

    def _delete_pod(self, namespace: str, pod: str) -> None:
        from kubernetes.client.rest import ApiException

        try:
            self.core.delete_namespaced_pod(pod, namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise

    # ---- MPIJob v2beta1 launcher Job ----------------------------------------------------------------------
    def launcher_job(self, namespace: str, name: str) -> dict | None:
        from kubernetes.client.rest import ApiException

        try:
            job = self.batch.read_namespaced_job(f"{name}-launcher", namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return self.core.api_client.sanitize_for_serialization(job)

    def launcher_pod(self, namespace: str, name: str, timeout: float = 30.0) -> str:
        """The pod the real job controller made for the launcher Job (MPIJob v2beta1)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pods = self.core.list_namespaced_pod(namespace, label_selector=f"job-name={name}-launcher").items
            live = [p for p in pods if not p.metadata.deletion_timestamp]
            if live:
                return live[0].metadata.name
            time.sleep(0.1)
        raise AssertionError(f"the job controller made no pod for the launcher Job {name}-launcher")

    def _ensure_launcher_job(self, job: dict) -> None:
        """mpi-operator v0.8.0 newLauncherJob/newLauncherPodTemplate."""
        name, ns = job["metadata"]["name"], job["metadata"]["namespace"]
        if self.launcher_job(ns, name) is not None:
            return
        spec = job["spec"]["mpiReplicaSpecs"]["Launcher"]
        template = json.loads(json.dumps(spec.get("template") or {}))
        meta = template.setdefault("metadata", {})
        meta.setdefault("labels", {}).update({OPERATOR_NAME: "mpi-operator", JOB_NAME: name, JOB_ROLE: "launcher"})
        policy = spec.get("restartPolicy") or "Never"
        template.setdefault("spec", {})["restartPolicy"] = "Never" if policy in ("ExitCode", "Always") else policy
        run = job["spec"].get("runPolicy") or {}
        body = {
            "metadata": {"name": f"{name}-launcher", "labels": {"app": name},
                         "ownerReferences": [self._owner(job, "MPIJob")]},
            "spec": {"template": template, **{k: run[src] for k, src in (
                ("backoffLimit", "backoffLimit"), ("ttlSecondsAfterFinished", "ttlSecondsAfterFinished"),
                ("activeDeadlineSeconds", "activeDeadlineSeconds")) if run.get(src) is not None}},
        }
        self.batch.create_namespaced_job(ns, body)

    # ---- reconcile ----------------------------------------------------------------------------------------
    def reconcile(self, kind: str, namespace: str, name: str, version: str = "v1") -> dict:
        """One sync of the operator's loop for this job; returns the job's new status.

        Suspend (``spec.runPolicy.suspend: true``): the pods are removed (and the v2beta1 launcher Job),
        Running turns False and Suspended True; on resume Suspended turns False (reason ``*Resumed``), the
        start time is reset and the pods are created again. Follows training-operator v1.9.0
        pkg/controller.v1/common/job.go ``ReconcileJobs`` and mpi-operator v0.8.0 ``syncHandler`` /
        ``updateMPIJobStatus``."""
        plural, key = KINDS[kind]
        mpi_v2 = self._mpi_v2(kind, version)
        job = self.get_job(kind, namespace, name, version)
        status = json.loads(json.dumps(job.get("status") or {}))
        old = json.loads(json.dumps(status))
        prefix = "MPIJob" if mpi_v2 else kind
        if not status.get("conditions"):
            update_condition(status, "Created", "True", f"{prefix}Created",
                             default_message(kind, "Created", namespace, name, mpi_v2=mpi_v2))
        finished = _true(status, "Succeeded") or _true(status, "Failed")
        suspended = bool((job["spec"].get("runPolicy") or {}).get("suspend"))
        pods = {p["metadata"]["name"]: p for p in self.job_pods(namespace, name)
                if not p["metadata"].get("deletionTimestamp")}
        if finished:
            pass
        elif suspended:
            for pod, body in pods.items():
                if mpi_v2 and (body["metadata"].get("labels") or {}).get(JOB_ROLE) == "launcher":
                    continue  # goes with its Job
                self._delete_pod(namespace, pod)
            if mpi_v2 and self.launcher_job(namespace, name) is not None:
                self.batch.delete_namespaced_job(f"{name}-launcher", namespace, propagation_policy="Background")
            for rs in (status.get("replicaStatuses") or {}).values():
                rs["active"] = 0
            if mpi_v2:
                update_condition(status, "Suspended", "True", "MPIJobSuspended", "MPIJob suspended")
                update_condition(status, "Running", "False", "MPIJobSuspended",
                                 f"MPIJob {namespace}/{name} is suspended.")
            else:
                msg = default_message(kind, "Suspended", namespace, name)
                if _true(status, "Running"):
                    update_condition(status, "Running", "False", f"{kind}Suspended", msg)
                if not _true(status, "Suspended"):
                    update_condition(status, "Suspended", "True", f"{kind}Suspended", msg)
        else:
            if any(c.get("type") == "Suspended" for c in status.get("conditions") or []) and (
                    mpi_v2 or _true(status, "Suspended")):
                if mpi_v2:
                    update_condition(status, "Suspended", "False", "MPIJobResumed", "MPIJob resumed")
                else:
                    update_condition(status, "Suspended", "False", f"{kind}Resumed", f"{kind} {name} is resumed.")
                status["startTime"] = now_rfc3339()
            self._reconcile_pods(kind, job, status, pods, version)
        if status != old:
            self.custom.patch_namespaced_custom_object_status(
                "kubeflow.org", version, namespace, plural, name, {"status": status})
        return status

    def _reconcile_pods(self, kind: str, job: dict, status: dict, pods: dict, version: str) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        mpi_v2 = self._mpi_v2(kind, version)
        _, key = KINDS[kind]
        specs = job["spec"].get(key) or {}
        desired = self.desired_pods(kind, job, version)
        counts = {rtype: {"active": 0, "succeeded": 0, "failed": 0} for rtype in specs}
        for pod_name, (rtype, body) in desired.items():
            pod = pods.get(pod_name)
            if pod is None:
                self._create_pod(ns, body, job, kind)
                continue
            phase = (pod.get("status") or {}).get("phase")
            policy = specs[rtype].get("restartPolicy") or DEFAULT_RESTART[kind]
            if phase == "Failed" and not mpi_v2 and kind != "MPIJob":
                code = _exit_code(pod)
                if policy in ("OnFailure", "Always") or (policy == "ExitCode" and code is not None and code >= 128):
                    # common/pod.go: restart = delete the pod (recreated next sync), Restarting condition
                    self._delete_pod(ns, pod_name)
                    update_condition(status, "Restarting", "True", f"{kind}Restarting",
                                     f"job {name} is restarting because {rtype} replica(s) failed.")
                elif policy == "ExitCode":
                    update_condition(status, "Failed", "True", f"{kind}Failed",
                                     f'job "{name}" is failing because "{rtype}" replica(s) failed.')
            c = counts[rtype]
            if phase == "Running":
                c["active"] += 1
            elif phase == "Succeeded":
                c["succeeded"] += 1
            elif phase == "Failed":
                c["failed"] += 1
        if mpi_v2:
            self._ensure_launcher_job(job)
        statuses = status.setdefault("replicaStatuses", {})
        for rtype, c in counts.items():
            if mpi_v2 and rtype == "Launcher":
                continue
            statuses[rtype] = c
        if kind == "TFJob":
            self._tf_status(job, status, specs, desired, pods)
        elif kind == "PyTorchJob":
            self._pytorch_status(job, status, specs)
        elif mpi_v2:
            self._mpi_v2_status(job, status, pods)
        else:
            self._mpi_v1_status(job, status, pods)

    @staticmethod
    def _done(status: dict) -> None:
        status.setdefault("completionTime", now_rfc3339())

    def _tf_status(self, job, status, specs, desired, pods) -> None:
        """tensorflow/tfjob_controller.go UpdateJobStatus (v1.9.0)."""
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        status.setdefault("startTime", now_rfc3339())
        restarting = next((c for c in status.get("conditions") or [] if c.get("type") == "Restarting"), None)
        has_chief = "Chief" in specs or "Master" in specs
        worker0 = next((p for n, (rt, _) in desired.items() if rt == "Worker" and n.endswith("-worker-0")
                        for p in [pods.get(n)] if p), None)
        worker0_done = "Worker" not in specs or bool(
            worker0 and (worker0.get("status") or {}).get("phase") == "Succeeded" and _exit_code(worker0) == 0)
        success_policy = job["spec"].get("successPolicy") or ""
        for rtype in TF_ORDER:
            if rtype not in specs:
                continue
            rs = status["replicaStatuses"][rtype]
            expected = int(specs[rtype].get("replicas", 1)) - rs["succeeded"]
            if has_chief:
                if rtype in ("Chief", "Master"):
                    if rs["active"] > 0:
                        update_condition(status, "Running", "True", "TFJobRunning", f"TFJob {ns}/{name} is running.")
                    if expected == 0:
                        self._done(status)
                        update_condition(status, "Succeeded", "True", "TFJobSucceeded",
                                         f"TFJob {ns}/{name} successfully completed.")
            elif rtype == "Worker":
                if expected == 0 or (worker0_done and success_policy != "AllWorkers"):
                    self._done(status)
                    update_condition(status, "Succeeded", "True", "TFJobSucceeded",
                                     f"TFJob {ns}/{name} successfully completed.")
                elif rs["active"] > 0:
                    update_condition(status, "Running", "True", "TFJobRunning", f"TFJob {ns}/{name} is running.")
            if rs["failed"] > 0:
                if restarting is not None:
                    update_condition(status, "Restarting", "True", restarting["reason"], restarting["message"])
                else:
                    self._done(status)
                    update_condition(status, "Failed", "True", "TFJobFailed",
                                     f"TFJob {ns}/{name} has failed because {rs['failed']} {rtype} replica(s) failed.")

    def _pytorch_status(self, job, status, specs) -> None:
        """pytorch/pytorchjob_controller.go UpdateJobStatus (v1.9.0)."""
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        status.setdefault("startTime", now_rfc3339())
        for rtype, spec in specs.items():
            rs = status["replicaStatuses"][rtype]
            replicas = int(spec.get("replicas", 1))
            expected = replicas - rs["succeeded"]
            if "Master" in specs:
                if rtype == "Master":
                    if rs["active"] > 0:
                        update_condition(status, "Running", "True", "PyTorchJobRunning", f"PyTorchJob {name} is running.")
                    if expected == 0:
                        self._done(status)
                        update_condition(status, "Succeeded", "True", "PyTorchJobSucceeded",
                                         f"PyTorchJob {name} is successfully completed.")
                        return
            elif rtype == "Worker":
                if expected == 0:
                    self._done(status)
                    update_condition(status, "Succeeded", "True", "PyTorchJobSucceeded",
                                     f"PyTorchJob {ns}/{name} successfully completed.")
                elif rs["active"] > 0:
                    update_condition(status, "Running", "True", "PyTorchJobRunning",
                                     f"PyTorchJob {ns}/{name} is running.")
            if rs["failed"] > 0 and replicas > rs["succeeded"] + rs["active"]:
                if (spec.get("restartPolicy") or DEFAULT_RESTART["PyTorchJob"]) != "Never":
                    update_condition(status, "Restarting", "True", "PyTorchJobRestarting",
                                     f"PyTorchJob {name} is restarting because {rs['failed']} {rtype} replica(s) failed.")
                else:
                    self._done(status)
                    update_condition(status, "Failed", "True", "PyTorchJobFailed",
                                     f"PyTorchJob {name} is failed because {rs['failed']} {rtype} replica(s) failed.")

    def _mpi_v1_status(self, job, status, pods) -> None:
        """mpi/mpijob_controller.go updateMPIJobStatus (training-operator v1.9.0)."""
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        launcher = pods.get(f"{name}-launcher")
        workers = [p for n, p in pods.items() if n.startswith(f"{name}-worker-")]
        phase = ((launcher or {}).get("status") or {}).get("phase")
        if phase == "Succeeded":
            self._done(status)
            update_condition(status, "Succeeded", "True", "MPIJobSucceeded", f"MPIJob {ns}/{name} successfully completed.")
        elif phase == "Failed":
            self._done(status)
            reason = (launcher.get("status") or {}).get("reason") or "MPIJobFailed"
            update_condition(status, "Failed", "True", reason, f"MPIJob {ns}/{name} has failed")
        running = sum(1 for p in workers if (p.get("status") or {}).get("phase") == "Running")
        if phase == "Running" and running == len(workers):
            status.setdefault("startTime", now_rfc3339())
            update_condition(status, "Running", "True", "MPIJobRunning", f"MPIJob {ns}/{name} is running.")

    def _mpi_v2_status(self, job, status, pods) -> None:
        """mpi-operator v0.8.0 updateMPIJobStatus / updateMPIJobFailedStatus: from the launcher Job."""
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        status.setdefault("startTime", now_rfc3339())
        launcher = self.launcher_job(ns, name)
        lpods = self.core.list_namespaced_pod(ns, label_selector=f"job-name={name}-launcher").items
        running_launchers = sum(1 for p in lpods if p.status.phase == "Running")
        lstatus = {"active": 0, "succeeded": 0, "failed": 0}
        workers = [p for n, p in pods.items() if n.startswith(f"{name}-worker-")]
        if launcher is not None:
            jstatus = launcher.get("status") or {}
            lstatus["failed"] = int(jstatus.get("failed") or 0)
            conds = {c["type"]: c for c in jstatus.get("conditions") or [] if c.get("status") == "True"}
            if "Complete" in conds:
                lstatus["succeeded"] = 1
                if jstatus.get("completionTime"):
                    status.setdefault("completionTime", jstatus["completionTime"])
                update_condition(status, "Succeeded", "True", "MPIJobSucceeded",
                                 f"MPIJob {ns}/{name} successfully completed.")
            elif "Failed" in conds:
                cond = conds["Failed"]
                reason = cond.get("reason") or "MPIJobFailed"
                msg = cond.get("message") or f"MPIJob {ns}/{name} has failed"
                if reason == "BackoffLimitExceeded":
                    failed = [p for p in lpods if p.status.phase == "Failed"]
                    if failed:
                        last = max(failed, key=lambda p: p.metadata.creation_timestamp)
                        reason += "/" + (last.status.reason or "")
                        msg += ": " + (last.status.message or "")
                self._done(status)
                update_condition(status, "Failed", "True", reason, msg)
            else:
                lstatus["active"] = running_launchers
        status["replicaStatuses"]["Launcher"] = lstatus
        running = sum(1 for p in workers if (p.get("status") or {}).get("phase") == "Running")
        if launcher is not None and running_launchers >= 1 and running == len(workers):
            update_condition(status, "Running", "True", "MPIJobRunning", f"MPIJob {ns}/{name} is running.")

    def set_condition(self, kind: str, namespace: str, name: str, ctype: str, *, version: str = "v1",
                      reason: str = "", message: str = "") -> None:
        """Set one condition by hand, for a state a test needs without pods (e.g. a job that ended an hour
        ago); the reason and message default to the operator's own (see ``default_message``). The other
        conditions change as the operator's ``setCondition`` changes them."""
        plural, _ = KINDS[kind]
        job = self.get_job(kind, namespace, name, version)
        status = json.loads(json.dumps(job.get("status") or {}))
        mpi_v2 = self._mpi_v2(kind, version)
        prefix = "MPIJob" if mpi_v2 else kind
        if not status.get("conditions") and ctype != "Created":
            update_condition(status, "Created", "True", f"{prefix}Created",
                             default_message(kind, "Created", namespace, name, mpi_v2=mpi_v2))
        update_condition(status, ctype, "True", reason or f"{prefix}{ctype}",
                         message or default_message(kind, ctype, namespace, name, mpi_v2=mpi_v2))
        stamp = now_rfc3339()
        if ctype == "Running":
            status.setdefault("startTime", stamp)
        if ctype in ("Succeeded", "Failed"):
            status.setdefault("completionTime", stamp)
        status.setdefault("replicaStatuses", {})
        self.custom.patch_namespaced_custom_object_status(
            "kubeflow.org", version, namespace, plural, name, {"status": status})


class _LogStore:
    def __init__(self):
        self.lines: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        self.closed: set[tuple[str, str, str]] = set()
        self.cond = threading.Condition()

    def write(self, key, text: str) -> None:
        with self.cond:
            for line in text.splitlines():
                self.lines.setdefault(key, []).append((dt.datetime.now(dt.UTC).isoformat(), line))
            self.cond.notify_all()

    def close(self, key) -> None:
        with self.cond:
            self.closed.add(key)
            self.cond.notify_all()


class KubeletSim:
    """Nodes, pod status of the pods the real scheduler bound to them, reaping, and the kubelet's
    container-log endpoint. It never binds a pod: ``wait_scheduled``/``run_pod`` wait for the scheduler."""

    def __init__(self, api_client, ca):
        from kubernetes import client

        self.api_client = api_client
        self.core = client.CoreV1Api(api_client)
        self.logs = _LogStore()
        self.requests: list[str] = []
        self.execs: list = []  # kubelet_exec.ExecRecord of every exec served
        self.nodes: set[str] = set()
        self._stop = threading.Event()
        self._tmp = tempfile.TemporaryDirectory(prefix="kubelet-sim-")
        cert = ca.issue_cert("127.0.0.1", "localhost")
        pem = Path(self._tmp.name) / "kubelet.pem"
        cert.private_key_and_cert_chain_pem.write_to_path(str(pem))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(pem))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self._threads = [
            threading.Thread(target=self.server.serve_forever, daemon=True),
            threading.Thread(target=self._reaper, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def close(self) -> None:
        self._stop.set()
        with self.logs.cond:
            self.logs.closed.update(self.logs.lines.keys())
            self.logs.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()
        self._tmp.cleanup()

    # ---- nodes -----------------------------------------------------------------------------------
    def add_node(self, name: str, *, pool: str | None = None, gpus: int = 0, allocatable_gpus: int | None = None,
                 cpu: str = "32", memory: str = "128Gi", labels: dict | None = None, ready: bool = True,
                 extra_resources: dict | None = None, taints: list[dict] | None = None) -> None:
        """A Node with ``nvidia.com/gpu`` in capacity and allocatable. ``pool`` (a test's namespace) labels it
        ``arena-helm.test/pool=<pool>``: the pods of that namespace may go only there (PodNodeSelector)."""
        from kubecluster import POOL_LABEL

        labels = dict(labels or {})
        if pool:
            labels[POOL_LABEL] = pool
        capacity = {"cpu": cpu, "memory": memory, "pods": "110"}
        allocatable = dict(capacity)
        if gpus:
            capacity["nvidia.com/gpu"] = str(gpus)
            allocatable["nvidia.com/gpu"] = str(gpus if allocatable_gpus is None else allocatable_gpus)
        for key, value in (extra_resources or {}).items():
            capacity[key] = allocatable[key] = str(value)
        self.core.create_node({"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints or []}})
        status = {
            "capacity": capacity,
            "allocatable": allocatable,
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "message": "kubelet simulator",
                    "lastHeartbeatTime": now_rfc3339(),
                    "lastTransitionTime": now_rfc3339(),
                }
            ],
            "nodeInfo": {
                "machineID": name, "systemUUID": name, "bootID": name, "kernelVersion": "sim",
                "osImage": "sim", "containerRuntimeVersion": "sim://1", "kubeletVersion": "v1.20.2",
                "kubeProxyVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64",
            },
        }
        self.core.patch_node_status(name, {"status": status})
        if ready:
            # The TaintNodesByCondition admission gave the new node node.kubernetes.io/not-ready:NoSchedule;
            # the node lifecycle controller (not run here: it would evict pods of nodes without heartbeats)
            # lifts it once the node reports Ready.
            self.core.patch_node(name, {"spec": {"taints": taints or None}})
        self.nodes.add(name)

    def set_allocatable_gpus(self, name: str, gpus: int) -> None:
        """Change the node's GPUs (capacity and allocatable), as a device plugin re-registering would."""
        node = self.core.read_node(name)
        cap, alloc = dict(node.status.capacity), dict(node.status.allocatable)
        cap["nvidia.com/gpu"] = alloc["nvidia.com/gpu"] = str(gpus)
        self.core.patch_node_status(name, {"status": {"capacity": cap, "allocatable": alloc}})

    def remove_node(self, name: str) -> None:
        from kubernetes.client.rest import ApiException

        try:
            self.core.delete_node(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
        self.nodes.discard(name)

    # ---- pods ------------------------------------------------------------------------------------
    def wait_scheduled(self, namespace: str, pod: str, timeout: float = 30.0) -> str:
        """Until the real scheduler has bound the pod; returns its node."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            obj = self.core.read_namespaced_pod(pod, namespace)
            if obj.spec.node_name:
                return obj.spec.node_name
            last = "; ".join(f"{c.type}={c.status} {c.reason or ''} {c.message or ''}"
                             for c in obj.status.conditions or [])
            time.sleep(0.1)
        raise AssertionError(f"the scheduler did not bind pod {namespace}/{pod} in {timeout}s ({last})")

    def wait_unschedulable(self, namespace: str, pod: str, timeout: float = 30.0) -> str:
        """Until the real scheduler has marked the pod Unschedulable; returns its message."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            obj = self.core.read_namespaced_pod(pod, namespace)
            for c in obj.status.conditions or []:
                if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
                    return c.message
            if obj.spec.node_name:
                raise AssertionError(f"pod {namespace}/{pod} was bound to {obj.spec.node_name}")
            time.sleep(0.1)
        raise AssertionError(f"the scheduler did not mark pod {namespace}/{pod} unschedulable in {timeout}s")

    def set_pod_state(self, namespace: str, pod: str, phase: str, *, reason: str = "", message: str = "",
                      exit_code: int | None = None, waiting_reason: str = "") -> None:
        """Patch the pod's status as a kubelet would: phase, conditions and container statuses. Only for a
        pod the scheduler bound to one of this stand-in's nodes (a kubelet runs only its own pods)."""
        obj = self.core.read_namespaced_pod(pod, namespace)
        if obj.spec.node_name not in self.nodes:
            raise AssertionError(f"pod {namespace}/{pod} is not bound to a node of the kubelet stand-in "
                                 f"(node: {obj.spec.node_name!r})")
        stamp = now_rfc3339()
        containers = [c.name for c in obj.spec.containers]
        inits = [c.name for c in obj.spec.init_containers or []]
        ready = phase == "Running"

        def state(name: str, init: bool) -> dict:
            if waiting_reason:
                return {"waiting": {"reason": waiting_reason, "message": message}}
            if init and phase in ("Running", "Succeeded", "Failed"):
                return {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": stamp,
                                       "finishedAt": stamp}}
            if phase == "Running":
                return {"running": {"startedAt": stamp}}
            if phase in ("Succeeded", "Failed"):
                code = exit_code if exit_code is not None else (0 if phase == "Succeeded" else 1)
                return {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                       "startedAt": stamp, "finishedAt": stamp}}
            return {"waiting": {"reason": "ContainerCreating"}}

        def statuses(names, init):
            return [
                {"name": n, "image": "sim", "imageID": "", "ready": ready and not init, "restartCount": 0,
                 "state": state(n, init)}
                for n in names
            ]

        status = {
            "phase": phase,
            "hostIP": "127.0.0.1",
            "podIP": "127.0.0.1",
            "startTime": stamp,
            "conditions": [  # PodScheduled is the scheduler's
                {"type": "Initialized", "status": "True" if phase != "Pending" or not inits else "False",
                 "lastTransitionTime": stamp},
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": stamp},
            ],
            "containerStatuses": statuses(containers, False),
        }
        if inits:
            status["initContainerStatuses"] = statuses(inits, True)
        if reason:
            status["reason"] = reason
        if message:
            status["message"] = message
        self.core.patch_namespaced_pod_status(pod, namespace, {"status": status})

    def run_pod(self, namespace: str, pod: str, node: str | None = None, timeout: float = 30.0) -> str:
        """Wait for the scheduler to bind the pod (to ``node`` if given, else anywhere), then run it."""
        bound = self.wait_scheduled(namespace, pod, timeout)
        if node is not None and bound != node:
            raise AssertionError(f"the scheduler bound {namespace}/{pod} to {bound}, not {node}")
        self.set_pod_state(namespace, pod, "Running")
        return bound

    # ---- logs ------------------------------------------------------------------------------------
    def write_log(self, namespace: str, pod: str, container: str, text: str) -> None:
        self.logs.write((namespace, pod, container), text)

    def close_log(self, namespace: str, pod: str, container: str) -> None:
        self.logs.close((namespace, pod, container))

    def _handler(self):
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                url = urlparse(self.path)
                parts = url.path.strip("/").split("/")
                if parts[0] == "exec":  # the API server proxies pods/exec here (tests/support/kubelet_exec.py)
                    from kubelet_exec import serve_exec

                    sim.requests.append(self.path)
                    serve_exec(self, sim.execs)
                    return
                if len(parts) != 4 or parts[0] != "containerLogs":
                    sim.requests.append(self.path)
                    self.send_error(404)
                    return
                key = tuple(parts[1:])
                q = {k: v[-1] for k, v in parse_qs(url.query).items()}
                with sim.logs.cond:
                    if key not in sim.logs.lines and key not in sim.logs.closed:
                        sim.logs.lines.setdefault(key, [])
                    lines = list(sim.logs.lines.get(key, []))
                    sent = len(lines)
                    sim.requests.append(self.path)  # recorded once the lines it answers with are fixed
                lines = self._filter(lines, q)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for stamp, line in lines:
                        self._chunk(self._fmt(stamp, line, q))
                    if q.get("follow") == "true":
                        while not sim._stop.is_set():
                            with sim.logs.cond:
                                while (len(sim.logs.lines.get(key, [])) == sent and key not in sim.logs.closed
                                       and not sim._stop.is_set()):
                                    sim.logs.cond.wait(0.5)
                                new = sim.logs.lines.get(key, [])[sent:]
                                sent += len(new)
                                done = key in sim.logs.closed
                            for stamp, line in new:
                                self._chunk(self._fmt(stamp, line, q))
                            if done:
                                break
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                    pass
                self.close_connection = True

            @staticmethod
            def _filter(lines, q):
                if "sinceTime" in q:
                    since = dt.datetime.fromisoformat(q["sinceTime"].replace("Z", "+00:00"))
                    lines = [entry for entry in lines if dt.datetime.fromisoformat(entry[0]) >= since]
                if "sinceSeconds" in q:
                    since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=int(q["sinceSeconds"]))
                    lines = [entry for entry in lines if dt.datetime.fromisoformat(entry[0]) >= since]
                if "tailLines" in q:
                    n = int(q["tailLines"])
                    lines = lines[-n:] if n > 0 else []
                return lines

            @staticmethod
            def _fmt(stamp, line, q) -> bytes:
                if q.get("timestamps") == "true":
                    iso = dt.datetime.fromisoformat(stamp).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
                    return f"{iso} {line}\n".encode()
                return f"{line}\n".encode()

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler

    # ---- reaping ---------------------------------------------------------------------------------
    def _reaper(self) -> None:
        """Delete with grace 0 the node-bound pods that are being deleted (what a kubelet confirms)."""
        from kubernetes.client.rest import ApiException

        while not self._stop.wait(0.3):
            try:
                pods = self.core.list_pod_for_all_namespaces(_request_timeout=5)
            except Exception:  # noqa: BLE001 - API server may be stopped by a fault test
                continue
            for pod in pods.items:
                if pod.metadata.deletion_timestamp and pod.spec.node_name in self.nodes:
                    try:
                        self.core.delete_namespaced_pod(
                            pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0,
                            _request_timeout=5,
                        )
                    except ApiException:
                        pass
                    except Exception:  # noqa: BLE001
                        pass


def request_json(api_client, path: str) -> dict:
    resp = api_client.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False,
                               _return_http_data_only=True)
    return json.loads(resp.data)
