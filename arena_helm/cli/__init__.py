"""The ``arena-helm`` command line. Only modules under ``arena_helm.cli`` import Typer.

Errors are translated once, here: a usage error (bad flag or value) is one ``error:`` line and exit 2;
an ``ArenaHelmError`` is one line and its exit code (1 for runtime failures); never a traceback (unless
``--debug`` is given).
"""

from __future__ import annotations

import os
import sys

import typer
import typer.main
from typer._click.exceptions import ClickException, UsageError
from typer.core import TyperGroup
from typer.exceptions import Abort

from ..errors import ArenaHelmError
from .common import STATE


class ArenaGroup(TyperGroup):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        STATE["debug"] = False
        try:
            rv = super().main(args=args, prog_name=prog_name or "arena-helm", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{hint}", err=True)
            code = 2
        except ClickException as exc:
            typer.echo(f"error: {exc.format_message()}", err=True)
            code = exc.exit_code
        except ArenaHelmError as exc:
            if STATE["debug"]:
                raise
            typer.echo(f"error: {exc}", err=True)
            code = exc.exit_code
        except Abort:
            typer.echo("aborted", err=True)
            code = 1
        else:
            code = rv if isinstance(rv, int) else 0
        finally:
            if STATE["debug"]:  # --debug's log handler belongs to this invocation only
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
    """With ARENA_HELM_STATS=1: how many helm processes and API requests this command made (stderr)."""
    helm = sys.modules.get("arena_helm.helm")
    kube = sys.modules.get("arena_helm.kube")
    calls = helm.STATS["helm_calls"] if helm else 0
    requests = kube.STATS["api_requests"] if kube else 0
    typer.echo(f"stats: helm_calls={calls} api_requests={requests}", err=True)


def new_app(**kwargs) -> typer.Typer:
    return typer.Typer(
        cls=ArenaGroup,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
        **kwargs,
    )


# The commands, imported and built only when used: `arena-helm --help` needs just these names and lines.
# name -> (module under arena_helm.cli, attribute: a Typer app or a command function, short help, hidden)
COMMANDS: dict[str, tuple[str, str, str, bool]] = {
    "submit": ("submit", "app", "Submit a training job (TFJob, PyTorchJob or MPIJob) as a Helm release.", False),
    "list": ("jobs", "list_cmd", "List the training jobs (newest first).", False),
    "ls": ("jobs", "list_cmd", "List the training jobs (newest first).", True),
    "get": ("jobs", "get_cmd", "Show one job: status, instances, TensorBoard, and why it is pending.", False),
    "logs": ("jobs", "logs_cmd", "Print a job's log: the chief/master/launcher pod by default.", False),
    "log": ("jobs", "logs_cmd", "Print a job's log: the chief/master/launcher pod by default.", True),
    "delete": ("jobs", "delete_cmd", "Delete jobs: uninstall each job's release (job, TensorBoard and all).", False),
    "del": ("jobs", "delete_cmd", "Delete jobs: uninstall each job's release (job, TensorBoard and all).", True),
    "prune": ("jobs", "prune_cmd", "Uninstall the releases of jobs that finished long enough ago.", False),
    "top": ("jobs", "top_app", "GPU (and CPU/memory) use of jobs and nodes.", False),
    "tensorboard": ("tensorboard", "app", "Standalone TensorBoards (start, stop, list, open).", False),
    "version": ("version", "version", "Print the arena-helm version and the helm version it uses.", False),
}


class RootGroup(ArenaGroup):
    """The top-level group: builds a sub-command (and imports its module) only when it is invoked."""

    _built: dict[str, object] = {}

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, cmd_name):
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if cmd_name not in self._built:
            import importlib

            module, attr, _, hidden = entry
            obj = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
            if not isinstance(obj, typer.Typer):
                single = new_app()
                single.command(cmd_name, hidden=hidden)(obj)
                obj = single
            cmd = typer.main.get_command(obj)
            cmd.name = cmd_name
            cmd.hidden = hidden
            self._built[cmd_name] = cmd
        return self._built[cmd_name]

    def format_commands(self, ctx, formatter):
        rows = [(name, help_) for name, (_, _, help_, hidden) in COMMANDS.items() if not hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="arena-helm",
    cls=RootGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
    help="Submit and follow distributed training jobs (TFJob, PyTorchJob, MPIJob) on Kubernetes, as Helm charts.",
)


@app.callback()
def _root() -> None:
    """Submit and follow distributed training jobs (TFJob, PyTorchJob, MPIJob) on Kubernetes, as Helm charts."""


def main() -> None:
    """Console entry point."""
    app(prog_name="arena-helm")
