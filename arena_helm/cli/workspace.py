"""``arena-helm workspace start|list|get|stop|delete``: interactive workspaces (arena_helm.workspace.workspaces)."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from ..core.enums import ViewOutput
from .common import (
    Application,
    AttachCommand,
    AttachTty,
    PrometheusService,
    PrometheusUrl,
    cluster_for,
    metrics_options,
    offer_dry_run,
    port_forward_argv,
    wait_seconds,
    with_globals,
)
from .groups import FastCommand, new_app
from .specflags import spec_command

app = new_app(help="Interactive workspaces: a JupyterLab, code-server or shell with GPUs that stops itself when "
                   "idle; its home PVC stays.")

Name = Annotated[str, typer.Argument(help="Name of the workspace (also its release name).", show_default=False)]
START_OPTIONS: list[tuple[str, Any, Any]] = [
    ("dry_run", Annotated[bool, typer.Option("--dry-run", help="Print the manifests only (no cluster, no "
                                             "kubeconfig).")], False),
    ("wait", Annotated[bool, typer.Option("--wait", help="Wait until it runs: exit 0 running, 1 if it stopped or "
                                          "failed first, 3 after --timeout.")], False),
    ("timeout", Annotated[str | None, typer.Option("--timeout", help="With --wait: how long to wait. [default: "
                                                   "10m]", show_default=False)], None),
]


def _start_command():
    """``workspace start NAME [flags]``: the flags are WorkspaceSpec's fields (as submit's are a job spec's)."""
    from ..workspace.workspaces import WorkspaceSpec

    def start(lead: dict[str, Any], fields: dict[str, Any], run: dict[str, Any], g: Application) -> None:
        _start(g, lead["name"], fields, run)

    return spec_command(WorkspaceSpec, start, name="start", leading=[("name", Name, inspect.Parameter.empty)],
                        run_options=START_OPTIONS,
                        doc="Start a workspace (or start a stopped one again, with its own values): JupyterLab, "
                            "code-server or a shell, with its home PVC; it stops itself after --idle-stop without "
                            "activity.")


def _start(g: Application, name: str, fields: dict[str, Any], run: dict[str, Any]) -> None:
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..workspace.workspaces import WorkspaceSpec, render_workspace, running_workspace, start_in, workspace_values

    seconds = wait_seconds(run["wait"], run["timeout"], run["dry_run"], default="10m", nothing="starts nothing")
    ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, load_defaults())
    spec = WorkspaceSpec(name=name, namespace=ns, **fields)
    values = workspace_values(spec)
    if run["dry_run"]:
        typer.echo(render_workspace(g.helm_binary, ns, name, values), nl=False)
        return
    with offer_dry_run():
        ns, c = cluster_for(g)
        done = start_in(c, ns, spec, values, given=set(fields))
    typer.echo(f"workspace/{name} {done} in namespace {ns}")
    if run["wait"]:
        view = running_workspace(c, ns, name, seconds, notify=lambda m: typer.echo(m, err=True))
        typer.echo(f"workspace/{name} is RUNNING (pod {view.pod})")
        return
    typer.echo(f"Follow it: arena-helm workspace get {name} -n {ns}")


app.command("start", cls=FastCommand)(_start_command())


def _rows(views, all_namespaces: bool, idle_for: dict) -> tuple[list[str], list[list[str]]]:
    from ..adapters.metrics import IDLE_FOR_RANGE
    from ..workspace.workspaces import age

    headers = ["NAME", "TYPE", "STATUS", "GPUS", "IDLE-FOR", "IDLE-STOP", "HOME", "AGE"]
    rows = []
    for v in views:
        idle = "never" if not v.idle_stop else _duration(v.idle_stop)
        since = idle_for.get((v.namespace, v.name), "-")
        if isinstance(since, float):  # how long its GPUs have been under --idle-below
            since = _duration(min(since, IDLE_FOR_RANGE)) + ("+" if since >= IDLE_FOR_RANGE else "")
        row = [v.name, v.type, v.status, str(v.gpus), since, idle, v.home, age(v.created)]
        rows.append([v.namespace, *row] if all_namespaces else row)
    return (["NAMESPACE", *headers] if all_namespaces else headers), rows


def _idle_for(c, ns: str, views, all_namespaces: bool, below: float, options) -> dict:
    """(namespace, workspace) -> seconds its GPUs have been idle, "N/A" where Prometheus cannot say, for the
    RUNNING workspaces with GPUs (one Prometheus query; none, and no search for Prometheus, without them)."""
    from .common import Notes, collector_for

    held = [v for v in views if v.status == "RUNNING" and v.gpus and v.pod]
    if not held:
        return {}
    m = collector_for(c, ns, options).collect(gpus=False, usage=False, idle_for_below=below,
                                                   namespace=None if all_namespaces else ns)
    Notes().show(m)
    out: dict = {}
    for v in held:
        since = m.pod_idle_for(v.namespace, v.pod)
        out[(v.namespace, v.name)] = "N/A" if since is None else float(since)
    return out


def _duration(seconds: int) -> str:
    from ..views.jobs import short_duration

    return short_duration(seconds)


@app.command("list", cls=FastCommand)
@with_globals
def list_(
    g: Application,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
    idle_below: Annotated[str, typer.Option(
        "--idle-below", metavar="PERCENT", help="IDLE-FOR: how long a running workspace's GPUs have been under "
        "this utilisation (from Prometheus).")] = "5%",
    prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
) -> None:
    """List workspaces: type, status (RUNNING, PENDING, QUEUED, STOPPED, FAILED), GPUs, how long they have been
    idle, idle stop, home, age."""
    from ..adapters.metrics import parse_idle_below
    from ..views.output import as_json, as_yaml, table
    from ..workspace.workspaces import list_workspaces

    below = parse_idle_below(idle_below)
    opts = metrics_options(prometheus_url, prometheus_service)
    ns, c = cluster_for(g)
    views = list_workspaces(c, ns, all_namespaces)
    idle_for = _idle_for(c, ns, views, all_namespaces, below, opts)
    if output.value in ("json", "yaml"):
        doc = []
        for v in views:
            since = idle_for.get((v.namespace, v.name))
            doc.append({**v.to_json(), "idleForSeconds": int(since) if isinstance(since, float) else None})
        typer.echo(as_json(doc) if output.value == "json" else as_yaml(doc), nl=output.value == "json")
        return
    if not views:
        typer.echo(f"No workspaces found{'' if all_namespaces else f' in namespace {ns}'}.", err=True)
        return
    headers, rows = _rows(views, all_namespaces, idle_for)
    typer.echo(table(headers, rows))


@app.command("get", cls=FastCommand)
@with_globals
def get(g: Application, name: Name,
        output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
        ) -> None:
    """Show one workspace: its status and why, its pod, its home."""
    from ..views.output import as_json, as_yaml
    from ..workspace.workspaces import get_workspace

    ns, c = cluster_for(g)
    v = get_workspace(c, ns, name)
    if output.value in ("json", "yaml"):
        typer.echo(as_json(v.to_json()) if output.value == "json" else as_yaml(v.to_json()),
                   nl=output.value == "json")
        return
    lines = [("Name", v.name), ("Namespace", v.namespace), ("Type", v.type), ("Status", v.status),
             ("Reason", v.reason or "-"), ("Run", str(v.run)), ("Pod", v.pod or "-"), ("GPUs", str(v.gpus)),
             ("Idle stop", "never" if not v.idle_stop else _duration(v.idle_stop)), ("Home", v.home)]
    for key, value in lines:
        typer.echo(f"{key + ':':<11}{value}")


@app.command("stop", cls=FastCommand)
@with_globals
def stop(g: Application, name: Name) -> None:
    """Stop a workspace: its Job ends (a helm upgrade); its home and release stay for workspace start."""
    from ..workspace.workspaces import stop_workspace

    ns, c = cluster_for(g)
    stop_workspace(c, ns, name)
    typer.echo(f"workspace/{name} stopped (its home stays; arena-helm workspace start {name} starts it again)")


@app.command("delete", cls=FastCommand)
@with_globals
def delete(
    g: Application,
    name: Name,
    keep_home: Annotated[bool, typer.Option("--keep-home", help="Keep the home PVC (<name>-home).")] = False,
) -> None:
    """Delete a workspace: its release, its token Secret and (unless --keep-home) its home PVC."""
    from ..workspace.workspaces import delete_workspace

    ns, c = cluster_for(g)
    home = delete_workspace(c, ns, name, keep_home=keep_home)
    typer.echo(f"workspace/{name} deleted" + (f" (home {home} kept)" if keep_home else ""))


@app.command("open", cls=FastCommand)
@with_globals
def open_(
    g: Application,
    name: Name,
    port: Annotated[int | None, typer.Option("--port", help="Local port (default: the server's).",
                                             show_default=False)] = None,
    timeout: Annotated[str, typer.Option("--timeout", help="How long to wait for the workspace to run (e.g. 90s, "
                                         "5m).")] = "2m",
    browser: Annotated[bool, typer.Option("--browser", help="Open the URL in a browser too.")] = False,
) -> None:
    """Forward a local port to a workspace's server (kubectl port-forward, once it runs) and print its URL with
    its token (Jupyter) or its password (code-server). Ctrl-C stops."""
    import subprocess

    from ..core.errors import ArenaHelmError, UsageError
    from ..core.grammars import parse_duration
    from ..workspace.workspaces import running_workspace, token_secret_name, workspace_url

    try:
        wait_seconds = parse_duration(timeout)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None
    if port is not None and not 1 <= port <= 65535:
        raise UsageError(f"--port {port}: give a port from 1 to 65535")
    ns, c = cluster_for(g)
    view = running_workspace(c, ns, name, wait_seconds, notify=lambda m: typer.echo(m, err=True))
    if view.type == "shell":
        raise UsageError(f"workspace {name} is a shell: it has no server to open (arena-helm workspace attach {name})")
    svc = next((s for s in c.kube.list_services(ns, f"app.kubernetes.io/instance={name},app.kubernetes.io/name="
                                                    "workspace")), None)
    if svc is None:
        raise ArenaHelmError(f"workspace {name} has no Service (kubectl get services -n {ns} -l "
                             f"app.kubernetes.io/instance={name})")
    svc_port = int((svc["spec"].get("ports") or [{}])[0].get("port", 0))
    local = port or svc_port
    token = c.kube.get_secret_key(ns, token_secret_name(name), "token")
    argv = port_forward_argv(g, ns, svc["metadata"]["name"], local, svc_port)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # "Forwarding from 127.0.0.1:LOCAL -> PORT" once it listens
        if not first:
            raise typer.Exit(proc.wait() or 1)
        url = workspace_url(view.type, local, token)
        typer.echo(url)
        if view.type == "code-server" and token:
            typer.echo(f"Password: {token}")
        typer.echo(f"Forwarding localhost:{local} to workspace {name} (Ctrl-C stops)", err=True)
        if browser:
            import webbrowser

            webbrowser.open(url)
        for _ in proc.stdout:  # kubectl's "Handling connection" lines
            pass
        raise typer.Exit(proc.wait())
    finally:
        if proc.poll() is None:
            proc.terminate()


@app.command("attach", cls=FastCommand)
@with_globals
def attach(
    g: Application,
    name: Name,
    command: AttachCommand = None,
    tty: AttachTty = None,
) -> None:
    """Open a shell (or run one command after --) in a running workspace; exits with the command's exit code.
    A shell workspace counts the session as activity."""
    import sys

    from ..adapters.kube import open_exec
    from ..core.errors import ArenaHelmError
    from ..releases.attach import run_attached
    from ..workspace.workspaces import get_workspace

    ns, c = cluster_for(g)
    view = get_workspace(c, ns, name)
    if view.status != "RUNNING":
        raise ArenaHelmError(f"workspace {name} is {view.status} ({view.reason}): "
                             + (f"arena-helm workspace start {name} -n {ns} first" if view.status in
                                ("STOPPED", "FAILED") else "wait until it runs (arena-helm workspace get)"))
    argv = list(command or []) or ["sh"]
    if tty is None:
        tty = not command and sys.stdin.isatty() and sys.stdout.isatty()
    code = run_attached(open_exec(c.kube, ns, view.pod, "workspace", argv, tty), view.pod, tty=tty)
    if code:
        raise typer.Exit(code)
