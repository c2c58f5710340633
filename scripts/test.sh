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
if ! "$VENV/bin/python" -c "import arena_helm, pytest, xdist, yamale, kubernetes_validate, checkov, mypy" 2>/dev/null; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
fi
PYTHON="$VENV/bin/python" bash scripts/install-helm.sh --bin "$VENV/bin" >/dev/null
bash scripts/build-cluster.sh >/dev/null
bash scripts/install-prometheus.sh >/dev/null
bash scripts/sdk-venv.sh >/dev/null
bash scripts/sdk-venv.sh trainer >/dev/null  # before the workers: they run in network namespaces, with no network
export PATH="$PWD/$VENV/bin:$PATH"
# Two pytest-xdist workers (ARENA_HELM_WORKERS=N for another number, 0 for none), each in a network
# namespace of its own (tests/support/netns-python) with a test cluster of its own: the cluster tests spend
# most of their time waiting for the controllers, so two of them share the two cores well. Files go to the
# workers in the order tests/conftest.py collects them (longest first): --no-loadscope-reorder, because
# xdist would otherwise hand out the files with the most tests first. Where no network namespace can be
# made (not root), the suite runs in one process.
workers="${ARENA_HELM_WORKERS:-2}"
if [ "$workers" -gt 0 ] && unshare --net -- true 2>/dev/null; then
    export ARENA_HELM_WORKER_PYTHON="$PWD/$VENV/bin/python"
    exec "$VENV/bin/python" -m pytest --tx "$workers*popen//python=tests/support/netns-python" --dist loadfile --no-loadscope-reorder "$@"
fi
exec "$VENV/bin/python" -m pytest "$@"
