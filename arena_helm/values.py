"""From a validated spec to the chart's values (what its ``values.schema.json`` accepts). Pure.

The user's own ``-f/--values``, ``--set``, ``--set-string`` and ``--set-file`` are not applied here: they go
to helm after these generated values, so helm's own merge and type rules apply (see ``helm.ValueSources``).
"""

from __future__ import annotations

from typing import Any

from .spec import JobSpec, MPIJobSpec, PyTorchJobSpec, Replica, TFJobSpec


def _resources(r: Replica) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", r.cpu), ("memory", r.memory)) if v}
    limits = {k: v for k, v in (("cpu", r.cpu_limit), ("memory", r.memory_limit)) if v}
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def replica_values(r: Replica, spec: JobSpec) -> dict[str, Any]:
    v: dict[str, Any] = {"replicas": r.replicas, "gpus": r.gpus}
    if r.image:
        v["image"] = r.image
    if spec.device and r.devices:
        v["devices"] = dict(spec.device)
    res = _resources(r)
    if res:
        v["resources"] = res
    if r.selector:
        v["nodeSelector"] = dict(r.selector)
    if r.port:
        v["port"] = r.port
    return v


def build_values(spec: JobSpec) -> dict[str, Any]:
    """The chart values for ``spec``: only what the spec sets; the chart's defaults do the rest."""
    values: dict[str, Any] = {}
    if spec.image:
        values["image"] = spec.image
    values["imagePullPolicy"] = spec.image_pull_policy.value
    if spec.image_pull_secret:
        values["imagePullSecrets"] = list(spec.image_pull_secret)
    values["command"] = spec.command
    values["shell"] = spec.shell
    if spec.working_dir:
        values["workingDir"] = spec.working_dir
    elif spec.sync_source:
        values["workingDir"] = "/root"  # Arena's working dir: synced code is at code/<repo name>
    if spec.env:
        values["env"] = [{"name": e.name, "value": e.value} for e in spec.env]
    if spec.share_memory:
        values["shmSize"] = spec.share_memory
    if spec.data:
        values["data"] = [
            {"claimName": d.claim_name, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data
        ]
    if spec.data_dir:
        values["hostPaths"] = [
            {"path": d.path, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data_dir
        ]
    if spec.sync_source:
        sync: dict[str, Any] = {"enabled": True, "repo": spec.sync_source}
        if spec.sync_branch:
            sync["ref"] = spec.sync_branch
        if spec.sync_image:
            sync["image"] = spec.sync_image
        if spec.sync_secret:
            sync["secretName"] = spec.sync_secret
        # Arena's layout: the working dir (default /root) holds code/<repo name>.
        sync["root"] = f"{(spec.working_dir or '/root').rstrip('/')}/code"
        values["codeSync"] = sync
    if spec.selector:
        values["nodeSelector"] = dict(spec.selector)
    if spec.toleration:
        values["tolerations"] = [t.to_values() for t in spec.toleration]
    if spec.priority:
        values["priorityClassName"] = spec.priority
    if spec.scheduler:
        values["schedulerName"] = spec.scheduler
    if spec.service_account:
        values["serviceAccountName"] = spec.service_account
    if spec.label:
        values["labels"] = dict(spec.label)
    if spec.annotation:
        values["annotations"] = dict(spec.annotation)
    if spec.queue:
        values["queue"] = spec.queue
    run_policy: dict[str, Any] = {"cleanPodPolicy": spec.clean_task_policy.value}
    if spec.retry is not None:
        run_policy["backoffLimit"] = spec.retry
    if spec.ttl_after_finished is not None:
        run_policy["ttlSecondsAfterFinished"] = spec.ttl_after_finished
    if spec.running_timeout is not None:
        run_policy["activeDeadlineSeconds"] = spec.running_timeout
    values["runPolicy"] = run_policy
    if spec.tensorboard:
        values["tensorboard"] = tensorboard_values(spec)
    values.update(_kind_values(spec))
    return values


def tensorboard_values(spec: JobSpec) -> dict[str, Any]:
    """TensorBoard reads the job's log dir from the ``--data`` PVC whose mount holds it (read-only)."""
    volume = spec.logdir_volume()
    assert volume is not None  # the spec checks it
    out: dict[str, Any] = {
        "enabled": True,
        "logDir": spec.logdir,
        "pvc": {"claimName": volume.claim_name, "mountPath": volume.mount_path},
    }
    if spec.tensorboard_image:
        out["image"] = spec.tensorboard_image
    return out


def _kind_values(spec: JobSpec) -> dict[str, Any]:
    reps = spec.replicas()

    def block(name: str) -> dict[str, Any]:
        return replica_values(reps[name], spec) if name in reps else {"replicas": 0}

    if isinstance(spec, TFJobSpec):
        out: dict[str, Any] = {name: block(name) for name in ("chief", "worker", "ps", "evaluator")}
        if spec.success_policy:
            out["successPolicy"] = spec.success_policy.value
        return out
    if isinstance(spec, PyTorchJobSpec):
        out = {"master": block("master"), "worker": block("worker")}
        if spec.nproc_per_node:
            out["nprocPerNode"] = spec.nproc_per_node
        return out
    if isinstance(spec, MPIJobSpec):
        # auto: the chart picks what the cluster serves at install (v2beta1 when rendered offline)
        out = {"mpiApiVersion": spec.mpi_api.value, "launcher": block("launcher"), "worker": block("worker")}
        if spec.slots_per_worker is not None:
            out["slotsPerWorker"] = spec.slots_per_worker
        return out
    raise TypeError(f"unknown spec {type(spec).__name__}")
