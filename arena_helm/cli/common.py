"""Options every command takes (the global ones declared once), and what the commands of several groups share:
the cluster a command reads, the Prometheus options, -A, -T, job names and their completion, the notes of a view."""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from ..core.jobkinds import names_hint
from .groups import Application, application

Namespace = Annotated[
    str | None,
    typer.Option("--namespace", "-n", help="Namespace (default: the kubeconfig context's namespace, else default).",
                 show_default=False),
]
Kubeconfig = Annotated[
    str | None,
    typer.Option("--kubeconfig", help="The kubeconfig file (default: $KUBECONFIG, a list merged as kubectl "
                 "merges it, else ~/.kube/config).", show_default=False),
]
Context = Annotated[
    str | None, typer.Option("--context", "--kube-context", help="kubeconfig context to use.", show_default=False)
]
HelmBinary = Annotated[
    str | None,
    typer.Option("--helm-binary", envvar="ARENA_HELM_HELM", help="helm binary to use (default: helm on PATH).",
                 show_default=False),
]
Debug = Annotated[bool, typer.Option("--debug", help="Log helm and API calls to stderr; show tracebacks.")]


class LogLevel(str, enum.Enum):
    """Arena's global --loglevel: debug is --debug; the others are accepted (arena-helm logs only in debug)."""

    debug = "debug"
    info = "info"
    warn = "warn"
    warning = "warning"
    error = "error"


ARENA_CONFIG_REFUSED = ("--config: arena-helm does not read Arena's config file: put defaults (images, image pull "
                        "secrets, Prometheus) in the YAML file named by $ARENA_HELM_CONFIG (see the README)")


def _refuse_arena_config(value: str | None) -> str | None:
    if value is not None:
        from ..core.errors import UsageError

        raise UsageError(ARENA_CONFIG_REFUSED)
    return value


# Arena's global flags, before the command and (as cobra allows) after its name; the root shows --loglevel
def loglevel_option(hidden: bool) -> object:
    return Annotated[LogLevel | None, typer.Option("--loglevel", show_default=False, hidden=hidden,
                                                   help="Arena's log level: debug is --debug; info, warn and error "
                                                   "are accepted.")]


ArenaNamespace = Annotated[str | None, typer.Option("--arena-namespace", hidden=True,
                                                    help="Arena's system namespace: arena-helm has none (accepted, "
                                                    "unused).")]
ArenaConfig = Annotated[str | None, typer.Option("--config", hidden=True, callback=_refuse_arena_config,
                                                 help="Arena's config file (not read).")]


class OutputFormat(str, enum.Enum):
    table = "table"
    wide = "wide"
    name = "name"
    json = "json"
    yaml = "yaml"


# The global options, declared once: every command that talks to the cluster gets them (after its name, as
# kubectl takes them) through ``with_globals``; the submit commands add them to their generated signatures.
# attach's (a job's or a workspace's): the command after --, and whether it gets a terminal
AttachCommand = Annotated[list[str] | None, typer.Argument(help="Command to run (after --); default: sh.",
                                                           show_default=False)]
AttachTty = Annotated[bool | None, typer.Option("--tty/--no-tty", help="Give the command a terminal (default: yes "
                                                "for the shell when stdin and stdout are terminals).",
                                                show_default=False)]

GLOBAL_OPTIONS: list[tuple[str, Any, Any]] = [
    ("namespace", Namespace, None), ("kubeconfig", Kubeconfig, None), ("context", Context, None),
    ("helm_binary", HelmBinary, None), ("debug", Debug, False),
]


def port_forward_argv(g: Application, namespace: str, service: str, local: int, remote: int, *,
                      hint: str = "") -> list[str]:
    """``kubectl port-forward -n NS svc/SERVICE LOCAL:REMOTE`` with the global --kubeconfig/--context (an
    argv, never a shell string); kubectl missing from PATH is one line (``hint``: what else to do)."""
    import shutil

    from ..core.errors import ArenaHelmError

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise ArenaHelmError(f"kubectl not found on PATH: install it to port-forward{hint}")
    argv = [kubectl, "port-forward", "-n", namespace, f"svc/{service}", f"{local}:{remote}"]
    if g.kubeconfig:
        argv += ["--kubeconfig", g.kubeconfig]
    if g.context:
        argv += ["--context", g.context]
    return argv


def with_globals(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A command whose first parameter is ``g: Application``: Typer sees the command's own options and the
    global ones; the function gets the invocation's ``Application`` with the global options given after the
    command's name applied over those given before it."""
    sig = inspect.signature(fn, eval_str=True)
    own = [p for name, p in sig.parameters.items() if name != "g"]
    params = own + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
                    for n, a, d in GLOBAL_OPTIONS]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> Any:
        return fn(application().given(**{n: kwargs.pop(n) for n, _, _ in GLOBAL_OPTIONS}), **kwargs)

    del command.__wrapped__  # Typer reads the signature below, not the function's
    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


@contextlib.contextmanager
def offer_dry_run():
    """A kubeconfig problem of a command that can also render without a cluster (submit, tensorboard start)
    says so; the other commands do not offer a --dry-run they lack."""
    from ..adapters.kubeconfig import DRY_RUN_HINT
    from ..core.errors import KubeconfigError

    try:
        yield
    except KubeconfigError as exc:
        raise KubeconfigError(f"{exc}, {DRY_RUN_HINT}") from None


def wait_seconds(wait: bool, timeout: str | None, dry_run: bool = False, *, default: str,
                 nothing: str = "installs nothing to wait for") -> float:
    """The seconds of ``--timeout`` (``default`` when not given), after the checks every command with --wait
    makes: --timeout needs --wait, --wait does not go with --dry-run."""
    from ..core.errors import UsageError
    from ..core.grammars import parse_duration

    if timeout is not None and not wait:
        raise UsageError("--timeout needs --wait")
    if wait and dry_run:
        raise UsageError(f"--wait cannot be used with --dry-run: a dry run {nothing}")
    try:
        return parse_duration(timeout or default)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None


# ---- what the commands of several groups share ----------------------------------------------------
AllNamespaces = Annotated[bool, typer.Option("--all-namespaces", "-A", help="Jobs of every namespace.")]
TypeO = Annotated[str | None, typer.Option("--type", "-T", help=f"Job kind: {names_hint()}.", show_default=False)]


def complete_job_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of job names: what ``list`` shows in the namespace (release metadata and job
    objects only, no helm process)."""
    try:
        from ..releases.reader import job_names

        p = ctx.params
        ns, c = cluster_for(Application(namespace=p.get("namespace"), kubeconfig=p.get("kubeconfig"),
                                        context=p.get("context"), helm_binary=p.get("helm_binary")))
        return [n for n in job_names(c, ns) if n.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []


PrometheusUrl = Annotated[str | None, typer.Option(
    "--prometheus-url", envvar="PROMETHEUS_ADDRESS", show_default=False,
    help="Prometheus to read GPU/CPU metrics from, queried directly (default: the defaults file's "
         "prometheus.url or .service, else a Prometheus Service found by label, as Arena does).")]
PrometheusService = Annotated[str | None, typer.Option(
    "--prometheus-service", metavar="[NAMESPACE/]NAME[:PORT]", show_default=False,
    help="Prometheus Service reached through the API server's service proxy.")]


JobName = Annotated[str, typer.Argument(help="Job name.", metavar="NAME", autocompletion=complete_job_names,
                                        show_default=False)]


def cluster_for(g: Application):
    """(namespace, Cluster) for a command: resolved namespace, helm and API adapters."""
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..adapters.kube import KubeReader
    from ..adapters.kubeconfig import load
    from ..workload.gateway import Cluster

    load(g.kubeconfig, g.context).check()  # a missing or malformed kubeconfig: one line, before helm runs

    def helm():  # built when a command needs helm (delete, prune): list, get and top read the API only
        from ..adapters.helm import Helm, KubeTarget

        return Helm(g.helm_binary, KubeTarget(g.kubeconfig, g.context))

    ns = resolve_namespace(g.namespace, g.kubeconfig, g.context, load_defaults())
    return ns, Cluster(helm, KubeReader(g.kubeconfig, g.context))


def metrics_options(url: str | None, service: str | None):
    """The user's choice of Prometheus (--prometheus-url, --prometheus-service, the defaults file), checked: a
    command reads it before it loads a kubeconfig, so that a mistake there is the user's one line (exit 2)."""
    from ..adapters.defaults import load_defaults
    from ..adapters.metrics import MetricsOptions

    return MetricsOptions.resolve(url, service, load_defaults().prometheus)


def collector_for(c, namespace: str, options):
    """The metrics collector of a view (Prometheus found lazily, kept across --refresh rounds)."""
    from ..adapters.metrics import Collector

    return Collector(c.kube, options, namespace)


class Notes:
    """Each distinct note goes to stderr once per invocation (not once per --refresh round)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def show(self, metrics) -> None:
        for note in metrics.notes:
            if note not in self.seen:
                self.seen.add(note)
                typer.echo(note, err=True)


def emit(data, fmt: str) -> None:
    from ..views.output import as_json, as_yaml

    typer.echo(as_json(data) if fmt == "json" else as_yaml(data))


def complete_claims(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of ``-d/--data CLAIM:PATH``: the claim names of the namespace (``-n`` or the
    kubeconfig's), while the claim part is typed; nothing once a ``:`` is in (the path is the user's)."""
    if ":" in incomplete:
        return []
    try:
        from ..adapters.defaults import load_defaults, resolve_namespace
        from ..adapters.kube import KubeReader

        p = ctx.params
        ns = resolve_namespace(p.get("namespace"), p.get("kubeconfig"), p.get("context"), load_defaults())
        items = KubeReader(p.get("kubeconfig"), p.get("context")).list_path(
            f"/api/v1/namespaces/{ns}/persistentvolumeclaims", "listing persistentvolumeclaims")
        names = sorted((i.get("metadata") or {}).get("name", "") for i in items)
        return [n for n in names if n.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []
