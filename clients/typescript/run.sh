#!/usr/bin/env bash
# CI for the TypeScript client: install the pinned packages (package-lock.json, as api/lint/run.sh
# does), regenerate src/schema.gen.ts from api/openapi.yaml and fail on any drift (as the Go
# client's check does), build with tsc (the tests are TypeScript too: a call the contract does not
# allow does not compile), then run them with Node's test runner against a fresh `remit serve`
# (test/lib.sh: a SQLite store, a free port) with a bootstrapped organization.
set -euo pipefail
source "$(dirname "$0")/../../test/lib.sh"
cd "$ROOT/clients/typescript"

npm ci --no-audit --no-fund --loglevel=error
npm run --silent generate >/dev/null
if ! git diff --exit-code -- src/schema.gen.ts || [[ -n $(git status --porcelain -- src/schema.gen.ts) ]]; then
  echo "FATAL: clients/typescript/src/schema.gen.ts is out of date with api/openapi.yaml; run 'npm run generate' in clients/typescript and commit"
  exit 1
fi
echo "src/schema.gen.ts is openapi-typescript's output for api/openapi.yaml"
rm -rf dist
npx --no-install tsc -p tsconfig.json

trap remit_stop EXIT
remit_start
"$REMIT_BIN" bootstrap --organization "TypeScript client CI" --json >"$REMIT_TMP/bootstrap.json"
REMIT_URL="$REMIT_URL" REMIT_BOOTSTRAP_JSON="$REMIT_TMP/bootstrap.json" node --test dist/test/
