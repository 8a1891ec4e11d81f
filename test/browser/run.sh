#!/usr/bin/env bash
# CI for the API reference: check that the vendored Redoc bundle is the pinned npm release, build
# remit, serve it on a fresh SQLite store and a free port, and run docs.test.mjs (node's test
# runner, playwright-core driving Debian's Chromium at $CHROMIUM, default /usr/bin/chromium).
# Screenshots are written to $SCREENSHOT_DIR (default test/browser/out).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
here="$ROOT/test/browser"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export SCREENSHOT_DIR="${SCREENSHOT_DIR:-$here/out}"

[[ -x $CHROMIUM ]] || { echo "FATAL: no Chromium at $CHROMIUM (apt-get install -y chromium)"; exit 1; }
"$CHROMIUM" --version

cd "$here"
npm ci --no-audit --no-fund --loglevel=error

# The embedded renderer is byte for byte the standalone bundle of the pinned npm package.
version=$(node -p "require('./package.json').config.redocVersion")
pack=$(mktemp -d)
(cd "$pack" && npm pack --silent "redoc@$version" >/dev/null && tar xzf "redoc-$version.tgz")
if ! cmp -s "$pack/package/bundles/redoc.standalone.js" "$ROOT/docs/redoc/redoc.standalone.js"; then
  rm -rf "$pack"
  echo "FATAL: docs/redoc/redoc.standalone.js is not redoc@$version's bundle; run docs/redoc/update.sh $version"
  exit 1
fi
rm -rf "$pack"
echo "docs/redoc/redoc.standalone.js is redoc@$version's standalone bundle"

trap remit_stop EXIT
remit_start
REMIT_URL="$REMIT_URL" node --test docs.test.mjs
echo "screenshots: $(ls "$SCREENSHOT_DIR" | tr '\n' ' ')in $SCREENSHOT_DIR"
