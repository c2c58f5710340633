"""``suspend``, ``resume``, ``scaleout``, ``scalein``, ``wait`` and ``attach``: pause or scale a job (through its
release), follow it to its end, open a shell in one of its pods."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import Application, AttachCommand, AttachTty, JobName, TypeO, cluster_for, with_globals


def _set_suspend(name: str, suspend: bool, type_, g: Application) -> None:
    from ..releases.reader import kind_of_type
    from ..releases.suspension import set_suspend

    kind = kind_of_type(type_)
    ns, c = cluster_for(g)
    r = set_suspend(c, ns, name, suspend, kind)
    what = "suspended: the operator deletes its pods" if suspend else "resumed: the operator recreates its pods"
    typer.echo(f"{r.kind.lower()}/{r.name} {what} (release {r.name} revision {r.revision}, namespace {r.namespace})")


@with_globals
def suspend_cmd(
    g: Application,
    name: JobName,
    type_: TypeO = None,
) -> None:
    """Suspend a job: a helm upgrade of its release with runPolicy.suspend=true (the operator deletes its pods)."""
    _set_suspend(name, True, type_, g)


@with_globals
def resume_cmd(
    g: Application,
    name: JobName,
    type_: TypeO = None,
) -> None:
    """Resume a suspended job: a helm upgrade with runPolicy.suspend=false (the operator recreates its pods)."""
    _set_suspend(name, False, type_, g)


def _scale(name: str, count: int, type_, g: Application) -> None:
    from ..releases.reader import kind_of_type
    from ..releases.suspension import scale_workers

    kind = kind_of_type(type_)
    ns, c = cluster_for(g)
    r = scale_workers(c, ns, name, count, kind)
    typer.echo(f"{r.kind.lower()}/{r.name} scaled from {r.before} to {r.workers} workers (release {r.name} revision "
               f"{r.revision}, namespace {r.namespace})")


ScaleCount = Annotated[int, typer.Option("--count", min=1, help="How many workers to add or remove (Arena's).")]


@with_globals
def scaleout_cmd(
    g: Application,
    name: JobName,
    count: ScaleCount = 1,
    type_: TypeO = None,
) -> None:
    """Add workers to an elastic job (submitted with --min-workers/--max-workers): a helm upgrade of its release,
    up to its --max-workers."""
    _scale(name, count, type_, g)


@with_globals
def scalein_cmd(
    g: Application,
    name: JobName,
    count: ScaleCount = 1,
    type_: TypeO = None,
) -> None:
    """Remove workers from an elastic job: a helm upgrade of its release, down to its --min-workers."""
    _scale(name, -count, type_, g)


@with_globals
def wait_cmd(
    g: Application,
    name: JobName,
    timeout: Annotated[str, typer.Option("--timeout", help="How long to wait (e.g. 90s, 30m, 2h).")] = "30m",
    notify: Annotated[str | None, typer.Option("--notify", metavar="URL", show_default=False,
                                               help="POST a JSON notice (job, status, duration, GPUs, failure) to "
                                               "URL when the job ends.")] = None,
    type_: TypeO = None,
) -> None:
    """Wait until a job succeeds or fails: exit 0 succeeded, 1 failed, 3 still running after --timeout."""
    from ..core.errors import UsageError
    from ..core.grammars import parse_duration
    from ..releases.reader import find_job, kind_of_type
    from ..workload.submission import wait_job

    try:
        seconds = parse_duration(timeout)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None
    if notify is not None:
        from ..releases.notify import check_url

        check_url(notify)
    wanted = kind_of_type(type_)
    ns, c = cluster_for(g)
    kind, version, job, _ = find_job(c, ns, name, wanted)
    if job is None:
        from ..core.errors import NotFoundError

        raise NotFoundError(f"release {name} in namespace {ns} has no {kind} object to wait for "
                            f"(see arena-helm get {name} -n {ns})")
    phase = wait_job(c.kube, kind, version, ns, name, seconds, progress=lambda m: typer.echo(m, err=True))
    if notify is not None:
        from ..releases.notify import send

        warning = send(c, ns, name, kind, notify)
        if warning:
            typer.echo(f"warning: {warning}", err=True)
    if phase != "Succeeded":
        raise typer.Exit(1)


@with_globals
def attach_cmd(
    g: Application,
    name: JobName,
    command: AttachCommand = None,
    instance: Annotated[str | None, typer.Option("--instance", "-i", help="Pod to enter (default: the chief, "
                                                 "master or launcher).", show_default=False)] = None,
    container: Annotated[str | None, typer.Option("--container", "-c", help="Container (default: the pod's "
                                                  "first).", show_default=False)] = None,
    tty: AttachTty = None,
    type_: TypeO = None,
) -> None:
    """Open a shell (or run one command after --) in a job's pod; exits with the command's exit code."""
    import sys

    from ..adapters.kube import open_exec
    from ..releases.attach import pick_target, run_attached
    from ..releases.reader import kind_of_type

    kind = kind_of_type(type_)
    ns, c = cluster_for(g)
    target = pick_target(c, ns, name, instance, container, kind)
    argv = list(command or []) or ["sh"]
    if tty is None:
        tty = not command and sys.stdin.isatty() and sys.stdout.isatty()
    ch = open_exec(c.kube, ns, target.pod, target.container, argv, tty)
    code = run_attached(ch, target.pod, tty=tty)
    if code:
        raise typer.Exit(code)
