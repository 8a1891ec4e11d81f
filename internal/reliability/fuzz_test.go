package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
)

// FuzzRequestBodies sends any body to any operation that takes one, through the whole pipeline
// (auth, scope, JSON checks, contract validation, decoding, the handler and its store
// transaction) by calling the http.Handler directly. The answer is always an envelope and never a
// 5xx (but the 501 of an operation this deployment does not offer). The path names organization
// A's resources, so bodies reach the rules of existing invoices, customers and quotes.
//
//	go test -run '^$' -fuzz FuzzRequestBodies -fuzztime 5m ./internal/reliability
func FuzzRequestBodies(f *testing.F) {
	spec, err := api.Spec()
	if err != nil {
		f.Fatal(err)
	}
	e := testkit.Start(f, testkit.SQLite, testkit.Options{})
	A := populateAlpha(f, e)
	var ops []specOp
	for _, o := range operations(spec) {
		if o.body != nil && !strings.HasPrefix(o.path, "/customer-portal") && !strings.HasPrefix(o.path, "/claims") {
			ops = append(ops, o)
		}
	}
	for i, o := range ops {
		f.Add(uint8(i), []byte(`{}`))
		if b, ok := A.bodies[o.id]; ok {
			raw, _ := json.Marshal(b)
			f.Add(uint8(i), raw)
		}
	}
	implemented := e.Remit.Handler.Operations()
	h := e.Remit.Handler
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		o := ops[int(which)%len(ops)]
		u := fill(o.path, A.ids, "x") + "?environment=sandbox&merchantAccountId=" + url.QueryEscape(e.Tenant.Sandbox)
		req := httptest.NewRequest(o.method, u, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var env struct {
			Data  json.RawMessage `json:"data"`
			Error *struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || (env.Data == nil && (env.Error == nil || env.Error.Code == "")) {
			t.Fatalf("%s %s %q: not an envelope: %d %s", o.method, o.path, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code >= 500 && !(rec.Code == http.StatusNotImplemented && !implemented[o.id]) {
			t.Fatalf("%s %s %q: %d %s", o.method, o.path, body, rec.Code, rec.Body.Bytes())
		}
	})
}

// FuzzCursor: any limit and cursor text either parses into a page of 1..100 items or is a 422
// naming the parameter; a cursor Remit issued parses back to its position.
//
//	go test -run '^$' -fuzz FuzzCursor -fuzztime 1m ./internal/reliability
func FuzzCursor(f *testing.F) {
	e := testkit.Start(f, testkit.SQLite, testkit.Options{})
	ctx := context.Background()
	scope := remit.Scope{OrganizationID: e.Tenant.OrganizationID, Environment: remit.Sandbox, MerchantAccountID: e.Tenant.Sandbox}
	page, _ := e.App.ParsePage(ctx, scope, "events", "", "", 20)
	next, err := e.App.NextCursor(ctx, scope, "events", page, true, remit.FromMicros(1_700_000_000_000_000), "evt_1")
	if err != nil || next == nil {
		f.Fatalf("next cursor: %v", err)
	}
	for _, s := range []string{*next, "", "abc", "a.b", *next + "x", strings.ToUpper(*next), "e30.AAAA", strings.Repeat("A", 2000) + ".B"} {
		f.Add("", s)
		f.Add("100", s)
	}
	f.Add("0", "")
	f.Add("9223372036854775808", "")
	f.Add("-1", "")
	f.Fuzz(func(t *testing.T, limit, cursor string) {
		p, err := e.App.ParsePage(ctx, scope, "events", limit, cursor, 20)
		if err != nil {
			var re *remit.Error
			if !errorsAs(err, &re) || re.Code != remit.EInvalid || len(re.Fields) == 0 {
				t.Fatalf("limit %q cursor %q: %v", limit, cursor, err)
			}
			for _, fe := range re.Fields {
				if fe.Field != "limit" && fe.Field != "cursor" {
					t.Fatalf("problem on %q", fe.Field)
				}
			}
			return
		}
		if p.Limit < 1 || p.Limit > 100 {
			t.Fatalf("limit %q cursor %q: page of %d", limit, cursor, p.Limit)
		}
		if cursor == *next && (p.AfterID != "evt_1" || remit.Micros(p.AfterTime) != 1_700_000_000_000_000) {
			t.Fatalf("the issued cursor parses to %+v", p)
		}
	})
}
