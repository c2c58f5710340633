#!/usr/bin/env bash
# A virtualenv of its own for one of Kubeflow's Python SDKs, each of which pins its own kubernetes client
# (and pydantic), for the interop tests. Idempotent: cached outside the clone with a stamp; prints the
# virtualenv's python on the last line.
#
#   scripts/sdk-venv.sh            # kubeflow-training 1.9.4 (tests/cluster/test_sdk_interop.py)
#   scripts/sdk-venv.sh trainer    # kubeflow 0.5.0, its kubeflow.trainer TrainerClient for Kubeflow Trainer v2.3
#                                  # (tests/cluster/test_trainjob_sdk.py)
#
# Cache: ${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/kubeflow-training-1.9.4 and kubeflow-sdk-0.5.0
set -euo pipefail
case "${1:-training}" in
    training) PACKAGE="kubeflow-training==1.9.4"; DIR="kubeflow-training-1.9.4"; LOCK=".lock-sdk-venv"
              CHECK="import kubeflow.training" ;;
    trainer)  PACKAGE="kubeflow==0.5.0"; DIR="kubeflow-sdk-0.5.0"; LOCK=".lock-trainer-sdk-venv"
              CHECK="from kubeflow.trainer import TrainerClient" ;;
    *) printf 'usage: %s [training|trainer]\n' "$0" >&2; exit 2 ;;
esac
CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}"
VENV="$CACHE/$DIR"
STAMP="$VENV/.stamp"
STAMP_TEXT="$PACKAGE build=1"
PYTHON="${PYTHON:-python3}"

log() { printf '[sdk-venv] %s\n' "$*" >&2; }

mkdir -p "$CACHE"
exec 9>"$CACHE/$LOCK"
flock 9
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ] && "$VENV/bin/python" -c "$CHECK" 2>/dev/null; then
    echo "$VENV/bin/python"
    exit 0
fi
log "creating $VENV with $PACKAGE"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PACKAGE"
"$VENV/bin/python" -c "$CHECK"
echo "$STAMP_TEXT" >"$STAMP"
echo "$VENV/bin/python"
