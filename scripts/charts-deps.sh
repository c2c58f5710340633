#!/usr/bin/env bash
# Make a fresh checkout's charts lint- and template-ready: `helm dependency build` of every chart that has
# dependencies (the job charts: arena-common and tensorboard, both file:// charts of this repository, so
# this works offline). Uses helm from $HELM, else helm on PATH.
#
#   scripts/charts-deps.sh            # then: helm lint charts/tfjob, helm template t charts/tfjob, ...
set -euo pipefail
cd "$(dirname "$0")/.."
HELM="${HELM:-helm}"
case "${1:-}" in
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "usage: scripts/charts-deps.sh [--help]" >&2; exit 2 ;;
esac
command -v "$HELM" >/dev/null || { echo "charts-deps: $HELM not found (scripts/install-helm.sh installs it)" >&2; exit 1; }
for chart in charts/*/; do
    chart="${chart%/}"
    grep -q '^dependencies:' "$chart/Chart.yaml" || continue
    "$HELM" dependency build "$chart" >/dev/null
    echo "built the dependencies of $chart"
done
