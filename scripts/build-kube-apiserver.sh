#!/usr/bin/env bash
# Build a real kube-apiserver, kube-controller-manager and kube-scheduler (Kubernetes 1.20) from Debian's
# `kubernetes` source package, for the test suite. Idempotent: the binaries are cached outside the clone
# with stamps, and a later run with the stamps in place does nothing. A cold build makes all three in one
# `make`; a cache that already holds the API server and controller-manager (stamp `stamp`) but not yet the
# scheduler (stamp `stamp-scheduler`) builds only the scheduler, under its own lock, so that a reader of
# the first two never waits for it.
#
#   scripts/build-kube-apiserver.sh            # build or reuse; prints the bin folder on the last line
#
# Cache: ${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/kube-1.20/bin
# Needs root (apt-get) on a Debian bookworm machine with access to Debian's package archive.
set -euo pipefail

KUBE_SRC_VERSION="1.20.5+really1.20.2-1.1+deb12u1"
CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/kube-1.20"
BIN="$CACHE/bin"
STAMP="$CACHE/stamp"
STAMP_TEXT="kubernetes=$KUBE_SRC_VERSION reflect2=debian openapi-zero-fix build=4"
STAMP_SCHED="$CACHE/stamp-scheduler"
STAMP_SCHED_TEXT="kubernetes=$KUBE_SRC_VERSION reflect2=debian openapi-zero-fix kube-scheduler build=1"

log() { printf '[build-kube-apiserver] %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_packages() {
    # etcd is needed to run the server; golang and reflect2 to build it.
    local need=()
    for p in etcd-server golang-1.19-go golang-github-modern-go-reflect2-dev dpkg-dev make rsync openssl; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
    done
    if [ "${#need[@]}" -gt 0 ] || [ "${1:-}" = src ]; then
        if [ "${1:-}" = src ] && ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ ; then
            # A deb-src entry copied from the machine's own Debian sources (no host name is written here).
            local f=/etc/apt/sources.list.d/debian.sources
            [ -f "$f" ] || { log "no $f to copy a deb-src entry from"; exit 1; }
            sed 's/^Types: deb$/Types: deb-src/' "$f" | as_root tee /etc/apt/sources.list.d/arena-helm-deb-src.sources >/dev/null
        fi
        log "apt-get update"
        as_root apt-get update -q >/dev/null
    fi
    if [ "${#need[@]}" -gt 0 ]; then
        log "apt-get install ${need[*]}"
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q "${need[@]}" >/dev/null
    fi
}

main_ok() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ] && [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ]
}
sched_ok() {
    [ -f "$STAMP_SCHED" ] && [ "$(cat "$STAMP_SCHED")" = "$STAMP_SCHED_TEXT" ] && [ -x "$BIN/kube-scheduler" ]
}

# build TARGET...: fetch and patch the source, then `make` the given cmd/ targets and install them in $BIN.
build() {
    ensure_packages src
    WORK="$(mktemp -d "${TMPDIR:-/tmp}/kube-build.XXXXXX")"
    trap 'rm -rf "$WORK"' EXIT
    cd "$WORK"
    log "fetching the kubernetes source package $KUBE_SRC_VERSION"
    apt-get source -q --download-only "kubernetes=$KUBE_SRC_VERSION" >/dev/null 2>&1
    dpkg-source -x kubernetes_*.dsc src >/dev/null
    cd src
    # With Go >= 1.18 the vendored reflect2 1.0.1 crashes the server on the first custom-resource write.
    rm -rf vendor/github.com/modern-go/reflect2
    cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 vendor/github.com/modern-go/reflect2
    rm -f vendor/github.com/modern-go/reflect2/go.mod
    # With Go >= 1.18, go-openapi/validate v0.19.5 compares two reflect.Values with DeepEqual to spot a null,
    # which now also matches "" and 0: the server would reject every custom resource holding an empty string
    # or a zero ("must be of type string: null"). Older Go never matched there, so the check meant data == nil.
    for f in vendor/github.com/go-openapi/validate/type.go vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go; do
        [ -f "$f" ] || continue
        sed -i 's/if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {/if data == nil {/' "$f"
        grep -q 'reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))' "$f" && { log "openapi patch did not apply to $f"; exit 1; }
    done
    local what=() names=() t
    for t in "$@"; do what+=("cmd/$t"); names+=("$t"); done
    log "building ${names[*]} (about 9 minutes cold on 2 cores for all three, 5 for the scheduler alone)"
    local start
    start=$(date +%s)
    # Kubernetes 1.20 builds with Debian's Go 1.19 (GOPATH mode, its vendored packages), not with whatever
    # newer `go` comes first on PATH: Go >= 1.23 refuses the vendored packages' linknames.
    local debian_go=/usr/lib/go-1.19/bin
    [ -x "$debian_go/go" ] || { log "Debian's Go 1.19 is missing at $debian_go (package golang-1.19-go)"; exit 1; }
    export PATH="$debian_go:$PATH" GOROOT="${debian_go%/bin}" GOTOOLCHAIN=local
    export CGO_ENABLED=0 GOFLAGS="" GO111MODULE=off KUBE_GIT_VERSION="v1.20.2" KUBE_BUILD_PLATFORMS=linux/amd64
    make WHAT="${what[*]}" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log" >&2; log "BUILD FAILED"; exit 1; }
    log "built ${names[*]} in $(( $(date +%s) - start ))s"
    mkdir -p "$BIN"
    local out=_output/local/bin/linux/amd64
    [ -x "$out/${names[0]}" ] || out=_output/bin
    for t in "${names[@]}"; do install -m 0755 "$out/$t" "$BIN/"; done
}

# One build at a time (parallel test workers, benchmarks): the others wait here, then reuse it.
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

if ! main_ok; then
    # Cold: all three in one `make` (they share most packages, so the scheduler adds little).
    ( build kube-apiserver kube-controller-manager kube-scheduler )
    echo "$STAMP_SCHED_TEXT" >"$STAMP_SCHED"   # before the main stamp: whoever sees that one sees both
    echo "$STAMP_TEXT" >"$STAMP"
    echo "$BIN"
    exit 0
fi

# The API server and controller-manager are there; the scheduler has its own lock.
exec 8>"$CACHE/.lock-scheduler"
flock 8
exec 9>&-
if ! sched_ok; then
    ( build kube-scheduler )
    echo "$STAMP_SCHED_TEXT" >"$STAMP_SCHED"
else
    ensure_packages   # etcd may be missing on a machine that kept only the cache
    log "reusing $BIN"
fi
echo "$BIN"
