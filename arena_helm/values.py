"""From a validated spec to the chart's values (what its ``values.schema.json`` accepts). Pure.

The user's own ``-f/--values``, ``--set``, ``--set-string`` and ``--set-file`` are not applied here: they go
to helm after these generated values, so helm's own merge and type rules apply (see ``helm.ValueSources``).
"""

from __future__ import annotations

import enum
from typing import Any

from .kinds import BY_KEY
from .spec import JobSpec, MPIJobSpec, PyTorchJobSpec, Replica, TFJobSpec, TrainJobSpec, flag_info


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


def set_path(values: dict[str, Any], path: str, value: Any) -> None:
    """``set_path(v, "runPolicy.backoffLimit", 3)``: the nested maps are made as needed."""
    *parents, last = path.split(".")
    node = values
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def declared_values(spec: JobSpec) -> dict[str, Any]:
    """The fields that set one chart value as they are (``opt(..., values="path")`` on the field): every
    one that is set (a switch when on, a list or map when not empty)."""
    values: dict[str, Any] = {}
    for name, field in type(spec).model_fields.items():
        path = (flag_info(field) or {}).get("values")
        value = getattr(spec, name)
        if not path or value is None or value is False or (isinstance(value, list | dict) and not value):
            continue
        if isinstance(value, enum.Enum):
            value = value.value
        set_path(values, path, list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict)
                 else value)
    return values


def build_values(spec: JobSpec) -> dict[str, Any]:
    """The chart values for ``spec``: only what the spec sets; the chart's defaults do the rest."""
    values = declared_values(spec)
    values["command"] = spec.command
    if spec.working_dir:
        values["workingDir"] = spec.working_dir
    elif spec.sync_source:
        values["workingDir"] = "/root"  # Arena's working dir: synced code is at code/<repo name>
    if spec.env:
        values["env"] = [{"name": e.name, "value": e.value} for e in spec.env]
    if spec.data:
        values["data"] = [
            {"claimName": d.claim_name, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data
        ]
    if spec.data_dir:
        values["hostPaths"] = [
            {"path": d.path, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data_dir
        ]
    if spec.sync_source:
        # Arena's layout: the working dir (default /root) holds code/<repo name>.
        values["codeSync"] = {"enabled": True, "repo": spec.sync_source, **values.get("codeSync", {}),
                              "root": f"{(spec.working_dir or '/root').rstrip('/')}/code"}
    if spec.toleration:
        values["tolerations"] = [t.to_values() for t in spec.toleration]
    if spec.tensorboard:
        values["tensorboard"] = tensorboard_values(spec)
        values.update(logdir_mount_values(spec, values.get("hostPaths", [])))
    values.update(_kind_values(spec))
    return values


def tensorboard_values(spec: JobSpec) -> dict[str, Any]:
    """The job's TensorBoard, as in Arena. ``--logdir`` under a ``--data`` mount: TensorBoard reads that PVC
    (read-only). Another absolute ``--logdir`` (Arena's local logging): TensorBoard mounts the node directory
    the training containers write to (``spec.logdir_host_path()``, read-only) and must run on the node of the
    pod that writes the logs (a required podAffinity). A URL: TensorBoard reads it itself."""
    out: dict[str, Any] = {"enabled": True, "logDir": spec.logdir,
                           "service": {"type": spec.tensorboard_service_type.value}}
    volume = spec.logdir_volume()
    host = spec.logdir_host_path()
    if volume is not None:
        out["pvc"] = {"claimName": volume.claim_name, "mountPath": volume.mount_path}
    elif host is not None:
        out["hostPath"] = {"enabled": True, "path": host.path, "mountPath": host.mount_path}
        out["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": log_writer_selector(spec)},
             "topologyKey": "kubernetes.io/hostname"}]}}
    if spec.tensorboard_image:
        out["image"] = spec.tensorboard_image
    return out


def logdir_mount_values(spec: JobSpec, host_paths: list[dict[str, Any]]) -> dict[str, Any]:
    """Local logging: the job's own log directory of the node, mounted at ``--logdir`` in every training
    container (appended to ``hostPaths``); nothing when a ``--data-dir`` (or a PVC) already holds it."""
    host = spec.logdir_host_path()
    if host is None or host in spec.data_dir:
        return {}
    return {"hostPaths": [*host_paths, {"path": host.path, "mountPath": host.mount_path, "readOnly": False}]}


def log_writer_selector(spec: JobSpec) -> list[dict[str, Any]]:
    """The pod that writes the logs (Arena: TF chief, else worker 0; PyTorch master 0; MPI worker 0), as the
    matchExpressions of the operators' pod labels (``arena_helm.kinds``).

    MPI: mpi-operator (v2beta1) labels a worker with its job-role and replica-index, the training operator's
    MPIJob v1 labels workers with their replica-type and no index; and with ``--mpi-api auto`` the API is
    only known at install. So the MPI selector is the job's pods that are not a launcher (job-role launcher,
    or master in v1) and have no other index than 0: worker 0 under v2beta1, a worker under v1."""
    info = BY_KEY[spec.kind]
    job = {"key": info.pod_job_label, "operator": "In", "values": [spec.name]}
    if isinstance(spec, MPIJobSpec):
        out = [job, {"key": "training.kubeflow.org/job-role", "operator": "NotIn", "values": ["launcher", "master"]}]
        if spec.workers > 1:
            out.append({"key": info.pod_index_label, "operator": "NotIn",
                        "values": [str(i) for i in range(1, spec.workers)]})
        return out
    reps = spec.replicas()
    role = next((r for r in ("chief", "master", "worker") if r in reps), next(iter(reps)))
    return [job, {"key": info.pod_role_label, "operator": "In", "values": [role]},
            {"key": info.pod_index_label, "operator": "In", "values": ["0"]}]


def _kind_values(spec: JobSpec) -> dict[str, Any]:
    reps = spec.replicas()

    def block(name: str) -> dict[str, Any]:
        return replica_values(reps[name], spec) if name in reps else {"replicas": 0}

    if isinstance(spec, TFJobSpec):
        return {name: block(name) for name in ("chief", "worker", "ps", "evaluator")}
    if isinstance(spec, PyTorchJobSpec):
        return {"master": block("master"), "worker": block("worker")}
    if isinstance(spec, TrainJobSpec):
        # per node: the trainer's numNodes x resourcesPerNode (charts/trainjob)
        node = reps["node"]
        out: dict[str, Any] = {"numNodes": node.replicas, "gpus": node.gpus}
        if spec.device:
            out["devices"] = dict(spec.device)
        res = _resources(node)
        if res:
            out["resources"] = res
        return out
    if isinstance(spec, MPIJobSpec):
        # mpiApiVersion auto: the chart picks what the cluster serves at install (v2beta1 rendered offline)
        return {"launcher": block("launcher"), "worker": block("worker")}
    raise TypeError(f"unknown spec {type(spec).__name__}")
