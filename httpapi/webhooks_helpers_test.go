package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// hit is one request a test receiver got.
type hit struct {
	WebhookID string
	Delivery  string
	Attempt   int
	Header    http.Header
	Body      []byte
}

// receiver is a real HTTP webhook receiver on loopback. respond chooses the status of each request
// (nil: 200); n is how many requests with this webhook-id it got before, this one included.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	hits    []hit
	respond func(h hit, n int) int
}

func newReceiver(t testing.TB, respond func(h hit, n int) int) *receiver {
	rc := &receiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		attempt, _ := strconv.Atoi(r.Header.Get("Remit-Delivery-Attempt"))
		h := hit{WebhookID: r.Header.Get("webhook-id"), Delivery: r.Header.Get("Remit-Delivery-Id"), Attempt: attempt, Header: r.Header.Clone(), Body: body}
		rc.mu.Lock()
		rc.hits = append(rc.hits, h)
		n := 0
		for _, x := range rc.hits {
			if x.WebhookID == h.WebhookID {
				n++
			}
		}
		rc.mu.Unlock()
		status := http.StatusOK
		if rc.respond != nil {
			status = rc.respond(h, n)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Hits returns a copy of the requests so far.
func (rc *receiver) Hits() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// fastConfig is the test configuration with a fast retry schedule.
func fastConfig(schedule string) *wire.Config {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.WebhookRetry = schedule
	return &cfg
}

// deliverUntil runs the delivery worker synchronously until cond holds, polling up to 15 s.
func deliverUntil(t testing.TB, e *testkit.Env, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := e.App.Webhooks.DeliverDue(context.Background()); err != nil {
			t.Fatalf("DeliverDue: %v", err)
		}
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startWorker runs the webhook worker loop of a until the test ends.
func startWorker(t testing.TB, a *app.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Webhooks.RunWebhooks(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// emitEvents writes n events of type typ for the env's sandbox account in one transaction, the way
// an area does (app.Emit in the change's transaction), and returns their IDs.
func emitEvents(t testing.TB, e *testkit.Env, typ remit.EventType, n int) []string {
	t.Helper()
	ctx := context.Background()
	m, err := e.App.DB.Read(ctx).GetMerchantAccount(ctx, e.Tenant.Sandbox, store.Unlocked)
	if err != nil {
		t.Fatal(err)
	}
	scope := remit.Scope{OrganizationID: e.Tenant.OrganizationID, Environment: remit.Sandbox, MerchantAccountID: m.ID}
	objIDs := make([]string, n)
	err = e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		for i := range objIDs {
			objIDs[i] = remit.NewID("obj")
			if err := e.App.Emit(ctx, tx, scope, e.App.Now(m), typ, objIDs[i], eventObject(t, typ, objIDs[i], m, e.App.Now(m))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	rows, err := e.App.DB.SQL().Query(`SELECT id, object_id FROM events WHERE merchant_account_id = $1 AND type = $2`, m.ID, typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	byObject := map[string]string{}
	for rows.Next() {
		var id, obj string
		if err := rows.Scan(&id, &obj); err != nil {
			t.Fatal(err)
		}
		byObject[obj] = id
	}
	ids := make([]string, n)
	for i, obj := range objIDs {
		if ids[i] = byObject[obj]; ids[i] == "" {
			t.Fatalf("no event for %s", obj)
		}
	}
	return ids
}

// eventObject is the JSON of a resource of the kind an event of type typ carries (an invoice or a
// customer, the types these tests emit), with ID id: events are answers too, checked against the
// contract. The invoice is charged automatically, so that invoice.finalized mails nothing (there
// is no customer to mail).
func eventObject(t testing.TB, typ remit.EventType, id string, m remit.MerchantAccount, now time.Time) map[string]any {
	t.Helper()
	var obj any
	switch {
	case strings.HasPrefix(string(typ), "customer."):
		obj = remit.Customer{Object: "customer", CustomerID: id, Name: "Event test", PreferredLocale: remit.DefaultLocale,
			Metadata: map[string]string{}, Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now}
	case strings.HasPrefix(string(typ), "invoice."):
		obj = remit.Invoice{Object: "invoice", InvoiceID: id, Status: remit.InvoiceOpen, Currency: "USD", CollectionMethod: remit.ChargeAutomatically,
			CouponIDs: []string{}, Lines: []remit.InvoiceLine{}, Metadata: map[string]string{}, DunningStatus: remit.DunningNone,
			Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now}
	default:
		t.Fatalf("eventObject: no test object for %s", typ)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// createEndpoint creates a sandbox endpoint and returns its ID and secret.
func createEndpoint(t testing.TB, e *testkit.Env, url string, events ...string) (string, string) {
	t.Helper()
	body := map[string]any{"url": url}
	if len(events) > 0 {
		body["enabledEvents"] = events
	}
	r := e.Do("POST", "/v1/webhook-endpoints", body)
	if r.Status != 201 {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	return d["endpointId"].(string), d["secret"].(string)
}

// deliveries returns the deliveries of an event through the API.
func deliveries(t testing.TB, e *testkit.Env, eventID string) []map[string]any {
	t.Helper()
	r := e.Do("GET", "/v1/events/"+eventID+"/deliveries?limit=100", nil)
	if r.Status != 200 {
		t.Fatalf("list deliveries: %d %s", r.Status, r.Body)
	}
	var out []map[string]any
	for _, it := range r.Data()["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}
