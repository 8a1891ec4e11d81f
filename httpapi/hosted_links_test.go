package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// noRedirect sends a GET to the server and answers what it said, without following a redirect.
func noRedirect(t *testing.T, e *testkit.Env, path string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(e.Server.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// GET / sends a person who opens the server's address to the API reference; every other unknown
// route stays a JSON 404.
func TestRootRedirectsToDocs(t *testing.T) {
	e := testkit.Start(t, testkit.SQLite, testkit.Options{})
	res, _ := noRedirect(t, e, "/")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/docs" || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /: %d, Location %q, Cache-Control %q", res.StatusCode, res.Header.Get("Location"), res.Header.Get("Cache-Control"))
	}
	if r := e.Do("GET", "/", nil); r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / followed: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, c := range []struct{ method, path string }{{"GET", "/nope"}, {"POST", "/"}, {"GET", "/index.html"}} {
		if r := e.Do(c.method, c.path, nil); r.Status != 404 || r.ErrorCode() != "not_found" {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
}

// An invoice's paymentUrl opened in a browser (GET) is sent on to the invoice's hosted page,
// under the same token; the token's rules hold first (401 for a bad one, 403 for another
// invoice's). A finalized invoice carries its hosted page as hostedInvoiceUrl.
func TestPaymentURLOpensTheHostedPage(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, page, token := openHostedInvoice(t, e)
		inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if inv["hostedInvoiceUrl"] != e.Server.URL+page {
			t.Fatalf("hostedInvoiceUrl %v, want %s", inv["hostedInvoiceUrl"], e.Server.URL+page)
		}
		pay, _ := url.Parse(inv["paymentUrl"].(string))
		res, _ := noRedirect(t, e, pay.RequestURI())
		loc, err := pay.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || err != nil || loc.RequestURI() != page || res.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET paymentUrl: %d to %q (%v)", res.StatusCode, res.Header.Get("Location"), loc)
		}
		r := e.Must(200, "GET", pay.RequestURI(), nil, testkit.APIKey(""))
		wantText(t, "the page the paymentUrl opens", string(r.Body), "INV-000001", `class="badge status-open">Open<`, `id="pay"`)
		if r := e.Do("GET", "/customer-portal/invoices/"+id+"/pay?token=hpt_nope", nil, testkit.APIKey("")); r.Status != 401 {
			t.Fatalf("a bad token: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/customer-portal/invoices/inv_other/pay?token="+url.QueryEscape(token), nil, testkit.APIKey("")); r.Status != 403 {
			t.Fatalf("another invoice's pay route: %d %s", r.Status, r.Body)
		}
		s := e.Must(201, "POST", "/v1/customers/bc/payment-method-setup", map[string]any{"billingAccountId": "ba-send"}).Data()
		if r := e.Do("GET", "/customer-portal/invoices/"+id+"/pay?token="+s["token"].(string), nil, testkit.APIKey("")); r.Status != 403 {
			t.Fatalf("a setup session's token: %d %s", r.Status, r.Body)
		}
	})
}

// hostedInvoiceUrl: null on a draft; from finalization on the invoice's hosted page, whatever it
// becomes. An invoice paid at finalization (its prepaid balance covers it) has no paymentUrl, and
// its hosted page shows it paid; an invoice paid later keeps the URL it had.
func TestHostedInvoiceURL(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "send_invoice")
		draft := k.draft("c1", 700)
		if d := e.Must(200, "GET", "/v1/invoices/"+draft, nil).Data(); d["hostedInvoiceUrl"] != nil {
			t.Fatalf("a draft's hostedInvoiceUrl: %v", d["hostedInvoiceUrl"])
		}
		e.Must(201, "POST", "/v1/customers/c1/balance/grant", map[string]any{"currency": "USD", "amount": 700})
		paid := e.Must(200, "POST", "/v1/invoices/"+draft+"/finalize", map[string]any{}).Data()
		hosted, _ := paid["hostedInvoiceUrl"].(string)
		if paid["status"] != "paid" || paid["paymentUrl"] != nil || !strings.HasPrefix(hosted, e.Server.URL+"/customer-portal/invoices/"+draft+"?token=hpt_") {
			t.Fatalf("paid at finalization: status %v, paymentUrl %v, hostedInvoiceUrl %v", paid["status"], paid["paymentUrl"], paid["hostedInvoiceUrl"])
		}
		page := string(e.Must(200, "GET", strings.TrimPrefix(hosted, e.Server.URL), nil, testkit.APIKey("")).Body)
		wantText(t, "the page of an invoice paid at finalization", page, `class="badge status-paid">Paid<`, "Paid on")
		if strings.Contains(page, `id="pay"`) {
			t.Fatal("the page of a paid invoice offers to pay it")
		}

		k.attach("c1", "pm_card_visa")
		open := k.invoice("c1", 900)
		before := open["hostedInvoiceUrl"]
		if open["status"] != "open" || before == nil || before != strings.Replace(open["paymentUrl"].(string), "/pay?", "?", 1) {
			t.Fatalf("open: %v %v %v", open["status"], before, open["paymentUrl"])
		}
		after := e.Must(200, "POST", "/v1/invoices/"+open["invoiceId"].(string)+"/pay", map[string]any{}).Data()
		if after["status"] != "paid" || after["paymentUrl"] != nil || after["hostedInvoiceUrl"] != before {
			t.Fatalf("paid later: %v %v %v", after["status"], after["paymentUrl"], after["hostedInvoiceUrl"])
		}
		page = string(e.Must(200, "GET", strings.TrimPrefix(before.(string), e.Server.URL), nil, testkit.APIKey("")).Body)
		wantText(t, "the page of an invoice paid later", page, `class="badge status-paid">Paid<`)
	})
}
