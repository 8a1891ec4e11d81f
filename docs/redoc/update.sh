#!/usr/bin/env bash
# Replace the vendored Redoc bundle with the standalone build of the npm package redoc@VERSION.
# npm checks the tarball against the registry's integrity hash; this script prints the new
# SHA-256 to put into docs/docs.go (RedocSHA256) beside RedocVersion.
set -euo pipefail
version="${1:?usage: docs/redoc/update.sh VERSION}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "redoc@$version" >/dev/null && tar xzf "redoc-$version.tgz")
cp "$tmp/package/bundles/redoc.standalone.js" "$here/redoc.standalone.js"
cp "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" "$here/redoc.standalone.js.LICENSE.txt"
cp "$tmp/package/LICENSE" "$here/LICENSE"
echo "redoc@$version vendored; set in docs/docs.go:"
echo "  RedocVersion = \"$version\""
echo "  RedocSHA256  = \"$(sha256sum "$here/redoc.standalone.js" | cut -d' ' -f1)\""
echo "and config.redocVersion in test/browser/package.json"
