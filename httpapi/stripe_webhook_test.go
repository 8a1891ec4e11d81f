package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v83/webhook"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/wire"
)

// stripeLater is a small fake of the Stripe connector whose charges are still processing when it
// answers: Stripe's webhook settles them (the outcome paths stripe-mock's fixtures cannot play).
type stripeLater struct{ unreachable }

func (*stripeLater) Name() string { return "stripe" }
func (*stripeLater) Charge(_ context.Context, req processor.ChargeRequest) (processor.ChargeResult, error) {
	return processor.ChargeResult{Status: processor.Processing, Reference: "pi_" + req.IdempotencyRef}, nil
}

// POST /processor-webhooks/stripe: a signed payment_intent.succeeded settles the processing
// attempt it names; a bad signature is 400 and changes nothing; events of other objects, of
// unknown attempts and of another connected account are acknowledged and ignored.
func TestStripeWebhookSettlesAttempts(t *testing.T) {
	const secret = "whsec_test_remit"
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	later := &stripeLater{}
	cfg.Processor, cfg.StripeWebhookKey = later, secret
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "send_invoice")
		saveCard(t, e, &later.fakeVault, "c1", "pm_1Card")
		id := k.invoice("c1", 3100)["invoiceId"].(string)
		pid := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Production()).Data()["latestPaymentId"].(string)
		event := func(typ, status, ref, account string) []byte {
			b, _ := json.Marshal(map[string]any{"id": "evt_1", "object": "event", "type": typ, "account": account, "api_version": "2025-01-01",
				"data": map[string]any{"object": map[string]any{"id": "pi_" + ref, "object": "payment_intent", "status": status,
					"metadata": map[string]any{"remit_payment_id": ref}}}})
			return b
		}
		send := func(body []byte, sig string) *testkit.Response {
			return e.Do("POST", "/processor-webhooks/stripe", nil, testkit.Raw(body, "application/json"), testkit.Header("Stripe-Signature", sig), testkit.APIKey(""))
		}
		signed := func(body []byte) string {
			return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: time.Now()}).Header
		}
		status := func() any { return e.Must(200, "GET", "/v1/payments/"+pid, nil, testkit.Production()).Data()["status"] }
		ok := event("payment_intent.succeeded", "succeeded", pid, "")
		for _, sig := range []string{"", "t=1,v1=deadbeef", webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ok, Secret: "whsec_other"}).Header} {
			if r := send(ok, sig); r.Status != 400 || r.ErrorCode() != "bad_request" || status() != "processing" {
				t.Fatalf("signature %q: %d %s, payment %v", sig, r.Status, r.Body, status())
			}
		}
		for name, body := range map[string][]byte{
			"another object":            []byte(`{"id":"evt_2","object":"event","type":"customer.created","data":{"object":{"id":"cus_1","object":"customer"}}}`),
			"an unknown attempt":        event("payment_intent.succeeded", "succeeded", "pay_unknown", ""),
			"another connected account": event("payment_intent.succeeded", "succeeded", pid, "acct_other"),
		} {
			r := send(body, signed(body))
			if r.Status != 200 || r.Data()["handled"] != false || status() != "processing" {
				t.Fatalf("%s: %d %s, payment %v", name, r.Status, r.Body, status())
			}
		}
		if r := send(ok, signed(ok)); r.Status != 200 || r.Data()["handled"] != true {
			t.Fatalf("succeeded: %d %s", r.Status, r.Body)
		}
		inv := e.Must(200, "GET", "/v1/invoices/"+id, nil, testkit.Production()).Data()
		if status() != "succeeded" || inv["status"] != "paid" {
			t.Fatalf("after the webhook: payment %v, invoice %v", status(), inv["status"])
		}
		// Stripe sends an event again: nothing changes twice.
		if r := send(ok, signed(ok)); r.Status != 200 || r.Data()["handled"] != false {
			t.Fatalf("resent: %d %s", r.Status, r.Body)
		}
	})
}
