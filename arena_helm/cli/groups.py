"""Typer's groups and commands as arena-helm uses them: the group that turns every error into one line and an exit
code (``ArenaGroup``), the one object of an invocation handed to every command (``Application``), commands whose
plain parameters skip Typer's coercion (``FastCommand``), and groups that build a sub-command only when it is invoked
(``lazy_app``)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import typer
import typer.main
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer._click.globals import get_current_context
from typer.core import TyperCommand, TyperGroup
from typer.exceptions import Abort

from ..core.errors import ArenaHelmError


@dataclass
class Application:
    """One invocation of arena-helm, as every command sees it (the root context's ``obj``, as hatch's
    ``Application``): the global options (those given before the command, then the command's own, which win),
    --debug, and the command line (what a submit's provenance records). ``ArenaGroup.main`` makes a new one for
    each invocation; nothing of it lives in a module."""

    argv: list[str] = field(default_factory=list)
    namespace: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    helm_binary: str | None = None
    debug: bool = False

    def given(self, *, namespace: str | None = None, kubeconfig: str | None = None, context: str | None = None,
              helm_binary: str | None = None, debug: bool = False) -> Application:
        """The options given (on the command line, after the command's name, or before it): each one given
        replaces what was there; --debug, once given, stays on and sends arena-helm's log to this stderr."""
        for name, value in (("namespace", namespace), ("kubeconfig", kubeconfig), ("context", context),
                            ("helm_binary", helm_binary)):
            if value is not None:
                setattr(self, name, value)
        self.debug = self.debug or debug
        if self.debug:
            import logging

            logger = logging.getLogger("arena_helm")
            handler = logging.StreamHandler(sys.stderr)  # the stderr of this invocation
            handler.setFormatter(logging.Formatter("debug: %(name)s: %(message)s"))
            logger.handlers = [handler]
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
        return self


def application() -> Application:
    """The invocation's ``Application`` (a new, empty one where a command runs outside ``ArenaGroup.main``)."""
    ctx = get_current_context(silent=True)
    obj = ctx.find_object(Application) if ctx is not None else None
    if obj is None:
        obj = Application()
        if ctx is not None:
            ctx.find_root().obj = obj
    return obj


class ArenaGroup(TyperGroup):
    def get_params(self, ctx):
        params = super().get_params(ctx)  # with the help and completion options Typer adds late
        fast_params(params)
        return params

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        invocation = Application(argv=list(sys.argv[1:] if args is None else args))
        extra["obj"] = invocation
        from ..core.errors import SURFACE

        surface = SURFACE.set("cli")  # the messages name flags while a command runs
        # pydantic scans every installed distribution for plugins on first use (~20 ms+); the CLI has none
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
        try:
            rv = super().main(args=args, prog_name=prog_name or "arena-helm", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:  # `arena-helm` (or a group) alone: its help, as kubectl does
            typer.echo(exc.ctx.get_help())
            code = 0
        except UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{hint}", err=True)
            code = 2
        except ClickException as exc:
            typer.echo(f"error: {exc.format_message()}", err=True)
            code = exc.exit_code
        except ArenaHelmError as exc:
            if invocation.debug:
                raise
            typer.echo(f"error: {exc}", err=True)
            code = exc.exit_code
        except Abort:
            typer.echo("aborted", err=True)
            code = 1
        else:
            code = rv if isinstance(rv, int) else 0
        finally:
            SURFACE.reset(surface)
            if invocation.debug:  # --debug's log handler belongs to this invocation only
                import logging

                logger = logging.getLogger("arena_helm")
                logger.handlers = []
                logger.propagate = True
                logger.setLevel(logging.NOTSET)
        if os.environ.get("ARENA_HELM_STATS"):
            _print_stats()
        if standalone_mode:
            sys.exit(code)
        return code


def _print_stats() -> None:
    """With ARENA_HELM_STATS=1: how many helm processes, API requests and Prometheus queries this command
    made (stderr)."""
    from ..core import stats

    typer.echo(stats.line(), err=True)


def new_app(**kwargs) -> typer.Typer:
    return typer.Typer(
        cls=ArenaGroup,
        add_completion=False,  # only the root offers --install-completion
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
        **kwargs,
    )


def _plain_type(param) -> type | None:
    """str, int or an Enum when that is all a parameter's annotation says (``T``, ``T | None``, ``list[T]``)."""
    import enum
    import types
    import typing

    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        annotation = rest[0] if len(rest) == 1 else None
        args = typing.get_args(annotation)
    if typing.get_origin(annotation) is list and len(args) == 1:
        annotation = args[0]
    if annotation in (str, int) or (isinstance(annotation, type) and issubclass(annotation, enum.Enum)):
        return annotation
    return None


def plain_help(param) -> None:
    """Help that reads as kubectl's: an argument is its metavar (``NAME``, ``NAMES...``; never Typer's
    ``{name}`` or ``<list[str]>``), and a repeatable option shows its item's type (the help says it repeats)."""
    display = getattr(param, "display_type_rich", None)
    if display is None:
        return
    if param.param_type_name == "argument":
        if param.metavar is None:
            param.metavar = param.name.upper()
        shown = param.metavar + ("..." if param.nargs != 1 else "")
        param.display_type_rich = lambda ctx: None
        param._rich_display_name = lambda: shown
        param._usage_display_name = lambda: shown if param.required else f"[{shown}]"
        return

    def item_type(ctx, _display=display):
        shown = _display(ctx)
        return f"<{shown[6:-2]}>" if shown and shown.startswith("<list[") and shown.endswith("]>") else shown

    param.display_type_rich = item_type


def fast_params(params) -> None:
    """Let plain parameters skip Typer's per-parameter pydantic coercion.

    Typer builds a pydantic TypeAdapter for every parameter of an invoked command, given or not (about
    1.5 ms each, and the first one imports its adapter machinery); a submit command has ~80 options. An
    option left unset (None, or () when repeatable) needs no coercion, nor does a str value of a str option,
    an int default of an int option, an enum default of an enum option or a bool of a flag: those pass as
    they are (through the parameter's callback, as Typer would), and everything else (a number or a choice
    typed on the command line) goes through Typer.
    """
    for param in params:
        if getattr(param, "_arena_fast", False):
            continue
        param._arena_fast = True
        plain_help(param)
        original = param.process_value
        plain = _plain_type(param)
        flag = getattr(getattr(param, "type_descriptor", None), "annotation", None) is bool
        multi = param.multiple or param.nargs == -1

        def process_value(ctx, value, _original=original, _param=param, _plain=plain, _multi=multi, _flag=flag):
            if value is None and not _param.required:
                out = () if _multi else None
            elif _flag and isinstance(value, bool):
                out = value
            elif _plain is not None and _multi and isinstance(value, tuple | list) and all(
                    isinstance(v, _plain) and (_plain is not int or type(v) is int) for v in value):
                out = tuple(value)
            elif _plain is not None and not _multi and isinstance(value, _plain) and (
                    _plain is not int or type(value) is int):
                out = value
            else:
                return _original(ctx, value)
            return _param.callback(ctx, _param, out) if _param.callback is not None else out

        param.process_value = process_value


class FastCommand(TyperCommand):
    """A command whose plain parameters skip Typer's coercion (``fast_params``)."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        fast_params(params)
        return params


# entry: (module under arena_helm.cli, attribute: a Typer app or a command function, short help, hidden,
#         context settings of a single command)
Entry = tuple[str, str, str, bool, dict]


class LazyGroup(ArenaGroup):
    """A group that imports and builds a sub-command only when it is invoked (``entries`` per subclass):
    ``--help`` needs only the names and short helps."""

    entries: dict[str, Entry] = {}
    package = __name__.rpartition(".")[0]  # arena_helm.cli
    command_cls: type = FastCommand

    _built: dict[str, object] = {}  # per subclass: the commands built so far (reused by later invocations)

    def list_commands(self, ctx):
        return list(self.entries)

    def get_command(self, ctx, cmd_name):
        entry = self.entries.get(cmd_name)
        if entry is None:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self._built:
            import importlib

            module, attr, _, hidden, settings = entry
            obj = getattr(importlib.import_module(f"{self.package}.{module}"), attr)
            if not isinstance(obj, typer.Typer):
                single = new_app()
                single.command(cmd_name, hidden=hidden, cls=self.command_cls,
                               context_settings=settings or None)(obj)
                obj = single
            cmd = typer.main.get_command(obj)
            cmd.name = cmd_name
            cmd.hidden = hidden
            self._built[cmd_name] = cmd
        return self._built[cmd_name]

    def _aliases(self) -> dict[str, list[str]]:
        """A shown command -> its hidden aliases (the entries that build the same command)."""
        shown = {e[:2]: name for name, e in self.entries.items() if not e[3]}
        out: dict[str, list[str]] = {name: [] for name in shown.values()}
        for name, e in self.entries.items():
            if e[3] and e[:2] in shown:
                out[shown[e[:2]]].append(name)
        return out

    def format_commands(self, ctx, formatter):
        aliases = self._aliases()
        rows = [(", ".join([name, *aliases[name]]), e[2]) for name, e in self.entries.items() if not e[3]]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in self.entries and not ctx.resilient_parsing:
            import difflib

            canonical = {alias: shown for shown, names in self._aliases().items() for alias in [shown, *names]}
            guesses = [n for n in canonical if n.startswith(name.lower())] or difflib.get_close_matches(
                name.lower(), list(canonical), n=3, cutoff=0.6)
            guesses = list(dict.fromkeys(canonical[g] for g in guesses))
            if guesses:
                ctx.fail(f"No such command {name!r}. Did you mean {' or '.join(repr(g) for g in guesses)}?")
        return super().resolve_command(ctx, args)


def lazy_app(entries: dict[str, Entry], command_cls: type | None = None, **kwargs) -> typer.Typer:
    """A Typer app whose sub-commands are built on first use (single commands of class ``command_cls``)."""
    group = type("Lazy", (LazyGroup,), {"entries": entries, "command_cls": command_cls or FastCommand, "_built": {}})
    lazy = typer.Typer(
        cls=group,
        add_completion=False,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
        **kwargs,
    )
    lazy.callback()(_group_callback)  # a group with no eager commands still needs its callback
    return lazy


def _group_callback() -> None:
    pass
