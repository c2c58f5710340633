"""Rendering views as tables (tabulate), JSON or YAML. Pure: returns text."""

from __future__ import annotations

import json
from typing import Any

from .views import JobView, NodeView, fmt_cpu, fmt_mem


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


def gpu_alloc(v: JobView) -> str:
    return "N/A" if v.allocated_gpus is None else str(v.allocated_gpus)


def jobs_table(views: list[JobView], *, all_namespaces: bool, wide: bool) -> str:
    headers = ["NAME", "STATUS", "TRAINER", "DURATION", "GPU(Requested)", "GPU(Allocated)", "NODE"]
    runtimes = wide and any(v.runtime for v in views)  # a TrainJob's runtime, when the list has one
    if wide:
        headers += ["CPU(Requested)", "MEMORY(Requested)", "REVISION", "CHART"]
    if runtimes:
        headers += ["RUNTIME"]
    if all_namespaces:
        headers = ["NAMESPACE", *headers]
    rows = []
    for v in views:
        row = [v.name, v.status, v.trainer.upper(), v.duration, str(v.requested_gpus), gpu_alloc(v), v.node]
        if wide:
            chart = f"{v.release.get('chart', '')}-{v.release.get('chartVersion', '')}" if v.release else "N/A"
            row += [fmt_cpu(v.requested_cpu), fmt_mem(v.requested_memory), str(v.release.get("revision", "N/A")),
                    chart]
        if runtimes:
            row += [v.runtime or "N/A"]
        if all_namespaces:
            row = [v.namespace, *row]
        rows.append(row)
    return table(headers, rows)


def job_detail(v: JobView, *, pending: str, events: list[dict]) -> str:
    rel = v.release
    lines = [
        f"Name:        {v.name}",
        f"Status:      {v.status}",
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
    ]
    if pending:
        lines.append(f"Pending:     {pending}")
    if v.tensorboard:
        lines.append(f"TensorBoard: {v.tensorboard}")
    lines.append("")
    rows = [[i.name, i.status, i.age, str(i.is_chief).lower(), str(i.gpus), i.node] for i in v.instances]
    lines.append(table(["INSTANCE", "STATUS", "AGE", "IS_CHIEF", "GPU(Requested)", "NODE"], rows)
                 if rows else "Instances:   none yet (the operator has not created the pods)")
    if events:
        lines += ["", table(["LAST SEEN", "TYPE", "OBJECT", "REASON", "MESSAGE"], [
            [e.get("lastTimestamp") or e.get("eventTime") or "", e.get("type", ""),
             f"{(e.get('involvedObject') or {}).get('kind', '').lower()}/{(e.get('involvedObject') or {}).get('name', '')}",
             e.get("reason", ""), " ".join(str(e.get("message", "")).split())]
            for e in events])]
    return "\n".join(lines)


def gpu_alloc_text(v: JobView) -> str:
    return "N/A allocated (finished)" if v.allocated_gpus is None else f"{v.allocated_gpus} allocated"


def top_jobs_table(views: list[JobView], *, all_namespaces: bool) -> str:
    headers = ["NAME", "STATUS", "TRAINER", "GPU(Requested)", "GPU(Allocated)", "CPU(Requested)",
               "MEMORY(Requested)", "NODE"]
    if all_namespaces:
        headers = ["NAMESPACE", *headers]
    rows = []
    for v in sorted(views, key=lambda v: (-v.requested_gpus, v.name)):
        row = [v.name, v.status, v.trainer.upper(), str(v.requested_gpus), gpu_alloc(v), fmt_cpu(v.requested_cpu),
               fmt_mem(v.requested_memory), v.node]
        rows.append([v.namespace, *row] if all_namespaces else row)
    running = [v for v in views if v.status in ("RUNNING", "PENDING")]
    alloc = sum(v.allocated_gpus or 0 for v in running)
    req = sum(v.requested_gpus for v in running)
    return table(headers, rows) + f"\n\nTotal Allocated/Requested GPUs of Training Jobs: {alloc}/{req}"


def top_job_instances(v: JobView) -> str:
    rows = [[i.name, i.status, i.replica_type or "N/A", str(i.is_chief).lower(), str(i.gpus), i.node, i.node_ip]
            for i in v.instances]
    return table(["INSTANCE", "STATUS", "TYPE", "IS_CHIEF", "GPU(Requested)", "NODE", "NODE_IP"], rows)


def top_nodes_table(nodes: list[NodeView], *, details: bool) -> str:
    unhealthy = any(n.unhealthy_gpus for n in nodes)
    headers = ["NAME", "IPADDRESS", "ROLE", "STATUS", "GPU(Total)", "GPU(Allocated)"]
    if unhealthy:
        headers.append("UNHEALTHY")
    headers += ["CPU(Requested/Allocatable)", "MEMORY(Requested/Allocatable)"]
    rows = []
    for n in nodes:
        row = [n.name, n.ip, n.role, n.status, str(n.gpu_total), str(n.gpu_allocated)]
        if unhealthy:
            row.append(str(n.unhealthy_gpus))
        row += [f"{fmt_cpu(n.cpu_requested)}/{fmt_cpu(n.cpu_allocatable)}",
                f"{fmt_mem(n.mem_requested)}/{fmt_mem(n.mem_allocatable)}"]
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
    total = sum(n.gpu_total for n in nodes)
    alloc = sum(n.gpu_allocated for n in nodes)
    pct = (100.0 * alloc / total) if total else 0.0
    out += f"\n\nAllocated/Total GPUs In Cluster: {alloc}/{total} ({pct:.1f}%)"
    if unhealthy:
        out += f"\nUnhealthy/Total GPUs In Cluster: {sum(n.unhealthy_gpus for n in nodes)}/{total}"
    return out
