"""``list``, ``get``, ``logs``, ``delete``, ``prune`` and ``top``: the job's life after submit."""

from __future__ import annotations

import enum
import sys
from typing import Annotated

import typer

from ..core.enums import ViewOutput
from .common import (
    AllNamespaces,
    Application,
    JobName,
    Notes,
    OutputFormat,
    PrometheusService,
    PrometheusUrl,
    TypeO,
    cluster_for,
    collector_for,
    complete_job_names,
    emit,
    metrics_options,
    with_globals,
)
from .groups import FastCommand, new_app


class GetFormat(str, enum.Enum):
    table = "table"
    wide = "wide"
    name = "name"
    json = "json"
    yaml = "yaml"


Refresh = Annotated[float | None, typer.Option(
    "--refresh", "-r", metavar="SECONDS", show_default=False,
    help="Redraw every SECONDS until Ctrl-C (in place on a terminal, repeated blocks otherwise).")]

IdleBelow = Annotated[str, typer.Option(
    "--idle-below", metavar="PERCENT",
    help="An allocated GPU whose utilisation averaged under this over --idle-for is idle (5%, 0.5).")]
IdleFor = Annotated[str, typer.Option(
    "--idle-for", metavar="DURATION", help="The window of the idle average (a duration: 30m, 2h).")]

def check_refresh(refresh: float | None) -> None:
    from ..core.errors import UsageError

    if refresh is not None and not refresh > 0:
        raise UsageError(f"-r/--refresh {refresh:g}: give a number of seconds above 0, e.g. -r 2")


def show_view(render, refresh: float | None) -> None:
    """Print ``render()`` once, or every ``refresh`` seconds until Ctrl-C (then exit 0, no traceback).

    On a terminal each round clears the screen and redraws in place (ANSI home + clear); otherwise the
    rounds are printed one after the other, each followed by Arena's dashed line with the time.
    """
    if refresh is None:
        typer.echo(render())
        return
    import datetime as dt
    import time

    out = sys.stdout
    tty = out.isatty()
    try:
        while True:
            text = render()
            if tty:
                out.write("\x1b[H\x1b[2J" + text + "\n")
            else:
                stamp = dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
                out.write(f"{text}\n{'-' * 43} {stamp} {'-' * 52}\n")
            out.flush()
            time.sleep(refresh)
    except KeyboardInterrupt:
        out.write("\n")
        out.flush()


@with_globals
def list_cmd(
    g: Application,
    all_namespaces: AllNamespaces = False,
    type_: TypeO = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="table, wide, name, json or yaml.")] =
    OutputFormat.table,
    idle: Annotated[bool, typer.Option("--idle", help="Only the jobs holding GPUs that have averaged under "
                                       "--idle-below (5%) for --idle-for (30m) or longer (from Prometheus).")] = False,
    idle_below: Annotated[str | None, typer.Option(
        "--idle-below", metavar="PERCENT", show_default=False, help="With --idle: the threshold (default 5%).")] = None,
    idle_for: Annotated[str | None, typer.Option(
        "--idle-for", metavar="DURATION", show_default=False, help="With --idle: the window (default 30m).")] = None,
    prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
) -> None:
    """List the training jobs (newest first); --idle: only those holding idle GPUs."""
    from ..core.errors import ArenaHelmError, UsageError
    from ..releases.reader import check_listed_namespace, kind_of_type, list_jobs
    from ..views.output import job_document, job_name, jobs_table

    kind = kind_of_type(type_)
    spec = None
    if idle:
        from ..adapters.metrics import idle_spec

        spec = idle_spec(idle_below or "5%", idle_for or "30m")
    elif idle_below is not None or idle_for is not None:
        raise UsageError(f"{'--idle-below' if idle_below is not None else '--idle-for'}: only with --idle")
    opts = metrics_options(prometheus_url, prometheus_service)
    ns, c = cluster_for(g)
    coll = collector_for(c, ns, opts) if spec else None
    views = list_jobs(c, ns, all_namespaces, kind)
    if not views and not all_namespaces:
        check_listed_namespace(c, ns)
    metrics = None
    if coll is not None:
        from ..views.usage import job_idle_gpus

        metrics = coll.collect(gpus=False, usage=False, idle=spec, namespace=None if all_namespaces else ns)
        if not metrics.idle_known:
            raise ArenaHelmError(f"--idle needs Prometheus: {coll.reason}")
        if kind is None:  # the workspaces and servings holding idle GPUs are listed too
            from ..serving.servings import active_serving_views
            from ..workspace.workspaces import active_workspace_views

            views += active_workspace_views(c, ns, all_namespaces) + active_serving_views(c, ns, all_namespaces)
        views = [v for v in views if job_idle_gpus(metrics, v)]
    if output in (OutputFormat.json, OutputFormat.yaml):
        docs = [v.to_json() for v in views]
        if metrics is not None:
            for v, d in zip(views, docs, strict=True):
                d["idleGPUs"] = job_idle_gpus(metrics, v)
        emit([job_document(d, output.value) for d in docs], output.value)
        return
    if output is OutputFormat.name:
        for v in views:
            typer.echo(job_name(v))
        return
    typer.echo(jobs_table(views, all_namespaces=all_namespaces, wide=output is OutputFormat.wide, metrics=metrics))


@with_globals
def get_cmd(
    g: Application,
    name: JobName,
    type_: TypeO = None,
    events: Annotated[bool, typer.Option("--events", "-e", help="Show the events of the job and its pods.")] = False,
    gpus: Annotated[bool, typer.Option("--gpus", "-g", help="GPU utilisation and memory of each instance's "
                                       "GPUs (from Prometheus).")] = False,
    output: Annotated[GetFormat, typer.Option("--output", "-o", help="table, wide, name, json or yaml.")] =
    GetFormat.table,
    tail: Annotated[int, typer.Option("--tail", "-t", help="Of a failed or restarting job: the last N lines of "
                                      "the failing container's log (0: none).")] = 10,
    prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
) -> None:
    """Show one job: status (and why), instances, TensorBoard, and why it is pending or failed; -g: its GPUs' use."""
    from ..core.errors import UsageError
    from ..releases.reader import get_job, kind_of_type
    from ..views.output import job_detail, job_document, job_gpus_detail, job_name

    if tail < 0:
        raise UsageError(f"--tail {tail}: give a number of lines, 0 or more")
    kind = kind_of_type(type_)
    opts = metrics_options(prometheus_url, prometheus_service)
    ns, c = cluster_for(g)
    coll = collector_for(c, ns, opts) if gpus else None
    d = get_job(c, ns, name, kind, events, tail=0 if output is GetFormat.name else tail)
    metrics = None
    if coll is not None:
        metrics = coll.collect(gpus=True, usage=False, namespace=ns)
        Notes().show(metrics)
    if output is GetFormat.name:
        typer.echo(job_name(d.view))
        return
    if output in (GetFormat.json, GetFormat.yaml):
        data = d.view.to_json()
        data["statusReason"] = d.view.reason
        if metrics is not None:
            from ..views.usage import add_job_json

            add_job_json(metrics, d.view, data)
        data["pendingReason"] = d.pending
        data["failure"] = None if d.view.failure is None else {**d.view.failure.to_json(), "log": d.log_tail}
        data["imageDigests"] = d.image_digests
        if events:
            data["events"] = [{"type": e.get("type"), "reason": e.get("reason"), "message": e.get("message"),
                               "object": (e.get("involvedObject") or {}).get("name"),
                               "lastTimestamp": e.get("lastTimestamp")} for e in d.events]
        emit(job_document(data, output.value), output.value)
        return
    if metrics is not None:
        typer.echo(job_gpus_detail(d.view, metrics, pending=d.pending, events=d.events))
        return
    typer.echo(job_detail(d.view, pending=d.pending, events=d.events, show_events=events,
                          wide=output is GetFormat.wide, log_tail=d.log_tail, images=d.image_digests))


@with_globals
def logs_cmd(
    g: Application,
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
    all_instances: Annotated[bool, typer.Option("--all", "-a", help="Every instance's log, the lines interleaved by "
                                                "time, each prefixed [pod/NAME/CONTAINER].")] = False,
    type_: TypeO = None,
) -> None:
    """Print a job's log: the chief/master/launcher pod by default."""
    import datetime as dt

    from ..core.errors import UsageError
    from ..core.grammars import parse_duration, parse_time
    from ..releases.reader import find_job, kind_of_type, no_pods
    from ..views.jobs import pod_job_selector
    from ..views.pods import log_container, pick_pod

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
            parse_time(since_time)
        except ValueError:
            raise UsageError(f"--since-time {since_time!r} is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)") from None
    if all_instances and instance:
        raise UsageError("--all and -i/--instance: give only one of them")
    kind = kind_of_type(type_)
    ns, c = cluster_for(g)
    job_kind, _, job, release = find_job(c, ns, name, kind)
    pods = c.kube.list_pods(ns, selector=pod_job_selector(job_kind, name))
    if not pods and not instance:
        raise no_pods(c, ns, name, job_kind, job, release)
    if all_instances:
        import os

        from ..views.logmerge import all_logs

        out = sys.stdout.buffer
        all_logs(c.kube, ns, name, pods, job_kind, container=container, follow=follow, tail=tail,
                 since_seconds=since_seconds, since_time=since_time, timestamps=timestamps, out=out,
                 note=lambda text: typer.echo(f"note: {text}", err=True),
                 colour=out.isatty() and not os.environ.get("NO_COLOR"))
        return
    pod = pick_pod(pods, name, ns, instance, dt.datetime.now(dt.UTC), job_kind)
    pod_name = pod["metadata"]["name"]
    container, initialising = log_container(pod, container)
    if initialising:
        typer.echo(f"note: pod {pod_name} is still initialising; showing its init container {container}", err=True)
    out = sys.stdout.buffer
    for chunk in c.kube.stream_log(ns, pod_name, container=container, follow=follow, tail=tail,
                                   since_seconds=since_seconds, since_time=since_time, timestamps=timestamps):
        out.write(chunk)
        out.flush()


@with_globals
def delete_cmd(
    g: Application,
    names: Annotated[list[str], typer.Argument(help="Job names.", autocompletion=complete_job_names,
                                               show_default=False)],
    job_object: Annotated[bool, typer.Option("--object", help="Delete the job object itself, for a job that has "
                                             "no helm release (made with kubectl or the Kubeflow SDK); its pods "
                                             "go with it.")] = False,
    type_: TypeO = None,
) -> None:
    """Delete jobs: helm uninstall of each job's release (the job, its TensorBoard and all it made)."""
    from ..core.errors import ArenaHelmError
    from ..releases.deletion import delete_job, delete_object
    from ..releases.reader import kind_of_type

    kind = kind_of_type(type_)
    ns, c = cluster_for(g)
    code = 0
    for name in names:
        try:
            if job_object:
                deleted = delete_object(c, ns, name, kind)
            else:
                deleted = delete_job(c, ns, name)
        except ArenaHelmError as exc:
            typer.echo(f"error: {exc}", err=True)
            code = max(code, exc.exit_code)
            continue
        if job_object:
            typer.echo(f"{deleted.lower()}/{name} deleted (the job object, from namespace {ns}; it had no helm release)")
        else:
            typer.echo(f"{deleted.lower()}/{name} deleted (release {name} uninstalled from namespace {ns})")
    if code:
        raise typer.Exit(code)


@with_globals
def prune_cmd(
    g: Application,
    since: Annotated[str, typer.Option("--since", "-s", help="Remove jobs that finished longer ago than this "
                                       "(e.g. 24h, 7d as 168h).", show_default=False)],
    all_namespaces: AllNamespaces = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list the jobs that would be removed; "
                                          "remove nothing.")] = False,
) -> None:
    """Uninstall the releases of jobs that finished (succeeded or failed) before --since ago."""
    import datetime as dt

    from ..core.errors import UsageError
    from ..core.grammars import parse_duration
    from ..core.jobkinds import BY_CHART
    from ..releases.deletion import finished_before
    from ..releases.reader import list_jobs

    try:
        age = parse_duration(since)
    except ValueError as exc:
        raise UsageError(f"--since: {exc}") from None
    ns, c = cluster_for(g)
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age)
    finished = finished_before(list_jobs(c, ns, all_namespaces), cutoff)
    doomed = [v for v in finished if v.release and v.release.get("chart") in BY_CHART]
    others = [v for v in finished if v not in doomed]
    if others:  # prune uninstalls releases of arena-helm's job charts only
        typer.echo(f"note: not pruning {len(others)} finished job(s) without an arena-helm release: "
                   f"{', '.join(f'{v.namespace}/{v.name}' for v in others[:5])}{' ...' if len(others) > 5 else ''} "
                   "(arena-helm delete NAME --object deletes a job object that has no release)", err=True)
    if not doomed:
        typer.echo(f"nothing to prune: no job finished more than {since} ago")
        return
    for v in doomed:
        typer.echo(f"{v.namespace}/{v.name}  {v.status}  ended {v.ended}")
    if dry_run:
        typer.echo(f"dry run: {len(doomed)} job(s) would be deleted; nothing deleted")
        return
    if not yes and not typer.confirm(f"Delete these {len(doomed)} jobs?", default=False):
        typer.echo("nothing deleted")
        raise typer.Exit(1)
    for v in doomed:
        c.uninstall(v.namespace, v.name)
        typer.echo(f"{v.trainer}/{v.name} deleted")


# ---- top -------------------------------------------------------------------------------------------
top_app = new_app(help="GPU (and CPU/memory) use of jobs and nodes.")


@top_app.command("job", cls=FastCommand)
@with_globals
def top_job(
    g: Application,
    name: Annotated[str | None, typer.Argument(help="One job: a row per instance and per GPU.",
                                               autocompletion=complete_job_names, show_default=False)] = None,
    all_namespaces: AllNamespaces = False,
    type_: TypeO = None,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
    refresh: Refresh = None,
    idle_below: IdleBelow = "5%", idle_for: IdleFor = "30m",
    prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
) -> None:
    """Jobs by GPUs requested, with GPU utilisation/memory, idle GPUs and CPU/memory usage where metrics exist;
    running workspaces among them (TRAINER workspace)."""
    from ..adapters.metrics import idle_spec
    from ..core.errors import NotAJobError, NotFoundError
    from ..releases.reader import get_job, kind_of_type, list_jobs
    from ..serving.servings import active_serving_views
    from ..views.output import job_document, top_job_instances, top_jobs_order, top_jobs_table
    from ..views.usage import add_job_json
    from ..workspace.workspaces import active_workspace_views

    check_refresh(refresh)
    spec = idle_spec(idle_below, idle_for)
    kind = kind_of_type(type_)
    opts = metrics_options(prometheus_url, prometheus_service)
    ns, c = cluster_for(g)
    coll = collector_for(c, ns, opts)
    notes = Notes()

    def named_view(job: str):
        """The job ``job``, else the running workspace of that name."""
        try:
            return get_job(c, ns, job, kind).view
        except (NotFoundError, NotAJobError):
            found = [v for v in active_workspace_views(c, ns, False) if v.name == job] if kind is None else []
            if not found:
                raise
            return found[0]

    def render() -> str:
        from ..views.output import as_json, as_yaml

        if name:
            view = named_view(name)
            m = coll.collect(namespace=ns, idle=spec)
            notes.show(m)
            if output is not ViewOutput.table:
                data = job_document(add_job_json(m, view, view.to_json()), output.value)
                return as_json(data) if output is ViewOutput.json else as_yaml(data)
            return top_job_instances(view, m)
        views = list_jobs(c, ns, all_namespaces, kind)
        if kind is None:  # and the workspaces that hold or wait for GPUs (TRAINER workspace), and the servings
            views += active_workspace_views(c, ns, all_namespaces) + active_serving_views(c, ns, all_namespaces)
        m = coll.collect(namespace=None if all_namespaces else ns, idle=spec)
        notes.show(m)
        if output is not ViewOutput.table:
            data = [job_document(add_job_json(m, v, v.to_json()), output.value) for v in top_jobs_order(views)]
            return as_json(data) if output is ViewOutput.json else as_yaml(data)
        return top_jobs_table(views, all_namespaces=all_namespaces, metrics=m)

    show_view(render, refresh)


@top_app.command("node", cls=FastCommand)
@with_globals
def top_node(
    g: Application,
    names: Annotated[list[str] | None, typer.Argument(help="Only these nodes.", show_default=False)] = None,
    details: Annotated[bool, typer.Option("--details", "-d", help="List each node's GPU pods and GPUs.")] = False,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
    refresh: Refresh = None,
    idle_below: IdleBelow = "5%", idle_for: IdleFor = "30m",
    prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
) -> None:
    """Nodes with their GPUs (total, allocated, idle, unhealthy, utilisation, memory), CPU and memory."""
    from ..adapters.metrics import idle_spec
    from ..releases.reader import top_nodes_and_pods
    from ..views.output import as_json, as_yaml, top_nodes_table
    from ..views.usage import add_node_json, node_holders, node_idle_gpus, node_pods

    check_refresh(refresh)
    spec = idle_spec(idle_below, idle_for)
    opts = metrics_options(prometheus_url, prometheus_service)
    ns, c = cluster_for(g)
    coll = collector_for(c, ns, opts)
    notes = Notes()

    def render() -> str:
        nodes, pods = top_nodes_and_pods(c, names)  # a 403 says which permission is missing (arena_helm.adapters.failures)
        m = coll.collect(nodes=True, idle=spec)
        m.keep_holders(node_holders(nodes))  # a GPU serves a pod bound to its node holding GPUs (not an exporter)
        notes.show(m)
        pods_on = node_pods(pods)
        if output is not ViewOutput.table:
            counts = [node_idle_gpus(m, n) for n in nodes]
            data = {"nodes": [add_node_json(m, n, pods_on.get(n.name, []), n.to_json()) for n in nodes],
                    "totalGPUs": sum(n.gpu_total for n in nodes),
                    "allocatedGPUs": sum(n.gpu_allocated for n in nodes),
                    "idleGPUs": None if not m.idle_known else sum(k or 0 for k in counts),
                    "idle": {"below": spec.below, "for": spec.window}}
            return as_json(data) if output is ViewOutput.json else as_yaml(data)
        return top_nodes_table(nodes, details=details, metrics=m, pods_on=pods_on, pods=pods)

    show_view(render, refresh)
