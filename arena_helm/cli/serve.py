"""``arena-helm serve custom|list|get|delete``: a model online (arena_helm.serving)."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from ..enums import ViewOutput
from . import FastCommand, new_app
from .common import GLOBAL_OPTIONS, Globals, offer_dry_run, with_globals
from .jobs import cluster_for
from .submit import CMD_SETTINGS, SubmitCommand, _check_command_words

app = new_app(help="Serve a model: its server as a Deployment and a Service, each version a Helm release "
                   "<name>-<version> (custom, list, get, delete).")

Command = Annotated[list[str] | None, typer.Argument(help="The serving command (joined with spaces; none: the "
                                                     "image's entrypoint).", metavar="COMMAND", show_default=False)]
NameArg = Annotated[str, typer.Argument(help="Serving name (--name of serve custom).", show_default=False)]
VersionO = Annotated[str | None, typer.Option("--version", help="One version of the serving (default: all of "
                                              "them).", show_default=False)]
SERVE_OPTIONS: list[tuple[str, Any, Any]] = [
    ("dry_run", Annotated[bool, typer.Option("--dry-run", help="Print the manifests only (no cluster, no "
                                             "kubeconfig).")], False),
    ("wait", Annotated[bool, typer.Option("--wait", help="Wait until every replica is ready: exit 0 ready, 3 "
                                          "after --timeout.")], False),
    ("timeout", Annotated[str | None, typer.Option("--timeout", help="With --wait: how long to wait. [default: "
                                                   "10m]", show_default=False)], None),
]


def _custom_command():
    """``serve custom [flags] [--] COMMAND...``: the flags are CustomServeSpec's fields (as submit's are a job
    spec's); the words after them are the serving command, joined with spaces as a job's."""
    from ..serving import CustomServeSpec
    from .submit import _fields_from, spec_options

    spec_params, options = spec_options(CustomServeSpec)
    extra = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
             for n, a, d in SERVE_OPTIONS + GLOBAL_OPTIONS]
    command_param = inspect.Parameter("command", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Command)
    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    params = [ctx_param, command_param, *spec_params, *extra]

    def custom(**kwargs: Any) -> None:
        run = {n: kwargs.pop(n) for n, _, _ in SERVE_OPTIONS}
        g = Globals(**{n: kwargs.pop(n) for n, _, _ in GLOBAL_OPTIONS})
        words = list(kwargs.pop("command") or [])
        _check_command_words(kwargs.pop("ctx"), words)
        fields = _fields_from(kwargs, options)
        _serve(g, fields, words, run)

    custom.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    custom.__annotations__ = {p.name: p.annotation for p in params}
    custom.__doc__ = ("Serve a model with your own image and command (none: the image's entrypoint): a Deployment "
                      "of --replicas pods and a Service for its ports, as release <name>-<version>.")
    return custom


def _serve(g: Globals, fields: dict[str, Any], words: list[str], run: dict[str, Any]) -> None:
    from ..config import load_defaults, resolve_namespace
    from ..errors import UsageError
    from ..k8s import parse_duration
    from ..serving import CustomServeSpec, ready_serving, render_serving, serve, serving_values

    if run["timeout"] is not None and not run["wait"]:
        raise UsageError("--timeout needs --wait")
    if run["wait"] and run["dry_run"]:
        raise UsageError("--wait cannot be used with --dry-run: a dry run installs nothing to wait for")
    try:
        wait_seconds = parse_duration(run["timeout"] or "10m")
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None
    defaults = load_defaults()
    fields["namespace"] = resolve_namespace(g.namespace, g.kubeconfig, g.context, defaults)
    fields["command"] = " ".join(words)
    if not fields.get("image_pull_secret") and defaults.image_pull_secrets:
        fields["image_pull_secret"] = list(defaults.image_pull_secrets)
    spec = CustomServeSpec(**fields)
    values = serving_values(spec)
    if run["dry_run"]:
        typer.echo(render_serving(g.helm_binary, spec, values), nl=False)
        return
    with offer_dry_run():
        ns, c = cluster_for(g)
        serve(c, spec, values)
    typer.echo(f"serving {spec.name} version {spec.version} submitted in namespace {ns} (release {spec.release})")
    if run["wait"]:
        view = ready_serving(c, ns, spec.name, spec.version, wait_seconds, notify=lambda m: typer.echo(m, err=True))
        typer.echo(f"serving {spec.name} version {spec.version} is ready ({view.ready}/{view.desired} replicas)")
        return
    typer.echo(f"Follow it: arena-helm serve get {spec.name} --version {spec.version} -n {ns}")


app.command("custom", cls=SubmitCommand, context_settings=CMD_SETTINGS)(_custom_command())


def _table(views, all_namespaces: bool) -> str:
    from ..output import table

    headers = ["NAME", "TYPE", "VERSION", "DESIRED", "AVAILABLE", "ADDRESS", "PORTS", "GPU"]
    rows = []
    for v in views:
        row = [v.name, v.type, v.version, str(v.desired), str(v.available), v.address or "N/A", v.endpoint(),
               str(v.gpus * v.desired)]
        rows.append([v.namespace, *row] if all_namespaces else row)
    return table(["NAMESPACE", *headers] if all_namespaces else headers, rows)


def _emit(doc: Any, output: ViewOutput) -> None:
    from ..output import as_json, as_yaml

    typer.echo(as_json(doc) if output is ViewOutput.json else as_yaml(doc), nl=output is ViewOutput.json)


@app.command("list", cls=FastCommand)
@with_globals
def list_(
    g: Globals,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    type_: Annotated[str | None, typer.Option("--type", "-T", help="Only servings of this type (custom-serving).",
                                              show_default=False)] = None,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
) -> None:
    """List the servings: each version's type, replicas desired and available, address, ports and GPUs (Arena's
    columns)."""
    from ..serving import list_servings, serving_type

    wanted = serving_type(type_) if type_ else None
    ns, c = cluster_for(g)
    views = list_servings(c, ns, all_namespaces, type_=wanted)
    if output is not ViewOutput.table:
        _emit([v.to_json() for v in views], output)
        return
    if not views:
        typer.echo(f"No servings found{'' if all_namespaces else f' in namespace {ns}'}.", err=True)
        return
    typer.echo(_table(views, all_namespaces))


@app.command("get", cls=FastCommand)
@with_globals
def get(g: Globals, name: NameArg, version: VersionO = None,
        output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
        ) -> None:
    """Show a serving: each version's replicas, endpoint (the Service's address and ports) and pods."""
    from ..output import table
    from ..serving import servings_named
    from ..workspace import age

    ns, c = cluster_for(g)
    views = servings_named(c, ns, name, version)
    if output is not ViewOutput.table:
        _emit([v.to_json() for v in views], output)
        return
    blocks = []
    for v in views:
        lines = [("Name", v.name), ("Namespace", v.namespace), ("Type", v.type), ("Version", v.version),
                 ("Release", f"{v.release} (revision {v.revision}, {v.status})"),
                 ("Desired", str(v.desired)), ("Available", str(v.available)), ("Ready", str(v.ready)),
                 ("GPUs", f"{v.gpus} per replica"), ("Address", v.address or "N/A"), ("Ports", v.endpoint()),
                 ("Age", age(v.created))]
        text = "\n".join(f"{key + ':':<11}{value}" for key, value in lines)
        pods = table(["INSTANCE", "STATUS", "READY", "RESTARTS", "NODE"],
                     [[p["name"], p["status"], p["ready"], str(p["restarts"]), p["node"]] for p in v.pods])
        blocks.append(text + "\n\n" + (pods if v.pods else "Instances: none"))
    typer.echo("\n\n".join(blocks))


@app.command("delete", cls=FastCommand)
@with_globals
def delete(g: Globals, name: NameArg, version: VersionO = None) -> None:
    """Delete a serving (every version, or --version): uninstall its releases, with all they made."""
    from ..serving import delete_servings

    ns, c = cluster_for(g)
    for v in delete_servings(c, ns, name, version):
        typer.echo(f"serving {v.name} version {v.version} deleted (release {v.release})")
