"""The read models: what ``list``, ``get``, ``top`` and ``logs`` show, computed from plain API dicts (jobs, nodes,
pods, why a job waits, Kueue positions, GPU usage, tables). Pure (no I/O); imports only ``core``."""
