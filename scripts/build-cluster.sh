#!/usr/bin/env bash
# Build the test cluster's programs from their Go modules, by version, with the machine's Go (1.26):
#
#   kube                kube-apiserver, kube-controller-manager, kube-scheduler   k8s.io/kubernetes
#   etcd                etcd                                                       go.etcd.io/etcd/server/v3
#   kwok                kwok (nodes and pods)                                      sigs.k8s.io/kwok
#   training-operator   training-operator.v1 (TFJob, PyTorchJob, MPIJob v1, ...)  github.com/kubeflow/training-operator
#   mpi-operator        mpi-operator (MPIJob v2beta1)                              github.com/kubeflow/mpi-operator
#   trainer             trainer-controller-manager (Kubeflow Trainer v2)           github.com/kubeflow/trainer/v2
#   jobset              jobset                                                     sigs.k8s.io/jobset
#   kueue               kueue                                                      sigs.k8s.io/kueue
#
#   scripts/build-cluster.sh [COMPONENT...]   # default: every component; prints the bin folder last
#   scripts/build-cluster.sh --versions       # the component table, one "name module version" a line
#   scripts/build-cluster.sh --source NAME    # the module's source folder (its CRDs and manifests)
#
# Idempotent: each component is built once into ${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/cluster/bin
# with a stamp of its own (module, version, build number); a later run with the stamp in place does
# nothing. One build of a component at a time (a lock per component).
# Modules come from the Go module proxy by name (GOPROXY as the machine sets it); nothing is vendored.
set -euo pipefail

# name module version packages (space separated, relative to the module; "." is the module itself)
COMPONENTS=(
    "kube|k8s.io/kubernetes|v1.37.2|cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler"
    "etcd|go.etcd.io/etcd/server/v3|v3.6.8|etcdmain"
    "kwok|sigs.k8s.io/kwok|v0.8.0|cmd/kwok"
    "training-operator|github.com/kubeflow/training-operator|v1.9.3|cmd/training-operator.v1"
    "mpi-operator|github.com/kubeflow/mpi-operator|v0.8.0|cmd/mpi-operator"
    "trainer|github.com/kubeflow/trainer/v2|v2.3.0|cmd/trainer-controller-manager"
    "jobset|sigs.k8s.io/jobset|v0.12.0|."
    "kueue|sigs.k8s.io/kueue|v0.17.0|cmd/kueue"
)
BUILD=1   # bump to rebuild every component

CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/cluster"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS=-mod=mod
export PATH="/usr/local/go/bin:$PATH"

log() { printf '[build-cluster] %s\n' "$*" >&2; }

row() {  # row NAME: sets module, version, packages
    local r
    for r in "${COMPONENTS[@]}"; do
        IFS='|' read -r name module version packages <<<"$r"
        [ "$name" = "$1" ] && return 0
    done
    log "unknown component '$1' (one of: $(for r in "${COMPONENTS[@]}"; do printf '%s ' "${r%%|*}"; done))"
    exit 2
}

stamp_text() { echo "$module@$version build=$BUILD go=$(go env GOVERSION)"; }

source_dir() {  # the module's folder in the module cache (downloaded if need be)
    go mod download -json "$module@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'
}

# A throw-away module that requires MODULE@VERSION and builds PACKAGES from it.
wrapper() {
    local dir="$1"
    mkdir -p "$dir"
    printf 'module arena-helm.test/%s-build\n\ngo 1.26.0\n\nrequire %s %s\n' "$name" "$module" "$version" >"$dir/go.mod"
    if [ "$name" = kube ]; then
        # k8s.io/kubernetes replaces its staging modules with folders of its own repository: the same code
        # is published as k8s.io/<name> v0.<minor>.<patch>, which is what a module that requires it uses.
        local gomod staging="v0.${version#v1.}"
        gomod="$(go mod download -json "$module@$version" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')"
        { echo; echo "replace ("
          sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$gomod"
          echo ")"; } >>"$dir/go.mod"
    fi
    if [ "$name" = etcd ]; then
        # etcd's own main package lives in a module that replaces its siblings with folders; its whole body
        # is a call of etcdmain.Main, which the server module exports.
        printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >"$dir/main.go"
    else
        { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
          for p in $packages; do
              if [ "$p" = . ]; then echo "	_ \"$module\""; else echo "	_ \"$module/$p\""; fi
          done
          echo ')'; } >"$dir/tools.go"
    fi
    (cd "$dir" && go mod tidy >/dev/null 2>"$dir/tidy.log") || { cat "$dir/tidy.log" >&2; log "go mod tidy failed for $name"; exit 1; }
}

build_one() {
    row "$1"
    local stamp="$STAMPS/$name"
    # One build of a component at a time (parallel test workers, benchmarks): the others wait, then reuse it.
    exec 9>"$CACHE/.lock-$name"
    flock 9
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(stamp_text)" ]; then
        exec 9>&-
        return 0
    fi
    local work start ldflags=(-s -w)
    work="$(mktemp -d "${TMPDIR:-/tmp}/arena-helm-build-$name.XXXXXX")"
    start=$(date +%s)
    log "building $name ($module@$version)"
    wrapper "$work/src"
    if [ "$name" = kube ]; then
        local minor="${version#v1.}"; minor="${minor%%.*}"
        local v
        for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
            ldflags+=(-X "$v.gitVersion=$version" -X "$v.gitMajor=1" -X "$v.gitMinor=$minor" -X "$v.gitTreeState=clean")
        done
    fi
    mkdir -p "$work/out" "$BIN" "$STAMPS"
    local pkgs=() p
    if [ "$name" = etcd ]; then
        pkgs=(-o "$work/out/etcd" .)
    else
        for p in $packages; do
            if [ "$p" = . ]; then pkgs+=("$module"); else pkgs+=("$module/$p"); fi
        done
        pkgs=(-o "$work/out/" "${pkgs[@]}")
    fi
    (cd "$work/src" && go build -trimpath -ldflags "${ldflags[*]}" "${pkgs[@]}") >"$work/build.log" 2>&1 || {
        tail -40 "$work/build.log" >&2; log "BUILD FAILED: $name ($module@$version)"; rm -rf "$work"; exit 1; }
    install -m 0755 "$work/out/"* "$BIN/"
    stamp_text >"$stamp"
    log "built $name in $(( $(date +%s) - start ))s: $(cd "$work/out" && echo *)"
    rm -rf "$work"
    exec 9>&-
}

case "${1:-}" in
    --versions)
        for r in "${COMPONENTS[@]}"; do IFS='|' read -r n m v _ <<<"$r"; echo "$n $m $v"; done
        exit 0 ;;
    --source)
        row "${2:?--source NAME}"
        source_dir
        exit 0 ;;
    -h|--help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0 ;;
esac

command -v go >/dev/null || { log "no go on PATH (the machine's Go is expected at /usr/local/go)"; exit 1; }
mkdir -p "$CACHE"
if [ "$#" -eq 0 ]; then
    set -- $(for r in "${COMPONENTS[@]}"; do printf '%s ' "${r%%|*}"; done)
fi
for c in "$@"; do build_one "$c"; done
echo "$BIN"
