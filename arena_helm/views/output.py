"""Rendering views as tables (tabulate), JSON or YAML. Pure: returns text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.catalog import Family
from .jobs import JobView, arena_yaml_form, fmt_cpu, fmt_mem, no_instances
from .nodes import NodeView

if TYPE_CHECKING:
    from .usage import Metrics


def table(headers: list[str], rows: list[list[Any]]) -> str:
    import tabulate as tab

    if not rows:
        return "  ".join(headers)
    tab.MIN_PADDING = 0  # kubectl-like: columns apart by the separator only
    text = tab.tabulate(rows, headers=headers, tablefmt="plain", disable_numparse=True, stralign="left")
    return "\n".join(line.rstrip() for line in text.splitlines())


def as_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def as_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip("\n")


def job_document(data: dict[str, Any], fmt: str) -> dict[str, Any]:
    """A job's dict as ``-o json`` or ``-o yaml`` prints it: the YAML adds Arena's YAML spellings of the model
    keys (``views.arena_yaml_form``)."""
    return arena_yaml_form(data) if fmt == "yaml" else data


def gpu_alloc(v: JobView) -> str:
    return "N/A" if v.allocated_gpus is None else str(v.allocated_gpus)


def release_column(views: list[JobView]) -> bool:
    """A RELEASE column is shown when some job has no helm release (made with kubectl or the Kubeflow
    SDK): its cell says ``-``. With a release for every job, the tables stay as they were."""
    return any(not v.release for v in views)


def release_cell(v: JobView) -> str:
    return (v.release.get("name") or "-") if v.release else "-"


def jobs_table(views: list[JobView], *, all_namespaces: bool, wide: bool, metrics: Metrics | None = None) -> str:
    """``list``; with ``metrics`` that know the idle GPUs (``list --idle``), a GPU(Idle) column."""
    from .usage import fmt_count, job_idle_gpus

    idle = metrics is not None and metrics.idle_known
    headers = ["NAME", "STATUS", "TRAINER", "DURATION", "GPU(Requested)", "GPU(Allocated)",
               *(["GPU(Idle)"] if idle else []), "NODE"]
    runtimes = wide and any(v.runtime for v in views)  # a TrainJob's runtime, when the list has one
    if wide:
        headers += ["CPU(Requested)", "MEMORY(Requested)", "REVISION", "CHART"]
    with_release = release_column(views)
    if with_release:
        headers.append("RELEASE")
    if runtimes:
        headers += ["RUNTIME"]
    failures = wide and any(v.failure for v in views)  # why a job failed, when the list has one
    if failures:
        headers += ["FAILURE"]
    queued = any(v.status == "QUEUED" for v in views)  # Kueue's queue positions, when the list has a queued job
    if queued:
        headers += ["QUEUE", "POS(LocalQueue)", "POS(ClusterQueue)"]
    if all_namespaces:
        headers = ["NAMESPACE", *headers]
    rows = []
    for v in views:
        row = [v.name, v.status, v.trainer.upper(), v.duration, str(v.requested_gpus), gpu_alloc(v),
               *([fmt_count(job_idle_gpus(metrics, v))] if idle else []), v.node]
        if wide:
            chart = f"{v.release.get('chart', '')}-{v.release.get('chartVersion', '')}" if v.release else "N/A"
            row += [fmt_cpu(v.requested_cpu), fmt_mem(v.requested_memory), str(v.release.get("revision", "N/A")),
                    chart]
        if with_release:
            row.append(release_cell(v))
        if runtimes:
            row += [v.runtime or "N/A"]
        if failures:
            row += [v.failure.text() if v.failure else "-"]
        if queued:
            row += queue_cells(v)
        if all_namespaces:
            row = [v.namespace, *row]
        rows.append(row)
    return table(headers, rows)


def queue_cells(v: JobView) -> list[str]:
    """QUEUE and the two positions (from 1) of a QUEUED job; ``-`` for the others and for what is unknown."""
    q = v.queue
    if v.status != "QUEUED" or q is None:
        return ["-", "-", "-"]
    return [q.local_queue, *("-" if p is None else str(p) for p in (q.position_in_local_queue,
                                                                     q.position_in_cluster_queue))]


def job_name(v: JobView) -> str:
    """kubectl's ``-o name`` form: ``tfjob/NAME``."""
    return f"{v.trainer}/{v.name}"


def job_detail(v: JobView, *, pending: str, events: list[dict], show_events: bool = False,
               wide: bool = False, instances: str | None = None, log_tail: list[str] | None = None,
               images: dict[str, str] | None = None) -> str:
    rel = v.release
    failure = v.failure
    lines = [
        f"Name:        {v.name}",
        f"Status:      {v.status}",
    ]
    if v.reason:
        lines.append(f"Reason:      {v.reason}")
    if failure is not None:
        lines.append(f"Failure:     {failure.text()}")
    lines += [
        f"Namespace:   {v.namespace}",
        f"Trainer:     {v.trainer.upper()}",
        *([f"Runtime:     {v.runtime}"] if v.runtime else []),
        f"Priority:    {v.priority}",
        f"Duration:    {v.duration}",
        f"Created:     {v.created or 'N/A'}",
        f"Ended:       {v.ended or 'N/A'}",
        f"Release:     {rel.get('name', 'N/A')} revision {rel.get('revision', 'N/A')} "
        f"({rel.get('chart', '?')}-{rel.get('chartVersion', '?')}, {rel.get('status', '?')})" if rel else
        "Release:     N/A (the job has no helm release)",
        f"GPUs:        {v.requested_gpus} requested, {gpu_alloc_text(v)}",
        *([f"Workers:     {v.elastic.text()}"] if v.elastic else []),
    ]
    if v.queue is not None:
        lines.append(f"Queue:       {v.queue.text()}")
    if pending:
        lines.append(f"Pending:     {pending}")
    if v.tensorboard:
        lines.append(f"TensorBoard: {v.tensorboard}")
    for n, (image, digest) in enumerate(sorted((images or {}).items())):  # what the pods ran (get records it)
        lines.append(f"{'Images:' if n == 0 else '':<13}{image} = {digest}")
    lines.append("")
    if wide:
        lines.insert(-1, f"Requests:    cpu {fmt_cpu(v.requested_cpu)}, memory {fmt_mem(v.requested_memory)}")
        rows = [[i.name, i.status, i.age, i.replica_type or "N/A", str(i.is_chief).lower(), str(i.gpus), i.node,
                 i.node_ip] for i in v.instances]
        headers = ["INSTANCE", "STATUS", "AGE", "TYPE", "IS_CHIEF", "GPU(Requested)", "NODE", "NODE_IP"]
    else:
        rows = [[i.name, i.status, i.age, str(i.is_chief).lower(), str(i.gpus), i.node] for i in v.instances]
        headers = ["INSTANCE", "STATUS", "AGE", "IS_CHIEF", "GPU(Requested)", "NODE"]
    if instances is not None:  # a table of the caller's (get -g: a row per GPU)
        lines.append(instances)
    elif rows:
        lines.append(table(headers, rows))
    else:
        lines.append(f"Instances:   {no_instances(v)}")
    if failure is not None and log_tail is not None:
        run = "before its last restart" if failure.previous else "its last lines"
        lines += ["", f"Log of pod {failure.pod} container {failure.container} ({run}):"]
        lines += [f"  {line}" for line in log_tail] or ["  (empty)"]
    if show_events and not events:
        lines += ["", "Events:      none"]
    if events:
        lines += ["", table(["LAST SEEN", "TYPE", "OBJECT", "REASON", "MESSAGE"], [
            [e.get("lastTimestamp") or e.get("eventTime") or "", e.get("type", ""),
             f"{(e.get('involvedObject') or {}).get('kind', '').lower()}/{(e.get('involvedObject') or {}).get('name', '')}",
             e.get("reason", ""), " ".join(str(e.get("message", "")).split())]
            for e in events])]
    return "\n".join(lines)


def gpu_alloc_text(v: JobView) -> str:
    return "N/A allocated (finished)" if v.allocated_gpus is None else f"{v.allocated_gpus} allocated"


def top_jobs_table(views: list[JobView], *, all_namespaces: bool, metrics: Metrics | None = None) -> str:
    from .usage import NO_METRICS, fmt_count, job_idle_gpus, job_metric_cells, jobs_idle_summary

    m = metrics or NO_METRICS
    idle = m.idle_known  # a GPU(Idle) column and the idle summary when the view knows the idle GPUs
    headers = ["NAME", "STATUS", "TRAINER", "GPU(Requested)", "GPU(Allocated)", *(["GPU(Idle)"] if idle else []),
               "GPU(Util)",
               "GPU_MEMORY(Used/Total)", "CPU(Requested)", "CPU(Usage)", "MEMORY(Requested)", "MEMORY(Usage)",
               "NODE"]
    with_release = release_column(views)
    if with_release:
        headers.append("RELEASE")
    if all_namespaces:
        headers = ["NAMESPACE", *headers]
    rows = []
    for v in top_jobs_order(views):
        util, gmem, cpu, mem = job_metric_cells(m, v)
        row = [v.name, v.status, v.trainer.upper(), str(v.requested_gpus), gpu_alloc(v),
               *([fmt_count(job_idle_gpus(m, v))] if idle else []), util, gmem,
               fmt_cpu(v.requested_cpu), cpu, fmt_mem(v.requested_memory), mem, v.node]
        if with_release:
            row.append(release_cell(v))
        rows.append([v.namespace, *row] if all_namespaces else row)
    groups: dict[Family, list[JobView]] = {Family.TRAINING: []}  # Arena's line first, then the others present
    for v in views:
        groups.setdefault(v.family, []).append(v)
    out = table(headers, rows) + "\n"
    for group, members in groups.items():
        alloc, req = top_jobs_total(members)
        out += f"\nTotal Allocated/Requested GPUs of {group.title}: {alloc}/{req}"
    summary = jobs_idle_summary(m, views, all_namespaces=all_namespaces)
    return out + f"\n{summary}" if summary else out


def top_jobs_order(views: list[JobView]) -> list[JobView]:
    """``top job``'s order, in the table and in ``-o json|yaml``: most GPUs requested first, as Arena's
    (pkg/training/trainer.go ``makeTrainingJobOrderdByGPUCount``), then by name."""
    return sorted(views, key=lambda v: (-v.requested_gpus, v.name))


def top_jobs_total(views: list[JobView]) -> tuple[int, int]:
    """(allocated, requested) GPUs of the jobs whose status is RUNNING, as Arena's ``top job`` total line
    counts them (kubeflow/arena pkg/training/top_job.go ``displayWithNoMetric``: ``if jobInfo.Status ==
    "RUNNING"``). A job that runs with a pod still pending shows PENDING (Arena's ``GetJobRealStatus``) and
    is left out, as are PENDING, RESTARTING, SUSPENDED and finished jobs."""
    running = [v for v in views if v.status == "RUNNING"]
    return sum(v.allocated_gpus or 0 for v in running), sum(v.requested_gpus for v in running)


def top_job_instances(v: JobView, metrics: Metrics | None = None) -> str:
    """A row per instance and per GPU (the instance's cells on its first GPU row only), as Arena's
    ``top job NAME``; CPU and memory usage per instance."""
    from .usage import NO_METRICS, fmt_cpu_usage, fmt_mem_usage, instance_gpu_rows

    m = metrics or NO_METRICS

    def cells(i):
        u = m.pod_usage(v.namespace, i.name)
        return [i.name, i.status, i.replica_type or "N/A", str(i.is_chief).lower(), str(i.gpus), i.node, i.node_ip,
                fmt_cpu_usage(u), fmt_mem_usage(u)]

    rows = instance_gpu_rows(m, v, cells)
    return table(["INSTANCE", "STATUS", "TYPE", "IS_CHIEF", "GPU(Requested)", "NODE", "NODE_IP", "CPU(Usage)",
                  "MEMORY(Usage)", "GPU(DeviceIndex)", "GPU(DutyCycle)", "GPU_MEMORY(Used/Total)",
                  *(["IDLE"] if m.idle_known else [])], rows)


def job_gpus_detail(v: JobView, metrics: Metrics | None, *, pending: str, events: list[dict]) -> str:
    """``get NAME -g``: the job's header, a row per instance and per GPU, and Arena's closing line
    ``Allocated/Requested GPUs of Job: a/r``."""
    from .usage import NO_METRICS, instance_gpu_rows

    m = metrics or NO_METRICS
    rows = instance_gpu_rows(m, v, lambda i: [i.name, i.status, str(i.gpus), i.node])
    gpus = (table(["INSTANCE", "STATUS", "GPU(Requested)", "NODE", "GPU(DeviceIndex)", "GPU(DutyCycle)",
                   "GPU_MEMORY(Used/Total)"], rows)
            if rows else f"Instances:   {no_instances(v)}")
    text = job_detail(v, pending=pending, events=events, instances=gpus)
    return f"{text}\n\nAllocated/Requested GPUs of Job: {v.allocated_gpus or 0}/{v.requested_gpus}"


def top_nodes_table(nodes: list[NodeView], *, details: bool, metrics: Metrics | None = None,
                    pods_on: dict[str, list[tuple[str, str]]] | None = None, pods: list[dict] | None = None) -> str:
    from .usage import (
        NO_METRICS,
        fmt_count,
        fmt_gpu_mem,
        fmt_util,
        idle_marker,
        node_idle_gpus,
        node_metric_cells,
        nodes_idle_summary,
    )

    m = metrics or NO_METRICS
    idle = m.idle_known
    unhealthy = any(n.unhealthy_gpus for n in nodes)
    headers = ["NAME", "IPADDRESS", "ROLE", "STATUS", "GPU(Total)", "GPU(Allocated)"]
    if unhealthy:
        headers.append("UNHEALTHY")
    if idle:
        headers.append("GPU(Idle)")
    headers += ["GPU(Util)", "GPU_MEMORY(Used/Total)", "CPU(Requested/Allocatable)", "CPU(Usage)",
                "MEMORY(Requested/Allocatable)", "MEMORY(Usage)"]
    rows = []
    for n in nodes:
        util, gmem, cpu, mem = node_metric_cells(m, n, (pods_on or {}).get(n.name, []))
        row = [n.name, n.ip, n.role, n.status, str(n.gpu_total), str(n.gpu_allocated)]
        if unhealthy:
            row.append(str(n.unhealthy_gpus))
        if idle:
            row.append(fmt_count(node_idle_gpus(m, n)))
        row += [util, gmem, f"{fmt_cpu(n.cpu_requested)}/{fmt_cpu(n.cpu_allocatable)}", cpu,
                f"{fmt_mem(n.mem_requested)}/{fmt_mem(n.mem_allocatable)}", mem]
        rows.append(row)
    out = table(headers, rows)
    if details:
        for n in nodes:
            out += f"\n\n{n.name} GPU pods:"
            if n.gpu_pods:
                out += "\n" + table(["NAMESPACE", "POD", "GPU"], [[p["namespace"], p["name"], str(p["gpus"])]
                                                                  for p in n.gpu_pods])
            else:
                out += " none"
            gpus = m.node_gpus(n.name)
            if gpus is None:  # no metrics: the block is left out (the note on stderr says why)
                continue
            out += f"\n\n{n.name} GPUs:"
            if gpus:
                out += "\n" + table(["GPU(DeviceIndex)", "GPU(DutyCycle)", "GPU_MEMORY(Used/Total)", "POD",
                                     *(["IDLE"] if idle else [])], [
                    [g.device, fmt_util(g.util), fmt_gpu_mem(g.mem_used, g.mem_total),
                     f"{g.namespace}/{g.pod}" if g.pod else "<none>", *([idle_marker(g)] if idle else [])]
                    for g in gpus])
            else:
                out += " N/A (no GPU series for this node)"
    total = sum(n.gpu_total for n in nodes)
    alloc = sum(n.gpu_allocated for n in nodes)
    pct = (100.0 * alloc / total) if total else 0.0
    out += f"\n\nAllocated/Total GPUs In Cluster: {alloc}/{total} ({pct:.1f}%)"
    if unhealthy:
        out += f"\nUnhealthy/Total GPUs In Cluster: {sum(n.unhealthy_gpus for n in nodes)}/{total}"
    summary = nodes_idle_summary(m, nodes, pods or [])
    return out + f"\n{summary}" if summary else out
