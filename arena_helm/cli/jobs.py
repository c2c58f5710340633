"""``list``, ``get``, ``logs``, ``delete``, ``prune`` and ``top``: the job's life after submit."""

from __future__ import annotations

import enum
import sys
from typing import Annotated

import typer

from ..kinds import names_hint
from . import new_app
from .common import Context, Debug, Globals, HelmBinary, Kubeconfig, Namespace, OutputFormat

AllNamespaces = Annotated[bool, typer.Option("--all-namespaces", "-A", help="Jobs of every namespace.")]
TypeO = Annotated[str | None, typer.Option("--type", "-T", help=f"Job kind: {names_hint()}.", show_default=False)]


class DetailFormat(str, enum.Enum):
    table = "table"
    json = "json"
    yaml = "yaml"


def _complete_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of job names: the releases of our charts in the namespace."""
    try:
        from ..config import load_defaults, resolve_namespace
        from ..helm import Helm, KubeTarget
        from ..views import chart_kind

        p = ctx.params
        ns = resolve_namespace(p.get("namespace"), p.get("kubeconfig"), p.get("context"), load_defaults())
        helm = Helm(p.get("helm_binary"), KubeTarget(p.get("kubeconfig"), p.get("context")))
        return [r["name"] for r in helm.list(ns) if chart_kind(r) and r["name"].startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []


JobName = Annotated[str, typer.Argument(help="Job name.", metavar="NAME", autocompletion=_complete_names,
                                        show_default=False)]


def cluster_for(g: Globals):
    """(namespace, Cluster) for a command: resolved namespace, helm and API adapters."""
    from ..config import load_defaults, resolve_namespace
    from ..helm import Helm, KubeTarget
    from ..kube import KubeReader
    from ..reader import Cluster

    ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, load_defaults())
    helm = Helm(g.helm_binary, KubeTarget(g.kubeconfig, g.context))
    return ns, Cluster(helm, KubeReader(g.kubeconfig, g.context))


def emit(data, fmt: str) -> None:
    from ..output import as_json, as_yaml

    typer.echo(as_json(data) if fmt == "json" else as_yaml(data))


def list_cmd(
    all_namespaces: AllNamespaces = False,
    type_: TypeO = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="table, wide, json or yaml.")] =
    OutputFormat.table,
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """List the training jobs (newest first)."""
    from ..output import jobs_table
    from ..reader import kind_of_type, list_jobs

    kind = kind_of_type(type_)
    ns, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    views = list_jobs(c, ns, all_namespaces, kind)
    if output in (OutputFormat.json, OutputFormat.yaml):
        emit([v.to_json() for v in views], output.value)
        return
    typer.echo(jobs_table(views, all_namespaces=all_namespaces, wide=output is OutputFormat.wide))


def get_cmd(
    name: JobName,
    type_: TypeO = None,
    events: Annotated[bool, typer.Option("--events", "-e", help="Show the events of the job and its pods.")] = False,
    output: Annotated[DetailFormat, typer.Option("--output", "-o", help="table, json or yaml.")] = DetailFormat.table,
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """Show one job: status, instances, TensorBoard, and why it is pending."""
    from ..output import job_detail
    from ..reader import get_job, kind_of_type

    ns, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    d = get_job(c, ns, name, kind_of_type(type_), events)
    if output is not DetailFormat.table:
        data = d.view.to_json()
        data["pendingReason"] = d.pending
        if events:
            data["events"] = [{"type": e.get("type"), "reason": e.get("reason"), "message": e.get("message"),
                               "object": (e.get("involvedObject") or {}).get("name"),
                               "lastTimestamp": e.get("lastTimestamp")} for e in d.events]
        emit(data, output.value)
        return
    typer.echo(job_detail(d.view, pending=d.pending, events=d.events))


def logs_cmd(
    name: JobName,
    instance: Annotated[str | None, typer.Option("--instance", "-i", help="Pod to read (default: the chief, "
                                                 "master or launcher).", show_default=False)] = None,
    container: Annotated[str | None, typer.Option("--container", "-c", help="Container of the pod.",
                                                  show_default=False)] = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Stream new lines as they come.")] = False,
    tail: Annotated[int | None, typer.Option("--tail", "-t", help="Only the last N lines.", show_default=False)] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only lines newer than this (5s, 2m, 3h).",
                                              show_default=False)] = None,
    since_time: Annotated[str | None, typer.Option("--since-time", help="Only lines after this RFC3339 time.",
                                                   show_default=False)] = None,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="Prefix each line with its time.")] = False,
    type_: TypeO = None,
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """Print a job's log: the chief/master/launcher pod by default."""
    import datetime as dt

    from ..errors import NotFoundError, UsageError
    from ..k8s import parse_duration
    from ..reader import find_job, kind_of_type
    from ..views import chief_first, instance_of, pod_job_selector

    if tail is not None and tail < 0:
        raise UsageError(f"--tail {tail}: give a number of lines, 0 or more")
    if since and since_time:
        raise UsageError("--since and --since-time: give only one of them")
    since_seconds = None
    if since:
        try:
            since_seconds = parse_duration(since)
        except ValueError as exc:
            raise UsageError(f"--since: {exc}") from None
    if since_time:
        try:
            dt.datetime.fromisoformat(since_time.replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"--since-time {since_time!r} is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)") from None
    ns, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    job_kind, *_ = find_job(c, ns, name, kind_of_type(type_))
    pods = c.kube.list_pods(ns, selector=pod_job_selector(job_kind, name))
    if instance:
        pod = next((p for p in pods if p["metadata"]["name"] == instance), None)
        if pod is None:
            names = ", ".join(sorted(p["metadata"]["name"] for p in pods)) or "none yet"
            raise NotFoundError(f"job {name} has no instance {instance} (its pods: {names})")
    else:
        now = dt.datetime.now(dt.UTC)
        ranked = chief_first([instance_of(p, now) for p in pods], pods)
        if not ranked:
            raise NotFoundError(f"job {name} has no pods yet (see arena-helm get {name} -n {ns})")
        pod = next(p for p in pods if p["metadata"]["name"] == ranked[0].name)
    pod_name = pod["metadata"]["name"]
    containers = [x["name"] for x in pod["spec"].get("containers", [])]
    inits = [x["name"] for x in pod["spec"].get("initContainers", []) or []]
    if container and container not in containers + inits:
        raise UsageError(f"--container {container}: pod {pod_name} has {', '.join(inits + containers)}")
    if not container:
        container = containers[0]
        initializing = (pod.get("status") or {}).get("phase") == "Pending" and inits and any(
            not (s.get("state") or {}).get("terminated")
            for s in (pod.get("status") or {}).get("initContainerStatuses") or [{}])
        if initializing and (pod.get("spec") or {}).get("nodeName"):
            container = inits[0]
            typer.echo(f"note: pod {pod_name} is still initialising; showing its init container {container}",
                       err=True)
    out = sys.stdout.buffer
    for chunk in c.kube.stream_log(ns, pod_name, container=container, follow=follow, tail=tail,
                                   since_seconds=since_seconds, since_time=since_time, timestamps=timestamps):
        out.write(chunk)
        out.flush()


def delete_cmd(
    names: Annotated[list[str], typer.Argument(help="Job names.", autocompletion=_complete_names,
                                               show_default=False)],
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """Delete jobs: helm uninstall of each job's release (the job, its TensorBoard and all it made)."""
    from ..errors import ArenaHelmError
    from ..reader import delete_job

    ns, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    code = 0
    for name in names:
        try:
            kind = delete_job(c, ns, name)
        except ArenaHelmError as exc:
            typer.echo(f"error: {exc}", err=True)
            code = max(code, exc.exit_code)
            continue
        typer.echo(f"{kind.lower()}/{name} deleted (release {name} uninstalled from namespace {ns})")
    if code:
        raise typer.Exit(code)


def prune_cmd(
    since: Annotated[str, typer.Option("--since", "-s", help="Remove jobs that finished longer ago than this "
                                       "(e.g. 24h, 7d as 168h).", show_default=False)],
    all_namespaces: AllNamespaces = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """Uninstall the releases of jobs that finished (succeeded or failed) before --since ago."""
    import datetime as dt

    from ..errors import UsageError
    from ..k8s import parse_duration
    from ..reader import finished_before, list_jobs

    try:
        age = parse_duration(since)
    except ValueError as exc:
        raise UsageError(f"--since: {exc}") from None
    ns, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age)
    doomed = finished_before(list_jobs(c, ns, all_namespaces), cutoff)
    if not doomed:
        typer.echo(f"nothing to prune: no job finished more than {since} ago")
        return
    for v in doomed:
        typer.echo(f"{v.namespace}/{v.name}  {v.status}  ended {v.ended}")
    if not yes and not typer.confirm(f"Delete these {len(doomed)} jobs?", default=False):
        typer.echo("nothing deleted")
        raise typer.Exit(1)
    for v in doomed:
        c.helm.uninstall(v.name, v.namespace)
        typer.echo(f"{v.trainer}/{v.name} deleted")


# ---- top -------------------------------------------------------------------------------------------
top_app = new_app(help="GPU (and CPU/memory) use of jobs and nodes.")


@top_app.command("job")
def top_job(
    name: Annotated[str | None, typer.Argument(help="One job: a row per instance.", autocompletion=_complete_names,
                                               show_default=False)] = None,
    all_namespaces: AllNamespaces = False,
    type_: TypeO = None,
    output: Annotated[DetailFormat, typer.Option("--output", "-o", help="table, json or yaml.")] = DetailFormat.table,
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """Jobs by GPUs requested, with the cluster's allocated/requested total."""
    from ..output import top_job_instances, top_jobs_table
    from ..reader import get_job, kind_of_type, list_jobs

    ns, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    if name:
        d = get_job(c, ns, name, kind_of_type(type_))
        if output is not DetailFormat.table:
            emit(d.view.to_json(), output.value)
        else:
            typer.echo(top_job_instances(d.view))
        return
    views = list_jobs(c, ns, all_namespaces, kind_of_type(type_))
    if output is not DetailFormat.table:
        emit([v.to_json() for v in views], output.value)
        return
    typer.echo(top_jobs_table(views, all_namespaces=all_namespaces))


@top_app.command("node")
def top_node(
    names: Annotated[list[str] | None, typer.Argument(help="Only these nodes.", show_default=False)] = None,
    details: Annotated[bool, typer.Option("--details", "-d", help="List each node's GPU pods.")] = False,
    output: Annotated[DetailFormat, typer.Option("--output", "-o", help="table, json or yaml.")] = DetailFormat.table,
    namespace: Namespace = None, kubeconfig: Kubeconfig = None, context: Context = None,
    helm_binary: HelmBinary = None, debug: Debug = False,
) -> None:
    """Nodes with their GPUs (total, allocated, unhealthy), CPU and memory."""
    from ..errors import ForbiddenError
    from ..output import top_nodes_table
    from ..reader import top_nodes

    _, c = cluster_for(Globals(namespace, kubeconfig, context, helm_binary, debug))
    try:
        nodes = top_nodes(c, names)
    except ForbiddenError as exc:
        raise ForbiddenError(f"top node needs permission to list nodes and pods cluster-wide ({exc})") from None
    if output is not DetailFormat.table:
        emit({"nodes": [n.to_json() for n in nodes],
              "totalGPUs": sum(n.gpu_total for n in nodes),
              "allocatedGPUs": sum(n.gpu_allocated for n in nodes)}, output.value)
        return
    typer.echo(top_nodes_table(nodes, details=details))
