"""From a validated spec to the chart's values (a dict its ``values.schema.json`` accepts). Pure.

Then the user's escape hatch on top: ``-f FILE`` documents deep-merged in order, then ``--set KEY=VALUE``
(VALUE read as YAML: ``3``, ``true``, ``null``, ``[a, b]``, anything else a string). Both end up in the
values sent to helm on stdin; the chart schema validates the result.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError
from .spec import JobKind, JobSpec, MPIJobSpec, PyTorchJobSpec, Replica, TFJobSpec

# replica types that get the job's --gpus and --device resources
GPU_REPLICAS = {"chief", "worker", "evaluator", "master"}


def _resources(r: Replica) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", r.cpu), ("memory", r.memory)) if v}
    limits = {k: v for k, v in (("cpu", r.cpu_limit), ("memory", r.memory_limit)) if v}
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def replica_values(name: str, r: Replica, spec: JobSpec) -> dict[str, Any]:
    v: dict[str, Any] = {"replicas": r.replicas, "gpus": r.gpus}
    if r.image:
        v["image"] = r.image
    if spec.devices and name in GPU_REPLICAS:
        v["devices"] = dict(spec.devices)
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
    if spec.image_pull_secrets:
        values["imagePullSecrets"] = list(spec.image_pull_secrets)
    values["command"] = spec.command
    values["shell"] = spec.shell
    if spec.working_dir:
        values["workingDir"] = spec.working_dir
    elif spec.sync:
        values["workingDir"] = "/root"  # Arena's working dir: synced code is at code/<repo name>
    if spec.env:
        values["env"] = [{"name": e.name, "value": e.value} for e in spec.env]
    if spec.share_memory:
        values["shmSize"] = spec.share_memory
    if spec.data:
        values["data"] = [
            {"claimName": d.claim_name, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data
        ]
    if spec.data_dirs:
        values["hostPaths"] = [
            {"path": d.path, "mountPath": d.mount_path, "readOnly": d.read_only} for d in spec.data_dirs
        ]
    if spec.sync:
        sync: dict[str, Any] = {"enabled": True, "repo": spec.sync.repo}
        if spec.sync.ref:
            sync["ref"] = spec.sync.ref
        if spec.sync.image:
            sync["image"] = spec.sync.image
        if spec.sync.secret:
            sync["secretName"] = spec.sync.secret
        # Arena's layout: the working dir (default /root) holds code/<repo name>.
        sync["root"] = f"{(spec.working_dir or '/root').rstrip('/')}/code"
        values["codeSync"] = sync
    if spec.selector:
        values["nodeSelector"] = dict(spec.selector)
    if spec.tolerations:
        values["tolerations"] = [t.to_values() for t in spec.tolerations]
    if spec.priority_class:
        values["priorityClassName"] = spec.priority_class
    if spec.scheduler:
        values["schedulerName"] = spec.scheduler
    if spec.service_account:
        values["serviceAccountName"] = spec.service_account
    if spec.labels:
        values["labels"] = dict(spec.labels)
    if spec.annotations:
        values["annotations"] = dict(spec.annotations)
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
    if spec.tensorboard and spec.tensorboard.enabled:
        values["tensorboard"] = tensorboard_values(spec)
    values.update(_kind_values(spec))
    return values


def tensorboard_values(spec: JobSpec) -> dict[str, Any]:
    """TensorBoard reads the job's log dir from the ``--data`` PVC whose mount holds it (read-only)."""
    tb = spec.tensorboard
    assert tb is not None
    for d in sorted(spec.data, key=lambda d: len(d.mount_path), reverse=True):
        if tb.logdir == d.mount_path or tb.logdir.startswith(d.mount_path.rstrip("/") + "/"):
            out: dict[str, Any] = {
                "enabled": True,
                "logDir": tb.logdir,
                "pvc": {"claimName": d.claim_name, "mountPath": d.mount_path},
            }
            if tb.image:
                out["image"] = tb.image
            return out
    raise UsageError(
        f"--logdir {tb.logdir} is not under a --data mount: TensorBoard reads the logs from a PVC, so write "
        "them under a --data PVC:MOUNT path and point --logdir there"
    )


def _kind_values(spec: JobSpec) -> dict[str, Any]:
    reps = spec.replicas()
    if isinstance(spec, TFJobSpec):
        out: dict[str, Any] = {}
        for name in ("chief", "worker", "ps", "evaluator"):
            out[name] = replica_values(name, reps[name], spec) if name in reps else {"replicas": 0}
        if spec.success_policy:
            out["successPolicy"] = spec.success_policy
        return out
    if isinstance(spec, PyTorchJobSpec):
        out = {
            "master": replica_values("master", reps["master"], spec),
            "worker": replica_values("worker", reps["worker"], spec) if "worker" in reps else {"replicas": 0},
        }
        if spec.nproc_per_node:
            out["nprocPerNode"] = spec.nproc_per_node
        return out
    if isinstance(spec, MPIJobSpec):
        out = {
            # auto: the chart picks what the cluster serves at install (v2beta1 when rendered offline)
            "mpiApiVersion": spec.mpi_api,
            "launcher": replica_values("launcher", reps["launcher"], spec),
            "worker": replica_values("worker", reps["worker"], spec),
        }
        if spec.slots_per_worker is not None:
            out["slotsPerWorker"] = spec.slots_per_worker
        return out
    raise TypeError(f"unknown spec {type(spec).__name__}")


CHART_OF = {JobKind.tfjob: "tfjob", JobKind.pytorchjob: "pytorchjob", JobKind.mpijob: "mpijob"}


# ---- overrides ------------------------------------------------------------------------------------
def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``: maps merge key by key, anything else (lists included) is replaced."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_values_file(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-f/--values {path}: cannot read the file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"-f/--values {path}: not a UTF-8 text file") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise UsageError(f"-f/--values {path}: not valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"-f/--values {path}: must hold a YAML mapping of chart values, not a {type(data).__name__}")
    return data


_SEG = re.compile(r"^(?P<key>[^\[\]]+)(?P<idx>(\[\d+\])*)$")


def parse_set(item: str) -> tuple[list[str | int], Any]:
    """``a.b[0].c=VALUE`` -> (["a", "b", 0, "c"], parsed VALUE). ``\\.`` escapes a dot in a key."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise UsageError(f"--set {item!r}: expected KEY=VALUE (e.g. --set worker.replicas=3)")
    path: list[str | int] = []
    for seg in re.split(r"(?<!\\)\.", key):
        m = _SEG.match(seg)
        if not m:
            raise UsageError(f"--set {item!r}: {seg!r} is not a key (use a.b.c or list[0])")
        path.append(m.group("key").replace("\\.", "."))
        path.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group("idx")))
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str):
        value = raw  # keep the text exactly as typed
    return path, value


def apply_set(values: dict[str, Any], item: str) -> dict[str, Any]:
    path, value = parse_set(item)
    out = copy.deepcopy(values)
    node: Any = out
    for i, seg in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(seg, int):
            if not isinstance(node, list):
                raise UsageError(f"--set {item!r}: {path[:i]} is not a list")
            while len(node) <= seg:
                node.append(None)
            if not isinstance(node[seg], dict | list):
                node[seg] = [] if isinstance(nxt, int) else {}
            node = node[seg]
        else:
            if not isinstance(node, dict):
                raise UsageError(f"--set {item!r}: cannot set {seg!r} inside a non-map value")
            if not isinstance(node.get(seg), dict | list):
                node[seg] = [] if isinstance(nxt, int) else {}
            node = node[seg]
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list):
            raise UsageError(f"--set {item!r}: not a list")
        while len(node) <= last:
            node.append(None)
        node[last] = value
    else:
        if not isinstance(node, dict):
            raise UsageError(f"--set {item!r}: cannot set {last!r} inside a non-map value")
        node[last] = value
    return out


def apply_overrides(values: dict[str, Any], files: list[str] | tuple[str, ...] = (),
                    sets: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    out = values
    for f in files:
        out = deep_merge(out, load_values_file(f))
    for item in sets:
        out = apply_set(out, item)
    return out
