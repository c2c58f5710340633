"""Test helpers: the real helm binaries (Helm 3 and Helm 4) installed by scripts/install-helm.sh."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import yaml

from arena_helm.adapters.charts import assemble_chart

REPO = Path(__file__).resolve().parents[2]
HELM_VERSIONS = ("3.17.3", "4.1.4")


def cache_dir() -> Path:
    return Path(os.environ.get("ARENA_HELM_CACHE", Path.home() / ".cache" / "arena-helm"))


def helm_path(version: str) -> Path:
    """The cached helm binary of ``version``; installs both versions on first use."""
    path = cache_dir() / f"helm-{version}" / "helm"
    if not path.exists():
        subprocess.run(["bash", str(REPO / "scripts" / "install-helm.sh")], check=True, stdout=subprocess.DEVNULL)
    return path


def kubectl_path() -> Path:
    return helm_path(HELM_VERSIONS[-1]).parent / "kubectl"


def render(helm: Path | str, chart: str, values: dict | None = None, *, release: str = "demo",
           namespace: str = "team-a", extra_args: tuple[str, ...] = ()) -> list[dict]:
    """``helm template`` the assembled chart with ``values`` (given on stdin); return the documents."""
    out = render_text(helm, chart, values, release=release, namespace=namespace, extra_args=extra_args)
    return [doc for doc in yaml.safe_load_all(out) if doc]


def render_text(helm: Path | str, chart: str, values: dict | None = None, *, release: str = "demo",
                namespace: str = "team-a", extra_args: tuple[str, ...] = ()) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        chart_dir = assemble_chart(chart, Path(tmp))
        proc = subprocess.run(
            [str(helm), "template", release, str(chart_dir), "--namespace", namespace, "--values", "-",
             *extra_args],
            # JSON, not YAML: safe_dump leaves y/n unquoted, which helm reads as booleans
            input=json.dumps(values or {}, ensure_ascii=False).encode(),
            capture_output=True,
        )
    if proc.returncode != 0:
        raise RenderError(proc.stderr.decode())
    return proc.stdout.decode()


class RenderError(Exception):
    """helm template failed; str() is helm's stderr."""


def release_values(helm_bin, cluster, namespace: str, release: str, revision: int | None = None) -> dict:
    """``helm get values RELEASE -n NAMESPACE -o json`` (of ``revision``, else the latest) as the admin."""
    cmd = [str(helm_bin), "get", "values", release, "-n", namespace, "-o", "json",
           "--kubeconfig", str(cluster.admin.kubeconfig)]
    if revision is not None:
        cmd += ["--revision", str(revision)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
