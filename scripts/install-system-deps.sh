#!/usr/bin/env bash
# Installs the Debian packages weft's lab and integration tests use, only when one is missing.
# CI is a fresh Debian 12 machine where we are root; on a developer machine without root the
# script says what to install instead.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have ovs-vswitchd || need+=(openvswitch-switch)
have redis-server || need+=(redis-server)
have ip || need+=(iproute2)
have ping || need+=(iputils-ping)
have ethtool || need+=(ethtool)
have tcpdump || need+=(tcpdump)

if ((${#need[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "weft: missing system packages: ${need[*]} (run as root, or: sudo apt-get install -y ${need[*]})" >&2
  exit 1
fi
echo "weft: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's package starts no daemons here (no systemd); the lab runs its own per test.
