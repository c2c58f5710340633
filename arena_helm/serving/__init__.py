"""The serving family: what every serving kind shares (``servings``), traffic splits, and one module per
kind under ``kinds`` (descriptors: ``arena_helm.core.servekinds``)."""
