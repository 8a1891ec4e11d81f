#!/usr/bin/env bash
# Remit's walk-through with curl and jq: from `remit bootstrap` to a paid invoice, its receipt, a
# credit note that refunds part of it, and the events (webhooks) that followed. Every step prints
# what it sent and the fields that matter; any unexpected answer stops the script with the error
# envelope (exit 1).
#
#   go run ./cmd/remit serve                 # in another terminal (http://127.0.0.1:8080)
#   examples/quickstart.sh
#
# Environment:
#   REMIT_URL                  the server (default http://127.0.0.1:8080)
#   REMIT                      how to run the remit command for `bootstrap` (default: go run ./cmd/remit);
#                              it must use the server's store (same REMIT_DATABASE_URL and folder)
#   BOOTSTRAP_JSON             a file with the output of `remit bootstrap --json` to use instead of
#                              bootstrapping a new organization
#   REMIT_API_KEY, REMIT_MERCHANT_ACCOUNT_ID   the same, given directly
#   WEBHOOK_URL                register this URL as a webhook endpoint first (prints its secret)
set -euo pipefail

REMIT_URL="${REMIT_URL:-http://127.0.0.1:8080}"
REMIT="${REMIT:-go run ./cmd/remit}"
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "quickstart.sh needs $tool (or use: go run ./examples/quickstart)" >&2; exit 1; }
done

if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
say() { printf '   %s\n' "$*"; }

# call METHOD PATH WANT_STATUS [BODY]: a request as the merchant account; prints nothing, leaves
# the answer's data in $DATA. Another status prints the error envelope and stops.
call() {
  local method=$1 path=$2 want=$3 body=${4:-} url sep out status
  sep='?'; [[ $path == *\?* ]] && sep='&'
  url="$REMIT_URL$path"
  [[ $path == /v1/* ]] && url="$url${sep}environment=sandbox&merchantAccountId=$MA"
  local args=(-sS -X "$method" -H "Authorization: Bearer $KEY" -o "$TMP/body" -w '%{http_code}')
  if [[ -n $body ]]; then
    # A key per step: rerunning the same step with the same body would replay, not repeat.
    args+=(-H 'Content-Type: application/json' -H "Idempotency-Key: quickstart-$RUN-$((++N))" -d "$body")
  fi
  status=$(curl "${args[@]}" "$url") || { echo "cannot reach $REMIT_URL: is 'remit serve' running?" >&2; exit 1; }
  if [[ $status != "$want" ]]; then
    echo "FAILED: $method $path answered $status, expected $want:" >&2
    jq . "$TMP/body" >&2 2>/dev/null || cat "$TMP/body" >&2
    exit 1
  fi
  DATA=$(jq -c '.data' "$TMP/body")
}
field() { jq -r "$1" <<<"$DATA"; }
expect() { # expect JQ_EXPR VALUE: stop unless the last answer's data has it
  local got; got=$(field "$1")
  [[ $got == "$2" ]] || { echo "FAILED: expected $1 = $2, got $got" >&2; jq . <<<"$DATA" >&2; exit 1; }
}

TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
RUN=$(date +%s)-$$; N=0

step "1. An organization, its merchant accounts and an API key (remit bootstrap)"
if [[ -n ${BOOTSTRAP_JSON:-} ]]; then
  KEY=$(jq -r .apiKey "$BOOTSTRAP_JSON"); MA=$(jq -r .merchantAccounts.sandbox "$BOOTSTRAP_JSON")
  say "using $BOOTSTRAP_JSON"
elif [[ -n ${REMIT_API_KEY:-} && -n ${REMIT_MERCHANT_ACCOUNT_ID:-} ]]; then
  KEY=$REMIT_API_KEY; MA=$REMIT_MERCHANT_ACCOUNT_ID
  say "using REMIT_API_KEY and REMIT_MERCHANT_ACCOUNT_ID"
else
  $REMIT bootstrap --organization "Quickstart $RUN" --json >"$TMP/bootstrap.json"
  KEY=$(jq -r .apiKey "$TMP/bootstrap.json"); MA=$(jq -r .merchantAccounts.sandbox "$TMP/bootstrap.json")
  say "$REMIT bootstrap --organization \"Quickstart $RUN\" --json"
  say "organization $(jq -r .organizationId "$TMP/bootstrap.json")"
fi
say "sandbox merchant account $MA; every /v1 request sends ?environment=sandbox&merchantAccountId=$MA"
say "and Authorization: Bearer ${KEY:0:12}... (the key is shown once)"

if [[ -n ${WEBHOOK_URL:-} ]]; then
  step "   A webhook endpoint for $WEBHOOK_URL"
  call POST /v1/webhook-endpoints 201 "{\"url\": \"$WEBHOOK_URL\", \"enabledEvents\": [\"*\"]}"
  say "endpoint $(field .endpointId), signing secret $(field .secret) (shown once)"
fi

step "2. A price: a one-time onboarding package, USD 250.00"
PRICE="price_onboarding_${RUN//-/_}"
call POST /v1/prices 200 "{\"priceId\": \"$PRICE\", \"productId\": \"prod_onboarding\", \"name\": \"Onboarding package\",
  \"priceType\": \"fixed_one_time\", \"currency\": \"USD\", \"unitAmount\": 25000}"
say "price $(field .priceId): $(field .priceType) $(field .unitAmount) $(field .currency) (amounts are minor units)"

step "3. A customer in New York (the tax engine charges NY sales tax)"
call POST /v1/customers 201 '{"name": "Acme Corp", "email": "billing@acme.example",
  "address": {"line1": "500 5th Ave", "city": "New York", "region": "NY", "postalCode": "10110", "country": "US"}}'
CUS=$(field .customerId)
say "customer $CUS"

step "4. A billing account that charges automatically"
call POST /v1/billing-accounts 201 "{\"customerId\": \"$CUS\", \"currency\": \"USD\", \"collectionMethod\": \"charge_automatically\"}"
BA=$(field .billingAccountId)
say "billing account $BA ($(field .collectionMethod))"

step "5. A payment method: a setup session, completed on its hosted URL with the test card pm_card_visa"
call POST "/v1/customers/$CUS/payment-method-setup" 201 "{\"billingAccountId\": \"$BA\", \"methodType\": \"card\", \"setAsDefault\": true}"
SETUP_URL=$(field .url)
say "session $(field .sessionId) ($(field .status)), hosted URL $SETUP_URL"
status=$(curl -sS -X PUT -o "$TMP/body" -w '%{http_code}' "$SETUP_URL&paymentMethod=pm_card_visa")
[[ $status == 200 ]] || { echo "FAILED: PUT $SETUP_URL&paymentMethod=pm_card_visa answered $status" >&2; jq . "$TMP/body" >&2; exit 1; }
DATA=$(jq -c .data "$TMP/body")
expect .status completed
say "PUT {url}&paymentMethod=pm_card_visa: session $(field .status), card $(field .paymentMethod.brand) ending $(field .paymentMethod.last4)"
call GET "/v1/billing-accounts/$BA" 200
say "billing account default payment method: $(field .defaultPaymentMethod.paymentMethodId)"

step "6. A quote for two onboarding packages"
call POST /v1/quotes 201 "{\"orderType\": \"one_off\", \"customerId\": \"$CUS\", \"billingAccountId\": \"$BA\", \"currency\": \"USD\",
  \"lines\": [{\"priceId\": \"$PRICE\", \"quantity\": 2}], \"terms\": \"Due on receipt.\"}"
QUOTE=$(field .quoteId)
say "quote $QUOTE v$(field .version) ($(field .status)): subtotal $(field .subtotal), total $(field .total)"

step "7. The customer accepts: a one_off quote becomes a draft invoice"
call POST "/v1/quotes/$QUOTE/accept" 200 '{}'
expect .status accepted
INV=$(field .invoiceId)
say "quote $(field .status), invoice $INV"

step "8. Refresh the draft: lines, discounts and tax recomputed"
call POST "/v1/invoices/$INV/refresh" 200 '{}'
say "invoice $INV ($(field .status)): subtotal $(field .subtotal) + tax $(field .taxTotal) = total $(field .total)"

step "9. Finalize: a number is assigned, tax committed, and the card is charged at once"
call POST "/v1/invoices/$INV/finalize" 200 '{"finalizedByRef": "quickstart"}'
say "invoice $(field .number) $(field .status): total $(field .total), paid $(field .amountPaid), remaining $(field .amountRemaining)"
expect .status paid
LINE=$(field '.lines[0].invoiceLineId')
TOTAL=$(field .total)

step "10. The receipt of the payment"
call GET "/v1/payment-receipts?invoiceId=$INV" 200
expect '.items | length' 1
DATA=$(jq -c '.items[0]' <<<"$DATA")
RCPT=$(field .receiptId)
say "receipt $(field .receiptNumber) ($RCPT): $(field .amount) $(field .currency) by $(field .paymentMethod.brand) $(field .paymentMethod.last4), $(field .status)"

step "11. A credit note refunding one package (25000 plus its tax share)"
call POST /v1/credit-notes 200 "{\"invoiceId\": \"$INV\", \"reason\": \"order_change\",
  \"lines\": [{\"invoiceLineId\": \"$LINE\", \"bucket\": \"refund\", \"description\": \"One package fewer\", \"amount\": 26000}]}"
say "credit note $(field .number): refund $(field .refundAmount) (tax share $(field .taxTotal)), status $(field .status)"
expect .refundAmount 26000
call GET "/v1/payment-receipts/$RCPT" 200
say "receipt now: amountRefunded $(field .amountRefunded) of $(field .amount), $(field .status)"
expect .amountRefunded 26000
call GET "/v1/invoices/$INV" 200
say "invoice $(field .number): total $TOTAL, credited $(field .creditedTotal)"

step "12. The events that followed (each one a signed webhook to every subscribed endpoint)"
call GET '/v1/events?limit=100' 200
jq -r '.items | reverse | .[] | "   \(.createdAt)  \(.type | . + " " * (34 - length))  \(.eventId)"' <<<"$DATA"
for t in invoice.finalized invoice.paid payment_receipt.created credit_note.created refund.created; do
  jq -e --arg t "$t" '.items | any(.type == $t)' <<<"$DATA" >/dev/null || { echo "FAILED: no $t event" >&2; exit 1; }
done
PAID_EVT=$(jq -r '.items | map(select(.type == "invoice.paid"))[0].eventId' <<<"$DATA")
call GET "/v1/events/$PAID_EVT/deliveries" 200
say "invoice.paid deliveries: $(jq -r '[.items[] | "\(.endpointId) \(.status)"] | if length == 0 then "none (no webhook endpoint registered)" else join(", ") end' <<<"$DATA")"

step "Done: invoice $INV paid, receipt $RCPT, one package refunded."
