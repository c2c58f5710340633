"""``data list``: the PersistentVolumeClaims a job can mount with ``--data CLAIM:PATH``; and the shell
completion of ``--data`` (``complete_claims``, for the submit commands)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..core.enums import ViewOutput
from .common import AllNamespaces, Application, emit, with_globals
from .groups import FastCommand, new_app

app = new_app(help="Data volumes (PersistentVolumeClaims) jobs can mount.")


@app.callback()
def _data() -> None:
    """Data volumes (PersistentVolumeClaims) jobs can mount."""


@app.command("list", cls=FastCommand)
@with_globals
def list_cmd(
    g: Application,
    all_namespaces: AllNamespaces = False,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
) -> None:
    """The PVCs of the namespace: status, capacity, access modes, storage class, the jobs that mount them."""
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..adapters.kube import KubeReader
    from ..insight.data import claims_table, list_claims

    ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, load_defaults())
    claims = list_claims(KubeReader(g.kubeconfig, g.context), None if all_namespaces else ns)
    if output is not ViewOutput.table:
        emit([c.to_json() for c in claims], output.value)
        return
    if not claims:
        where = "any namespace" if all_namespaces else f"namespace {ns}"
        typer.echo(f"no PersistentVolumeClaims in {where}")
        return
    typer.echo(claims_table(claims, all_namespaces=all_namespaces))
