#!/usr/bin/env bash
# Install a real Prometheus server (Debian's `prometheus` package, 2.42 on bookworm) for the metrics tests.
# Idempotent and fast once installed: a run that finds the binary does nothing.
#
#   scripts/install-prometheus.sh     # prints the path of the prometheus binary on the last line
#
# Only the binary is used: the tests start their own Prometheus on a free local port with a generated
# config and a temporary data folder. The package's system service is stopped and disabled if the
# package started it (nothing else of this machine should listen for it).
# Needs root (apt-get) on a Debian bookworm machine with access to Debian's package archive.
set -euo pipefail

log() { printf '[install-prometheus] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! dpkg-query -W -f='${Status}' prometheus 2>/dev/null | grep -q "install ok installed"; then
    log "apt-get update"
    as_root apt-get update -q >/dev/null
    log "apt-get install prometheus"
    # policy-rc.d 101: the package must not start its service (the tests run their own server)
    tmp_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
        as_root chmod +x /usr/sbin/policy-rc.d
        tmp_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends prometheus >/dev/null \
        || { [ -n "$tmp_policy" ] && as_root rm -f /usr/sbin/policy-rc.d; exit 1; }
    [ -n "$tmp_policy" ] && as_root rm -f /usr/sbin/policy-rc.d
fi
bin="$(command -v prometheus || echo /usr/bin/prometheus)"
[ -x "$bin" ] || { log "prometheus is installed but $bin is missing"; exit 1; }
"$bin" --version 2>&1 | head -1 >&2
echo "$bin"
