#!/usr/bin/env bash
# Installs weft on a fresh machine and runs the controller with its default listeners.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh
npm ci --no-audit --no-fund
exec node --max-semi-space-size=64 bin/weft.js serve "$@"
