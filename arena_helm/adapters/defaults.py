"""User defaults and kubeconfig facts that need no cluster (pure file reads, no kubernetes import).

Defaults file: ``$ARENA_HELM_CONFIG``, else ``~/.config/arena-helm/config.yaml``::

    namespace: team-a
    imagePullSecrets: [regcred]
    images:
      tfjob: tensorflow/tensorflow:2.15.0
      pytorchjob: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
      mpijob: mpioperator/mpi-pi:openmpi
      deepspeedjob: deepspeed/deepspeed:latest   # a preset's own key (horovodjob, deepspeedjob)
      tensorboard: tensorflow/tensorflow:2.15.0
      sync: registry.k8s.io/git-sync/git-sync:v4.4.0   # --sync-mode git
      rsync: registry.example.com/tools/rsync:3.2     # --sync-mode rsync (default: Arena's rsync image)
    prometheus:                 # where get -g and top read metrics (default: found by label, as Arena)
      url: http://prometheus.monitoring:9090          # queried directly, or
      service: monitoring/prometheus-server:9090      # through the API server's service proxy
      timeout: 10                                     # seconds per query

Flags always win over it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.jobkinds import SUBMITTABLE

ENV_CONFIG = "ARENA_HELM_CONFIG"
KNOWN_KEYS = {"namespace", "imagePullSecrets", "images", "prometheus"}
PROMETHEUS_KEYS = {"url", "service", "timeout"}
IMAGE_KEYS = set(SUBMITTABLE) | {"tensorboard", "sync", "rsync"}


@dataclass
class Defaults:
    namespace: str | None = None
    image_pull_secrets: list[str] = field(default_factory=list)
    images: dict[str, str] = field(default_factory=dict)
    prometheus: dict[str, Any] = field(default_factory=dict)


def cache_dir() -> Path:
    """arena-helm's cache folder: ``$ARENA_HELM_CACHE``, else ``~/.cache/arena-helm`` (helm's version per binary,
    the user a token names, the checkout's helm and test cluster)."""
    return Path(os.environ.get("ARENA_HELM_CACHE") or Path.home() / ".cache" / "arena-helm")


def defaults_path() -> Path:
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "arena-helm" / "config.yaml"


def load_defaults(path: Path | None = None) -> Defaults:
    p = path or defaults_path()
    explicit = path is not None or bool(os.environ.get(ENV_CONFIG))
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        if explicit:
            raise UsageError(f"defaults file {p} (from ${ENV_CONFIG}) does not exist") from None
        return Defaults()
    except OSError as exc:
        raise UsageError(f"defaults file {p}: cannot read it ({exc.strerror})") from None
    import yaml  # only when there is a file: a dry run without one needs no YAML parser

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        raise UsageError(f"defaults file {p}: not valid YAML") from None
    if not isinstance(data, dict):
        raise UsageError(f"defaults file {p}: must be a YAML mapping")
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise UsageError(f"defaults file {p}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    images = data.get("images") or {}
    if not isinstance(images, dict) or set(images) - IMAGE_KEYS:
        raise UsageError(f"defaults file {p}: images must map some of {', '.join(sorted(IMAGE_KEYS))} to images")
    secrets = data.get("imagePullSecrets") or []
    if not isinstance(secrets, list) or not all(isinstance(s, str) for s in secrets):
        raise UsageError(f"defaults file {p}: imagePullSecrets must be a list of Secret names")
    ns = data.get("namespace")
    if ns is not None and not isinstance(ns, str):
        raise UsageError(f"defaults file {p}: namespace must be a string")
    return Defaults(namespace=ns, image_pull_secrets=secrets, images={k: str(v) for k, v in images.items()},
                    prometheus=_prometheus_defaults(p, data.get("prometheus")))


def _prometheus_defaults(p: Path, value: Any) -> dict[str, Any]:
    """The ``prometheus`` mapping: ``url`` and ``service`` strings, ``timeout`` seconds (> 0)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or set(value) - PROMETHEUS_KEYS:
        raise UsageError(f"defaults file {p}: prometheus must map some of {', '.join(sorted(PROMETHEUS_KEYS))}")
    for key in ("url", "service"):
        if key in value and not isinstance(value[key], str):
            raise UsageError(f"defaults file {p}: prometheus.{key} must be a string")
    timeout = value.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        raise UsageError(f"defaults file {p}: prometheus.timeout must be a number of seconds above 0")
    return dict(value)


def kubeconfig_namespace(kubeconfig: str | None, context: str | None) -> str | None:
    """The namespace of the chosen (or current) context of the kubeconfig as kubectl merges it (a
    ``KUBECONFIG`` list included), if any; never contacts a cluster, never fails."""
    from .kubeconfig import lenient_namespace

    return lenient_namespace(kubeconfig, context)


def resolve_namespace(flag: str | None, kubeconfig: str | None, context: str | None,
                      defaults: Defaults) -> str:
    """-n flag, then the defaults file, then the kubeconfig context's namespace, then ``default``."""
    return flag or defaults.namespace or kubeconfig_namespace(kubeconfig, context) or "default"
