# Sourced by the scripts under test/: build the remit binary and run `remit serve` on a fresh
# SQLite store and a free port (the kernel picks it: --addr 127.0.0.1:0), then stop it.
#
#   remit_start     sets REMIT_TMP, REMIT_BIN, REMIT_URL, REMIT_PID; exports REMIT_DATABASE_URL
#   remit_stop      stops the server and removes REMIT_TMP
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

remit_start() {
  REMIT_TMP="$(mktemp -d)"
  REMIT_BIN="$REMIT_TMP/remit"
  "$ROOT/deploy/build.sh" "$REMIT_BIN" # the build of the container image and of every release
  export REMIT_DATABASE_URL="sqlite:$REMIT_TMP/remit.db"
  "$REMIT_BIN" serve --addr 127.0.0.1:0 2>"$REMIT_TMP/serve.log" &
  REMIT_PID=$!
  local addr=""
  for _ in $(seq 1 300); do
    addr=$(sed -n 's/.*"msg":"serving","addr":"\([^"]*\)".*/\1/p' "$REMIT_TMP/serve.log" | head -1)
    [[ -n $addr ]] && break
    kill -0 "$REMIT_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $addr ]]; then
    echo "FATAL: remit serve did not start:"; cat "$REMIT_TMP/serve.log"; return 1
  fi
  REMIT_URL="http://$addr"
  echo "remit serve on $REMIT_URL (store $REMIT_DATABASE_URL)"
}

remit_stop() {
  if [[ -n ${REMIT_PID:-} ]]; then
    kill "$REMIT_PID" 2>/dev/null || true
    wait "$REMIT_PID" 2>/dev/null || true
    REMIT_PID=""
  fi
  [[ -n ${REMIT_TMP:-} ]] && rm -rf "$REMIT_TMP"
  REMIT_TMP=""
}
