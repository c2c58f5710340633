"""Finding the helm binary: ``--helm-binary``, then ``$ARENA_HELM_HELM``, then ``PATH``."""

from __future__ import annotations

import os
import shutil

from ..core.errors import HelmNotFoundError

ENV_VAR = "ARENA_HELM_HELM"
INSTALL_HINT = (
    "install helm 3.8+ or 4 (a checkout has scripts/install-helm.sh) and put it on PATH, "
    f"or pass --helm-binary PATH or set {ENV_VAR}"
)


def find_helm(explicit: str | None = None) -> str:
    """Return the path of the helm binary to use, or raise a one-line HelmNotFoundError."""
    for source, value in (("--helm-binary", explicit), (ENV_VAR, os.environ.get(ENV_VAR))):
        if value:
            path = shutil.which(value)
            if path is None:
                raise HelmNotFoundError(f"helm not found at {value!r} (from {source}): {INSTALL_HINT}")
            return path
    path = shutil.which("helm")
    if path is None:
        raise HelmNotFoundError(f"helm not found on PATH: {INSTALL_HINT}")
    return path
