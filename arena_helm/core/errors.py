"""One error hierarchy for the whole tool; the CLI edge turns it into a message and an exit code."""

from __future__ import annotations

import contextvars
import re

# Who reads the messages: "cli" while a command of the arena-helm CLI runs (it names flags), "python" for a
# caller of the Python API (the same messages name its parameters instead: ``workers=``, ``Helm(PATH)``)
SURFACE: contextvars.ContextVar[str] = contextvars.ContextVar("arena_helm_surface", default="python")


class ArenaHelmError(Exception):
    """Base of every error arena-helm reports to a user. ``str(err)`` is the one-line message, in the words
    of its reader (``SURFACE``): the CLI's flags, or the Python API's parameters."""

    exit_code = 1

    def __str__(self) -> str:
        text = super().__str__()
        return text if SURFACE.get() == "cli" else for_python(text)


# the options of the adapters and the CLI's words, as a Python caller spells them
_PYTHON_WORDS = {
    "--kubeconfig": "KubeReader(kubeconfig=FILE)", "--context": "KubeReader(context=NAME)",
    "--kube-context": "KubeReader(context=NAME)", "--helm-binary": "Helm(PATH)", "--dry-run": "render()",
}
_FLAG = re.compile(r"(?<![\w-])(?:-n/)?--([a-z][a-z0-9-]*)(?: (?:FILE|PATH|NAME)\b)?(?P<value> (?=[0-9'\"/]))?")


# The parameters of the Python API's specs: every spec class adds its fields as it is defined
# (``spec.PodFlags.__pydantic_init_subclass__``), so a message raised while validating a spec finds its
# parameters here, and this module, on the ground floor, imports no spec.
PARAMETERS: set[str] = set()


def for_python(text: str) -> str:
    """A message that names CLI flags, with the Python API's names: a spec field's flag ``--data-dir`` is
    ``data_dir=``; ``--kubeconfig FILE`` is ``KubeReader(kubeconfig=FILE)``; ``--helm-binary PATH`` is
    ``Helm(PATH)``; ``--dry-run`` is ``render()``. Other flags stay as they are."""
    if "--" not in text:
        return text

    def word(m: re.Match) -> str:
        flag = f"--{m.group(1)}"
        if flag in _PYTHON_WORDS:
            return _PYTHON_WORDS[flag]
        name = m.group(1).replace("-", "_")
        return f"{name}=" if name in PARAMETERS else m.group(0)  # "--workers 1" -> "workers=1"

    return _FLAG.sub(word, text)


class UsageError(ArenaHelmError):
    """Bad input from the user (a flag, a value, a file): exit 2."""

    exit_code = 2


class NotAJobError(UsageError):
    """A job command named a release of another chart (a workspace, ...)."""

    def __init__(self, name: str, namespace: str, chart: str):
        super().__init__(f"release {name} in namespace {namespace} is not an arena-helm job (chart {chart})")
        self.chart = chart


class HelmNotFoundError(ArenaHelmError):
    """No usable helm binary."""


class HelmError(ArenaHelmError):
    """helm ran and failed."""


class HelmTooOldError(HelmError):
    """The helm binary is older than arena-helm needs: it was asked its version only, nothing else ran."""


class ClusterError(ArenaHelmError):
    """The API server could not be reached or answered with an error."""


class NotFoundError(ArenaHelmError):
    """A job, release or object that the user named does not exist."""


class NamespaceNotFoundError(NotFoundError):
    """The namespace a command writes to (the API server refused the first create in it) or lists does not exist."""


class AlreadyExistsError(ArenaHelmError):
    """A job or release of that name already exists."""


class ForbiddenError(ArenaHelmError):
    """RBAC denied the request. ``denied``: what was denied to whom (``listing nodes: forbidden: User "u"
    cannot list nodes cluster-wide``), for a caller that says itself what to do about it."""

    denied = ""


class WaitTimeoutError(ArenaHelmError):
    """``--wait`` gave up before the job finished."""

    exit_code = 3


# ---- the causes of a failure to talk to the cluster (arena_helm.adapters.failures classifies them) ---------------
class UnreachableError(ClusterError):
    """The API server could not be reached at all (nothing was sent, nothing changed)."""


class CredentialsError(ClusterError):
    """The API server rejected the credentials (401): nothing was read or changed."""


class KubeconfigError(ClusterError):
    """The kubeconfig is missing, unreadable, malformed, or names no usable context."""
