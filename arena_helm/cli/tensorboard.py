"""``arena-helm tensorboard start|stop|list|open``: a standalone TensorBoard release for any existing logs."""

from __future__ import annotations

from typing import Annotated

import typer

from ..core.enums import ServiceType
from .common import Application, cluster_for, offer_dry_run, port_forward_argv, with_globals
from .groups import FastCommand, new_app

app = new_app(help="Standalone TensorBoards (a job's own TensorBoard comes with submit --tensorboard).")


@app.command("start", cls=FastCommand)
@with_globals
def start(
    g: Application,
    name: Annotated[str, typer.Argument(help="Name of the TensorBoard (also its release name).", show_default=False)],
    logdir: Annotated[str | None, typer.Option("--logdir", help="PVC:PATH: the logs at PATH inside that PVC.",
                                               show_default=False)] = None,
    host_path: Annotated[str | None, typer.Option(
        "--host-path", help="Read the logs from this node directory instead (pins TensorBoard to nodes that have "
        "it; prefer a PVC).", show_default=False)] = None,
    image: Annotated[str | None, typer.Option("--image", help="TensorBoard image.", show_default=False)] = None,
    service_type: Annotated[ServiceType, typer.Option(
        "--service-type", help="How to reach it (ClusterIP: through tensorboard open).")] =
    ServiceType.ClusterIP,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the manifests only (no cluster, no kubeconfig).")]
    = False,
) -> None:
    """Start a TensorBoard on logs in a PVC (or, explicitly, a host path)."""
    from ..tensorboard.tensorboards import start_tensorboard, tensorboard_values

    values = tensorboard_values(name, logdir=logdir, host_path=host_path, image=image,
                                service_type=service_type.value)
    if dry_run:
        from ..adapters.defaults import load_defaults, resolve_namespace
        from ..tensorboard.tensorboards import render_tensorboard

        ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, load_defaults())
        typer.echo(render_tensorboard(g.helm_binary, ns, name, values), nl=False)
        return
    with offer_dry_run():
        ns, c = cluster_for(g)
        url = start_tensorboard(c, ns, name, values)
    typer.echo(f"tensorboard/{name} started in namespace {ns}")
    typer.echo(f"Open it: {url}")


@app.command("stop", cls=FastCommand)
@with_globals
def stop(
    g: Application,
    name: Annotated[str, typer.Argument(help="Name of the TensorBoard.", show_default=False)],
) -> None:
    """Stop a standalone TensorBoard (helm uninstall of its release)."""
    from ..tensorboard.tensorboards import stop_tensorboard

    ns, c = cluster_for(g)
    stop_tensorboard(c, ns, name)
    typer.echo(f"tensorboard/{name} stopped")


@app.command("list", cls=FastCommand)
@with_globals
def list_(
    g: Application,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
) -> None:
    """List TensorBoards: standalone ones and those of jobs."""
    from ..tensorboard.tensorboards import list_tensorboards
    from ..views.output import table

    ns, c = cluster_for(g)
    rows = list_tensorboards(c, ns, all_namespaces)
    headers = ["NAME", "OWNER", "URL"]
    if all_namespaces:
        headers = ["NAMESPACE", *headers]
    typer.echo(table(headers, [[r["namespace"], r["name"], r["owner"], r["url"]] if all_namespaces
                               else [r["name"], r["owner"], r["url"]] for r in rows]))


@app.command("open", cls=FastCommand)
@with_globals
def open_(
    g: Application,
    name: Annotated[str, typer.Argument(help="Job or TensorBoard name.", show_default=False)],
    port: Annotated[int, typer.Option("--port", help="Local port.")] = 6006,
    timeout: Annotated[str, typer.Option("--timeout", help="How long to wait for the TensorBoard pod to run "
                                         "(e.g. 90s, 5m).")] = "2m",
) -> None:
    """Run `kubectl port-forward` to a ClusterIP TensorBoard once its pod runs (kubectl must be on PATH)."""
    import subprocess

    from ..core.errors import NotFoundError, UsageError
    from ..core.grammars import parse_duration
    from ..tensorboard.tensorboards import find_service, wait_for_tensorboard_pod

    try:
        wait_seconds = parse_duration(timeout)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None
    ns, c = cluster_for(g)
    svc = find_service(c, ns, name)
    if svc is None:
        raise NotFoundError(f"no TensorBoard for {name} in namespace {ns} (see arena-helm tensorboard list)")
    svc_port = (svc["spec"].get("ports") or [{}])[0].get("port", 6006)
    argv = port_forward_argv(g, ns, svc["metadata"]["name"], port, svc_port, hint=", or use the URL from get")
    wait_for_tensorboard_pod(c, ns, name, wait_seconds, notify=lambda m: typer.echo(m, err=True))
    typer.echo(f"Forwarding http://localhost:{port} to {svc['metadata']['name']} (Ctrl-C stops)", err=True)
    raise typer.Exit(subprocess.call(argv))
