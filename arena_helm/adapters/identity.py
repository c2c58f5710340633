"""Who submits: the user name Arena records on a job (label ``arena.kubeflow.org/uid``, the md5 of the name,
and annotation ``arena.kubeflow.org/username``).

Follows Arena's ``getUserName`` (kubeflow/arena ``pkg/apis/config/user.go``): basic auth is
``kubecfg:basicauth:<username>``; a client certificate is the API server's answer to "who am I", which for a
certificate is its subject CommonName (Arena asks with a SelfSubjectReview, served from Kubernetes 1.27, and
falls back to the CommonName offline; arena-helm reads the CommonName, which is the same name); a bearer
token is what a TokenReview of it says (one API request, so only when the job is really submitted; the answer
is kept for an hour in the cache folder under the SHA-256 of the server and the token, never the token itself,
so that the next submits with that token need neither the request nor the kubernetes client's import).
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


TOKEN_USERS = "token-users.json"  # in the cache folder: {sha256(server, token): {"user": NAME, "at": EPOCH}}
TOKEN_USER_TTL = 3600.0  # seconds a TokenReview's answer is reused


def _token_key(server: str | None, token: str) -> str:
    import hashlib

    return hashlib.sha256(f"{server or ''}\n{token}".encode()).hexdigest()


def _read_token_users(path) -> dict[str, Any]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cached_token_user(server: str | None, token: str, ask, now: float | None = None) -> str | None:
    """The user ``token`` names on ``server``: the cache's answer younger than TOKEN_USER_TTL, else ``ask(token)``
    (a TokenReview), kept when it names one. A cache that cannot be read or written is no cache."""
    import json
    import time

    from .defaults import cache_dir

    now = time.time() if now is None else now
    path = cache_dir() / TOKEN_USERS
    key = _token_key(server, token)
    users = _read_token_users(path)
    hit = users.get(key)
    if isinstance(hit, dict) and isinstance(hit.get("user"), str) and 0 <= now - float(hit.get("at", 0)) < TOKEN_USER_TTL:
        return hit["user"]
    name = ask(token)
    if name:
        users = {k: v for k, v in users.items() if isinstance(v, dict) and now - float(v.get("at", 0)) < TOKEN_USER_TTL}
        users[key] = {"user": name, "at": now}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{TOKEN_USERS}.{os.getpid()}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(users, f)
            os.replace(tmp, path)
        except OSError:
            pass
    return name


def submitting_user(view: KubeView | None, kube: Any = None) -> str | None:
    """The user name, asking the API server (``kube``) about a token when one is given (its answer cached:
    cached_token_user); None when unknown."""
    name, token = offline_user(view)
    if name or not token or kube is None:
        return name
    return cached_token_user(view.server if view is not None else None, token, kube.token_user)
