#!/usr/bin/env bash
# The test suite's cluster, for trying every command by hand: a Kubernetes 1.37 control plane (a default
# StorageClass, PVC protection), kwok with two GPU nodes (8 nvidia.com/gpu each), the real controllers
# (training-operator, mpi-operator, JobSet, Trainer, Kueue with batch/job, LeaderWorkerSet, KServe, and MetalLB's
# controller: LoadBalancer Services get 127.0.0.200-250), all built from their Go modules by
# scripts/build-cluster.sh and run as local processes on 127.0.0.1, and Debian's
# Prometheus with the GPU-metrics stand-in (tests/support/devcluster.py, tests/support/devfeed.py).
#
#   scripts/dev-cluster.sh up      # start it (the first time also builds it); prints the lines to source
#   scripts/dev-cluster.sh env     # prints them again: export KUBECONFIG=... (and PROMETHEUS_ADDRESS=...)
#   scripts/dev-cluster.sh down    # stop it
#
# Needs the project's virtualenv with the test extras (scripts/test.sh makes it, or
# `python3 -m venv .venv && .venv/bin/pip install -e '.[test]'`). kwok has no containers: a pod bound to its
# nodes runs at once, and `arena-helm attach` runs the command on this machine, as you.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/dev-cluster"
PY="${ARENA_HELM_VENV:-.venv}/bin/python"

running() { [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; }

case "${1:-}" in
    up)
        if running && [ -f "$STATE/ready" ]; then
            cat "$STATE/env"
            exit 0
        fi
        [ -x "$PY" ] || { echo "error: no virtualenv at $PY (see the header of $0)" >&2; exit 1; }
        bash scripts/build-cluster.sh >/dev/null
        mkdir -p "$STATE"
        rm -f "$STATE/ready"
        setsid "$PY" tests/support/devcluster.py "$STATE" >"$STATE/log" 2>&1 </dev/null &
        echo $! >"$STATE/pid"
        for _ in $(seq 1 300); do
            [ -f "$STATE/ready" ] && break
            running || { tail -20 "$STATE/log" >&2; echo "error: the dev cluster did not start (log: $STATE/log)" >&2; exit 1; }
            sleep 1
        done
        [ -f "$STATE/ready" ] || { echo "error: the dev cluster was not ready after 300 s (log: $STATE/log)" >&2; exit 1; }
        grep '^\[dev-cluster\]' "$STATE/log" >&2 || true
        cat "$STATE/env"
        ;;
    env)
        running && [ -f "$STATE/ready" ] || { echo "error: no dev cluster running (scripts/dev-cluster.sh up)" >&2; exit 1; }
        cat "$STATE/env"
        ;;
    down)
        if running; then
            pid="$(cat "$STATE/pid")"
            kill -TERM "$pid"
            for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
            kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null || true
        fi
        rm -f "$STATE/pid" "$STATE/ready"
        echo "dev cluster stopped"
        ;;
    *)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || exit 2
        ;;
esac
