package main

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// BenchmarkDashboardPages measures every page of the dashboard over HTTP (server time plus a
// loopback round trip) on the load harness's seed: 10,000 customers, 100,000 invoices and
// 100,000 ledger entries in one merchant account, on each store (docs/dashboard.md "Page times";
// target: under 50 ms each). A smoke run (-benchtime 1x, as CI runs it) seeds 40 customers
// and 400 invoices. Run:
//
//	go test -run '^$' -bench DashboardPages -benchtime 200x ./cmd/remit-load/
func BenchmarkDashboardPages(b *testing.B) {
	sz := Sizes{Customers: 10_000, Invoices: 100_000, Entries: 100_000}
	if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
		sz = Sizes{Customers: 40, Invoices: 400, Entries: 400}
	}
	for _, s := range testkit.Stores() {
		b.Run(string(s), func(b *testing.B) { benchmarkPages(b, s, sz) })
	}
}

func benchmarkPages(b *testing.B, s testkit.Store, sz Sizes) {
	ctx := context.Background()
	url0 := testkit.NewStoreURL(b, s)
	fx, err := seed(ctx, url0, "http://127.0.0.1:1", sz, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	e := testkit.StartOn(b, s, url0, testkit.Options{})
	m, err := e.App.DB.Read(ctx).GetMerchantAccount(ctx, fx.MerchantID, store.Unlocked)
	if err != nil {
		b.Fatal(err)
	}
	// Usage for the usage page: 720 events over the last 30 days of one customer, on the seed's meter.
	now := e.App.Now(m)
	for i := range 720 {
		ts := now.Add(-time.Duration(i) * time.Hour)
		if _, err := e.App.Usage.CreateUsageEvent(ctx, m, remit.UsageEventInput{EventID: "bench-" + strconv.Itoa(i),
			CustomerID: fx.Customers[len(fx.Customers)/2], MeterID: meterID, Quantity: int64(1 + i%7), Timestamp: &ts}); err != nil {
			b.Fatal(err)
		}
	}
	c := signIn(b, e, m.OrganizationID)
	a := "/dashboard/accounts/" + m.ID
	customer := fx.Customers[len(fx.Customers)/2]
	events := c.get(b, a+"/events?limit=1")
	eventID := regexp.MustCompile(`/events/(evt_[0-9a-z]+)"`).FindStringSubmatch(events)[1]
	pages := []struct{ name, path string }{
		{"overview", "/dashboard"},
		{"account", a}, // the revenue chart, the open totals, the failed payments
		{"customers", a + "/customers"},
		{"customers-search-id", a + "/customers?q=" + customer},
		{"customers-search-none", a + "/customers?q=zzz"}, // reads every customer: the worst search
		{"customer", a + "/customers/" + customer},
		{"invoices", a + "/invoices"},
		{"invoices-open", a + "/invoices?status=open"},
		{"invoices-of-customer", a + "/invoices?customer=" + customer},
		{"invoice", a + "/invoices/" + fx.Invoices[len(fx.Invoices)/2]},
		{"payments", a + "/payments"},
		{"payments-failed", a + "/payments?status=failed"},
		{"receipts", a + "/receipts"},
		{"settlements", a + "/settlements"},
		{"subscriptions", a + "/subscriptions"},
		{"emails", a + "/emails"},
		{"usage", a + "/usage?customer=" + customer + "&meter=" + meterID}, // 31 period reads
		{"events", a + "/events"},
		{"event", a + "/events/" + eventID},
		{"jobs", a + "/jobs"}, // the failed ones: the partial index jobs_failed
		{"jobs-all", a + "/jobs?status=all"},
		{"clock", a + "/clock"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				c.get(b, p.path)
			}
		})
	}
}

type pageClient struct {
	base string
	c    *http.Client
}

// signIn creates an admin of the organization and signs it in.
func signIn(b *testing.B, e *testkit.Env, orgID string) *pageClient {
	ctx := context.Background()
	_, link, err := e.App.Operators.CreateOperator(ctx, orgID, "bench@example.com", remit.OperatorAdmin)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.App.Operators.SetOperatorPassword(ctx, link[strings.Index(link, "token=")+len("token="):], "benchmark password", "benchmark password"); err != nil {
		b.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &pageClient{base: e.Server.URL, c: &http.Client{Jar: jar}}
	form := c.get(b, "/dashboard/sign-in")
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(form)[1]
	req, _ := http.NewRequest(http.MethodPost, c.base+"/dashboard/sign-in", strings.NewReader(url.Values{
		"csrf": {csrf}, "email": {"bench@example.com"}, "password": {"benchmark password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	res, err := c.c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if !strings.Contains(c.get(b, "/dashboard"), "Remit load test") {
		b.Fatal("not signed in")
	}
	return c
}

func (c *pageClient) get(b *testing.B, path string) string {
	res, err := c.c.Get(c.base + path)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d\n%s", path, res.StatusCode, body)
	}
	return string(body)
}
