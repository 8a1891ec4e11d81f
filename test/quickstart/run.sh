#!/usr/bin/env bash
# CI for the walk-through: build remit, serve it on a fresh SQLite store and a free port, start
# the example webhook listener (which registers itself through the Go client), run
# examples/quickstart.sh (curl and jq) and the Go walk-through (go run ./examples/quickstart)
# against it, and require the listener to have verified the signed webhooks of the paid invoice
# and the refund. Anything else fails.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$ROOT"

LISTENER_PID=""
cleanup() {
  [[ -n $LISTENER_PID ]] && { kill "$LISTENER_PID" 2>/dev/null || true; wait "$LISTENER_PID" 2>/dev/null || true; }
  remit_stop
}
trap cleanup EXIT

remit_start
"$REMIT_BIN" bootstrap --organization "Quickstart CI" --json >"$REMIT_TMP/acme.json"

go build -o "$REMIT_TMP/webhook-listener" ./examples/webhook-listener
"$REMIT_TMP/webhook-listener" -addr 127.0.0.1:0 -remit "$REMIT_URL" -bootstrap "$REMIT_TMP/acme.json" \
  -out "$REMIT_TMP/events.jsonl" 2>"$REMIT_TMP/listener.log" &
LISTENER_PID=$!
for _ in $(seq 1 100); do grep -q "listening on" "$REMIT_TMP/listener.log" && break; sleep 0.1; done
grep "registered\|listening" "$REMIT_TMP/listener.log" || { echo "FATAL: the webhook listener did not start"; cat "$REMIT_TMP/listener.log"; exit 1; }

echo; echo "== examples/quickstart.sh"
REMIT_URL="$REMIT_URL" REMIT="$REMIT_BIN" BOOTSTRAP_JSON="$REMIT_TMP/acme.json" bash examples/quickstart.sh

echo; echo "== go run ./examples/quickstart"
go run ./examples/quickstart -remit "$REMIT_URL" -bootstrap "$REMIT_TMP/acme.json"

echo; echo "== the webhook listener verified:"
want=(invoice.paid payment_receipt.created credit_note.created refund.created)
deadline=$((SECONDS + 60))
while :; do
  missing=()
  for t in "${want[@]}"; do
    n=$(jq -r --arg t "$t" 'select(.type == $t) | .eventId' "$REMIT_TMP/events.jsonl" 2>/dev/null | wc -l)
    [[ $n -ge 2 ]] || missing+=("$t")   # one from each walk-through
  done
  [[ ${#missing[@]} -eq 0 ]] && break
  if (( SECONDS > deadline )); then
    echo "FAILED: no verified webhook for: ${missing[*]}"; cat "$REMIT_TMP/listener.log"; exit 1
  fi
  sleep 0.5
done
grep -c . "$REMIT_TMP/events.jsonl" | xargs echo "events verified:"
grep "verified" "$REMIT_TMP/listener.log" | tail -5
if grep -q REJECTED "$REMIT_TMP/listener.log"; then echo "FAILED: a delivery did not verify"; exit 1; fi
echo "quickstart: 2 passed, 0 failed"
