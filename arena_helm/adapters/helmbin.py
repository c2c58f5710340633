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


# ---- living beside Arena: its installer puts helm on PATH as `arena-helm` (kubeflow/arena v0.15.5 install.sh),
# and Arena runs that name as its helm (pkg/util/helm/helm.go helmCmd; helm_advanced.go through `bash -c`)
COMMAND = "arena-helm"
ALIAS = "arenahelm"  # this tool's clash-free name, for a PATH where Arena's helm comes first
# helm's commands that arena-helm does not have: given one, this tool is being run as a helm
HELM_ONLY = frozenset({"template", "install", "upgrade", "uninstall", "del", "un", "rollback", "status", "history",
                       "repo", "dependency", "dep", "package", "lint", "show", "inspect", "pull", "fetch", "push",
                       "search", "plugin", "env", "registry", "test", "verify", "create"})
# helm's commands that arena-helm has too (helm's delete: its uninstall): only the caller tells them apart
HELM_SHARED = frozenset({"list", "get", "delete", "version", "completion", "help"})


def commands_on_path(name: str = COMMAND) -> list[str]:
    """Every executable file named ``name`` on PATH, in PATH order (each folder once)."""
    out: list[str] = []
    for folder in dict.fromkeys(os.environ.get("PATH", "").split(os.pathsep)):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            out.append(path)
    return out


def is_ours(path: str) -> bool:
    """Whether the program at ``path`` is this tool (a Python entry point that imports ``arena_helm``) rather
    than another program of that name (Arena's helm: a Go binary)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
    except OSError:
        return False
    return head.startswith(b"#!") and b"arena_helm" in head


def arenas_helm(found: list[str] | None = None) -> str | None:
    """The first ``arena-helm`` on PATH (or of ``found``, ``commands_on_path()``'s) that is not this tool (Arena's
    helm), or None."""
    return next((p for p in (commands_on_path() if found is None else found) if not is_ours(p)), None)


def run_by_arena(depth: int = 3) -> bool:
    """Whether a program named ``arena`` started this process (or the shell that did, up to ``depth``
    ancestors): Arena running its helm. Linux's /proc; False where it cannot be read."""
    pid = os.getppid()
    for _ in range(depth):
        if pid <= 1:
            return False
        try:
            if os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "arena":
                return True
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def helm_for_arena(argv: list[str]) -> str | None:
    """Arena's helm when this command line is Arena's call of its helm (a helm command arena-helm lacks, or one
    both have that Arena itself runs) and Arena's helm is on PATH; None: the command is this tool's. Any other
    command (submit, logs, ...) reads nothing: the start-up of this tool's own commands pays no look."""
    if not argv or not (argv[0] in HELM_ONLY or (argv[0] in HELM_SHARED and run_by_arena())):
        return None
    return arenas_helm()
