"""The kubeconfig as kubectl reads it: pure file reads, no kubernetes import, no cluster.

Follows client-go's loading rules (k8s.io/client-go/tools/clientcmd/loader.go, ``ClientConfigLoadingRules``
and ``Load``, Kubernetes 1.20 and later):

- ``--kubeconfig FILE`` given explicitly: that one file, which must exist (kubectl: ``stat FILE: no such
  file or directory``); ``$KUBECONFIG`` is then ignored.
- else ``$KUBECONFIG``, a list of files separated by ``os.pathsep`` (``:``): files that do not exist are
  skipped, empty entries ignored, and the rest merged: the first file to set a map key (a cluster, user or
  context of a given name) wins and later files never change it; ``current-context`` comes from the first
  file that sets it.
- else ``~/.kube/config``.

Relative paths inside a file (``certificate-authority``, ``client-certificate``, ``client-key``,
``tokenFile``) are relative to that file, as client-go's ``ResolveLocalPaths`` makes them.

helm is given the same view: with an explicit ``--kubeconfig`` the same ``--kubeconfig FILE``; otherwise
nothing, so that helm (client-go) reads ``$KUBECONFIG`` from its environment and merges the list itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import KubeconfigError

HINT = "give the right one with --kubeconfig FILE (or KUBECONFIG)"
DRY_RUN_HINT = "or use --dry-run to render without a cluster"  # added by the commands that have --dry-run
_PATH_KEYS = {"clusters": ("cluster", ("certificate-authority",)),
              "users": ("user", ("client-certificate", "client-key", "tokenFile"))}


@dataclass
class KubeView:
    """The merged kubeconfig, and the context chosen from it."""

    files: list[Path]               # the files read (that exist), in precedence order
    source: str                     # where the file list came from: --kubeconfig, KUBECONFIG or the default path
    explicit: str | None            # the --kubeconfig file, if given
    config: dict[str, Any] = field(default_factory=dict)
    context: str | None = None      # --context, else the merged current-context

    def context_entry(self) -> dict[str, Any] | None:
        for item in self.config.get("contexts") or []:
            if item.get("name") == self.context:
                return item.get("context") or {}
        return None

    @property
    def namespace(self) -> str | None:
        ctx = self.context_entry()
        return (ctx or {}).get("namespace") or None

    @property
    def server(self) -> str | None:
        ctx = self.context_entry() or {}
        for item in self.config.get("clusters") or []:
            if item.get("name") == ctx.get("cluster"):
                return (item.get("cluster") or {}).get("server")
        return None

    def where(self) -> str:
        if self.explicit:
            return f"{self.explicit} (from --kubeconfig)"
        if self.source == "KUBECONFIG":
            return f"KUBECONFIG={os.environ.get('KUBECONFIG', '')}"
        return str(self.files[0]) if self.files else "~/.kube/config"

    def check(self) -> KubeView:
        """Raise a one-line KubeconfigError unless a context (and its cluster) can be used."""
        if not self.files:
            raise KubeconfigError(f"no kubeconfig: {self._missing()}: {HINT}")
        if not self.context:
            raise KubeconfigError(f"kubeconfig {self.where()} has no current-context: pick one with --context "
                                  f"NAME{self._known()}, or {HINT}")
        ctx = self.context_entry()
        if ctx is None:
            raise KubeconfigError(f"kubeconfig {self.where()} has no context {self.context!r}{self._known()}: "
                                  f"{HINT}")
        if not self.server:
            raise KubeconfigError(f"kubeconfig {self.where()}: context {self.context!r} names cluster "
                                  f"{ctx.get('cluster')!r}, which has no server: {HINT}")
        return self

    def _known(self) -> str:
        names = [str(c.get("name")) for c in self.config.get("contexts") or [] if c.get("name")]
        return f" (it has {', '.join(names)})" if names else " (it has no contexts)"

    def _missing(self) -> str:
        if self.source == "KUBECONFIG":
            return f"none of the files in KUBECONFIG={os.environ.get('KUBECONFIG', '')} exists"
        return "~/.kube/config does not exist"

    def helm_kubeconfig(self) -> str | None:
        """What to pass to helm as --kubeconfig: the explicit file only (helm reads $KUBECONFIG itself)."""
        return self.explicit


def candidate_files(explicit: str | None) -> tuple[list[Path], str]:
    if explicit:
        return [Path(explicit)], "--kubeconfig"
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p], "KUBECONFIG"
    return [Path.home() / ".kube" / "config"], "default"


def _read(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise KubeconfigError(f"kubeconfig {path} is not a text (YAML) file: {HINT}") from None
    except OSError as exc:
        raise KubeconfigError(f"cannot read the kubeconfig {path}: {exc.strerror}: {HINT}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise KubeconfigError(f"kubeconfig {path} is malformed{at}: {problem}: {HINT}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KubeconfigError(f"kubeconfig {path} is malformed: not a YAML mapping: {HINT}")
    for key in ("clusters", "users", "contexts"):
        items = data.get(key)
        if items is not None and (not isinstance(items, list) or not all(
                isinstance(i, dict) and isinstance(i.get(key[:-1]) or {}, dict)
                for i in items)):
            raise KubeconfigError(f"kubeconfig {path} is malformed: {key} must be a list of named entries: {HINT}")
    return data


def _resolve_paths(section: str, item: dict[str, Any], base: Path) -> dict[str, Any]:
    inner_key, keys = _PATH_KEYS[section]
    inner = dict(item.get(inner_key) or {})
    for key in keys:
        value = inner.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            inner[key] = str(base / value)
    return {**item, inner_key: inner}


def merge(docs: list[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """client-go's merge: the first file to set a named entry (or current-context) wins. Pure."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": []}
    seen: dict[str, set] = {k: set() for k in ("clusters", "users", "contexts")}
    for path, data in docs:
        if not merged.get("current-context") and data.get("current-context"):
            merged["current-context"] = data["current-context"]
        for section in ("clusters", "users", "contexts"):
            for item in data.get(section) or []:
                name = item.get("name")
                if name in seen[section]:
                    continue
                seen[section].add(name)
                if section in _PATH_KEYS:
                    item = _resolve_paths(section, item, path.parent)
                merged[section].append(item)
        for key in ("preferences", "extensions"):
            if key in data and key not in merged:
                merged[key] = data[key]
    return merged


def load(explicit: str | None, context: str | None = None) -> KubeView:
    """The merged view (not yet checked: ``.check()`` says whether a cluster can be reached with it).

    Raises KubeconfigError for an explicit file that does not exist and for any file that cannot be read
    or parsed (as kubectl does)."""
    paths, source = candidate_files(explicit)
    if explicit and not paths[0].exists():
        if os.pathsep in explicit and all(Path(part).exists() for part in explicit.split(os.pathsep) if part):
            # a list, as KUBECONFIG takes: --kubeconfig (kubectl's and helm's) takes one file
            raise KubeconfigError(f"kubeconfig {explicit} (from --kubeconfig) does not exist: --kubeconfig takes one "
                                  f"file; to merge several, list them in KUBECONFIG ({os.pathsep}-separated)")
        raise KubeconfigError(f"kubeconfig {explicit} (from --kubeconfig) does not exist: {HINT}")
    docs = [(p, _read(p)) for p in paths if p.exists()]
    view = KubeView(files=[p for p, _ in docs], source=source, explicit=explicit, config=merge(docs))
    view.context = context or view.config.get("current-context") or None
    return view


def lenient_view(explicit: str | None, context: str | None) -> KubeView | None:
    """The view, or None when the kubeconfig cannot be read or parsed (``--dry-run`` needs none; a real
    command reports the problem when it loads the kubeconfig)."""
    try:
        return load(explicit, context)
    except KubeconfigError:
        return None


def lenient_namespace(explicit: str | None, context: str | None) -> str | None:
    """The context's namespace, or None when the kubeconfig is absent or unusable."""
    view = lenient_view(explicit, context)
    return view.namespace if view else None


def lenient_server(explicit: str | None, context: str | None) -> str | None:
    """The context's server, or None when the kubeconfig is absent or unusable."""
    view = lenient_view(explicit, context)
    return view.server if view else None
