package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// TestBalanceEntriesPages: GET /v1/customers/{id}/balance/entries pages exactly the entries of GET
// /v1/customers/{id}/balance, in their order, with no duplicate and no gap, also when entries share
// their creation time (a fixed clock: the order is then the append order alone, which the entry IDs
// below run against), and by currency (docs/catalog-and-balance.md).
func TestBalanceEntriesPages(t *testing.T) {
	for _, st := range testkit.Stores() {
		t.Run(string(st), func(t *testing.T) {
			clock := remit.NewFixedClock(time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC))
			e := testkit.Start(t, st, testkit.Options{Clock: clock})
			k := newCatalogKit(t, e)
			k.customer("c1")
			k.customer("c2")
			expire := func(source string, amount int64) {
				e.Must(201, "POST", "/v1/customers/c1/balance/expire", map[string]any{"sourceEntryId": source, "amount": amount})
			}
			// Entry IDs in reverse of the append order; three instants, several entries at each.
			k.grant("c1", map[string]any{"entryId": "g-z", "currency": "USD", "amount": 100})
			k.grant("c1", map[string]any{"entryId": "g-y", "currency": "EUR", "amount": 50})
			k.grant("c1", map[string]any{"entryId": "g-x", "currency": "USD", "amount": 70})
			expire("g-z", 30)
			clock.Add(time.Second)
			k.grant("c1", map[string]any{"entryId": "g-w", "currency": "USD", "amount": 5})
			k.grant("c1", map[string]any{"entryId": "g-v", "currency": "EUR", "amount": 8})
			expire("g-y", 50)
			clock.Add(time.Millisecond)
			k.grant("c1", map[string]any{"entryId": "g-u", "currency": "USD", "amount": 1})
			k.grant("c2", map[string]any{"entryId": "other", "currency": "USD", "amount": 9})

			_, all := k.balance("c1")
			if len(all) != 8 {
				t.Fatalf("balance entries: %d, want 8", len(all))
			}
			same(t, "all", pageAll(t, e, "c1", ""), all)
			var eur []map[string]any
			for _, x := range all {
				if x["currency"] == "EUR" {
					eur = append(eur, x)
				}
			}
			same(t, "EUR", pageAll(t, e, "c1", "EUR"), eur)
			// An accepted currency without entries: an empty list.
			empty := e.Must(200, "GET", "/v1/customers/c1/balance/entries?currency=GBP", nil).Data()
			if items := empty["items"].([]any); len(items) != 0 || empty["hasMore"] != false || empty["nextCursor"] != nil {
				t.Fatalf("GBP: %v", empty)
			}
			// Default page size 20: one page holds all eight.
			whole := e.Must(200, "GET", "/v1/customers/c1/balance/entries", nil).Data()
			if items := whole["items"].([]any); len(items) != 8 || whole["hasMore"] != false || whole["nextCursor"] != nil {
				t.Fatalf("default page: %v", whole)
			}
			refusals(t, e)
		})
	}
}

// pageAll reads every page of the customer's entries (in currency when not ""), two at a time: the
// first page with limit=2, the next ones with the cursor alone (which keeps the page size).
func pageAll(t *testing.T, e *testkit.Env, customerID, currency string) []map[string]any {
	t.Helper()
	q := url.Values{"limit": {"2"}}
	if currency != "" {
		q.Set("currency", currency)
	}
	var out []map[string]any
	for page := 1; ; page++ {
		d := e.Must(200, "GET", "/v1/customers/"+customerID+"/balance/entries?"+q.Encode(), nil).Data()
		items := d["items"].([]any)
		if d["object"] != "list" || len(items) > 2 || len(items) == 0 && page > 1 {
			t.Fatalf("page %d: %v", page, d)
		}
		for _, x := range items {
			out = append(out, x.(map[string]any))
		}
		if page > 50 { // a cursor that does not move on: the first pages again and again
			t.Fatalf("still more after %d pages: %v", page, entryIDs(out))
		}
		next, _ := d["nextCursor"].(string)
		if d["hasMore"] != (next != "") {
			t.Fatalf("page %d: hasMore %v with nextCursor %v", page, d["hasMore"], d["nextCursor"])
		}
		if next == "" {
			return out
		}
		if len(items) != 2 {
			t.Fatalf("page %d: %d items and more to come", page, len(items))
		}
		q.Del("limit")
		q.Set("cursor", next)
	}
}

// same fails unless the paged entries are the balance route's, in the same order.
func same(t *testing.T, what string, paged, want []map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(entryIDs(paged), entryIDs(want)) {
		t.Fatalf("%s: paged %v, balance route %v", what, entryIDs(paged), entryIDs(want))
	}
	if !reflect.DeepEqual(paged, want) {
		t.Fatalf("%s: paged entries differ from the balance route's:\n%v\n%v", what, paged, want)
	}
}

// entryIDs lists the entries' entryId.
func entryIDs(entries []map[string]any) []any {
	var out []any
	for _, x := range entries {
		out = append(out, x["entryId"])
	}
	return out
}

// refusals: the parameters' 422s, and the balance route's 404s (c1 has more than one page).
func refusals(t *testing.T, e *testkit.Env) {
	t.Helper()
	list := "/v1/customers/c1/balance/entries"
	first := e.Must(200, "GET", list+"?limit=1", nil).Data()
	cursor := first["nextCursor"].(string)
	e.Must(200, "GET", list+"?cursor="+cursor, nil)

	wantFields(t, e.Do("GET", list+"?limit=0", nil), "query:limit:out_of_range")
	wantFields(t, e.Do("GET", list+"?limit=101", nil), "query:limit:out_of_range")
	wantFields(t, e.Do("GET", list+"?limit=x", nil), "query:limit:invalid_type")
	wantFields(t, e.Do("GET", list+"?currency=usd", nil), "query:currency:invalid_currency")
	wantFields(t, e.Do("GET", list+"?currency=BRL", nil), "query:currency:currency_not_supported")
	// Garbage, forged (a changed body under the old signature), and cursors of other lists: another
	// currency's, another customer's, the events'.
	body, sig, _ := strings.Cut(cursor, ".")
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		t.Fatalf("cursor %q: %v", cursor, err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("cursor %q: %v", cursor, err)
	}
	c["n"] = 100
	raw, _ = json.Marshal(c)
	forged := base64.RawURLEncoding.EncodeToString(raw) + "." + sig
	e.Must(201, "POST", "/v1/customers/c2/balance/grant", map[string]any{"currency": "USD", "amount": 1})
	c2 := e.Must(200, "GET", "/v1/customers/c2/balance/entries?limit=1", nil).Data()["nextCursor"].(string)
	events := e.Must(200, "GET", "/v1/events?limit=1", nil).Data()["nextCursor"].(string)
	for _, bad := range []string{"garbage", cursor + "x", forged, c2, events} {
		wantFields(t, e.Do("GET", list+"?cursor="+url.QueryEscape(bad), nil), "query:cursor:invalid_cursor")
	}
	wantFields(t, e.Do("GET", list+"?currency=USD&cursor="+cursor, nil), "query:cursor:invalid_cursor")

	// Not found as on the balance route: an unknown customer, another merchant account's, another
	// environment's.
	other := e.NewTenant("Other", false)
	for _, c := range []struct {
		customer string
		opts     []testkit.Opt
	}{{"nope", nil}, {"c1", []testkit.Opt{testkit.As(other)}}, {"c1", []testkit.Opt{testkit.Production()}}} {
		got := e.Must(404, "GET", "/v1/customers/"+c.customer+"/balance/entries", nil, c.opts...).JSON()["error"].(map[string]any)
		want := e.Must(404, "GET", "/v1/customers/"+c.customer+"/balance", nil, c.opts...).JSON()["error"].(map[string]any)
		if got["code"] != want["code"] || got["message"] != want["message"] || !reflect.DeepEqual(got["details"], want["details"]) {
			t.Errorf("%s: %v, balance route %v", c.customer, got, want)
		}
	}
}
