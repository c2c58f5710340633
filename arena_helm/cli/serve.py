"""``arena-helm serve KIND|list|get|delete``: a model online (arena_helm.serving.servings, arena_helm.core.servekinds)."""

from __future__ import annotations

import enum
import inspect
import sys
from typing import Annotated, Any

import typer

from ..core.enums import ViewOutput
from ..core.servekinds import SERVE_KINDS
from .common import (
    Application,
    AttachCommand,
    AttachTty,
    PrometheusService,
    PrometheusUrl,
    cluster_for,
    metrics_options,
    offer_dry_run,
    wait_seconds,
    with_globals,
)
from .groups import FastCommand, new_app
from .specflags import CMD_SETTINGS, WordsCommand, check_command_words, spec_command

app = new_app(help="Serve a model: its server as a Deployment (a KServe InferenceService, a LeaderWorkerSet) and a "
                   "Service, each version a Helm release "
                   f"<name>-<version> ({', '.join(k.key for k in SERVE_KINDS)}, update, traffic-split, list, get, "
                   "logs, attach, delete).")

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


UPDATE_OPTIONS: list[tuple[str, Any, Any]] = [
    ("version", VersionO, None),
    ("wait", Annotated[bool, typer.Option("--wait", help="Follow the rollout: exit 0 once every replica is of the "
                                          "new values and ready, 3 after --timeout.")], False),
    ("timeout", SERVE_OPTIONS[2][1], None),
]


def _kind_command(kind):
    """``serve KIND [flags] [--] WORDS...``: the flags are the kind's spec's fields (as submit's are a job spec's);
    the words after them are the kind's (the command of a custom serving, more engine arguments of vLLM)."""
    module = kind.module()
    words_type = Annotated[list[str] | None, typer.Argument(help=module.WORDS, metavar="WORDS", show_default=False)]

    def serve(lead: dict[str, Any], fields: dict[str, Any], run: dict[str, Any], g: Application) -> None:
        words = list(lead["words"] or [])
        check_command_words(lead["ctx"], words)
        _serve(g, kind, {**fields, **module.from_words(words)}, run)

    doc = inspect.cleandoc(module.SPEC.__doc__ or "")
    return spec_command(module.SPEC, serve, name=kind.key, run_options=SERVE_OPTIONS,
                        leading=[("ctx", typer.Context, inspect.Parameter.empty), ("words", words_type, None)],
                        doc=f"Serve {kind.summary}: {_made(kind)}, as release <name>-<version> "
                            f"(charts/{kind.chart}).\n\n{doc}")


def _made(kind) -> str:
    """What a serving kind's chart makes, for its --help."""
    if kind.apis:
        made = kind.apis[0].kind
        return f"{'an' if made[0] in 'AEIOU' else 'a'} {made}, whose controller makes the pods"
    return "a Deployment of --replicas pods and a Service"


def _serve(g: Application, kind, fields: dict[str, Any], run: dict[str, Any]) -> None:
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..serving.servings import ready_serving, render_serving, serve, serving_values

    seconds = wait_seconds(run["wait"], run["timeout"], run["dry_run"], default="10m")
    defaults = load_defaults()
    fields["namespace"] = resolve_namespace(g.namespace, g.kubeconfig, g.context, defaults)
    if not fields.get("image_pull_secret") and defaults.image_pull_secrets:
        fields["image_pull_secret"] = list(defaults.image_pull_secrets)
    spec = kind.spec_class()(**fields)
    values = serving_values(spec)
    if run["dry_run"]:
        typer.echo(render_serving(g.helm_binary, spec, values), nl=False)
        return
    with offer_dry_run():
        ns, c = cluster_for(g)
        serve(c, spec, values)
    typer.echo(f"serving {spec.name} version {spec.version} submitted in namespace {ns} (release {spec.release})")
    if run["wait"]:
        view = ready_serving(c, ns, spec.name, spec.version, seconds, notify=lambda m: typer.echo(m, err=True))
        typer.echo(f"serving {spec.name} version {spec.version} is ready ({view.ready}/{view.desired} replicas)")
        return
    typer.echo(f"Follow it: arena-helm serve get {spec.name} --version {spec.version} -n {ns}")


def _update_command(kind):
    """``serve update KIND NAME [--version V] [flags] [--] WORDS...``: the kind's flags that an update may change
    (arena_helm.serving.servings.update_fields); only those given change, the release keeps the rest."""
    from ..serving.servings import update_fields

    module = kind.module()
    words_type = Annotated[list[str] | None, typer.Argument(help=module.WORDS + " After --; given, they replace "
                                                            "the release's.", metavar="WORDS", show_default=False)]

    def update(lead: dict[str, Any], given: dict[str, Any], run: dict[str, Any], g: Application) -> None:
        from ..serving.servings import check_update, ready_serving, update_serving

        name, words = lead["name"], list(lead["words"] or [])
        if words:
            given.update(module.from_words(words))
        seconds = wait_seconds(run["wait"], run["timeout"], default="10m")
        check_update(kind, name, run["version"], given)  # the flags, before the kubeconfig is read
        ns, c = cluster_for(g)
        view = update_serving(c, ns, kind, name, run["version"], given)
        typer.echo(f"serving {name} version {view.version} updated (release {view.release}, revision "
                   f"{view.revision})")
        if run["wait"]:
            view = ready_serving(c, ns, name, view.version, seconds,
                                 notify=lambda m: typer.echo(m, err=True))
            typer.echo(f"serving {name} version {view.version} is rolled out ({view.ready}/{view.desired} "
                       "replicas ready)")

    return spec_command(module.SPEC, update, name=kind.key, run_options=UPDATE_OPTIONS, only=update_fields(kind),
                        leading=[("ctx", typer.Context, inspect.Parameter.empty), ("name", NameArg, inspect.Parameter.empty),
                                 ("words", words_type, None)],
                        doc=f"Update a {kind.key} serving: a helm upgrade of its release with only the values of the "
                            f"flags given changed (its history keeps the previous ones); --wait follows the rollout.")


update_app = new_app(help="Update a serving in place (a helm upgrade of one version): "
                          f"{', '.join(k.key for k in SERVE_KINDS)}.")


def _register() -> None:
    from ..core.servekinds import SERVE_KINDS

    for kind in SERVE_KINDS:
        app.command(kind.key, cls=WordsCommand, context_settings=CMD_SETTINGS)(_kind_command(kind))
        # flags and NAME in any order; the words (a command, engine arguments) after --
        update_app.command(kind.key, cls=FastCommand)(_update_command(kind))
    app.add_typer(update_app, name="update")


_register()


def _table(views, all_namespaces: bool) -> str:
    from ..views.output import table

    headers = ["NAME", "TYPE", "VERSION", "DESIRED", "AVAILABLE", "ADDRESS", "PORTS", "GPU"]
    rows = []
    for v in views:
        row = [v.name, v.type, v.version, str(v.desired), str(v.available), v.url or v.address or "N/A", v.endpoint(),
               str(v.gpus * v.desired)]
        rows.append([v.namespace, *row] if all_namespaces else row)
    return table(["NAMESPACE", *headers] if all_namespaces else headers, rows)


def _emit(doc: Any, output: ViewOutput) -> None:
    from ..views.output import as_json, as_yaml

    typer.echo(as_json(doc) if output is ViewOutput.json else as_yaml(doc), nl=output is ViewOutput.json)


class RouterChoice(str, enum.Enum):
    gateway = "gateway"
    istio = "istio"


@app.command("traffic-split", cls=FastCommand)
@with_globals
def traffic_split(
    g: Application, name: NameArg,
    version_weight: Annotated[list[str], typer.Option("--version-weight", "-v", help="A version and its percent of "
                                                      "the traffic, VERSION:WEIGHT (repeatable; the weights sum to "
                                                      "100).", show_default=False)] = [],  # noqa: B006
    router: Annotated[RouterChoice | None, typer.Option("--router", help="gateway (an HTTPRoute) or istio (a "
                                                        "VirtualService); default: what the cluster serves, the "
                                                        "Gateway API first.", show_default=False)] = None,
    port: Annotated[list[str], typer.Option("--port", help="Split only this port, NAME:NUMBER (repeatable; "
                                            "default: every port the versions have in common; needed with "
                                            "--dry-run).", show_default=False)] = [],  # noqa: B006
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the manifests only (no cluster: the versions' "
                                          "Services are taken to be NAME-VERSION with --port).")] = False,
) -> None:
    """Split a serving's traffic between its versions (as Arena's serve traffic-split): a release NAME of a Service
    NAME over every version's pods and the routing object that gives each version its weight."""
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..serving.traffic import (
        Router,
        TrafficSplitSpec,
        assumed_views,
        describe,
        parse_ports,
        render_traffic,
        split_traffic,
        traffic_values,
    )

    ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, load_defaults())
    spec = TrafficSplitSpec(name=name, namespace=ns, version_weight=version_weight,
                            router=Router(router.value) if router else None)
    ports = parse_ports(port)
    if dry_run:
        values = traffic_values(spec, assumed_views(spec, ports), spec.router or Router.gateway, ports)
        typer.echo(render_traffic(g.helm_binary, spec, values), nl=False)
        return
    with offer_dry_run():
        ns, c = cluster_for(g)
        values, revision = split_traffic(c, spec, ports)
    typer.echo(f"traffic of serving {name} split: {describe(values)} (release {spec.release}, revision {revision})")


@app.command("list", cls=FastCommand)
@with_globals
def list_(
    g: Application,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    type_: Annotated[str | None, typer.Option("--type", "-T", help="Only servings of this type (a kind: "
                                              f"{SERVE_KINDS[0].key}, {SERVE_KINDS[1].key}, ...; or its type: "
                                              f"{SERVE_KINDS[0].chart}, ...).",
                                              show_default=False)] = None,
    output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
) -> None:
    """List the servings: each version's type, replicas desired and available, address, ports and GPUs (Arena's
    columns)."""
    from ..serving.servings import list_servings, serving_type

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
def get(g: Application, name: NameArg, version: VersionO = None,
        output: Annotated[ViewOutput, typer.Option("--output", "-o", help="table, json or yaml.")] = ViewOutput.table,
        prometheus_url: PrometheusUrl = None, prometheus_service: PrometheusService = None,
        ) -> None:
    """Show a serving: each version's replicas, endpoint (the Service's address and ports) and pods, with their
    GPUs' utilisation and memory when the serving has GPUs (Prometheus, as top finds it)."""
    from ..serving.servings import servings_named
    from ..serving.traffic import describe, traffic_of
    from ..views.output import table
    from ..workspace.workspaces import age

    opts = metrics_options(prometheus_url, prometheus_service)
    ns, c = cluster_for(g)
    views = servings_named(c, ns, name, version)
    split = traffic_of(c, ns, name)
    weights = {b["version"]: b["weight"] for b in (split or {}).get("backends") or []}
    gpus = _pod_gpus(c, ns, views, opts)
    if output is not ViewOutput.table:
        _emit([{**v.to_json(), "trafficPercent": weights.get(v.version) if split else None,
                "pods": [{**p, **({"gpus": gpus[p["name"]]} if p["name"] in gpus else {})} for p in v.pods]}
               for v in views], output)
        return
    blocks = [f"Traffic:   {describe(split)}"] if split else []
    for v in views:
        lines = [("Name", v.name), ("Namespace", v.namespace), ("Type", v.type), ("Version", v.version),
                 ("Release", f"{v.release} (revision {v.revision}, {v.status})"),
                 ("Desired", str(v.desired)), ("Available", str(v.available)), ("Ready", str(v.ready)),
                 ("GPUs", f"{v.gpus} per replica"), ("Address", v.address or "N/A"), ("Ports", v.endpoint()),
                 *([("URL", v.url)] if v.url else []),
                 *([("Traffic", f"{weights.get(v.version, 0)}%")] if split else []), ("Age", age(v.created))]
        text = "\n".join(f"{key + ':':<11}{value}" for key, value in lines)
        if v.gpus:
            pods = table(["INSTANCE", "STATUS", "READY", "RESTARTS", "NODE", "GPU(UTIL)", "GPU(MEMORY MiB)"],
                         [[p["name"], p["status"], p["ready"], str(p["restarts"]), p["node"],
                           *_gpu_cells(gpus.get(p["name"]))] for p in v.pods])
        else:
            pods = table(["INSTANCE", "STATUS", "READY", "RESTARTS", "NODE"],
                         [[p["name"], p["status"], p["ready"], str(p["restarts"]), p["node"]] for p in v.pods])
        blocks.append(text + "\n\n" + (pods if v.pods else "Instances: none"))
    typer.echo("\n\n".join(blocks))


def _pod_gpus(c, ns: str, views, options) -> dict[str, list[dict] | None]:
    """Pod -> its GPUs' utilisation and memory (Prometheus, one query), for the running pods of the versions
    with GPUs; None for a pod when Prometheus cannot say (a note says why). No query without such a pod."""
    from .common import Notes, collector_for

    running = [p["name"] for v in views if v.gpus for p in v.pods if p["status"] == "Running"]
    if not running:
        return {}
    m = collector_for(c, ns, options).collect(gpus=True, usage=False, namespace=ns)
    Notes().show(m)
    out: dict[str, list[dict] | None] = {}
    for pod in running:
        series = m.pod_gpus(ns, pod)
        out[pod] = None if series is None else [
            {"device": g.device, "util": g.util, "memoryUsedMiB": None if g.mem_used is None else g.mem_used / 2**20,
             "memoryTotalMiB": None if g.mem_total is None else g.mem_total / 2**20} for g in series]
    return out


def _gpu_cells(gpus: list[dict] | None) -> list[str]:
    """The GPU(UTIL) and GPU(MEMORY) cells of a pod: each of its GPUs, comma-separated (N/A: no metrics)."""
    if not gpus:
        return ["N/A", "N/A"]

    def num(x: float | None, fmt: str) -> str:
        return "N/A" if x is None else format(x, fmt)

    return [",".join(f"{num(g['util'], '.1f')}%" if g["util"] is not None else "N/A" for g in gpus),
            ",".join(f"{num(g['memoryUsedMiB'], '.0f')}/{num(g['memoryTotalMiB'], '.0f')}" for g in gpus)]


@app.command("delete", cls=FastCommand)
@with_globals
def delete(g: Application, name: NameArg, version: VersionO = None) -> None:
    """Delete a serving (every version, or --version): uninstall its releases, with all they made (with every
    version, its traffic split too)."""
    from ..serving.traffic import delete_serving

    ns, c = cluster_for(g)
    views, split = delete_serving(c, ns, name, version)
    for v in views:
        typer.echo(f"serving {v.name} version {v.version} deleted (release {v.release})")
    if split:
        typer.echo(f"traffic split of serving {name} deleted (release {name})")


InstanceO = Annotated[str | None, typer.Option("--instance", "-i", help="Pod of the serving (default: its first "
                                               "running one).", show_default=False)]


@app.command("logs", cls=FastCommand)
@with_globals
def logs(g: Application, name: NameArg, version: VersionO = None, instance: InstanceO = None,
         follow: Annotated[bool, typer.Option("--follow", "-f", help="Stream new lines as they come.")] = False,
         tail: Annotated[int | None, typer.Option("--tail", "-t", help="Only the last N lines.",
                                                  show_default=False)] = None,
         timestamps: Annotated[bool, typer.Option("--timestamps", help="Prefix each line with its time.")] = False,
         ) -> None:
    """Print the server's log: one pod of the serving (-i picks which)."""
    from ..core.errors import UsageError
    from ..serving.servings import CONTAINER, serving_pod

    if tail is not None and tail < 0:
        raise UsageError(f"--tail {tail}: give a number of lines, 0 or more")
    ns, c = cluster_for(g)
    pod, note = serving_pod(c, ns, name, version, instance)
    if note:
        typer.echo(f"note: {note}", err=True)
    out = sys.stdout.buffer
    for chunk in c.kube.stream_log(ns, pod, container=CONTAINER, follow=follow, tail=tail, timestamps=timestamps):
        out.write(chunk)
        out.flush()


@app.command("attach", cls=FastCommand)
@with_globals
def attach(g: Application, name: NameArg, command: AttachCommand = None, version: VersionO = None,
           instance: InstanceO = None, tty: AttachTty = None) -> None:
    """Open a shell (or run one command after --) in a serving's pod; exits with the command's exit code."""
    from ..adapters.kube import open_exec
    from ..releases.attach import run_attached
    from ..serving.servings import CONTAINER, serving_pod

    ns, c = cluster_for(g)
    pod, note = serving_pod(c, ns, name, version, instance)
    if note:
        typer.echo(f"note: {note}", err=True)
    argv = list(command or []) or ["sh"]
    if tty is None:
        tty = not command and sys.stdin.isatty() and sys.stdout.isatty()
    code = run_attached(open_exec(c.kube, ns, pod, CONTAINER, argv, tty), pod, tty=tty)
    if code:
        raise typer.Exit(code)
