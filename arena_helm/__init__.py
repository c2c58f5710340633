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

from .__about__ import __version__

_LAZY = {
    "JobSpec": "spec",
    "render": "submission", "submit": "submission", "job_values": "submission", "wait_for": "submission",
    "SubmitResult": "submission", "Helm": "helm", "KubeTarget": "helm", "ValueSources": "helm", "Kube": "kube", "KubeReader": "kube",
    "ArenaHelmError": "errors", "UsageError": "errors", "AlreadyExistsError": "errors", "KINDS": "kinds",
    "WorkspaceSpec": "workspace", "workspace_values": "workspace", "render_workspace": "workspace",
    "start_workspace": "workspace",
    "ServeSpec": "serving", "serving_values": "serving", "render_serving": "serving", "submit_serving": "serving",
}


def _spec_classes() -> dict[str, str]:
    """The kinds' spec classes (``TFJobSpec``, ``VllmServeSpec``, ...), by name: from the registries
    (``arena_helm.kinds``, ``arena_helm.serve_kinds``)."""
    from .kinds import KINDS
    from .serve_kinds import SERVE_KINDS

    return {**{k.spec.partition(":")[2]: k.spec.partition(":")[0] for k in KINDS},
            **{k.spec_name: f"{__name__}.serve_kinds.{k.module_name}" for k in SERVE_KINDS}}


__all__ = ["__version__", *_LAZY, *_spec_classes()]


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    module = _spec_classes().get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'arena_helm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
