#!/usr/bin/env bash
# CI for the contract's lint: install the pinned Redocly CLI (package-lock.json) and lint
# api/openapi.yaml with its recommended rules (redocly.yaml). Any error or warning fails, listed
# one a line with its rule and place; the deprecation notice Redocly prints on Node.js 20 is not one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
npx --no-install redocly lint --config redocly.yaml --format json ../openapi.yaml >"$out" 2>/dev/null || rc=$?
node - "$out" "$rc" <<'JS'
const [file, rc] = process.argv.slice(2);
let report;
try {
  report = JSON.parse(require("fs").readFileSync(file, "utf8"));
} catch (e) {
  console.error(`FATAL: redocly lint (exit ${rc}) gave no report: ${e.message}`);
  process.exit(1);
}
for (const p of report.problems) {
  const at = p.location[0] || {};
  console.log(`${p.severity} ${p.ruleId}: api/openapi.yaml:${at.start ? at.start.line : "?"} ${at.pointer || ""}: ${p.message}`);
}
const { errors, warnings, ignored } = report.totals;
console.log(`redocly ${report.version} lint of api/openapi.yaml: ${errors} errors, ${warnings} warnings, ${ignored} ignored`);
if (ignored > 0) {
  console.error("FATAL: problems were silenced by an ignore file; turn a rule off in api/lint/redocly.yaml with its reason instead");
  process.exit(1);
}
if (errors + warnings > 0 || rc !== "0") {
  console.error("FATAL: api/openapi.yaml does not pass Redocly's recommended rules (api/lint/redocly.yaml); fix each problem above");
  process.exit(1);
}
JS
