"""arena-helm: distributed training jobs on Kubernetes, as Helm charts."""

from .__about__ import __version__

__all__ = ["__version__"]
