"""arena-helm: distributed training jobs on Kubernetes, as Helm charts.

The Python API (what the CLI wraps)::

    from arena_helm import TFJobSpec, render, submit
    spec = TFJobSpec(name="mnist", image="tensorflow/tensorflow:2.15.0", workers=2, gpus=1,
                     command="python train.py")
    print(render(spec))      # the manifests, no cluster needed
    submit(spec)             # helm install into the current kubeconfig context

A workspace (``arena-helm workspace start``) likewise::

    from arena_helm import WorkspaceSpec, render_workspace, start_workspace, workspace_values
    ws = WorkspaceSpec(name="nb", namespace="team-a", gpus=1, data=["training-data:/data"], idle_stop="1h")
    print(render_workspace(None, ws.namespace, ws.name, workspace_values(ws)))
    start_workspace(ws)      # "started" (or "restarted": a stopped workspace of that name, its own values)

A spec's fields are the flags of ``arena-helm submit`` (``data_dir`` is ``--data-dir``); a bad value raises
``UsageError`` naming the parameter (``data_dir=``; the CLI's messages name the flag).

Heavy modules load on first use, so ``import arena_helm`` stays cheap.
"""

from .__about__ import __version__ as __version__

_LAZY = {
    "JobSpec": "workload.spec", "render": "workload.submission", "submit": "workload.submission",
    "job_values": "workload.submission", "wait_for": "workload.submission", "SubmitResult": "workload.submission",
    "Helm": "adapters.helm", "KubeTarget": "adapters.helm", "ValueSources": "adapters.helm",
    "Kube": "adapters.kube", "KubeReader": "adapters.kube",
    "ArenaHelmError": "core.errors", "UsageError": "core.errors", "AlreadyExistsError": "core.errors",
    "KINDS": "core.jobkinds",
    "WorkspaceSpec": "workspace.workspaces", "workspace_values": "workspace.workspaces",
    "render_workspace": "workspace.workspaces", "start_workspace": "workspace.workspaces",
    "ServeSpec": "serving.servings", "serving_values": "serving.servings", "render_serving": "serving.servings",
    "submit_serving": "serving.servings",
}


def _spec_classes() -> dict[str, str]:
    """The kinds' spec classes (``TFJobSpec``, ``VllmServeSpec``, ...), by name: from the registries
    (``arena_helm.core.jobkinds``, ``arena_helm.core.servekinds``)."""
    from .core.jobkinds import KINDS
    from .core.servekinds import SERVE_KINDS

    return {**{k.spec.partition(":")[2]: k.spec.partition(":")[0] for k in KINDS},
            **{k.spec_name: f"{__name__}.serving.kinds.{k.module_name}" for k in SERVE_KINDS}}


def __getattr__(name: str):
    import importlib

    if name == "__all__":  # built when asked for (``from arena_helm import *``, help()): the CLI never pays for it
        return ["__version__", *_LAZY, *_spec_classes()]
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    module = _spec_classes().get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'arena_helm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
