from __future__ import annotations

import typer

from ..__about__ import __version__
from .common import HelmBinary


def version(helm_binary: HelmBinary = None) -> None:
    from ..helm import Helm

    typer.echo(f"arena-helm {__version__}")
    typer.echo(f"helm {Helm(helm_binary).version()}")
