"""arena-helm: distributed training jobs on Kubernetes, as Helm charts.

The Python API (what the CLI wraps)::

    from arena_helm import TFJobSpec, render, submit
    spec = TFJobSpec(name="mnist", image="tensorflow/tensorflow:2.15.0", workers=2, gpus=1,
                     command="python train.py")
    print(render(spec))      # the manifests, no cluster needed
    submit(spec)             # helm install into the current kubeconfig context

A spec's fields are the flags of ``arena-helm submit`` (``data_dir`` is ``--data-dir``); a bad value raises
``UsageError`` naming the flag.

Heavy modules load on first use, so ``import arena_helm`` stays cheap.
"""

from .__about__ import __version__

_LAZY = {
    "TFJobSpec": "kinds.tfjob", "PyTorchJobSpec": "kinds.pytorchjob", "MPIJobSpec": "kinds.mpijob",
    "TrainJobSpec": "kinds.trainjob",
    "JobSpec": "spec",
    "render": "submission", "submit": "submission", "job_values": "submission", "wait_for": "submission",
    "SubmitResult": "submission", "Helm": "helm", "KubeTarget": "helm", "ValueSources": "helm", "Kube": "kube",
    "ArenaHelmError": "errors", "UsageError": "errors", "KINDS": "kinds",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'arena_helm' has no attribute {name!r}")
