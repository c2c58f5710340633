"""Who submits: the user name Arena records on a job (label ``arena.kubeflow.org/uid``, the md5 of the name,
and annotation ``arena.kubeflow.org/username``).

Follows Arena's ``getUserName`` (kubeflow/arena ``pkg/apis/config/user.go``): basic auth is
``kubecfg:basicauth:<username>``; a client certificate is the API server's answer to "who am I", which for a
certificate is its subject CommonName (Arena asks with a SelfSubjectReview, served from Kubernetes 1.27, and
falls back to the CommonName offline; arena-helm reads the CommonName, which is the same name); a bearer
token is what a TokenReview of it says (one API request, so only when the job is really submitted).
"""

from __future__ import annotations

import base64
import os
import tempfile
from typing import Any

from .kubeconfig import KubeView


def _user_entry(view: KubeView | None) -> dict[str, Any] | None:
    if view is None:
        return None
    ctx = view.context_entry() or {}
    for item in view.config.get("users") or []:
        if item.get("name") == ctx.get("user"):
            return item.get("user") or {}
    return None


def certificate_cn(pem: bytes) -> str | None:
    """The subject CommonName of a PEM certificate (CPython's own decoder; no extra dependency)."""
    import ssl

    with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as f:
        f.write(pem)
        path = f.name
    try:
        decoded = ssl._ssl._test_decode_cert(path)  # type: ignore[attr-defined]
    except (ssl.SSLError, OSError, ValueError):
        return None
    finally:
        os.unlink(path)
    for rdn in decoded.get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and value:
                return str(value)
    return None


def offline_user(view: KubeView | None) -> tuple[str | None, str | None]:
    """(user name, bearer token): the name when the kubeconfig alone tells it (basic auth, a client
    certificate), else the token a TokenReview can name (or None for both)."""
    user = _user_entry(view)
    if not user:
        return None, None
    if user.get("username") and user.get("password"):
        return f"kubecfg:basicauth:{user['username']}", None
    pem: bytes | None = None
    if user.get("client-certificate-data"):
        try:
            pem = base64.b64decode(user["client-certificate-data"])
        except ValueError:
            pem = None
    elif user.get("client-certificate"):
        try:
            with open(user["client-certificate"], "rb") as f:
                pem = f.read()
        except OSError:
            pem = None
    if pem is not None:
        return certificate_cn(pem) or "kubecfg:certauth:admin", None  # Arena's fallback name
    token = user.get("token")
    if not token and user.get("tokenFile"):
        try:
            with open(user["tokenFile"], encoding="utf-8") as f:
                token = f.read().strip()
        except OSError:
            token = None
    return None, token or None


def submitting_user(view: KubeView | None, kube: Any = None) -> str | None:
    """The user name, asking the API server (``kube``) about a token when one is given; None when unknown."""
    name, token = offline_user(view)
    if name or not token or kube is None:
        return name
    return kube.token_user(token)
