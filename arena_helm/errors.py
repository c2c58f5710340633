"""One error hierarchy for the whole tool; the CLI edge turns it into a message and an exit code."""

from __future__ import annotations


class ArenaHelmError(Exception):
    """Base of every error arena-helm reports to a user. ``str(err)`` is the one-line message."""

    exit_code = 1


class UsageError(ArenaHelmError):
    """Bad input from the user (a flag, a value, a file): exit 2."""

    exit_code = 2


class HelmNotFoundError(ArenaHelmError):
    """No usable helm binary."""


class HelmError(ArenaHelmError):
    """helm ran and failed."""


class ClusterError(ArenaHelmError):
    """The API server could not be reached or answered with an error."""


class NotFoundError(ArenaHelmError):
    """A job, release or object that the user named does not exist."""


class AlreadyExistsError(ArenaHelmError):
    """A job or release of that name already exists."""


class ForbiddenError(ArenaHelmError):
    """RBAC denied the request."""


class WaitTimeoutError(ArenaHelmError):
    """``--wait`` gave up before the job finished."""

    exit_code = 3


# ---- the causes of a failure to talk to the cluster (arena_helm.failures classifies them) ---------------
class UnreachableError(ClusterError):
    """The API server could not be reached at all (nothing was sent, nothing changed)."""


class CredentialsError(ClusterError):
    """The API server rejected the credentials (401): nothing was read or changed."""


class KubeconfigError(ClusterError):
    """The kubeconfig is missing, unreadable, malformed, or names no usable context."""
