"""``rerun`` and ``export``: a job made again from its release's values and recorded spec."""

from __future__ import annotations

import enum
import functools
from typing import Annotated, Any

import typer

from ..core.enums import DryRunOutput
from .common import Application, JobName, TypeO, cluster_for, wait_seconds, with_globals

RERUN_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True,
                  "help_option_names": ["-h", "--help"]}


@functools.cache
def _kind_command(kind_key: str):
    """The kind's own submit command, on its own (its flags, its checks); built once for a rerun's two
    readings of words (its own flags, the original's submit line)."""
    from .groups import new_app
    from .specflags import CMD_SETTINGS, WordsCommand
    from .submit import make_command

    single = new_app()
    single.command(kind_key, cls=WordsCommand, context_settings=CMD_SETTINGS)(make_command(kind_key))
    return typer.main.get_command(single)


def _given_fields(kind_key: str, args: list[str]) -> tuple[dict[str, Any], set[str]]:
    """The spec fields the words ``args`` give, parsed by the kind's own submit command (its flags, its
    checks); the training command after ``--`` is the field ``command``. Also the names of the command's
    parameters the words give."""
    from typer._click.core import ParameterSource

    from ..core.errors import UsageError
    from ..core.jobkinds import SUBMITTABLE
    from .specflags import fields_from, spec_options

    if not args:
        return {}, set()
    try:
        ctx = _kind_command(kind_key).make_context(f"arena-helm rerun ({kind_key} flags)", list(args))
    except typer._click.exceptions.UsageError as exc:  # noqa: SLF001 - Typer's click
        raise UsageError(exc.format_message()) from None
    _, options = spec_options(SUBMITTABLE[kind_key].spec_class())
    given = {n for n in ctx.params if ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE}
    run_given = sorted(n for n in given if n not in {o.param for o in options} and n != "command")
    if run_given:
        flag = "--" + run_given[0].replace("_", "-")
        raise UsageError(f"{flag} is not a job flag rerun passes on (rerun takes --name, -T, --dry-run, -o, --wait, "
                         "--timeout, --notify itself; -f/--set* values: submit anew)")
    kwargs = {o.param: ctx.params[o.param] if o.param in given else None for o in options}
    fields = fields_from(kwargs, options)
    for o in options:  # a switch given as --no-X sets it off
        if o.flag and o.param in given:
            fields[o.field] = bool(ctx.params[o.param])
    if "command" in given and ctx.params["command"]:
        fields["command"] = " ".join(ctx.params["command"])
    return fields, given


def _submit_line(kind_key: str, base: list[str], args: list[str], new_name: str, given: set[str]) -> list[str]:
    """The submit command line a rerun is equivalent to: the words of the submit ``base`` (the original's),
    without the options the rerun's words ``args`` give again (``given``: their parameters) and its --name,
    then ``--name NEW_NAME``, the rerun's options and the training command (the rerun's if it gives one).
    ``[]`` when ``base`` is no submit line (a job submitted through the Python API records none)."""
    at = next((i for i, w in enumerate(base[:-1]) if w == "submit"), None)
    if at is None:
        return []
    params: dict[str, tuple[str, bool]] = {}  # option word -> (its parameter, whether it takes no value)
    for p in _kind_command(kind_key).params:
        for opt in (*p.opts, *p.secondary_opts):
            if opt.startswith("-"):
                params[opt] = (p.name, bool(getattr(p, "is_flag", False) or getattr(p, "count", False)))
    drop = given | {"name"}
    kept: list[str] = []
    words = base[at + 2:]
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--" or not word.startswith("-") or word == "-":
            break
        opt, eq, _ = word.partition("=")
        param, no_value = params.get(opt) or params.get(word[:2]) or ("", True)
        attached = bool(eq) or (opt not in params and word[:2] in params)
        n = 1 if no_value or attached else 2
        if param not in drop:
            kept += words[i:i + n]
        i += n
    command = words[i + 1:] if i < len(words) and words[i] == "--" else words[i:]
    cut = args.index("--") if "--" in args else len(args)
    return [*base[:at + 2], *kept, "--name", new_name, *args[:cut], "--", *(args[cut + 1:] or command)]


@with_globals
def rerun_cmd(
    g: Application,
    ctx: typer.Context,
    name: JobName,
    new_name: Annotated[str | None, typer.Option("--name", help="Name of the new job (default: NAME-2, or the "
                                                 "next free NAME-N).", show_default=False)] = None,
    type_: TypeO = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the new job's manifests; install nothing.")] = False,
    output: Annotated[DryRunOutput | None, typer.Option("--output", "-o", help="With --dry-run: manifests "
                                                        "(default) or values.", show_default=False)] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Follow the new job to its end; exit 0 succeeded, 1 failed, "
                                       "3 timed out.")] = False,
    timeout: Annotated[str | None, typer.Option("--timeout", help="With --wait: how long to wait. [default: 30m]",
                                                show_default=False)] = None,
    notify: Annotated[str | None, typer.Option("--notify", metavar="URL", help="With --wait: POST a JSON notice "
                                               "when the job ends.", show_default=False)] = None,
) -> None:
    """Submit a job again from its release's values: NAME first, then any submit flags of its kind (and a new
    training command after --), which replace what was recorded; everything else stays as it was."""
    from ..adapters.helm import NO_SOURCES
    from ..core.errors import UsageError
    from ..releases.reader import kind_of_type
    from ..releases.rerun import new_spec, next_name, read
    from ..workload.provenance import record, rerun_values
    from ..workload.submission import job_values
    from .submit import _install, _render

    if output is not None and not dry_run:
        raise UsageError(f"-o/--output {output.value} needs --dry-run")
    seconds = wait_seconds(wait, timeout, dry_run, default="30m")
    if notify is not None:
        from ..releases.notify import check_url

        if not wait:
            raise UsageError("--notify needs --wait")
        check_url(notify)
    kind = kind_of_type(type_)
    if new_name is not None:  # its grammar now; its length (the kind's limit) once the job's kind is read
        from ..core.grammars import check_dns1035

        try:
            check_dns1035(new_name, "--name")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    ns, c = cluster_for(g)
    rec = read(c, ns, name, kind)
    key = rec.submit_key
    given, given_params = _given_fields(key, list(ctx.args))
    if new_name is None:
        new_name = next_name(name, {n for (rns, n) in c.index(ns) if rns == ns})
    spec = new_spec(rec, new_name, given)
    old_generated = job_values(rec.old_spec())
    words = ["arena-helm", *g.argv]
    submit_line = _submit_line(key, rec.submit_line, list(ctx.args), new_name, given_params)

    def make_values(s, git_commit: str = ""):
        return rerun_values(rec.values, old_generated, job_values(s),
                            record(s, words, git_commit, submit_line=submit_line))

    if dry_run:
        from ..adapters.identity import submitting_user
        from ..adapters.kubeconfig import load

        # a rerun reads the cluster anyway: its dry run names the user the API server names, as its install would
        spec = spec.model_copy(update={"user": submitting_user(load(g.kubeconfig, g.context), c.kube)})
        _render(spec, NO_SOURCES, output, g, values=make_values(spec))
        return
    run = {"wait": wait, "notify": notify}
    _install(spec, NO_SOURCES, run, seconds, g, make_values=make_values)


class ExportFormat(str, enum.Enum):
    command = "command"
    values = "values"
    json = "json"
    yaml = "yaml"


@with_globals
def export_cmd(
    g: Application,
    name: JobName,
    type_: TypeO = None,
    output: Annotated[ExportFormat, typer.Option("--output", "-o", help="command: the submit command line; values: "
                                                 "the release's values (helm install CHART -f FILE makes the same "
                                                 "job); json or yaml: both, with the recorded spec.")] =
    ExportFormat.command,
) -> None:
    """Print what reproduces a job: the command line it was submitted with, or its release's values."""
    from ..releases.reader import kind_of_type
    from ..releases.rerun import command_line, read
    from ..views.output import as_json, as_yaml

    kind = kind_of_type(type_)
    ns, c = cluster_for(g)
    rec = read(c, ns, name, kind)
    values = {k: v for k, v in rec.values.items() if k != "provenance"}
    if output is ExportFormat.values:
        typer.echo(as_yaml(values), nl=False)
        return
    if output is ExportFormat.command:
        line = command_line(rec)
        if not line:
            from ..core.errors import UsageError

            raise UsageError(f"release {name} in namespace {ns} recorded no command line (submitted through the "
                             "Python API): use -o values or -o yaml")
        how = "made by arena-helm rerun" if rec.provenance.get("submitLine") else "submitted with arena-helm"
        typer.echo(f"# {rec.kind} {name} in namespace {ns}, {how} {rec.provenance.get('version', '?')}:")
        typer.echo(line)
        return
    doc = {"kind": rec.kind, "name": name, "namespace": ns, "version": rec.provenance.get("version", ""),
           "commandLine": rec.provenance.get("commandLine") or [], "submitLine": rec.submit_line,
           "spec": rec.spec_fields, "values": values}
    typer.echo(as_json(doc) if output is ExportFormat.json else as_yaml(doc), nl=output is ExportFormat.json)
