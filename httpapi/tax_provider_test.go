package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/taxprovider"
	"github.com/remit-billing/remit/wire"
)

// stripeTax is stripe-mock behind a proxy that records the paths Remit calls and that, while down,
// closes every connection without an answer (Stripe not answering).
type stripeTax struct {
	url   string
	down  atomic.Bool
	mu    sync.Mutex
	calls []string
}

func startStripeTax(t *testing.T) *stripeTax {
	t.Helper()
	target, err := url.Parse(testkit.StartStripeMock(t))
	if err != nil {
		t.Fatal(err)
	}
	s := &stripeTax{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// called reports how many calls of path Remit made since the last reset.
func (s *stripeTax) called(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c == "POST "+path {
			n++
		}
	}
	return n
}

func (s *stripeTax) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

func stripeTaxConfig(apiURL string) *wire.Config {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.StripeSecretKey, cfg.StripeAPIURL, cfg.TaxProvider = "sk_test_123", apiURL, "stripe"
	return &cfg
}

// sentinel counts of what a finalization leaves behind: events, general-journal entries.
func finalizationTraces(e *testkit.Env) (events, entries int) {
	events = len(e.Must(200, "GET", "/v1/events?limit=100", nil).Data()["items"].([]any))
	entries = len(e.Must(200, "GET", "/v1/ledger/entries?limit=100", nil).Data()["items"].([]any))
	return events, entries
}

// With REMIT_TAX_PROVIDER=stripe, a draft's tax is Stripe Tax's calculation (stripe-mock answers
// its fixture: one line item of amount_tax 148, where the built-in table would charge New York's
// 4%), its quoted tax transaction keeps the calculation's ID, finalization records Stripe's
// transaction from it (create_from_calculation) and a credit note is a reversal
// (create_reversal). While Stripe does not answer, a refresh keeps the draft's previous tax and
// says so (taxStale), and finalization is 503 tax_provider_unavailable and changes nothing: still
// a draft, no event, no journal entry, no number taken (the next finalization is INV-000001).
func TestStripeTaxProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs stripe-mock")
	}
	st := startStripeTax(t)
	testkit.RunWith(t, testkit.Options{Config: stripeTaxConfig(st.url), Serial: true}, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "ny", "US", "NY", false)
		st.reset()
		inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "ny", "billingAccountId": "ba-ny", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "plan"}}}).Data()
		id := inv["invoiceId"].(string)
		if got := figures(inv, "subtotal", "taxTotal", "total"); got != "subtotal=5000 taxTotal=148 total=5148 " || inv["taxStale"] != false {
			t.Fatalf("draft: %s taxStale=%v", got, inv["taxStale"])
		}
		if n := st.called("/v1/tax/calculations"); n != 1 {
			t.Fatalf("%d calculations for the draft", n)
		}
		st.reset()
		quoted := e.Must(200, "GET", "/v1/tax-transactions/"+inv["taxTransactionId"].(string), nil).Data()
		calc, _ := quoted["providerCalculationId"].(string)
		if quoted["provider"] != "stripe" || !strings.HasPrefix(calc, "taxcalc_") || quoted["providerTransactionId"] != nil || num(quoted["totalTax"]) != 148 {
			t.Fatalf("quoted tax transaction: %v", quoted)
		}

		// Stripe down: the refresh keeps the previous tax and says so; finalization changes nothing.
		st.down.Store(true)
		r := e.Must(200, "POST", "/v1/invoices/"+id+"/refresh", map[string]any{}).Data()
		if got := figures(r, "subtotal", "taxTotal", "total"); got != "subtotal=5000 taxTotal=148 total=5148 " || r["taxStale"] != true {
			t.Fatalf("refresh while Stripe is down: %s taxStale=%v", got, r["taxStale"])
		}
		kept := e.Must(200, "GET", "/v1/tax-transactions/"+inv["taxTransactionId"].(string), nil).Data()
		if kept["providerCalculationId"] != calc || kept["status"] != "quoted" {
			t.Fatalf("the stale draft's tax transaction: %v", kept)
		}
		events, entries := finalizationTraces(e)
		fail := e.Must(503, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}, testkit.Key("fin-"+id))
		if fail.ErrorCode() != "tax_provider_unavailable" {
			t.Fatalf("finalize while Stripe is down: %s", fail.Body)
		}
		still := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if still["status"] != "draft" || still["number"] != nil || still["taxStale"] != true {
			t.Fatalf("after the 503: %v", still)
		}
		if ev, en := finalizationTraces(e); ev != events || en != entries {
			t.Fatalf("the 503 left events %d→%d, journal entries %d→%d", events, ev, entries, en)
		}

		// Stripe back: the same request finalizes, takes the first number, records the transaction.
		st.down.Store(false)
		st.reset()
		fin := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}, testkit.Key("fin-"+id)).Data()
		if fin["number"] != "INV-000001" || fin["taxStale"] != false || num(fin["taxTotal"]) != 148 {
			t.Fatalf("finalized: %v", fin)
		}
		// One calculation, asked before the finalizing transaction and taken by it.
		if n, r := st.called("/v1/tax/calculations"), st.called("/v1/tax/transactions/create_from_calculation"); n != 1 || r != 1 {
			t.Fatalf("finalization: %d calculations, %d transactions recorded at Stripe", n, r)
		}
		st.reset()
		sale := e.Must(200, "GET", "/v1/tax-transactions/"+fin["taxTransactionId"].(string), nil).Data()
		saleTxn, _ := sale["providerTransactionId"].(string)
		if sale["status"] != "committed" || !strings.HasPrefix(saleTxn, "tax_") || sale["providerCalculationId"] == nil {
			t.Fatalf("committed tax transaction: %v", sale)
		}
		line := fin["lines"].([]any)[0].(map[string]any)["invoiceLineId"].(string)
		cn := e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine(line, "offset", 1000))).Data()
		rev := e.Must(200, "GET", "/v1/tax-transactions?sourceDocumentId="+cn["creditNoteId"].(string), nil).Data()["items"].([]any)
		if len(rev) != 1 || rev[0].(map[string]any)["type"] != "reversal" || rev[0].(map[string]any)["providerTransactionId"] == nil {
			t.Fatalf("the credit note's reversal: %v (credit note %v)", rev, cn)
		}
		if n := st.called("/v1/tax/transactions/create_reversal"); n != 1 {
			t.Fatalf("%d reversals at Stripe for the credit note", n)
		}
	})
}

// A provider that never answers (a closed port): a new draft has no tax yet and says so; its
// finalization is 503 tax_provider_unavailable and changes nothing, on every store.
func TestStripeTaxProviderClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	_ = l.Close()
	testkit.RunWith(t, testkit.Options{Config: stripeTaxConfig(closed)}, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "ny", "US", "NY", false)
		inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "ny", "billingAccountId": "ba-ny", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "plan"}}}).Data()
		id := inv["invoiceId"].(string)
		if got := figures(inv, "subtotal", "taxTotal", "total"); got != "subtotal=5000 taxTotal=0 total=5000 " || inv["taxStale"] != true {
			t.Fatalf("draft: %s taxStale=%v", got, inv["taxStale"])
		}
		events, entries := finalizationTraces(e)
		fail := e.Must(503, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
		if fail.ErrorCode() != "tax_provider_unavailable" || strings.Contains(string(fail.Body), closed) {
			t.Fatalf("finalize: %s", fail.Body)
		}
		still := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		txn := e.Must(200, "GET", "/v1/tax-transactions/"+inv["taxTransactionId"].(string), nil).Data()
		if still["status"] != "draft" || still["number"] != nil || txn["status"] != "quoted" {
			t.Fatalf("after the 503: invoice %v, tax transaction %v", still, txn)
		}
		if ev, en := finalizationTraces(e); ev != events || en != entries {
			t.Fatalf("the 503 left events %d→%d, journal entries %d→%d", events, ev, entries, en)
		}
	})
}

// askedProvider is the built-in table as an external provider that notes, for each calculation,
// whether a store transaction was open around the call.
type askedProvider struct {
	taxprovider.Table
	mu     sync.Mutex
	inTx   []bool
	record int
}

func (p *askedProvider) Name() string { return taxprovider.Stripe }

func (p *askedProvider) Calculate(ctx context.Context, req taxprovider.Request) (taxprovider.Calculation, error) {
	p.mu.Lock()
	p.inTx = append(p.inTx, store.InTx(ctx))
	p.mu.Unlock()
	c, err := p.Table.Calculate(ctx, req)
	c.ID = "taxcalc_test"
	return c, err
}

func (p *askedProvider) Record(context.Context, string, string) (string, error) {
	p.mu.Lock()
	p.record++
	p.mu.Unlock()
	return "tax_test", nil
}

func (p *askedProvider) calls() []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.inTx
	p.inTx = nil
	return out
}

// A refresh and a finalization ask an external tax provider in their prepare step, with no store
// transaction open, and their transaction takes that answer (one calculation each); the
// transaction records the sale from it.
func TestTaxProviderAskedOutsideTransactions(t *testing.T) {
	p := &askedProvider{}
	testkit.RunWith(t, testkit.Options{Engine: func(a *app.App) {
		p.Rates = a.TaxTable()
		a.Config.TaxProvider = p
	}}, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "ny", "US", "NY", false)
		inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "ny", "billingAccountId": "ba-ny", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "plan"}}}).Data()
		id := inv["invoiceId"].(string)
		p.calls() // a creation asks inside its transaction (it has no prepare step)
		p.record = 0
		r := e.Must(200, "POST", "/v1/invoices/"+id+"/refresh", map[string]any{}).Data()
		if got := fmt.Sprint(p.calls()); got != "[false]" || num(r["taxTotal"]) != 200 {
			t.Fatalf("refresh: calls in a transaction %s, taxTotal %v", got, r["taxTotal"])
		}
		fin := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
		if got := fmt.Sprint(p.calls()); got != "[false]" || num(fin["taxTotal"]) != 200 || p.record != 1 {
			t.Fatalf("finalize: calls in a transaction %s, taxTotal %v, %d recorded", got, fin["taxTotal"], p.record)
		}
		sale := e.Must(200, "GET", "/v1/tax-transactions/"+fin["taxTransactionId"].(string), nil).Data()
		if sale["providerCalculationId"] != "taxcalc_test" || sale["providerTransactionId"] != "tax_test" {
			t.Fatalf("sale: %v", sale)
		}
	})
}
