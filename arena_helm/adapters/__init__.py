"""The outside world: the only modules that run helm, talk to the API server or Prometheus, read the kubeconfig,
the defaults file or a git remote. Each takes its client injected and imports it lazily."""
