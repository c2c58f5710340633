"""The training family: one module per job kind under ``kinds`` (its spec and values); their descriptors are
in ``arena_helm.core.jobkinds``."""
