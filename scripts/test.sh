#!/usr/bin/env bash
# Installs everything the test suite needs and runs all of it: typecheck, lint and format check,
# unit tests, then integration tests against real Open vSwitch 3.1 and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-system-deps.sh
npm ci --no-audit --no-fund
npm run typecheck
npm run lint

report="$(mktemp -d)/vitest.json"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" || status=$?
# One plain closing line that any CI reader understands.
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' "$report" || true
exit "$status"
