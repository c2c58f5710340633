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
#   lws                 lws (LeaderWorkerSet)                                      sigs.k8s.io/lws
#   kserve              kserve-manager (KServe's controller manager)               github.com/kserve/kserve
#   ct                  ct (chart-testing: `ct lint`, `ct install` of the charts)   github.com/helm/chart-testing/v3
#   metrics-server      metrics-server (metrics.k8s.io from the kubelets: kwok's)   sigs.k8s.io/metrics-server
#   metallb             metallb-controller (LoadBalancer addresses from a pool)    go.universe.tf/metallb
#   arena               arena (Arena v1's CLI: the interop tests run it)           github.com/kubeflow/arena
#
#   scripts/build-cluster.sh [COMPONENT...]   # default: every component; prints the bin folder last
#   scripts/build-cluster.sh --versions       # the component table, one "name module version group" a line
#   scripts/build-cluster.sh --source NAME    # the module's source folder (its CRDs and manifests)
#
# Idempotent: each component is built once into ${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/cluster/bin
# with a stamp of its own (module, version, build number, the other components of its group); a later run with the stamp in place
# does nothing. One build of a group at a time (a lock per group).
#
# Build groups: components whose releases require the same Kubernetes client libraries and
# controller-runtime minor are built together, in one throw-away module that requires each of them at its
# version, so the libraries they share are compiled once. Go's minimal version selection then takes the
# highest patch release any of them asks for (kwok, JobSet, Trainer and LWS: k8s.io/* v0.36.x, controller-runtime
# v0.24.x; Kueue and mpi-operator: v0.35.x, v0.23.x; Kueue's own go.mod pins mpi-operator v0.8.0 and
# Trainer's pins JobSet v0.12.0); the build fails if that selection moved a component off its version.
# A component whose go.mod replaces modules by other versions is built with those replace (and exclude)
# directives, as its own release build is (a dependency's are ignored otherwise): KServe v0.20.0 requires
# k8s.io/* v0.35.3 and controller-runtime v0.23.3 but replaces them by v0.34.x and v0.22.5 (for KEDA), so it
# is a group of its own (the replaces would move any other member too).
# While one group compiles, the modules of the next groups download in the background.
# Modules come from the Go module proxy by name (GOPROXY as the machine sets it); nothing is vendored.
set -euo pipefail

# name module version packages group: packages space separated, relative to the module ("." is the module
# itself); PKG:NAME names the binary NAME (else it is the package's last path element)
COMPONENTS=(
    "kube|k8s.io/kubernetes|v1.37.2|cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler|kube"
    "etcd|go.etcd.io/etcd/server/v3|v3.6.8|etcdmain|etcd"
    "kwok|sigs.k8s.io/kwok|v0.8.0|cmd/kwok|k8s-v0.36"
    "jobset|sigs.k8s.io/jobset|v0.12.0|.|k8s-v0.36"
    "trainer|github.com/kubeflow/trainer/v2|v2.3.0|cmd/trainer-controller-manager|k8s-v0.36"
    "training-operator|github.com/kubeflow/training-operator|v1.9.3|cmd/training-operator.v1|training-operator"
    "mpi-operator|github.com/kubeflow/mpi-operator|v0.8.0|cmd/mpi-operator|k8s-v0.35"
    "kueue|sigs.k8s.io/kueue|v0.17.0|cmd/kueue|k8s-v0.35"
    # LeaderWorkerSet: v0.9.0, not v0.10.0 (the Go module proxy refuses v0.10.0: 403 "not available");
    # its main package is cmd/ (the release's Dockerfile builds cmd/main.go)
    "lws|sigs.k8s.io/lws|v0.9.0|cmd:lws|k8s-v0.36"
    # KServe's manager (InferenceService etc.); its go.mod's replaces: k8s.io/* v0.34, controller-runtime v0.22.5
    "kserve|github.com/kserve/kserve|v0.20.0|cmd/manager:kserve-manager|kserve"
    # chart-testing, as chart users and CI pipelines run it (it runs helm, git, yamllint and yamale: the last
    # two are Python packages, in the test extras)
    "ct|github.com/helm/chart-testing/v3|v3.14.0|ct|ct"
    # metrics.k8s.io as clusters serve it, from the kubelets' /metrics/resource (kwok emulates them)
    "metrics-server|sigs.k8s.io/metrics-server|v0.8.0|cmd/metrics-server|metrics-server"
    # MetalLB's controller: it gives a LoadBalancer Service its address from an IPAddressPool, as on bare-metal
    # clusters (its speaker, which announces the addresses, is not built: nothing routes them here); k8s.io/*
    # v0.33 and controller-runtime v0.20: a group of its own
    "metallb|go.universe.tf/metallb|v0.15.2|controller:metallb-controller|metallb"
    # Arena v1's own CLI, for the tests that compare the two tools on one cluster; its go.mod's replaces pin
    # k8s.io/* v0.28, so it is a group of its own
    "arena|github.com/kubeflow/arena|v0.15.5|cmd/arena|arena"
)
BUILD=1   # bump to rebuild every component

CACHE="${ARENA_HELM_CACHE:-$HOME/.cache/arena-helm}/cluster"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOFLAGS=-mod=mod
export PATH="/usr/local/go/bin:$PATH"

log() { printf '[build-cluster] %s\n' "$*" >&2; }

row() {  # row NAME: sets name, module, version, packages, group
    local r
    for r in "${COMPONENTS[@]}"; do
        IFS='|' read -r name module version packages group <<<"$r"
        [ "$name" = "$1" ] && return 0
    done
    log "unknown component '$1' (one of: $(for r in "${COMPONENTS[@]}"; do printf '%s ' "${r%%|*}"; done))"
    exit 2
}

members() {  # members GROUP: the names of the group's components, in table order
    local r n g
    for r in "${COMPONENTS[@]}"; do
        IFS='|' read -r n _ _ _ g <<<"$r"
        if [ "$g" = "$1" ]; then printf '%s ' "$n"; fi
    done
}

stamp_text() {  # stamp_text NAME: module, version, build number, the group's other members, Go
    local n with=""
    row "$1"
    for n in $(members "$group"); do [ "$n" = "$1" ] || with+=" $n"; done
    [ -z "$with" ] || with=" with=${with# }"
    echo "$module@$version build=$BUILD$with go=$GO_VERSION"
}

stamped() {  # stamped GROUP: every component of the group has its current stamp
    local n
    for n in $(members "$1"); do
        [ -f "$STAMPS/$n" ] && [ "$(cat "$STAMPS/$n")" = "$(stamp_text "$n")" ] || return 1
    done
}

source_dir() {  # the module's folder in the module cache (downloaded if need be)
    go mod download -json "$module@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'
}

# module_replaces MODULE VERSION: the go.mod's replace directives by a module version (not a folder) and
# its exclude directives, as `go mod edit` flags (-replace=OLD[@V]=NEW@V, -exclude=PATH@V), one a line
module_replaces() {
    local gomod
    gomod="$(go mod download -json "$1@$2" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')"
    [ -n "$gomod" ] || { log "no go.mod for $1@$2"; return 1; }
    awk '{ sub(/\/\/.*/, "") }
         /^(replace|exclude)[ \t]*\($/ { block = $1; next }
         block != "" && /^[ \t]*\)/ { block = ""; next }
         { verb = block; line = $0 }
         block == "" && /^(replace|exclude)[ \t]/ { verb = $1; sub(/^[a-z]+[ \t]+/, "", line) }
         verb == "" { next }
         { n = split(line, f, /[ \t]+/); k = 0; for (i = 1; i <= n; i++) if (f[i] != "") w[++k] = f[i] }
         verb == "exclude" && k == 2 { print "-exclude=" w[1] "@" w[2] }
         verb == "replace" && k == 4 && w[2] == "=>" && w[3] !~ /^[.\/]/ { print "-replace=" w[1] "=" w[3] "@" w[4] }
         verb == "replace" && k == 5 && w[3] == "=>" && w[4] !~ /^[.\/]/ { print "-replace=" w[1] "@" w[2] "=" w[4] "@" w[5] }' "$gomod"
}

# prepare GROUP DIR: a throw-away module in DIR that requires every component of GROUP at its version
# (its modules downloaded by go mod tidy); DIR/ok on success, DIR/tidy.log either way.
prepare() {
    local g="$1" dir="$2" n p
    mkdir -p "$dir"
    { printf 'module arena-helm.test/%s-build\n\ngo 1.26.0\n\nrequire (\n' "$g"
      for n in $(members "$g"); do row "$n"; printf '\t%s %s\n' "$module" "$version"; done
      echo ")"; } >"$dir/go.mod"
    if [ "$g" = kube ]; then
        row kube
        # k8s.io/kubernetes replaces its staging modules with folders of its own repository: the same code
        # is published as k8s.io/<name> v0.<minor>.<patch>, which is what a module that requires it uses.
        local gomod staging="v0.${version#v1.}"
        gomod="$(go mod download -json "$module@$version" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')"
        { echo; echo "replace ("
          sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$gomod"
          echo ")"; } >>"$dir/go.mod"
    fi
    if [ "$g" = etcd ]; then
        # etcd's own main package lives in a module that replaces its siblings with folders; its whole body
        # is a call of etcdmain.Main, which the server module exports.
        printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >"$dir/main.go"
    else
        { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
          for n in $(members "$g"); do
              row "$n"
              for p in $packages; do
                  p="${p%%:*}"
                  if [ "$p" = . ]; then echo "	_ \"$module\""; else echo "	_ \"$module/$p\""; fi
              done
          done
          echo ')'; } >"$dir/tools.go"
    fi
    local edits=()
    for n in $(members "$g"); do
        [ "$n" != kube ] || continue  # its replaces are folders of its repository: see above
        row "$n"
        mapfile -t -O "${#edits[@]}" edits < <(module_replaces "$module" "$version")
    done
    if [ "${#edits[@]}" -gt 0 ]; then (cd "$dir" && go mod edit "${edits[@]}"); fi
    if (cd "$dir" && go mod tidy >/dev/null 2>"$dir/tidy.log"); then
        touch "$dir/ok"
    fi
}

build_group() {  # build_group GROUP PREPARED_DIR (the dir may still be being prepared by a background job)
    local g="$1" work="$2" n p
    # One build of a group at a time (parallel test workers, benchmarks): the others wait, then reuse it.
    exec 9>"$CACHE/.lock-$g"
    flock 9
    if stamped "$g"; then
        exec 9>&-
        return 0
    fi
    local start ldflags=(-s -w)
    start=$(date +%s)
    log "building $(members "$g")(group $g)"
    [ -f "$work/src/ok" ] || prepare "$g" "$work/src"
    [ -f "$work/src/ok" ] || { cat "$work/src/tidy.log" >&2; log "go mod tidy failed for group $g"; exit 1; }
    for n in $(members "$g"); do  # minimal version selection must have kept every component's own version
        row "$n"
        p="$(cd "$work/src" && go list -m -f '{{.Version}}' "$module")"
        [ "$p" = "$version" ] || { log "group $g: $module resolved to $p, not $version"; exit 1; }
    done
    if [ "$g" = kube ]; then
        row kube
        local minor="${version#v1.}"; minor="${minor%%.*}"
        local v
        for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
            ldflags+=(-X "$v.gitVersion=$version" -X "$v.gitMajor=1" -X "$v.gitMinor=$minor" -X "$v.gitTreeState=clean")
        done
    fi
    mkdir -p "$work/out" "$BIN" "$STAMPS"
    local pkgs=() named=()
    if [ "$g" = etcd ]; then
        pkgs=(-o "$work/out/etcd" .)
    else
        # PKG:NAME: one go build -o NAME each, after the others (the build cache shares the rest)
        for n in $(members "$g"); do
            row "$n"
            for p in $packages; do
                local path="${p%%:*}"
                if [ "$path" = . ]; then path="$module"; else path="$module/$path"; fi
                if [ "$p" != "${p#*:}" ]; then named+=("${p#*:}=$path"); else pkgs+=("$path"); fi
            done
        done
        [ "${#pkgs[@]}" -eq 0 ] || pkgs=(-o "$work/out/" "${pkgs[@]}")
    fi
    local built=1  # (set -e does not stop a compound command whose status is tested: each build is checked)
    {
        if [ "${#pkgs[@]}" -gt 0 ]; then
            (cd "$work/src" && go build -trimpath -ldflags "${ldflags[*]}" "${pkgs[@]}") || built=0
        fi
        for p in "${named[@]}"; do
            [ "$built" = 1 ] || break
            (cd "$work/src" && go build -trimpath -ldflags "${ldflags[*]}" -o "$work/out/${p%%=*}" "${p#*=}") || built=0
        done
    } >"$work/build.log" 2>&1
    [ "$built" = 1 ] || { tail -40 "$work/build.log" >&2; log "BUILD FAILED: group $g"; exit 1; }
    install -m 0755 "$work/out/"* "$BIN/"
    for n in $(members "$g"); do stamp_text "$n" >"$STAMPS/$n"; done
    log "built group $g in $(( $(date +%s) - start ))s: $(cd "$work/out" && echo *)"
    exec 9>&-
}

case "${1:-}" in
    --versions)
        for r in "${COMPONENTS[@]}"; do IFS='|' read -r n m v _ g <<<"$r"; echo "$n $m $v $g"; done
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
GO_VERSION="$(go env GOVERSION)"  # in every stamp
mkdir -p "$CACHE"
if [ "$#" -eq 0 ]; then
    set -- $(for r in "${COMPONENTS[@]}"; do printf '%s ' "${r%%|*}"; done)
fi
groups=()
for c in "$@"; do
    row "$c"
    case " ${groups[*]} " in *" $group "*) ;; *) groups+=("$group") ;; esac
done
TMP_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/arena-helm-build.XXXXXX")"
trap 'jobs -p | xargs -r kill 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP_ROOT"' EXIT
# the groups still to build download their modules in the background, each in its own folder
declare -A pids=()
for g in "${groups[@]}"; do
    if ! stamped "$g"; then
        prepare "$g" "$TMP_ROOT/$g/src" &
        pids[$g]=$!
    fi
done
for g in "${groups[@]}"; do
    if [ -n "${pids[$g]:-}" ]; then wait "${pids[$g]}" || true; fi  # its download (a failure is retried)
    build_group "$g" "$TMP_ROOT/$g"
done
echo "$BIN"
