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
case "${1:-}" in
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "usage: scripts/package-charts.sh [OUTPUT_DIR] [--help]" >&2; exit 2 ;;
esac
[ "$#" -le 1 ] || { echo "usage: scripts/package-charts.sh [OUTPUT_DIR] [--help]" >&2; exit 2; }
out="${1:-$repo/dist/charts}"
helm="${HELM:-helm}"
command -v "$helm" >/dev/null || { echo "package-charts: $helm not found (scripts/install-helm.sh installs it; HELM names another)" >&2; exit 1; }

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
