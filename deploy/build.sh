#!/usr/bin/env bash
# Builds the remit binary the way every release, the container image (deploy/Dockerfile) and CI
# (.ci/run, test/lib.sh) build it: static (CGO_ENABLED=0: the SQLite driver is pure Go), paths
# trimmed, no symbol table. One argument: the output file (default ./remit).
#
#   deploy/build.sh /usr/local/bin/remit
set -euo pipefail
out="$(realpath -m "${1:-remit}")"   # relative to where it is called from
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out" ./cmd/remit
