"""``doctor``: one screen that says whether the cluster (and this user) is ready for arena-helm."""

from __future__ import annotations

from typing import Annotated

import typer

from ..core.enums import ViewOutput
from ..core.jobkinds import names_hint
from ..core.servekinds import API_KINDS
from .common import Application, PrometheusService, PrometheusUrl, with_globals


@with_globals
def doctor(
    g: Application,
    type_: Annotated[list[str] | None, typer.Option(
        "--type", "-T", show_default=False,
        help=f"Only these kinds, each then needed (repeatable; default: every one, the job kinds needed): "
             f"{names_hint()}; {', '.join(API_KINDS)}.")] = None,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
    prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
) -> None:
    """Check the cluster against docs/cluster-setup.md: API server, your permissions, each job kind's CRD and
    controller (a server-side dry run), KServe, LeaderWorkerSet, the Gateway API or Istio, GPUs, Prometheus and
    DCGM, Kueue. Exit 0 when all that the commands need is there, 1 otherwise."""
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..adapters.helm import Helm, KubeTarget
    from ..adapters.kube import KubeReader
    from ..adapters.kubeconfig import lenient_view
    from ..adapters.metrics import MetricsOptions
    from ..insight.doctor import chosen_kinds, run, table
    from ..views.output import as_json, as_yaml

    kinds = chosen_kinds(type_) if type_ else None
    defaults = load_defaults()
    opts = MetricsOptions.resolve(prometheus_url, prometheus_service, defaults.prometheus)
    ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, defaults)
    view = lenient_view(g.kubeconfig, g.context)
    report = run(KubeReader(g.kubeconfig, g.context), lambda: Helm(g.helm_binary, KubeTarget(g.kubeconfig, g.context)),
                 ns, kinds, metrics_options=opts, context=view.context if view else None)
    if output is ViewOutput.table:
        typer.echo(table(report))
    else:
        data = report.to_json()
        typer.echo(as_json(data) if output is ViewOutput.json else as_yaml(data))
    raise typer.Exit(0 if report.ready else 1)
