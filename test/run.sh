#!/usr/bin/env bash
# `npm test`: the type check, then each jest project in its own process (a single process ran out
# of heap in a rehearsal), on the Node the image ships (stack/node.sh), whatever Node runs npm.
# `bash test/run.sh quick` (`npm run test:quick`) stops before the stack's projects, and leaves out the
# workflow files in SLOW (end-to-end runs over hundreds of stub nodes, mostly CPU): `npm test` runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(bash stack/node.sh):$PATH"
export PATH
echo "== tests on node $(node --version)"
jest() { node --max-old-space-size=8192 --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand "$@"; }
# Two files at a time (test:quick only): each has its own dev server, and much of a workflow test
# waits on it. npm test keeps one at a time, so a test that is tight under load cannot turn CI red.
jest2() { node --max-old-space-size=8192 --experimental-vm-modules node_modules/jest/bin/jest.js --maxWorkers=2 "$@"; }
npm run -s typecheck
SLOW=(test/workflow/scale-payloads.test.ts)
jest --selectProjects unit
if [ "${1:-}" = quick ]; then
  echo "== test:quick leaves out (npm test runs them): ${SLOW[*]}"
  jest2 --selectProjects workflow --testPathIgnorePatterns /node_modules/ "${SLOW[@]}"
  exit 0
fi
jest --selectProjects workflow
jest test/integration --selectProjects integration
jest test/bad-input --selectProjects integration
