from __future__ import annotations

import typer

from ..__about__ import __version__
from .common import Application, with_globals


@with_globals
def version(g: Application) -> None:
    from ..adapters.helm import Helm

    typer.echo(f"arena-helm {__version__}")
    typer.echo(f"helm {Helm(g.helm_binary).version()}")
