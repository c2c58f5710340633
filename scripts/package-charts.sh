#!/usr/bin/env bash
# Package every chart of charts/ into a Helm repository folder, with its index.yaml.
#
#   scripts/package-charts.sh [OUTPUT_DIR]     # default: dist/charts of the repository
#
# Each chart with dependencies gets `helm dependency build` first (they are file:// charts of this
# repository and Chart.lock pins them, so this works offline), then `helm package`. The work happens in a
# temporary copy of charts/: the work tree gets no charts/*/charts/*.tgz.
# HELM selects the helm binary (default: helm on PATH).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
out="${1:-$repo/dist/charts}"
helm="${HELM:-helm}"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/package-charts.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -R "$repo/charts" "$work/charts"

for dir in "$work"/charts/*/; do
    dir="${dir%/}"
    [ -f "$dir/Chart.yaml" ] || continue
    if grep -q '^dependencies:' "$dir/Chart.yaml"; then
        "$helm" dependency build "$dir" >&2
    fi
    "$helm" package "$dir" --destination "$out" >&2
done

"$helm" repo index "$out"
echo "$out"
