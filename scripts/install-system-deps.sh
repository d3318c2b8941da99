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
# The HA lab (test/lab/ha-lab.ts) runs keepalived inside controller namespaces; its leader check
# (deploy/keepalived/check-weft-leader.sh) uses curl.
have keepalived || need+=(keepalived)
have curl || need+=(curl)
# A DHCP client inside lab VMs (udhcpc) for the DHCP tests.
have busybox || need+=(busybox)
# traceroute inside lab VMs: a router's hop answers with time exceeded.
have traceroute || need+=(traceroute)
# A DHCPv6 client inside lab VMs (dhclient -6; busybox has none) for the DHCPv6 tests.
have dhclient || need+=(isc-dhcp-client)

if ((${#need[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "weft: missing system packages: ${need[*]} (run as root, or: sudo apt-get install -y ${need[*]})" >&2
  exit 1
fi
echo "weft: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
# No package may start its daemon in the machine's root namespace (keepalived there would add
# addresses to the machine's own network): deny service starts during the install, unless a
# policy already does.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Where systemd runs, keep the keepalived we just installed from starting at boot: the lab starts
# its own, inside namespaces. (Debian's unit also needs /etc/keepalived/keepalived.conf, which the
# package does not ship.)
if [[ " ${need[*]} " == *" keepalived "* && -d /run/systemd/system ]]; then
  systemctl disable --now keepalived >/dev/null 2>&1 || true
fi
