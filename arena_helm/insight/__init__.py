"""What the cluster can do for a job: will it fit, is the cluster ready (``doctor``), which data it can mount."""
