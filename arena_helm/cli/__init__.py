"""The ``arena-helm`` command line: its commands, each built when invoked. Only modules under ``arena_helm.cli``
import Typer.

Errors are translated once, in ``groups.ArenaGroup``: a usage error (bad flag or value) is one ``error:`` line and exit 2;
an ``ArenaHelmError`` is one line and its exit code (1 for runtime failures); never a traceback (unless
``--debug`` is given).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..core.jobkinds import KINDS
from .common import ArenaConfig, ArenaNamespace, Context, Kubeconfig, LogLevel, Namespace, loglevel_option
from .groups import Entry, FastCommand, LazyGroup, application, lazy_app, new_app

__all__ = ["COMMANDS", "FastCommand", "app", "lazy_app", "main", "new_app"]


_KIND_NAMES = ", ".join(k.kind for k in KINDS)

# The commands: `arena-helm --help` needs just these names and lines.
COMMANDS: dict[str, Entry] = {
    "submit": ("submit", "app", f"Submit a training job ({_KIND_NAMES}) as a Helm release.", False, {}),
    "fit": ("submit", "fit_app", "Check whether a job would fit the cluster now (exit 0), later (4) or never (5).",
            False, {}),
    "list": ("jobs", "list_cmd", "List the training jobs (newest first).", False, {}),
    "ls": ("jobs", "list_cmd", "List the training jobs (newest first).", True, {}),
    "get": ("jobs", "get_cmd", "Show one job: status, instances, TensorBoard, and why it is pending or failed.",
            False, {}),
    "logs": ("jobs", "logs_cmd", "Print a job's log: the chief/master/launcher pod by default.", False, {}),
    "log": ("jobs", "logs_cmd", "Print a job's log: the chief/master/launcher pod by default.", True, {}),
    "delete": ("jobs", "delete_cmd", "Delete jobs: uninstall each job's release (job, TensorBoard and all).", False,
               {}),
    "del": ("jobs", "delete_cmd", "Delete jobs: uninstall each job's release (job, TensorBoard and all).", True, {}),
    "prune": ("jobs", "prune_cmd", "Uninstall the releases of jobs that finished long enough ago.", False, {}),
    "top": ("jobs", "top_app", "GPU (and CPU/memory) use of jobs and nodes.", False, {}),
    "suspend": ("lifecycle", "suspend_cmd", "Suspend a job (its pods are deleted) through a helm upgrade of its release.",
                False, {}),
    "resume": ("lifecycle", "resume_cmd", "Resume a suspended job (its pods are recreated).", False, {}),
    "scaleout": ("lifecycle", "scaleout_cmd", "Add workers to an elastic job (--count N) through a helm upgrade.",
                 False, {}),
    "scalein": ("lifecycle", "scalein_cmd", "Remove workers from an elastic job (--count N) through a helm upgrade.",
                False, {}),
    "wait": ("lifecycle", "wait_cmd", "Wait until a job succeeds or fails (exit 0, 1; 3 on --timeout); --notify URL.",
             False, {}),
    "rerun": ("rerun", "rerun_cmd", "Submit a job again from its release's values, with the flags given changed.",
              False, {"allow_extra_args": True, "ignore_unknown_options": True}),
    "export": ("rerun", "export_cmd", "Print what reproduces a job: its submit command line or its values.", False,
               {}),
    "attach": ("lifecycle", "attach_cmd", "Open a shell (or run a command) in a job's pod.", False, {}),
    "data": ("data", "app", "Data volumes (PVCs) jobs can mount: data list.", False, {}),
    "tensorboard": ("tensorboard", "app", "Standalone TensorBoards (start, stop, list, open).", False, {}),
    "workspace": ("workspace", "app", "Interactive workspaces: Jupyter, code-server or a shell with GPUs, stopped "
                  "when idle (start, list, get, open, attach, stop, delete).", False, {}),
    "serve": ("serve", "app", "Serve a model: a Deployment and a Service per version (custom, vllm, tensorflow, update, list, get, "
              "logs, attach, delete).",
              False, {}),
    "doctor": ("doctor", "doctor", "Check that the cluster and your permissions are ready for arena-helm.", False,
               {}),
    "version": ("version", "version", "Print the arena-helm version and the helm version it uses.", False, {}),
}


class RootGroup(LazyGroup):
    entries = COMMANDS
    _built: dict[str, object] = {}


app = typer.Typer(
    name="arena-helm",
    cls=RootGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
    help=f"Submit and follow distributed training jobs ({_KIND_NAMES}) on Kubernetes, as Helm charts.",
)


def _print_version(value: bool) -> None:
    if value:
        from ..__about__ import __version__

        typer.echo(f"arena-helm {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print the arena-helm version and exit (helm's too: arena-helm "
                                          "version).")] = False,
    namespace: Namespace = None,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    loglevel: loglevel_option(hidden=False) = None,  # type: ignore[valid-type]
    arena_namespace: ArenaNamespace = None,
    arena_config: ArenaConfig = None,
) -> None:
    """Submit and follow distributed training jobs on Kubernetes, as Helm charts. The global flags here (as
    Arena's) apply to the command that follows; a command's own win."""
    application().given(namespace=namespace, kubeconfig=kubeconfig, context=context,
                        debug=loglevel is LogLevel.debug)


def main() -> None:
    """Console entry point (``arena-helm``, and ``arenahelm``: the same tool under a name Arena's installer does
    not take). Arena's installer puts helm on PATH as ``arena-helm`` too, and Arena runs that name as its helm:
    a helm command line meant for it (``adapters.helmbin.helm_for_arena``) is handed, byte for byte, to Arena's
    helm further on PATH, so that installing this tool does not break Arena."""
    import os

    from ..adapters.helmbin import helm_for_arena

    helm = helm_for_arena(sys.argv[1:])
    if helm is not None:
        os.execv(helm, [helm, *sys.argv[1:]])
    app(prog_name="arena-helm")
