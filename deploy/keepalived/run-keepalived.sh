#!/bin/sh
# Container entrypoint: render the configuration from the environment, then run keepalived in the
# foreground (VRRP only, logs on stdout) so the container lives and dies with it.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
conf=/run/keepalived/keepalived.conf
mkdir -p /run/keepalived
"$here/render-config.sh" >"$conf.tmp"
mv "$conf.tmp" "$conf"
keepalived --config-test --use-file="$conf"
# A keepalived that was killed (kill -9, OOM, container crash) leaves the VIP on the interface,
# and a new keepalived that starts as BACKUP does not reliably remove it: two hosts would then
# answer ARP for the VIP. Drop it before starting; keepalived adds it back if this node leads.
ip addr del "$WEFT_VIP" dev "$KEEPALIVED_INTERFACE" 2>/dev/null || true
exec keepalived --dont-fork --log-console --log-detail --vrrp --use-file="$conf"
