"""The ``arena-helm`` command line. Only modules under ``arena_helm.cli`` import Typer.

Errors are translated once, here: a usage error (bad flag or value) is one ``error:`` line and exit 2;
an ``ArenaHelmError`` is one line and its exit code (1 for runtime failures); never a traceback (unless
``--debug`` is given).
"""

from __future__ import annotations

import os
import sys

import typer
from typer._click.exceptions import ClickException, UsageError
from typer.exceptions import Abort
from typer.core import TyperGroup

from ..errors import ArenaHelmError


class ArenaGroup(TyperGroup):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
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
            if os.environ.get("ARENA_HELM_DEBUG"):
                raise
            typer.echo(f"error: {exc}", err=True)
            code = exc.exit_code
        except Abort:
            typer.echo("aborted", err=True)
            code = 1
        else:
            code = rv if isinstance(rv, int) else 0
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


app = new_app(
    name="arena-helm",
    help="Submit and follow distributed training jobs (TFJob, PyTorchJob, MPIJob) on Kubernetes, as Helm charts.",
)


@app.callback()
def _root() -> None:
    """Submit and follow distributed training jobs (TFJob, PyTorchJob, MPIJob) on Kubernetes, as Helm charts."""


def _register() -> None:
    from . import jobs, submit, tensorboard
    from . import version as version_cmd

    app.add_typer(submit.app, name="submit")
    jobs.register(app)
    app.add_typer(tensorboard.app, name="tensorboard")

    app.command("version", help="Print the arena-helm version and the helm version it uses.")(version_cmd.version)


_register()


def main() -> None:
    """Console entry point."""
    app(prog_name="arena-helm")
