#!/usr/bin/env bash
# The test command: sets up what the tests need (virtualenv with the test extras, helm 3 and 4, the test
# cluster's programs built from their Go modules: Kubernetes, etcd, kwok and the Kubeflow, JobSet and Kueue
# controllers; Debian's Prometheus for the metrics tests, the Kubeflow training SDK's own virtualenv), then
# runs the whole suite. Idempotent; a warm run
# skips the set-up.
#   scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ARENA_HELM_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import arena_helm, pytest, yamale, kubernetes_validate, checkov" 2>/dev/null; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
fi
PYTHON="$VENV/bin/python" bash scripts/install-helm.sh --bin "$VENV/bin" >/dev/null
bash scripts/build-cluster.sh >/dev/null
bash scripts/install-prometheus.sh >/dev/null
bash scripts/sdk-venv.sh >/dev/null
export PATH="$PWD/$VENV/bin:$PATH"
exec "$VENV/bin/python" -m pytest "$@"
