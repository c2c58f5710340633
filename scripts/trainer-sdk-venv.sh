#!/usr/bin/env bash
# A virtualenv of its own for Kubeflow's Python SDK (PyPI package "kubeflow", its kubeflow.trainer
# TrainerClient for Kubeflow Trainer v2.3), which pins its own kubernetes client and pydantic, for the
# TrainJob interop test (tests/cluster/test_trainjob_sdk.py). Idempotent: cached outside the clone with a
# stamp; prints the virtualenv's python on the last line.
#
#   scripts/trainer-sdk-venv.sh
#
# Cache: ${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/kubeflow-sdk-0.5.0
set -euo pipefail
SDK_VERSION="0.5.0"
CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}"
VENV="$CACHE/kubeflow-sdk-$SDK_VERSION"
STAMP="$VENV/.stamp"
STAMP_TEXT="kubeflow==$SDK_VERSION build=1"
PYTHON="${PYTHON:-python3}"

log() { printf '[trainer-sdk-venv] %s\n' "$*" >&2; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-trainer-sdk-venv"
flock 9
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ] && "$VENV/bin/python" -c "from kubeflow.trainer import TrainerClient" 2>/dev/null; then
    echo "$VENV/bin/python"
    exit 0
fi
log "creating $VENV with kubeflow==$SDK_VERSION"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "kubeflow==$SDK_VERSION"
"$VENV/bin/python" -c "from kubeflow.trainer import TrainerClient"
echo "$STAMP_TEXT" >"$STAMP"
echo "$VENV/bin/python"
