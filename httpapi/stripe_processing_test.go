package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
)

// stripeProcessing is stripe-mock behind a proxy that answers every PaymentIntent it creates as
// processing, as Stripe does for a charge it has not settled yet (stripe-mock's fixture answers
// requires_payment_method). The connector's requests still reach stripe-mock, which checks them
// against Stripe's own OpenAPI document.
func stripeProcessing(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(testkit.StartStripeMock(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		if res.Request.Method != http.MethodPost || res.Request.URL.Path != "/v1/payment_intents" || res.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		var pi map[string]any
		if err := json.Unmarshal(body, &pi); err != nil {
			return err
		}
		pi["status"] = "processing"
		if body, err = json.Marshal(pi); err != nil {
			return err
		}
		res.Body, res.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		res.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// A Stripe charge still processing when Stripe answers carries the PaymentIntent's ID in
// processorReference from the first answer on: the payment read right after finalization (charged
// at once) and after POST /v1/invoices/{id}/pay. The sandbox charges through Stripe here
// (REMIT_STRIPE_SANDBOX=true). A processing payment has its updatedAt (it had none).
func TestStripeProcessingPaymentCarriesItsReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs stripe-mock")
	}
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.StripeSecretKey, cfg.StripeAPIURL, cfg.StripeSandbox = "sk_test_123", stripeProcessing(t), true
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		check := func(how, pid string) {
			t.Helper()
			p := e.Must(200, "GET", "/v1/payments/"+pid, nil).Data()
			ref, _ := p["processorReference"].(string)
			if p["status"] != "processing" || p["processor"] != "stripe" || !strings.HasPrefix(ref, "pi_") ||
				p["updatedAt"] == "0001-01-01T00:00:00Z" {
				t.Fatalf("%s: payment %v", how, p)
			}
			items := e.Must(200, "GET", "/v1/payments?status=processing&invoiceId="+p["invoiceId"].(string), nil).Data()["items"].([]any)
			if len(items) != 1 || items[0].(map[string]any)["processorReference"] != ref {
				t.Fatalf("%s: the list says %v", how, items)
			}
		}
		k.account("c1", "charge_automatically")
		k.attach("c1", "pm_card_visa")
		inv := k.invoice("c1", 4200)
		if inv["status"] != "open" || inv["latestPaymentId"] == nil {
			t.Fatalf("finalize: %v", inv)
		}
		check("charged at finalization", inv["latestPaymentId"].(string))

		k.account("c2", "send_invoice")
		k.attach("c2", "pm_card_visa")
		id := k.invoice("c2", 3100)["invoiceId"].(string)
		paid := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}).Data()
		check("POST /pay", paid["latestPaymentId"].(string))
	})
}
