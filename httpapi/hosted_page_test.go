package httpapi_test

import (
	"bytes"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// openHostedInvoice finalizes the acceptance invoice on a send_invoice billing account whose
// default method is pm_card_visa, so it stays open for the customer to pay from its hosted page.
// It returns the invoice ID, the hosted page's path (with its token) and the token.
func openHostedInvoice(t *testing.T, e *testkit.Env) (id, page, token string) {
	t.Helper()
	documentMerchant(t, e)
	billingFixture(t, e)
	customerAt(t, e, "bc", "CA", "BC", false)
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-send", "customerId": "bc", "currency": "USD", "collectionMethod": "send_invoice"})
	defaultCard(t, e, "bc", "ba-send")
	e.Must(201, "POST", "/v1/customers/bc/balance/grant", map[string]any{"currency": "USD", "amount": 3000, "targets": map[string]any{"priceIds": []string{"seats"}}})
	body := draftBody("bc", "ten", "five")
	body["billingAccountId"] = "ba-send"
	id = e.Must(201, "POST", "/v1/invoices", body).Data()["invoiceId"].(string)
	fin := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
	if fin["status"] != "open" || fin["paymentUrl"] == nil {
		t.Fatalf("finalized: %v %v", fin["status"], fin["paymentUrl"])
	}
	u, err := url.Parse(fin["paymentUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	token = u.Query().Get("token")
	page = strings.TrimSuffix(u.Path, "/pay") + "?token=" + url.QueryEscape(token)
	if page != "/customer-portal/invoices/"+id+"?token="+token {
		t.Fatalf("hosted page path %s", page)
	}
	return id, page, token
}

func TestHostedInvoicePage(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, page, token := openHostedInvoice(t, e)
		portal := func(status int, path string) *testkit.Response {
			t.Helper()
			return e.Must(status, "GET", path, nil, testkit.APIKey(""))
		}

		r := portal(200, page)
		html := string(r.Body)
		if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Fatalf("Content-Type %q", ct)
		}
		csp := r.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") || strings.Contains(csp, "unsafe") ||
			r.Header.Get("Referrer-Policy") != "no-referrer" || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("headers %v", r.Header)
		}
		// The same content as the PDF: parties, number, every line and total; and the pay button.
		wantText(t, "the hosted page", html, "<title>Invoice INV-000001 from Northwind Outfitters</title>", "Northwind Outfitters", "500 Market St",
			"San Francisco, CA 94105", "Customer bc", "City, BC V5K 0A1", "INV-000001", "Pro plan", "Seats", "Setup", "$123.40", "$87.31",
			"GST 5% $3.90 · PST 7% $5.46", "Discount (10% off, 5.00 off)", "-$30.00", "GST 5% (CA)", "PST 7% (CA-BC)", "$160.79",
			`data-pay-url="./`+id+`/pay?token=`+token+`"`, "Pay $160.79", "with Visa •••• 4242", `href="./`+id+`/pdf?token=`+token+`"`)
		for _, banned := range []string{"http://", "https://", "<link", " src="} {
			if strings.Contains(html, banned) {
				t.Fatalf("the hosted page loads or links something outside itself (%q)", banned)
			}
		}

		// The portal's PDF is the /v1 PDF.
		viaPortal := portal(200, "/customer-portal/invoices/"+id+"/pdf?token="+url.QueryEscape(token))
		if viaPortal.Header.Get("Content-Type") != "application/pdf" || !bytes.Equal(viaPortal.Body, getPDF(t, e, "/v1/invoices/"+id+"/pdf")) {
			t.Fatal("the portal's PDF differs from GET /v1/invoices/{id}/pdf")
		}

		// The portal's token rules.
		if r := portal(401, "/customer-portal/invoices/"+id); r.ErrorCode() != "unauthorized" {
			t.Fatalf("no token: %s", r.Body)
		}
		portal(401, "/customer-portal/invoices/"+id+"?token=hpt_nope")
		last := "0"
		if strings.HasSuffix(token, "0") {
			last = "1"
		}
		portal(401, "/customer-portal/invoices/"+id+"?token="+token[:len(token)-1]+last) // one character off
		portal(403, "/customer-portal/invoices/inv_someone_else?token="+token)
		portal(404, "/customer-portal/invoices/"+id+"/receipt?token="+token)
		portal(404, "/customer-portal/receipts/rcpt_1?token="+token)
		portal(404, "/customer-portal/invoices?token="+token)
		s := e.Must(201, "POST", "/v1/customers/bc/payment-method-setup", map[string]any{"billingAccountId": "ba-send"}).Data()
		if r := portal(403, "/customer-portal/invoices/"+id+"?token="+s["token"].(string)); r.ErrorCode() != "forbidden" {
			t.Fatalf("a setup session's token: %s", r.Body)
		}
		if r := e.Do("POST", page, nil, testkit.APIKey("")); r.Status != 405 || r.Header.Get("Allow") != "GET, PUT" {
			t.Fatalf("POST on the portal: %d %v", r.Status, r.Header.Get("Allow"))
		}

		// A void invoice's page says so and offers no payment.
		body := draftBody("bc")
		body["billingAccountId"] = "ba-send"
		other := e.Must(201, "POST", "/v1/invoices", body).Data()["invoiceId"].(string)
		u, _ := url.Parse(e.Must(200, "POST", "/v1/invoices/"+other+"/finalize", map[string]any{}).Data()["paymentUrl"].(string))
		e.Must(200, "POST", "/v1/invoices/"+other+"/void", map[string]any{})
		voidPage := string(portal(200, "/customer-portal/invoices/"+other+"?token="+u.Query().Get("token")).Body)
		wantText(t, "the void invoice's page", voidPage, "INV-000002", `class="badge status-void">Void<`, "VOID", "Nothing is due")
		if strings.Contains(voidPage, `id="pay"`) {
			t.Fatal("a void invoice's page offers to pay it")
		}
	})
}

// TestHostedInvoicePagePaysInBrowser opens the hosted page of an open invoice in headless Chromium,
// clicks pay and sees the invoice paid. Screenshots go to ./artifacts/ (ignored by git; CI keeps
// them).
func TestHostedInvoicePagePaysInBrowser(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, page, _ := openHostedInvoice(t, e)
		b := testkit.StartBrowser(t)
		shot := func(name string) string {
			p := filepath.Join("..", "artifacts", "hosted-invoice-"+name+"-"+string(e.Store)+".png")
			b.Screenshot(p)
			return p
		}
		b.Open(e.Server.URL + page)
		if h := b.Find("h1").Text(); h != "Northwind Outfitters" {
			t.Fatalf("page heading %q", h)
		}
		if s := b.Find("#status").Text(); s != "Open" {
			t.Fatalf("status %q", s)
		}
		if s := b.Find("#amount").Text(); s != "$160.79" {
			t.Fatalf("amount due %q", s)
		}
		shot("open")
		b.Find("#pay").Click()
		msg := b.WaitText("#pay-status", 15*time.Second, "Payment received", "declined", "could not", "Could not", "error")
		if !strings.Contains(msg, "Payment received") {
			t.Fatalf("after paying, the page says %q", msg)
		}
		// The page replaces its content with the paid invoice as the server renders it: read the
		// status with WaitText, which looks the element up again if it was replaced meanwhile.
		if s := b.WaitText("#status", 15*time.Second, "Paid"); s != "Paid" {
			t.Fatalf("status after paying %q", s)
		}
		// The page then shows the paid invoice as the server renders it, the outcome still in view.
		main := b.WaitText("main", 15*time.Second, "Paid on")
		wantText(t, "the page after paying", main, "Amount paid", "Amount remaining", "$0.00", "Payment received")
		if _, ok := b.TryFind("#pay"); ok {
			t.Fatal("the paid invoice's page still offers to pay it")
		}
		t.Logf("paid: screenshot %s", shot("paid"))
		if st := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()["status"]; st != "paid" {
			t.Fatalf("the invoice is %v after paying from its page", st)
		}
		// Reloaded, the page shows the paid invoice and no pay button.
		b.Open(e.Server.URL + page)
		if s := b.Find("#status").Text(); s != "Paid" {
			t.Fatalf("status on reload %q", s)
		}
		if _, ok := b.TryFind("#pay"); ok {
			t.Fatal("a paid invoice's page still offers to pay it")
		}
	})
}
