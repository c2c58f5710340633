"""What the training operator does with ``spec.runPolicy.suspend``, as a step a test calls (``reconcile``).

Follows kubeflow/training-operator v1.9.0, pkg/controller.v1/common/job.go, ``ReconcileJobs``:

- a finished job (Succeeded or Failed condition) is left alone here;
- ``trainutil.IsJobSuspended(runPolicy)``: ``CleanUpResources`` deletes every pod of the job and the
  service of the same name (``DeletePodsAndServices``: cleanPodPolicy is ignored while the job is not
  finished), every replica status gets ``active: 0``; if the job is running, its ``Running`` condition
  becomes False with reason ``<Kind>Suspended``; a ``Suspended`` condition (True, ``<Kind>Suspended``,
  "<Kind> <name> is suspended.") is added unless one is already True;
- otherwise, if the job has a True ``Suspended`` condition: it becomes False (``<Kind>Resumed``,
  "<Kind> <name> is resumed."), ``startTime`` is reset to now, and the pods are created again
  (``ReconcilePods``; here by ``TrainingOperatorSim.create_pods``).

Conditions are set as pkg/util/status.go's ``setCondition`` does: one condition per type (the old one is
replaced; its lastTransitionTime kept when the status does not change), nothing changes once Failed.
mpi-operator v0.8.0 (pkg/controller/mpi_job_controller.go) does the same for a v2beta1 MPIJob.

A separate module so that it can be folded into ``simulators.py`` later without a conflict.
"""

from __future__ import annotations

import time

from simulators import KINDS, TrainingOperatorSim, now_rfc3339

JOB_NAME_LABEL = "training.kubeflow.org/job-name"


def _conditions_by_type(status: dict) -> dict[str, dict]:
    return {c["type"]: c for c in status.get("conditions") or []}


def set_condition(status: dict, ctype: str, value: str, reason: str, message: str) -> None:
    """training-operator's setCondition (pkg/util/status.go), on a status dict."""
    conditions = status.get("conditions") or []
    if any(c["type"] == "Failed" and c["status"] == "True" for c in conditions):
        return
    current = _conditions_by_type(status).get(ctype)
    if current and current["status"] == value and current.get("reason") == reason:
        return
    stamp = now_rfc3339()
    new = {"type": ctype, "status": value, "reason": reason, "message": message, "lastUpdateTime": stamp,
           "lastTransitionTime": current["lastTransitionTime"] if current and current["status"] == value else stamp}
    status["conditions"] = [c for c in conditions if c["type"] != ctype] + [new]


class SuspendSim:
    """The suspend/resume branch of the operator's reconcile loop, for one job per call."""

    def __init__(self, api_client):
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.operator = TrainingOperatorSim(api_client)

    def reconcile(self, kind: str, namespace: str, name: str, version: str = "v1") -> str:
        """One reconcile; returns what it did: "finished", "suspended", "resumed" or "nothing"."""
        plural, _ = KINDS[kind]
        job = self.operator.get_job(kind, namespace, name, version)
        status = job.get("status") or {}
        conds = _conditions_by_type(status)
        if any(conds.get(t, {}).get("status") == "True" for t in ("Succeeded", "Failed")):
            return "finished"
        suspended = bool(((job.get("spec") or {}).get("runPolicy") or {}).get("suspend"))
        if suspended:
            self._delete_pods_and_services(namespace, name)
            for rstatus in (status.get("replicaStatuses") or {}).values():
                rstatus["active"] = 0
            msg = f"{kind} {name} is suspended."
            if conds.get("Running", {}).get("status") == "True":
                set_condition(status, "Running", "False", f"{kind}Suspended", msg)
            if conds.get("Suspended", {}).get("status") != "True":
                set_condition(status, "Suspended", "True", f"{kind}Suspended", msg)
            self._update_status(version, namespace, plural, name, status)
            return "suspended"
        if conds.get("Suspended", {}).get("status") == "True":
            set_condition(status, "Suspended", "False", f"{kind}Resumed", f"{kind} {name} is resumed.")
            status["startTime"] = now_rfc3339()
            self._update_status(version, namespace, plural, name, status)
            self.operator.create_pods(kind, namespace, name, version)
            return "resumed"
        return "nothing"

    def _update_status(self, version: str, namespace: str, plural: str, name: str, status: dict) -> None:
        # a merge patch replaces the conditions list as a whole, as the operator's status update does
        self.custom.patch_namespaced_custom_object_status(
            "kubeflow.org", version, namespace, plural, name,
            {"status": {"conditions": status.get("conditions") or [],
                        "replicaStatuses": status.get("replicaStatuses") or {},
                        **({"startTime": status["startTime"]} if status.get("startTime") else {})}},
        )

    def _delete_pods_and_services(self, namespace: str, name: str) -> None:
        from kubernetes.client.rest import ApiException

        pods = self.core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME_LABEL}={name}").items
        for pod in pods:
            for delete in (self.core.delete_namespaced_pod, self.core.delete_namespaced_service):
                try:
                    delete(pod.metadata.name, namespace)
                except ApiException as exc:
                    if exc.status != 404:
                        raise

    def wait_pods_gone(self, namespace: str, name: str, timeout: float = 20.0) -> None:
        """Until the job's pods are gone (the kubelet stand-in confirms the deletion of bound pods)."""
        deadline = time.monotonic() + timeout
        while self.core.list_namespaced_pod(namespace, label_selector=f"{JOB_NAME_LABEL}={name}").items:
            if time.monotonic() > deadline:
                raise TimeoutError(f"pods of {name} still there after {timeout}s")
            time.sleep(0.1)
