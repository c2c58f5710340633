"""``data list``: the PersistentVolumeClaims a job can mount with ``--data CLAIM:PATH``; and the shell
completion of ``--data`` (``complete_claims``, for the submit commands)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..enums import ViewOutput
from . import FastCommand, new_app
from .common import Globals, with_globals
from .jobs import AllNamespaces, emit

app = new_app(help="Data volumes (PersistentVolumeClaims) jobs can mount.")


@app.callback()
def _data() -> None:
    """Data volumes (PersistentVolumeClaims) jobs can mount."""


def complete_claims(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of ``-d/--data CLAIM:PATH``: the claim names of the namespace (``-n`` or the
    kubeconfig's), while the claim part is typed; nothing once a ``:`` is in (the path is the user's)."""
    if ":" in incomplete:
        return []
    try:
        from ..config import load_defaults, resolve_namespace
        from ..kube import KubeReader

        p = ctx.params
        ns = resolve_namespace(p.get("namespace"), p.get("kubeconfig"), p.get("context"), load_defaults())
        items = KubeReader(p.get("kubeconfig"), p.get("context")).list_path(
            f"/api/v1/namespaces/{ns}/persistentvolumeclaims", "listing persistentvolumeclaims")
        names = sorted((i.get("metadata") or {}).get("name", "") for i in items)
        return [n for n in names if n.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []


@app.command("list", cls=FastCommand)
@with_globals
def list_cmd(
    g: Globals,
    all_namespaces: AllNamespaces = False,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
) -> None:
    """The PVCs of the namespace: status, capacity, access modes, storage class, the jobs that mount them."""
    from ..config import load_defaults, resolve_namespace
    from ..data import claims_table, list_claims
    from ..kube import KubeReader

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
