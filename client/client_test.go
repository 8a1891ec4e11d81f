package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/remit-billing/remit/client"
	"github.com/remit-billing/remit/internal/testkit"
)

func newClient(t *testing.T, e *testkit.Env, tenant testkit.Tenant) *client.ClientWithResponses {
	t.Helper()
	c, err := client.New(e.Server.URL, client.WithAPIKey(tenant.APIKey), client.WithScope(client.Sandbox, tenant.Sandbox),
		client.WithHTTPClient(e.HTTPClient()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The happy path of a first invoice, through the generated client and its helpers only: bootstrap
// (an organization, its merchant accounts and key) → price → customer → billing account → invoice
// → finalize.
func TestClientFirstInvoice(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		tenant := e.NewTenant("Client Co", false)
		c := newClient(t, e, tenant)

		price, err := c.CreatePriceWithResponse(ctx, nil, client.PriceCreateRequest{
			PriceId: "price_setup", ProductId: "prod_setup", Name: "Setup fee",
			PriceType: client.FixedOneTime, Currency: "USD", UnitAmount: client.Ptr[int64](25000),
		})
		if err != nil {
			t.Fatal(err)
		}
		if price.StatusCode() != 200 || price.JSON200 == nil || deref(price.JSON200.Data.PriceId) != "price_setup" || deref(price.JSON200.Data.UnitAmount) != 25000 {
			t.Fatalf("price: %d %s", price.StatusCode(), price.Body)
		}
		if !strings.HasPrefix(price.JSON200.RequestId, "req_") || price.HTTPResponse.Header.Get("Request-Id") != price.JSON200.RequestId {
			t.Errorf("requestId %q, header %q", price.JSON200.RequestId, price.HTTPResponse.Header.Get("Request-Id"))
		}

		cus, err := c.CreateCustomerWithResponse(ctx, nil, client.CustomerCreateRequest{
			CustomerId: client.Ptr("cus_acme"), Name: "Acme Corp", Email: client.Ptr("billing@acme.example"),
			Address: &client.CustomerAddress{Line1: "500 5th Ave", City: "New York", Region: client.Ptr("NY"), PostalCode: "10110", Country: "US"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if cus.JSON201 == nil || deref(cus.JSON201.Data.CustomerId) != "cus_acme" {
			t.Fatalf("customer: %d %s", cus.StatusCode(), cus.Body)
		}

		method := client.SendInvoice
		ba, err := c.CreateBillingAccountWithResponse(ctx, nil, client.BillingAccountCreateRequest{
			BillingAccountId: client.Ptr("ba_acme_usd"), CustomerId: "cus_acme", Currency: "USD", CollectionMethod: &method,
		})
		if err != nil {
			t.Fatal(err)
		}
		if ba.JSON201 == nil || deref(ba.JSON201.Data.BillingAccountId) != "ba_acme_usd" {
			t.Fatalf("billing account: %d %s", ba.StatusCode(), ba.Body)
		}

		inv, err := c.CreateInvoiceWithResponse(ctx, nil, client.InvoiceCreateRequest{
			CustomerId: "cus_acme", BillingAccountId: "ba_acme_usd", Currency: "USD",
			Lines: []client.InvoiceLineInput{{PriceId: "price_setup", Quantity: client.Ptr[int64](2)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if inv.JSON201 == nil || deref(inv.JSON201.Data.Status) != "draft" || deref(inv.JSON201.Data.Subtotal) != 50000 {
			t.Fatalf("invoice: %d %s", inv.StatusCode(), inv.Body)
		}
		d := inv.JSON201.Data
		// New York tax on 50,000 at 4% (the shipped rate table).
		if deref(d.TaxTotal) != 2000 || deref(d.Total) != 52000 {
			t.Errorf("taxTotal %d total %d, want 2000 and 52000", deref(d.TaxTotal), deref(d.Total))
		}

		fin, err := c.FinalizeInvoiceWithResponse(ctx, deref(d.InvoiceId), nil, client.InvoiceFinalizeRequest{FinalizedByRef: client.Ptr("client-test")})
		if err != nil {
			t.Fatal(err)
		}
		f := fin.JSON200.Data
		if deref(f.Status) != "open" || deref(f.Number) != "INV-000001" || deref(f.AmountDue) != 52000 || deref(f.AmountRemaining) != 52000 || !strings.Contains(deref(f.PaymentUrl), "/customer-portal/invoices/") {
			t.Fatalf("finalized invoice: %s", fin.Body)
		}

		got, err := c.GetInvoiceWithResponse(ctx, deref(d.InvoiceId), nil)
		if err != nil {
			t.Fatal(err)
		}
		if deref(got.JSON200.Data.Status) != "open" || deref(got.JSON200.Data.Number) != "INV-000001" {
			t.Fatalf("get invoice: %s", got.Body)
		}

		// Finalizing again: a typed conflict carrying the current state.
		_, err = c.FinalizeInvoiceWithResponse(ctx, deref(d.InvoiceId), nil, client.InvoiceFinalizeRequest{})
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 409 || apiErr.Code != client.CodeConflict || apiErr.CurrentState() != "open" {
			t.Fatalf("second finalize: %v", err)
		}
	})
}

// Errors come back as *client.Error with code, message, request ID, docs URL and field details.
func TestClientTypedErrors(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		c := newClient(t, e, e.Tenant)

		// 422 with every problem listed.
		_, err := c.CreatePriceWithResponse(ctx, nil, client.PriceCreateRequest{
			PriceId: "p1", ProductId: "prod", Name: "Pro", PriceType: client.FixedRecurring, Currency: "USD",
		})
		var apiErr *client.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("want *client.Error, got %T %v", err, err)
		}
		if apiErr.StatusCode != 422 || apiErr.Code != client.CodeValidationFailure || !strings.HasPrefix(apiErr.RequestID, "req_") ||
			apiErr.DocsURL != e.Server.URL+"/docs/errors#validation_failure" || len(apiErr.Fields) != 2 {
			t.Fatalf("422: %+v", apiErr)
		}
		if f, ok := apiErr.Field("unitAmount"); !ok || f.Reason != "required" || f.Location != "body" || !strings.Contains(f.Message, "fixed_recurring") {
			t.Errorf("unitAmount problem: %+v", f)
		}
		if !strings.Contains(err.Error(), "unitAmount") || !strings.Contains(err.Error(), apiErr.RequestID) {
			t.Errorf("Error() = %q", err.Error())
		}
		if !strings.HasPrefix(apiErr.IdempotencyKey, "remit-go-") {
			t.Errorf("the request carried no generated Idempotency-Key: %q", apiErr.IdempotencyKey)
		}

		// 404 on an unknown resource.
		_, err = c.GetInvoiceWithResponse(ctx, "inv_nope", nil)
		if !client.IsCode(err, client.CodeNotFound) || !strings.Contains(err.Error(), "inv_nope") {
			t.Fatalf("404: %v", err)
		}

		// 401 with a bad key.
		bad, _ := client.New(e.Server.URL, client.WithAPIKey("rk_bad.key"), client.WithScope(client.Sandbox, e.Tenant.Sandbox),
			client.WithHTTPClient(e.HTTPClient()))
		_, err = bad.GetTestClockWithResponse(ctx, nil)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != client.CodeUnauthorized || apiErr.Message == "" {
			t.Fatalf("401: %v", err)
		}

		// The Scope editor acts in production for one call: the sandbox clock is 403 there.
		_, err = c.GetTestClockWithResponse(ctx, nil, client.Scope(client.Production, e.Tenant.Production))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || apiErr.Code != client.CodeForbidden {
			t.Fatalf("production clock: %v", err)
		}
		clock, err := c.GetTestClockWithResponse(ctx, nil)
		if err != nil || deref(clock.JSON200.Data.MerchantAccountId) != e.Tenant.Sandbox {
			t.Fatalf("sandbox clock: %v", err)
		}
	})
}

// Every write carries an Idempotency-Key: generated per call, or the caller's.
func TestClientIdempotencyKeys(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		c := newClient(t, e, e.Tenant)
		body := client.CouponCreateRequest{CouponId: client.Ptr("LAUNCH20"), Name: "Launch", PercentOff: client.Ptr[int64](20)}

		// A given key: the retry replays the first answer.
		first, err := c.CreateCouponWithResponse(ctx, nil, body, client.WithIdempotencyKey("coupon-launch20"))
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.CreateCouponWithResponse(ctx, nil, body, client.WithIdempotencyKey("coupon-launch20"))
		if err != nil {
			t.Fatalf("retry with the same key: %v", err)
		}
		if again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" || again.JSON201.RequestId != first.JSON201.RequestId {
			t.Fatalf("not replayed: %s", again.HTTPResponse.Header)
		}
		// The key in params works as well.
		key := client.IdempotencyKey("coupon-launch20")
		if _, err := c.CreateCouponWithResponse(ctx, &client.CreateCouponParams{IdempotencyKey: &key}, body); err != nil {
			t.Fatalf("params key: %v", err)
		}

		// Without a key, each call gets its own: the same body twice is a new request (409
		// duplicate couponId), not a replay.
		other := client.CouponCreateRequest{CouponId: client.Ptr("SPRING"), Name: "Spring", PercentOff: client.Ptr[int64](10)}
		var sent string
		capture := func(_ context.Context, req *http.Request) error { sent = req.Header.Get("Idempotency-Key"); return nil }
		if _, err := c.CreateCouponWithResponse(ctx, nil, other, capture); err != nil {
			t.Fatal(err)
		}
		firstKey := sent
		_, err = c.CreateCouponWithResponse(ctx, nil, other, capture)
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Code != client.CodeConflict || apiErr.Reason() != "duplicate_id" {
			t.Fatalf("second call without a key: %v", err)
		}
		if !strings.HasPrefix(firstKey, "remit-go-") || sent == firstKey {
			t.Fatalf("generated keys %q then %q", firstKey, sent)
		}
		// The generated key was sent and remembered: reusing it with another body is 409.
		_, err = c.CreateCouponWithResponse(ctx, nil, client.CouponCreateRequest{CouponId: client.Ptr("OTHER"), Name: "Other", PercentOff: client.Ptr[int64](5)}, client.WithIdempotencyKey(firstKey))
		if !errors.As(err, &apiErr) || apiErr.Reason() != "idempotency_key_reused" {
			t.Fatalf("reused generated key: %v", err)
		}
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Updates through the client: the typed call (with its generated Idempotency-Key, replayed on a
// retry of the same key) and the raw merge patch a null needs.
func TestClientUpdates(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		c := newClient(t, e, e.Tenant)
		if _, err := c.CreateCouponWithResponse(ctx, nil, client.CouponCreateRequest{CouponId: client.Ptr("TEN"), Name: "Ten", PercentOff: client.Ptr[int64](10)}); err != nil {
			t.Fatal(err)
		}
		var sent string
		capture := func(_ context.Context, req *http.Request) error { sent = req.Header.Get("Idempotency-Key"); return nil }
		tag := "spring"
		up, err := c.UpdateCouponWithResponse(ctx, "TEN", nil, client.CouponPatch{Active: client.Ptr(false), Metadata: &client.MetadataPatch{"campaign": &tag}}, capture)
		if err != nil {
			t.Fatal(err)
		}
		if up.JSON200 == nil || deref(up.JSON200.Data.Active) || !strings.HasPrefix(sent, "remit-go-") {
			t.Fatalf("update: %d %s (key %q)", up.StatusCode(), up.Body, sent)
		}
		again, err := c.UpdateCouponWithResponse(ctx, "TEN", nil, client.CouponPatch{Active: client.Ptr(false), Metadata: &client.MetadataPatch{"campaign": &tag}}, client.WithIdempotencyKey(sent))
		if err != nil || again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry with the key: %v", err)
		}
		// null, which a typed request leaves out, goes in the raw body.
		raw, err := c.UpdateCouponWithBodyWithResponse(ctx, "TEN", nil, "application/merge-patch+json", strings.NewReader(`{"metadata":{"campaign":null}}`))
		if err != nil {
			t.Fatal(err)
		}
		if raw.JSON200 == nil || len(deref(raw.JSON200.Data.Metadata)) != 0 {
			t.Fatalf("raw patch: %d %s", raw.StatusCode(), raw.Body)
		}
		_, err = c.UpdateCouponWithResponse(ctx, "TEN", nil, client.CouponPatch{Active: nil, Metadata: nil})
		if err != nil {
			t.Fatalf("the empty patch: %v", err)
		}
	})
}
