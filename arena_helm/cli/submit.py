"""``arena-helm submit <kind>``: flags -> spec -> values -> helm.

The flags of a kind are generated from its spec's fields (``arena_helm.workload.spec``) by the one generator of
commands from a spec (``cli/specflags.py``): the field ``data_dir`` is ``--data-dir``, with the field's
description as help, its choices as an enum and its default shown. This module adds only what is not part of
a job: how to run (``--dry-run``, ``-o``, ``--wait``, the helm value flags) and the global options. One command
per kind of the registry (``arena_helm.core.jobkinds``), with its aliases.

As in Arena v1, everything after the flags (or after ``--``) is the training command, joined with single
spaces. An arena-helm flag typed after the command is refused (one line), so that ``... python train.py
--dry-run`` never installs a job by accident; ``--`` before the command passes such words through.
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any

import typer

from ..core.enums import CheckOutput, DryRunOutput, SubmitOutput
from ..core.jobkinds import KINDS, REFUSED, SUBMITTABLE
from .common import Application, ArenaConfig, ArenaNamespace, loglevel_option, offer_dry_run, wait_seconds
from .groups import lazy_app
from .specflags import CMD_SETTINGS, Opt, WordsCommand, check_command_words, spec_command

# ---- options that are not spec fields -------------------------------------------------------------
Command = Annotated[list[str] | None, typer.Argument(help="The training command (joined with spaces).", metavar="COMMAND",
                                                     show_default=False)]
RUN_OPTIONS: list[tuple[str, Any, Any]] = [
    ("values_file", Annotated[list[str] | None, Opt("--values", "-f", metavar="FILE", help="Chart values file, "
                                                    "given to helm after the generated values (repeatable).")], None),
    ("set_value", Annotated[list[str] | None, Opt("--set", metavar="KEY=VALUE", help="Chart value KEY=VALUE, given "
                                                  "to helm as --set (repeatable).")], None),
    ("set_string", Annotated[list[str] | None, Opt("--set-string", metavar="KEY=VALUE", help="Chart value "
                                                   "KEY=VALUE, given to helm as --set-string (repeatable).")], None),
    ("set_file", Annotated[list[str] | None, Opt("--set-file", metavar="KEY=FILE", help="Chart value KEY=FILE, given "
                                                 "to helm as --set-file (repeatable).")], None),
    ("set_json", Annotated[list[str] | None, Opt("--set-json", metavar="KEY=JSON", help="Chart value KEY=JSON, given "
                                                 "to helm as --set-json (repeatable).")], None),
    ("dry_run", Annotated[bool, Opt("--dry-run", help="Print the manifests; contact no cluster.")], False),
    ("check", Annotated[bool, Opt("--check", help="Install nothing: say whether the job fits the cluster now "
                                  "(exit 0), only once others finish (4) or never (5), and why.")], False),
    ("output", Annotated[SubmitOutput | None, Opt("--output", "-o", help="With --dry-run: manifests (default) or "
                                                  "values; with --check: json or yaml (default: a table).")], None),
    ("wait", Annotated[bool, Opt("--wait", help="Follow the job to its end; exit 0 succeeded, 1 failed, "
                                 "3 timed out.")], False),
    ("timeout", Annotated[str | None, Opt("--timeout", help="With --wait: how long to wait. [default: 30m]")], None),
    ("notify", Annotated[str | None, Opt("--notify", metavar="URL", help="With --wait: POST a JSON notice (job, "
                                         "status, duration, GPUs, failure) to URL when the job ends.")], None),
    # Arena's global flags, also after the command name as cobra allows (hidden)
    ("loglevel", loglevel_option(hidden=True), None),
    ("arena_namespace", ArenaNamespace, None),
    ("arena_config", ArenaConfig, None),
]


# ``fit KIND``: submit's flags without those of an install or a dry run; -o json|yaml
_NOT_FIT = {"dry_run", "check", "output", "wait", "timeout", "notify"}
FIT_OPTIONS: list[tuple[str, Any, Any]] = [
    *(o for o in RUN_OPTIONS if o[0] not in _NOT_FIT),
    ("output", Annotated[CheckOutput | None, Opt("--output", "-o", help="json or yaml (default: a table).")], None),
]


def run_submit(kind_key: str, fields: dict[str, Any], command: list[str] | None, run: dict[str, Any],
               g: Application, ctx: typer.Context | None = None) -> None:
    """Validate, then render or install (and maybe wait)."""
    from ..adapters.defaults import load_defaults, resolve_namespace
    from ..adapters.helm import ValueSources
    from ..core.errors import UsageError
    from ..core.jobkinds import SUBMITTABLE

    info = SUBMITTABLE[kind_key]  # a kind, or a preset of one
    words = list(command or [])
    check_command_words(ctx, words)
    dry_run, output, check = run["dry_run"], run["output"], run["check"]
    if check and dry_run:
        raise UsageError("--check cannot be used with --dry-run: --check reads the cluster, --dry-run contacts none")
    if check and run["wait"]:
        raise UsageError("--wait cannot be used with --check: a check installs nothing to wait for")
    if output is not None:
        fmt = output.value
        if check and fmt not in ("json", "yaml"):
            raise UsageError(f"-o/--output {fmt}: --check answers as json or yaml (or a table without -o)")
        if not check and not dry_run:
            raise UsageError(f"-o/--output {fmt} needs --dry-run or --check (a submit without them installs the job)")
        if dry_run and fmt not in ("manifests", "values"):
            raise UsageError(f"-o/--output {fmt}: --dry-run prints manifests or values ({fmt} goes with --check)")
    seconds = wait_seconds(run["wait"], run["timeout"], dry_run, default="30m")
    if run["notify"] is not None:
        from ..releases.notify import check_url

        if not run["wait"]:
            raise UsageError("--notify needs --wait (the notice is sent when the waited-for job ends)")
        check_url(run["notify"])
    if not words and not fields.get("image_entrypoint") and not info.spec_class().COMMAND_OPTIONAL and not check:
        raise UsageError("no training command: give it after the flags (e.g. ... python train.py), or "
                         "--image-entrypoint to run the image's own entrypoint")
    if check:  # a check installs nothing: the name only labels the rendered objects, no pod runs the image
        fields.setdefault("name", "fit")
        fields.setdefault("image", "fit-check")
    defaults = load_defaults()
    fields["command"] = " ".join(words)
    fields["namespace"] = resolve_namespace(g.namespace, g.kubeconfig, g.context, defaults)
    if not fields.get("image") and defaults.images.get(kind_key):
        fields["image"] = defaults.images[kind_key]
    if not fields.get("image_pull_secret") and defaults.image_pull_secrets:
        fields["image_pull_secret"] = list(defaults.image_pull_secrets)
    if fields.get("tensorboard") and not fields.get("tensorboard_image") and defaults.images.get("tensorboard"):
        fields["tensorboard_image"] = defaults.images["tensorboard"]
    sync_key = "rsync" if fields.get("sync_mode") == "rsync" else "sync"  # SyncMode is a str enum
    if fields.get("sync_source") and not fields.get("sync_image") and defaults.images.get(sync_key):
        fields["sync_image"] = defaults.images[sync_key]
    spec = info.spec_class()(**fields)
    sources = ValueSources.of(run["values_file"] or (), run["set_value"] or (), run["set_string"] or (),
                              run["set_file"] or (), run["set_json"] or ())
    sources.check_files()
    if dry_run or check:
        from ..adapters.identity import submitting_user
        from ..adapters.kubeconfig import lenient_view

        # the user only labels what renders: the kubeconfig's name, without asking the API server
        spec = spec.model_copy(update={"user": submitting_user(lenient_view(g.kubeconfig, g.context), None)})
        if check:
            _check(spec, sources, output, g)
        else:
            _render(spec, sources, output, g)  # --dry-run needs no kubeconfig
        return
    with offer_dry_run():
        _install(spec, sources, run, seconds, g)


def provenance_of(spec, g: Application, git_commit: str = "") -> dict[str, Any]:
    """What the release keeps of this submit: arena-helm's version, the command line, the spec (and the
    commit of its --sync-branch, once resolved)."""
    from ..workload.provenance import record

    return record(spec, ["arena-helm", *g.argv], git_commit)


def sync_commit(spec) -> str:
    """The commit the spec's git --sync-branch (or GIT_SYNC_BRANCH/GIT_SYNC_REV) names now ("" without one);
    when it cannot be told, a note says why and the job's provenance names the ref only."""
    from ..adapters.gitref import resolve
    from ..core.enums import SyncMode

    ref = spec.code_sync_ref if spec.code_sync_mode is SyncMode.git else None
    if not ref:
        return ""
    found = resolve(spec.sync_source, ref)
    if found.problem:
        typer.echo(f"note: the commit of sync ref {ref} is not recorded ({found.problem})", err=True)
    return found.commit


def _render(spec, sources, output, g: Application, values=None) -> None:
    """``--dry-run``: the values (``-o values``, merged by helm with the user's own) or the manifests."""
    from ..adapters.helm import Helm
    from ..workload.submission import job_values, render

    if values is None:
        values = job_values(spec, provenance_of(spec, g))
    if output is not None and output.value == DryRunOutput.values.value:  # helm merges only when there is something to merge
        import yaml  # -o values only: the manifests need no YAML parser here

        merged = Helm(g.helm_binary).merged_values(values, sources) if sources else values
        typer.echo(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True), nl=False)
        return
    typer.echo(render(spec, Helm(g.helm_binary), values=values, sources=sources), nl=False)


def _check(spec, sources, output, g: Application) -> None:
    """``--check`` / ``fit``: the job's manifests rendered as submit would install them, their pods checked
    against the cluster (``fit.fit_job``); exit 0 fits now, 4 only once others finish, 5 never."""
    import yaml

    from ..adapters.helm import Helm
    from ..adapters.kube import KubeReader
    from ..adapters.kubeconfig import load
    from ..core.jobkinds import BY_KEY
    from ..insight.fit import fit_job
    from ..workload.gateway import Cluster
    from ..workload.submission import job_values, render

    load(g.kubeconfig, g.context).check()  # a missing kubeconfig is one line before helm renders anything
    helm = Helm(g.helm_binary)
    kind = BY_KEY[spec.kind].kind
    docs = [d for d in yaml.safe_load_all(render(spec, helm, values=job_values(spec, provenance_of(spec, g)),
                                                 sources=sources)) if d]
    job = next((d for d in docs if d.get("kind") == kind), None)
    if job is None:
        from ..core.errors import UsageError

        raise UsageError(f"the rendered manifests hold no {kind} (check the --values/--set given)")
    job.setdefault("metadata", {}).setdefault("namespace", spec.namespace)
    result = fit_job(Cluster(helm, KubeReader(g.kubeconfig, g.context)), job)
    if output is None:
        typer.echo(f"{kind} {spec.name} in namespace {spec.namespace}:")
        typer.echo(result.text())
    else:
        doc = {"name": spec.name, "namespace": spec.namespace, "kind": kind, **result.to_json()}
        typer.echo(json.dumps(doc, indent=2) if output.value == "json" else
                   yaml.safe_dump(doc, sort_keys=False).rstrip("\n"))
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def _install(spec, sources, run: dict[str, Any], wait_seconds: int, g: Application, make_values=None) -> None:
    """Install the job's release (and maybe wait for it to end). ``make_values(spec, git_commit)``: the values
    of the spec once its submitting user and sync commit are known (default: its generated values and
    provenance)."""
    from ..adapters.helm import Helm, KubeTarget
    from ..adapters.identity import submitting_user
    from ..adapters.kube import KubeReader
    from ..adapters.kubeconfig import load
    from ..workload.submission import job_values, submit, wait_for

    view = load(g.kubeconfig, g.context).check()  # a missing or malformed kubeconfig: one line, before helm
    kube = KubeReader(g.kubeconfig, g.context)
    spec = spec.model_copy(update={"user": submitting_user(view, kube)})

    commit = sync_commit(spec)
    values = make_values(spec, commit) if make_values is not None else job_values(spec, provenance_of(spec, g, commit))
    helm = Helm(g.helm_binary, KubeTarget(kubeconfig=g.kubeconfig, context=g.context))
    result = submit(spec, helm, kube, values=values, sources=sources,
                    notify=lambda m: typer.echo(f"note: {m}", err=True))
    for okind, api_version, oname in result.objects:
        group = api_version.split("/")[0] if "/" in api_version else ""
        typer.echo(f"{okind.lower()}{'.' + group if group else ''}/{oname} created")
    ns = f" -n {result.namespace}"
    typer.echo(f"Follow it: arena-helm get {result.name}{ns}; logs: arena-helm logs -f {result.name}{ns}")
    if run["wait"]:
        phase = wait_for(kube, result, wait_seconds, progress=lambda m: typer.echo(m, err=True))
        if run["notify"] is not None:
            from ..releases.notify import send
            from ..workload.gateway import Cluster

            warning = send(Cluster(helm, kube), result.namespace, result.name, result.kind, run["notify"])
            if warning:
                typer.echo(f"warning: {warning}", err=True)
        if phase != "Succeeded":
            raise typer.Exit(1)


def make_command(kind_key: str, *, fit: bool = False):
    """The submit command of one kind (``fit``: its fit command): its signature is the COMMAND argument, the
    spec's options, the run options and the global options."""
    info = SUBMITTABLE[kind_key]
    doc = inspect.cleandoc(info.spec_class().__doc__ or "").replace("``", "")  # reST literals read as plain text

    def submit(lead: dict[str, Any], fields: dict[str, Any], given: dict[str, Any], g: Application) -> None:
        run = {n: d for n, _, d in RUN_OPTIONS} | given
        run["check"] = run["check"] or fit
        run_submit(info.key, fields, lead["command"], run, g, lead["ctx"])

    return spec_command(
        info.spec_class(), submit, name=info.key, leading=[("ctx", typer.Context, inspect.Parameter.empty),
                                                           ("command", Command, None)],
        run_options=FIT_OPTIONS if fit else RUN_OPTIONS,
        doc=(f"Check whether {info.summary} would fit the cluster: exit 0 now, 4 once others finish, 5 never. "
             f"Submit's flags; --name, --image and the training command may be left out." if fit
             else f"Submit {info.summary}.\n\n{doc}"))


def refused_command(key: str):
    """``submit <key>`` of a kind arena-helm does not make (``REFUSED``): any words, one line, exit 2."""
    from ..core.errors import UsageError
    from ..core.jobkinds import BY_REFUSED_NAME

    def refused(words: Annotated[list[str] | None, typer.Argument(metavar="[ARENA FLAGS AND COMMAND...]",
                                                                   show_default=False)] = None) -> None:
        raise UsageError(f"submit {key}: {BY_REFUSED_NAME[key].why}")

    refused.__doc__ = f"Not available: {BY_REFUSED_NAME[key].why}."
    return refused


def __getattr__(name: str):
    """``cmd_<kind>``: the submit command of a kind, built on first use (see ``LazyGroup``)."""
    if name.startswith("refused_"):
        return refused_command(name[len("refused_"):])
    if name.startswith("cmd_"):
        return make_command(name[len("cmd_"):])
    if name.startswith("fit_"):
        return make_command(name[len("fit_"):], fit=True)
    raise AttributeError(name)


# The submit commands, built on first use (each has ~80 options).
app = lazy_app(
    {
        name: ("submit", f"cmd_{info.key}", f"Submit {info.summary}.", name != info.key, CMD_SETTINGS)
        for info in SUBMITTABLE.values() for name in info.names
    } | {
        name: ("submit", f"refused_{r.key}", f"Not available here: see arena-helm submit {r.key}.", True,
               {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
        for r in REFUSED for name in r.names
    },
    help="Submit a training job (" + ", ".join(k.kind for k in KINDS) + ") as a Helm release.",
    command_cls=WordsCommand,
)

# ``fit KIND``: submit's commands with --check always on
fit_app = lazy_app(
    {
        name: ("submit", f"fit_{info.key}", f"Check whether {info.summary} would fit the cluster.", name != info.key,
               CMD_SETTINGS)
        for info in SUBMITTABLE.values() for name in info.names
    },
    help="Check whether a job would fit the cluster, its pods on the nodes and its queue's quota: exit 0 fits now, "
         "4 only once others finish, 5 never.",
    command_cls=WordsCommand,
)
