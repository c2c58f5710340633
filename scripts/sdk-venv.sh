#!/usr/bin/env bash
# A virtualenv of its own for Kubeflow's training SDK (kubeflow-training 1.9.4), which pins its own
# kubernetes client, for the SDK interop tests (tests/cluster/test_sdk_interop.py). Idempotent: cached
# outside the clone with a stamp; prints the virtualenv's python on the last line.
#
#   scripts/sdk-venv.sh
#
# Cache: ${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/kubeflow-training-1.9.4
set -euo pipefail
SDK_VERSION="1.9.4"
CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}"
VENV="$CACHE/kubeflow-training-$SDK_VERSION"
STAMP="$VENV/.stamp"
STAMP_TEXT="kubeflow-training==$SDK_VERSION build=1"
PYTHON="${PYTHON:-python3}"

log() { printf '[sdk-venv] %s\n' "$*" >&2; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-sdk-venv"
flock 9
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ] && "$VENV/bin/python" -c "import kubeflow.training" 2>/dev/null; then
    echo "$VENV/bin/python"
    exit 0
fi
log "creating $VENV with kubeflow-training==$SDK_VERSION"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "kubeflow-training==$SDK_VERSION"
"$VENV/bin/python" -c "import kubeflow.training" 
echo "$STAMP_TEXT" >"$STAMP"
echo "$VENV/bin/python"
