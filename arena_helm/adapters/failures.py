"""One classifier for every failure to work with the cluster, whoever met it (helm or the API client), so
that the helm-backed and the API-backed commands say the same thing with the same words:

- unreachable: ``{action}: cannot reach the API server at {server}: {reason}``
- credentials rejected (401): ``{action}: the API server at {server} rejected the kubeconfig's credentials
  (401 Unauthorized): ...``
- forbidden (403): ``{action}: forbidden: User "u" cannot VERB RESOURCE in namespace NS: ...`` (or
  ``cluster-wide``), with what the user may do instead
- kubeconfig missing or malformed: ``KubeconfigError`` from ``arena_helm.adapters.kubeconfig`` (hint: ``--kubeconfig``
  or ``--dry-run``)

Pure: no I/O, no kubernetes import.
"""

from __future__ import annotations

import re

from ..core.errors import (
    AlreadyExistsError,
    ArenaHelmError,
    ClusterError,
    CredentialsError,
    ForbiddenError,
    HelmNotFoundError,
    HelmTooOldError,
    KubeconfigError,
    NamespaceNotFoundError,
    NotFoundError,
    UnreachableError,
    UsageError,
)
from .kubeconfig import HINT as KUBECONFIG_HINT

# The API server's RBAC denial (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go, forbiddenMessage)
_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]*)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
    r'(?: in the namespace "(?P<namespace>[^"]*)"| at the cluster scope)?'
)
# The ResourceQuota admission's refusal (k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go:
# "exceeded quota: %s, requested: %s, used: %s, limited: %s"), after the object it refused
_QUOTA = re.compile(r'(?P<what>[\w.-]+ "[^"]+") is forbidden: exceeded quota: (?P<quota>[^,]+), '
                    r'requested: (?P<requested>.*?), used: (?P<used>.*?), limited: (?P<limited>.*)$')
_URL = re.compile(r'"?(?P<url>https?://[^/"\s]+)')
_REASONS = (
    (re.compile(r"connection refused", re.I), "connection refused"),
    (re.compile(r"no such host|name or service not known|nodename nor servname|temporary failure in name "
                r"resolution", re.I), "no such host"),
    (re.compile(r"i/o timeout|timed out|timeout", re.I), "timed out"),
    (re.compile(r"network is unreachable", re.I), "network is unreachable"),
    (re.compile(r"no route to host", re.I), "no route to host"),
    (re.compile(r"x509|certificate verify failed|certificate signed by unknown authority|CERTIFICATE_VERIFY", re.I),
     "its TLS certificate is not trusted (check certificate-authority in the kubeconfig)"),
    (re.compile(r"connection reset", re.I), "connection reset"),
)
# the API server's answer to a create in a namespace that does not exist (a NotFound Status of namespaces)
_NO_NAMESPACE = re.compile(r'namespaces "(?P<ns>[^"]+)" not found')
_UNAUTHORIZED = re.compile(r"provide credentials|\bunauthorized\b|must be logged in", re.I)
_KUBECONFIG = re.compile(r'stat (?P<path>\S+): no such file or directory|error loading config file "(?P<file>[^"]+)"'
                         r'(?P<rest>.*)', re.I)


def short_reason(text: str) -> str:
    """``connection refused`` out of urllib3's or Go's long story."""
    for pattern, short in _REASONS:
        if pattern.search(text):
            return short
    return " ".join(str(text).split())


def unreachable(action: str, server: str | None, reason: str) -> UnreachableError:
    return UnreachableError(f"{action}: cannot reach the API server at {server or '(unknown)'}: {short_reason(reason)}")


def credentials_rejected(action: str, server: str | None) -> CredentialsError:
    return CredentialsError(
        f"{action}: the API server at {server or '(unknown)'} rejected the kubeconfig's credentials (401 "
        "Unauthorized): renew the token or certificate of the context's user, or pick another context with --context"
    )


def forbidden(action: str, message: str) -> ForbiddenError:
    """The API server's RBAC denial, with verb, resource and namespace named, and what to do instead; or a
    ResourceQuota's refusal, with the quota's numbers and what to do."""
    q = _QUOTA.search(" ".join(message.split()))
    if q:
        return ForbiddenError(
            f"{action}: the ResourceQuota {q['quota']} refuses {q['what']} (requested {q['requested']}, used "
            f"{q['used']}, limited {q['limited']}): free some of it or ask a cluster admin for more (kubectl "
            f"describe resourcequota {q['quota']} in the release's namespace)")
    m = _FORBIDDEN.search(message)
    if not m:
        return ForbiddenError(f"{action}: forbidden: {' '.join(message.split())}")
    resource = m.group("resource")
    if m.group("group"):
        resource = f"{resource}.{m.group('group')}"
    ns = m.group("namespace")
    where = f"in namespace {ns}" if ns else "cluster-wide"
    instead = ("work in a namespace where you have it (-n NAMESPACE)" if ns else
               "stay in one namespace you may use (-n NAMESPACE without -A; top job rather than top node)")
    denied = f'{action}: forbidden: User "{m.group("user")}" cannot {m.group("verb")} {resource} {where}'
    err = ForbiddenError(f"{denied}: ask a cluster admin for that permission (RBAC), or {instead}")
    err.denied = denied
    return err


def no_namespace(action: str, message: str) -> NamespaceNotFoundError | None:
    """The API server's NotFound of the namespace a create names (helm's or the API client's), else None."""
    m = _NO_NAMESPACE.search(message)
    if m is None:
        return None
    ns = m.group("ns")
    return NamespaceNotFoundError(f"{action}: namespace {ns} does not exist: create it (kubectl create namespace "
                                  f"{ns}) or give another with -n NAMESPACE")


def from_api(status: int, message: str, action: str, server: str | None) -> ArenaHelmError:
    """An API error response (status code and the Status message) as one classified line."""
    if status == 401:
        return credentials_rejected(action, server)
    if status == 403:
        return forbidden(action, message)
    if status == 404:
        return no_namespace(action, message) or NotFoundError(f"{action}: {message}")
    if status == 409:
        return AlreadyExistsError(f"{action}: {message}")
    return ClusterError(f"{action}: {message or f'HTTP {status}'}")


def from_helm(msg: str, action: str, kubeconfig: str | None = None, context: str | None = None) -> ArenaHelmError | None:
    """helm's error line (``Error:`` stripped) classified, or None when it is none of these causes.
    ``kubeconfig`` and ``context`` are what helm was given: they name the server when helm does not."""
    low = msg.lower()
    m = _KUBECONFIG.search(msg)
    if m and "cluster unreachable" in low:
        if m.group("path"):
            return KubeconfigError(f"kubeconfig {m.group('path')} does not exist: {KUBECONFIG_HINT}")
        rest = (m.group("rest") or "").lstrip(": ").strip()
        return KubeconfigError(f"kubeconfig {m.group('file')} is malformed: {rest or 'not valid YAML'}: "
                               f"{KUBECONFIG_HINT}")
    if "forbidden" in low and (_FORBIDDEN.search(msg) or _QUOTA.search(msg)):
        return forbidden(action, msg)
    missing = no_namespace(action, msg)
    if missing is not None:
        return missing
    url = _URL.search(msg)
    server = url.group("url") if url else None
    if server is None:
        from .kubeconfig import lenient_server

        server = lenient_server(kubeconfig, context)
    if _UNAUTHORIZED.search(msg):
        return credentials_rejected(action, server)
    if "cluster unreachable" in low or any(p.search(msg) for p, _ in _REASONS[:5]):
        if "localhost:8080" in msg:  # client-go's fallback when no kubeconfig was found at all
            return KubeconfigError(f"no kubeconfig: helm found none (it fell back to localhost:8080): "
                                   f"{KUBECONFIG_HINT}")
        return unreachable(action, server, msg)
    return None


def nothing_installed(exc: BaseException) -> bool:
    """True when a failed ``helm install`` cannot have created anything: no usable helm ran (none found, or one
    too old), the cluster was never reached (unreachable, credentials rejected, no kubeconfig), the chart
    refused the values before any write, the namespace does not exist (helm's release record is its first
    write there), or RBAC refused helm a read or its own release storage (Secrets)."""
    if isinstance(exc, ForbiddenError) and re.search(r'User "[^"]*" cannot (get|list|watch) | secrets ', str(exc)):
        # helm reads (the release history, the objects it would create) before it writes, and writes its
        # release record (a Secret) before any object: a denied read or a denied Secret means nothing was made
        return True
    return isinstance(exc, UnreachableError | CredentialsError | KubeconfigError | UsageError | NamespaceNotFoundError
                      | HelmNotFoundError | HelmTooOldError)
