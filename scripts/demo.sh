#!/usr/bin/env bash
# Installs weft and its system packages on a fresh machine and runs the demo: a real controller,
# a two-hypervisor lab in network namespaces, two tenants with the same IPs, a reachability matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh
npm ci --no-audit --no-fund
exec node --max-semi-space-size=64 bin/weft.js demo
