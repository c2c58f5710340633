"""The one generator of commands from a spec: each field of a spec (a job kind's, a serving kind's, the
workspace's) is a flag (``data_dir`` is ``--data-dir``, with the field's description as help, its choices as an
enum and its default shown; Arena's hidden spellings too), and the flags given become the spec's fields.
``spec_command`` builds ``submit KIND``, ``serve KIND``, ``serve update KIND`` and ``workspace start`` alike:
their leading parameters, the spec's flags, the command's own run options and the global options.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from .common import GLOBAL_OPTIONS, Application, LogLevel, application, complete_claims
from .groups import FastCommand

CMD_SETTINGS = {"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]}

Option = tuple[str, Any, Any]  # a parameter of a command: (name, annotation, default)


def Opt(*names: str, help: str, **kw) -> Any:  # noqa: A002,N802 - mirrors typer.Option
    return typer.Option(*names, help=help, show_default=kw.pop("show_default", False), **kw)


# ---- spec fields -> options -----------------------------------------------------------------------
@dataclass(frozen=True)
class FieldOption:
    param: str        # the Python parameter name Typer sees
    field: str        # the spec field it sets
    repeatable: bool
    flag: bool        # a boolean switch
    hidden: bool


def _cli_type(annotation: Any) -> tuple[type, bool]:
    """The type Typer parses for a spec field, and whether the flag repeats (list and map fields)."""
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        annotation = rest[0] if len(rest) == 1 else str
    if typing.get_origin(annotation) is Annotated:
        annotation, *metadata = typing.get_args(annotation)
        if annotation is int and any(type(m).__name__ == "BeforeValidator" for m in metadata):
            return str, False  # an int the spec parses from text (a duration such as 10m)
    if typing.get_origin(annotation) in (list, dict):
        return str, True
    if annotation is bool:
        return bool, False
    if annotation is int:
        return int, False
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation, False
    return str, False


def _default_note(default: Any) -> str:
    if default is None or default is False or default == [] or default == {} or default == "":
        return ""
    return f" [default: {default.value if isinstance(default, enum.Enum) else default}]"


# shell completion of a field's values
COMPLETERS = {"data": complete_claims}


def spec_options(spec_cls) -> tuple[list[inspect.Parameter], list[FieldOption]]:
    """Typer parameters for every CLI field of ``spec_cls`` (Arena's hidden spellings included)."""
    from ..workload.spec import PodLevelFlags, flag_info

    fields = list(spec_cls.model_fields.items())
    if issubclass(spec_cls, PodLevelFlags):  # the command's own flags first, then the pod-level ones it inherits
        fields.sort(key=lambda item: item[0] in PodLevelFlags.model_fields)
    params: list[inspect.Parameter] = []
    options: list[FieldOption] = []
    for name, info in fields:
        meta = flag_info(info) or {}
        if meta.get("cli") is False:
            continue
        ptype, repeatable = _cli_type(info.annotation)
        if ptype is int and any(type(m).__name__ == "BeforeValidator" for m in info.metadata):
            ptype = str  # an int the spec parses from text (a duration such as 2h), not Optional
        default = None if info.default_factory is not None else info.default
        help_text = (info.description or "") + _default_note(default)
        long = "--" + name.replace("_", "-")
        spellings = [((long, *meta.get("short", ())), False, name)]
        spellings += [((hidden,), True, f"{name}__{i}") for i, hidden in enumerate(meta.get("hidden", ()))]
        for flags, hidden, param in spellings:
            if ptype is bool:
                annotation = Annotated[bool, typer.Option(*flags, help=help_text, hidden=hidden)]
                pdefault: Any = False
            else:
                base = list[ptype] if repeatable else ptype  # type: ignore[valid-type]
                annotation = Annotated[base | None, typer.Option(  # type: ignore[operator]
                    *flags, help=help_text, hidden=hidden, show_default=False, metavar=meta.get("metavar"),
                    autocompletion=COMPLETERS.get(name))]
                pdefault = None
            params.append(inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=pdefault,
                                            annotation=annotation))
            options.append(FieldOption(param, name, repeatable, ptype is bool, hidden))
    return params, options


def fields_from(kwargs: dict[str, Any], options: list[FieldOption]) -> dict[str, Any]:
    """The spec fields the user gave (an unset flag leaves the spec's default); a hidden spelling counts as
    its field, and one field given two ways with two values is a usage error."""
    from ..core.errors import UsageError

    fields: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for opt in options:
        value = kwargs.pop(opt.param)
        if value is None or value is False or (opt.repeatable and not value):
            continue
        if isinstance(value, enum.Enum):
            value = value.value
        if opt.repeatable:
            value = list(fields.get(opt.field, [])) + list(value)
        elif opt.field in fields and fields[opt.field] != value:
            raise UsageError(f"--{opt.field.replace('_', '-')} is given twice ({spelled[opt.field]} and "
                             f"{opt.param}) with two values: give it once")
        fields[opt.field] = value
        spelled.setdefault(opt.field, opt.param)
    return fields


# ---- the words after the flags --------------------------------------------------------------------
class WordsCommand(FastCommand):
    """Keeps the raw arguments, to tell a ``--`` the user typed from the words after the flags (a training command,
    a server's command or arguments)."""

    def parse_args(self, ctx, args):
        ctx.meta["arena_helm.raw_args"] = list(args)
        return super().parse_args(ctx, args)


def check_command_words(ctx: typer.Context | None, words: list[str]) -> None:
    """Refuse an arena-helm flag typed after the training command (unless a ``--`` came first)."""
    from ..core.errors import UsageError

    if ctx is None or not words:
        return
    raw = ctx.meta.get("arena_helm.raw_args", [])
    if "--" in raw and raw[raw.index("--") + 1:][-len(words):] == words and \
            len(raw) - raw.index("--") - 1 >= len(words):
        return  # the user wrote -- before (part of) the command: everything after it is the command
    known = {name for p in ctx.command.params for name in (*p.opts, *p.secondary_opts) if name.startswith("-")}
    for word in words:
        flag = word.split("=", 1)[0]
        if flag in known:
            raise UsageError(
                f"{flag} comes after the training command: put arena-helm's flags before the command "
                f"(or put -- before a command that itself takes {flag})"
            )


def keyword(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def spec_command(spec_cls: type, action: Callable[[dict[str, Any], dict[str, Any], dict[str, Any], Application], None],
                 *, name: str, doc: str, leading: Sequence[Option] = (), run_options: Sequence[Option] = (),
                 only: Collection[str] | None = None) -> Callable[..., None]:
    """A command whose parameters are ``leading`` (a context, an argument, the words after the flags), the
    flags of ``spec_cls``'s fields (only those of the fields named in ``only``, when given), ``run_options``
    (how to run: --dry-run, --wait, ...) and the global options. Invoked, it calls ``action(lead, fields, run,
    g)``: the leading parameters' values, the spec fields given on the command line, the run options' values
    and the globals (Arena's ``--loglevel debug`` among the run options is ``--debug``)."""
    spec_params, options = spec_options(spec_cls)
    if only is not None:
        options = [o for o in options if o.field in only]
        keep = {o.param for o in options}
        spec_params = [p for p in spec_params if p.name in keep]
    lead = [keyword(n, a, d) for n, a, d in leading]
    params = [*lead, *spec_params, *(keyword(n, a, d) for n, a, d in [*run_options, *GLOBAL_OPTIONS])]

    def command(**kwargs: Any) -> None:
        given = {p.name: kwargs.pop(p.name) for p in lead}
        run = {n: kwargs.pop(n) for n, _, _ in run_options}
        glob = {n: kwargs.pop(n) for n, _, _ in GLOBAL_OPTIONS}
        glob["debug"] = glob["debug"] or run.get("loglevel") is LogLevel.debug
        action(given, fields_from(kwargs, options), run, application().given(**glob))

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = doc
    command.__name__ = name
    return command
