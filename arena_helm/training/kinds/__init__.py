"""The job kinds' modules: each one spec and one values model (descriptors: ``arena_helm.core.jobkinds``)."""
