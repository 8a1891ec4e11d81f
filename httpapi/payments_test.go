package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// payKit builds customers with billing accounts, attaches test cards through the portal's
// setup-session flow, and finalizes one-line invoices of a chosen amount (no tax: the customers have
// no address).
type payKit struct {
	catalogKit
	opts []testkit.Opt
}

func newPayKit(t *testing.T, e *testkit.Env, opts ...testkit.Opt) payKit {
	t.Helper()
	k := payKit{catalogKit: newCatalogKit(t, e), opts: opts}
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100}, opts...)
	return k
}

// account creates customer id (with an external ID) and its billing account "ba-"+id.
func (k payKit) account(id, collection string) {
	k.t.Helper()
	k.e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "externalId": "ext-" + id, "name": "Customer " + id}, k.opts...)
	k.e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD",
		"collectionMethod": collection}, k.opts...)
}

// attach attaches the test card token to the customer's billing account as its default, through a
// setup session completed in the portal.
func (k payKit) attach(id, token string) { k.t.Helper(); k.attachTo(id, "ba-"+id, token) }

// attachTo attaches the test card token to a billing account of the customer as its default.
func (k payKit) attachTo(id, billingAccountID, token string) {
	k.t.Helper()
	_, path := k.setupSession(id, map[string]any{"billingAccountId": billingAccountID, "setAsDefault": true}, k.opts...)
	k.e.Must(200, "PUT", path+"&paymentMethod="+token, nil, testkit.APIKey(""))
}

// draft creates a draft invoice of amount for the customer.
func (k payKit) draft(id string, amount int64) string {
	k.t.Helper()
	d := k.e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": id, "billingAccountId": "ba-" + id, "currency": "USD",
		"lines": []any{map[string]any{"priceId": "item", "unitAmount": amount}}}, k.opts...).Data()
	return d["invoiceId"].(string)
}

// invoice creates and finalizes an invoice of amount and returns the finalize answer.
func (k payKit) invoice(id string, amount int64) map[string]any {
	k.t.Helper()
	inv := k.draft(id, amount)
	return k.e.Must(200, "POST", "/v1/invoices/"+inv+"/finalize", map[string]any{}, k.opts...).Data()
}

// payments returns the invoice's payment attempts as stored.
func (k payKit) payments(invoiceID string, merchant string) []remit.Payment {
	k.t.Helper()
	ps, err := k.e.App.Payments.ListInvoicePayments(context.Background(), mustMerchant(k.t, k.e, merchant), invoiceID)
	if err != nil {
		k.t.Fatal(err)
	}
	return ps
}

func (k payKit) receipts(query string) []map[string]any {
	k.t.Helper()
	d := k.e.Must(200, "GET", "/v1/payment-receipts?"+query, nil, k.opts...).Data()
	var out []map[string]any
	for _, it := range d["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func portalPath(t *testing.T, paymentURL any) string {
	t.Helper()
	s, _ := paymentURL.(string)
	u, err := url.Parse(s)
	if err != nil || s == "" {
		t.Fatalf("paymentUrl %v", paymentURL)
	}
	return u.RequestURI()
}

// Each test payment method at finalization (charge_automatically with a default method).
func TestCollectAtFinalizeByTestCard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		ma := e.Tenant.Sandbox
		for _, c := range []struct{ token, brand, last4, failure string }{
			{"pm_card_visa", "visa", "4242", ""},
			{"pm_card_mastercard", "mastercard", "4444", ""},
			{"pm_card_chargeDeclined", "visa", "0002", "card_declined"},
			{"pm_card_insufficientFunds", "visa", "9995", "insufficient_funds"},
		} {
			id := "c-" + c.token
			k.account(id, "charge_automatically")
			k.attach(id, c.token)
			inv := k.invoice(id, 12345) // finalize answers 200 whatever the charge's outcome
			invID := inv["invoiceId"].(string)
			ps := k.payments(invID, ma)
			if len(ps) != 1 || ps[0].Attempt != 1 || ps[0].Source != "finalize" || ps[0].Amount != 12345 || ps[0].PaymentMethod == nil ||
				ps[0].PaymentMethod.Brand != c.brand || ps[0].PaymentMethod.Last4 != c.last4 || !strings.HasPrefix(ps[0].PaymentID, "pay_") ||
				!strings.HasPrefix(ps[0].PaymentIntentID, "pi_") {
				t.Fatalf("%s: payments %+v", c.token, ps)
			}
			p := ps[0]
			if c.failure == "" {
				if inv["status"] != "paid" || num(inv["amountPaid"]) != 12345 || num(inv["amountRemaining"]) != 0 || inv["paidAt"] == nil ||
					inv["paymentUrl"] != nil || inv["lastPaymentError"] != nil {
					t.Fatalf("%s: invoice %v", c.token, inv)
				}
				// 2.9% of 123.45 = 3.58005 → 358 (half-up), + 30 = 388.
				if p.Status != "succeeded" || p.FeeAmount != 388 || p.SettlementID == nil || p.FailureCode != nil {
					t.Fatalf("%s: payment %+v", c.token, p)
				}
				rs := k.receipts("invoiceId=" + invID)
				pm, _ := rs[0]["paymentMethod"].(map[string]any)
				if len(rs) != 1 || rs[0]["paymentId"] != p.PaymentID || rs[0]["paymentIntentId"] != p.PaymentIntentID || num(rs[0]["amount"]) != 12345 ||
					rs[0]["status"] != "succeeded" || pm["brand"] != c.brand || pm["last4"] != c.last4 || pm["type"] != "card" ||
					rs[0]["customerExternalId"] != "ext-"+id || rs[0]["invoiceNumber"] != inv["number"] || rs[0]["environment"] != "sandbox" {
					t.Fatalf("%s: receipts %v", c.token, rs)
				}
				if ev := k.eventTypes(ma, p.PaymentID); !slices.Equal(ev, []string{"payment.processing", "payment.succeeded"}) {
					t.Fatalf("%s: payment events %v", c.token, ev)
				}
				if ev := k.eventTypes(ma, rs[0]["receiptId"].(string)); !slices.Equal(ev, []string{"payment_receipt.created"}) {
					t.Fatalf("%s: receipt events %v", c.token, ev)
				}
				if ev := k.eventTypes(ma, invID); !slices.Equal(ev, []string{"invoice.created", "invoice.finalized", "invoice.paid"}) {
					t.Fatalf("%s: invoice events %v", c.token, ev)
				}
				continue
			}
			lpe, _ := inv["lastPaymentError"].(map[string]any)
			if inv["status"] != "open" || num(inv["amountPaid"]) != 0 || num(inv["amountRemaining"]) != 12345 || inv["paymentUrl"] == nil ||
				lpe["code"] != c.failure || lpe["paymentId"] != p.PaymentID || !strings.Contains(lpe["message"].(string), "another card") {
				t.Fatalf("%s: invoice %v", c.token, inv)
			}
			if p.Status != "failed" || p.FailureCode == nil || *p.FailureCode != c.failure || p.FeeAmount != 0 || p.SettlementID != nil {
				t.Fatalf("%s: payment %+v", c.token, p)
			}
			if rs := k.receipts("invoiceId=" + invID); len(rs) != 0 {
				t.Fatalf("%s: a declined payment has a receipt: %v", c.token, rs)
			}
			if ev := k.eventTypes(ma, p.PaymentID); !slices.Equal(ev, []string{"payment.processing", "payment.failed"}) {
				t.Fatalf("%s: payment events %v", c.token, ev)
			}
			if ev := k.eventTypes(ma, invID); !slices.Equal(ev, []string{"invoice.created", "invoice.finalized", "invoice.payment_failed"}) {
				t.Fatalf("%s: invoice events %v", c.token, ev)
			}
			// The GET shows the same.
			if got := e.Must(200, "GET", "/v1/invoices/"+invID, nil).Data(); fmt.Sprint(got["lastPaymentError"]) != fmt.Sprint(inv["lastPaymentError"]) {
				t.Fatalf("%s: GET %v", c.token, got)
			}
		}

		// No attempt without a default method, nor for send_invoice.
		k.account("nomethod", "charge_automatically")
		k.account("sendinv", "send_invoice")
		k.attach("sendinv", "pm_card_visa")
		for _, id := range []string{"nomethod", "sendinv"} {
			inv := k.invoice(id, 500)
			if inv["status"] != "open" || inv["lastPaymentError"] != nil || len(k.payments(inv["invoiceId"].(string), ma)) != 0 {
				t.Fatalf("%s: %v", id, inv)
			}
		}
		// A zero invoice is paid at finalization with no payment and no receipt.
		inv := k.invoice("nomethod", 0)
		if inv["status"] != "paid" || len(k.payments(inv["invoiceId"].(string), ma)) != 0 || len(k.receipts("invoiceId="+inv["invoiceId"].(string))) != 0 {
			t.Fatalf("zero invoice: %v", inv)
		}
	})
}

// A declined invoice is paid later through the portal after a working card is attached; the pay
// routes answer a decline with 409 payment_failed and keep the attempt.
func TestDeclinedInvoicePaidThroughPortal(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		ma := e.Tenant.Sandbox
		k.account("c1", "charge_automatically")
		k.attach("c1", "pm_card_chargeDeclined")
		inv := k.invoice("c1", 2000)
		id := inv["invoiceId"].(string)
		path := portalPath(t, inv["paymentUrl"])
		if inv["status"] != "open" || !strings.HasPrefix(path, "/customer-portal/invoices/"+id+"/pay?token=hpt_") {
			t.Fatalf("finalized: %v", inv)
		}
		token := strings.TrimPrefix(path[strings.Index(path, "?"):], "?token=")

		// The portal with the same declined card: 409, and the attempt is recorded.
		r := k.portal(path)
		d := r.ErrorDetails()
		if r.Status != 409 || d["reason"] != "payment_failed" || d["failureCode"] != "card_declined" || d["currentState"] != "open" ||
			!strings.Contains(r.JSON()["error"].(map[string]any)["message"].(string), "20.00 USD on visa •••• 0002 was declined") {
			t.Fatalf("portal decline: %d %s", r.Status, r.Body)
		}
		ps := k.payments(id, ma)
		if len(ps) != 2 || ps[1].Attempt != 2 || ps[1].Source != "portal" || ps[1].Status != "failed" || ps[1].PaymentID != d["paymentId"] ||
			ps[0].PaymentIntentID != ps[1].PaymentIntentID {
			t.Fatalf("payments after portal decline: %+v", ps)
		}
		got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if lpe := got["lastPaymentError"].(map[string]any); lpe["paymentId"] != ps[1].PaymentID || got["status"] != "open" {
			t.Fatalf("invoice after portal decline: %v", got)
		}
		// The API route with an Idempotency-Key: 409 remembered; the retry replays it, no new attempt.
		r = e.Must(409, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Key("pay-1"))
		r2 := e.Must(409, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Key("pay-1"))
		if r.ErrorDetails()["reason"] != "payment_failed" || r2.Header.Get("Idempotent-Replayed") != "true" || string(r.Body) != string(r2.Body) {
			t.Fatalf("idempotent decline: %s / %s", r.Body, r2.Body)
		}
		if ps = k.payments(id, ma); len(ps) != 3 || ps[2].Source != "api" {
			t.Fatalf("payments after API decline: %+v", ps)
		}
		if ev := k.eventTypes(ma, id); !slices.Equal(ev, []string{"invoice.created", "invoice.finalized", "invoice.payment_failed", "invoice.payment_failed", "invoice.payment_failed"}) {
			t.Fatalf("invoice events %v", ev)
		}

		// Token rules: bad token 401, another invoice's token 403, unknown tail 404.
		if r := k.portal("/customer-portal/invoices/" + id + "/pay?token=hpt_" + strings.Repeat("0", 64)); r.Status != 401 {
			t.Fatalf("bad token: %d", r.Status)
		}
		other := k.invoice("c1", 100)
		otherPath := portalPath(t, other["paymentUrl"])
		if r := k.portal(strings.Replace(otherPath, other["invoiceId"].(string), id, 1)); r.Status != 403 || r.ErrorCode() != "forbidden" {
			t.Fatalf("another invoice's token: %d %s", r.Status, r.Body)
		}
		if r := k.portal("/customer-portal/invoices/" + id + "/pay/now?token=" + token); r.Status != 404 {
			t.Fatalf("unknown tail: %d", r.Status)
		}

		// A working card attached through the portal: the open invoice is charged at once
		// (docs/dunning.md).
		k.attach("c1", "pm_card_visa")
		paid := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if paid["status"] != "paid" || num(paid["amountPaid"]) != 2000 || paid["lastPaymentError"] != nil || paid["paymentUrl"] != nil ||
			paid["nextPaymentAttemptAt"] != nil || paid["dunningStatus"] != "none" || num(paid["attemptCount"]) != 4 {
			t.Fatalf("after a new card: %v", paid)
		}
		ps = k.payments(id, ma)
		if len(ps) != 4 || ps[3].Status != "succeeded" || ps[3].Source != "dunning" || ps[3].PaymentMethod.Last4 != "4242" {
			t.Fatalf("payments: %+v", ps)
		}
		rs := k.receipts("invoice=" + id)
		if len(rs) != 1 || rs[0]["paymentId"] != ps[3].PaymentID {
			t.Fatalf("receipts %v", rs)
		}
		// Paid: both routes answer 409 with the current state, and nothing more is charged.
		if r := k.portal(path); r.Status != 409 || r.ErrorDetails()["currentState"] != "paid" {
			t.Fatalf("portal again: %d %s", r.Status, r.Body)
		}
		if r := e.Must(409, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}); r.ErrorDetails()["currentState"] != "paid" {
			t.Fatalf("API again: %s", r.Body)
		}
		if len(k.payments(id, ma)) != 4 {
			t.Fatal("a paid invoice was charged again")
		}
	})
}

// Out-of-band payments (sandbox and production), production charges (501), state and scope rules.
func TestPayInvoiceRoutes(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "charge_automatically")
		inv := k.invoice("c1", 999)
		id := inv["invoiceId"].(string)
		r := e.Must(409, "POST", "/v1/invoices/"+id+"/pay", map[string]any{})
		if r.ErrorDetails()["reason"] != "no_payment_method" || !strings.Contains(r.JSON()["error"].(map[string]any)["message"].(string), "setAsDefault") {
			t.Fatalf("no method: %s", r.Body)
		}
		if r := k.portal(portalPath(t, inv["paymentUrl"])); r.Status != 409 || r.ErrorDetails()["reason"] != "no_payment_method" {
			t.Fatalf("portal without method: %d %s", r.Status, r.Body)
		}
		wantFields(t, e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": "yes"}), "body:outOfBand:invalid_type")
		wantFields(t, e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{"amount": 5}), "body:amount:unknown_field")
		paid := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true}).Data()
		if paid["status"] != "paid" || num(paid["amountPaid"]) != 999 || paid["paidAt"] == nil {
			t.Fatalf("out of band: %v", paid)
		}
		ps := k.payments(id, e.Tenant.Sandbox)
		if len(ps) != 1 || ps[0].Method != "out_of_band" || ps[0].PaymentMethod != nil || ps[0].FeeAmount != 0 || ps[0].SettlementID != nil || ps[0].Source != "api" {
			t.Fatalf("out-of-band payment %+v", ps)
		}
		rs := k.receipts("invoiceId=" + id)
		if pm := rs[0]["paymentMethod"].(map[string]any); len(rs) != 1 || pm["type"] != "out_of_band" || pm["brand"] != nil || pm["last4"] != nil {
			t.Fatalf("out-of-band receipt %v", rs)
		}
		// Out-of-band money never reaches a settlement.
		if items := e.Must(200, "GET", "/v1/merchant-accounts/"+e.Tenant.Sandbox+"/settlements", nil).Data()["items"].([]any); len(items) != 0 {
			t.Fatalf("settlements %v", items)
		}
		e.Must(409, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true})

		// Only open invoices: a draft and a void invoice are 409 with their state; unknown and
		// foreign invoices 404.
		draft := k.draft("c1", 100)
		if r := e.Must(409, "POST", "/v1/invoices/"+draft+"/pay", map[string]any{"outOfBand": true}); r.ErrorDetails()["currentState"] != "draft" {
			t.Fatalf("draft: %s", r.Body)
		}
		void := k.invoice("c1", 100)["invoiceId"].(string)
		e.Must(200, "POST", "/v1/invoices/"+void+"/void", map[string]any{})
		if r := e.Must(409, "POST", "/v1/invoices/"+void+"/pay", map[string]any{}); r.ErrorDetails()["currentState"] != "void" {
			t.Fatalf("void: %s", r.Body)
		}
		e.Must(404, "POST", "/v1/invoices/inv_nope/pay", map[string]any{})
		other := e.NewTenant("Other", false)
		e.Must(404, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true}, testkit.As(other))

		// Production: no processor connector. A charge is 501; out of band works.
		pk := newPayKit(t, e, testkit.Production())
		pk.account("p1", "charge_automatically")
		pinv := pk.invoice("p1", 4321)
		pid := pinv["invoiceId"].(string)
		if pinv["status"] != "open" {
			t.Fatalf("production finalize: %v", pinv)
		}
		r = e.Must(501, "POST", "/v1/invoices/"+pid+"/pay", map[string]any{}, testkit.Production())
		if r.ErrorCode() != "not_implemented" || !strings.Contains(r.JSON()["error"].(map[string]any)["message"].(string), "outOfBand") {
			t.Fatalf("production charge: %s", r.Body)
		}
		if r := k.portal(portalPath(t, pinv["paymentUrl"])); r.Status != 501 {
			t.Fatalf("production portal: %d %s", r.Status, r.Body)
		}
		pp := e.Must(200, "POST", "/v1/invoices/"+pid+"/pay", map[string]any{"outOfBand": true}, testkit.Production()).Data()
		if pp["status"] != "paid" || pp["environment"] != "production" {
			t.Fatalf("production out of band: %v", pp)
		}
		prs := pk.receipts("invoiceId=" + pid)
		if len(prs) != 1 || prs[0]["environment"] != "production" || prs[0]["receiptNumber"] != "RCPT-000001" {
			t.Fatalf("production receipts %v", prs)
		}
		// Each merchant account numbers its own receipts; the sandbox one is not visible here.
		e.Must(404, "GET", "/v1/payment-receipts/"+rs[0]["receiptId"].(string), nil, testkit.Production())
		if got := e.Must(200, "GET", "/v1/payment-receipts/"+rs[0]["receiptId"].(string), nil).Data(); fmt.Sprint(got) != fmt.Sprint(rs[0]) {
			t.Fatalf("GET receipt %v, listed %v", got, rs[0])
		}
	})
}

// The portal and the API race to pay one invoice: exactly one payment and one receipt.
func TestPayInvoiceRace(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "send_invoice") // finalize does not charge: the racers do
		k.attach("c1", "pm_card_visa")
		for round := range 3 {
			inv := k.invoice("c1", 1000+int64(round))
			id, path := inv["invoiceId"].(string), portalPath(t, inv["paymentUrl"])
			statuses := make([]int, 10)
			states := make([]any, 10)
			reasons := make([]any, 10)
			var wg sync.WaitGroup
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var r *testkit.Response
					if i%2 == 0 {
						r = e.Do("PUT", path, nil, testkit.APIKey(""))
					} else {
						r = e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{})
					}
					statuses[i], states[i], reasons[i] = r.Status, r.ErrorDetails()["currentState"], r.ErrorDetails()["reason"]
				}()
			}
			wg.Wait()
			ok := 0
			for i, s := range statuses {
				switch {
				case s == 200:
					ok++
				case s == 409 && states[i] == "paid": // refused by the state check after the row lock
				case s == 409 && states[i] == "open" && reasons[i] == "payment_in_progress": // the winner's attempt is open
				default:
					t.Fatalf("statuses %v, states %v", statuses, states)
				}
			}
			ps := k.payments(id, e.Tenant.Sandbox)
			if ok != 1 || len(ps) != 1 || ps[0].Status != "succeeded" {
				t.Fatalf("round %d: %d successes %v, payments %+v", round, ok, statuses, ps)
			}
			if rs := k.receipts("invoiceId=" + id); len(rs) != 1 {
				t.Fatalf("round %d: receipts %v", round, rs)
			}
		}

		// Twelve different invoices paid at once: the day's settlement loses no payment and the
		// receipt numbers stay gap-free.
		var ids []string
		// The race rounds paid 10.00, 10.01 and 10.02: fees 2.9% = 29, 29.029, 29.058 → 29 each, + 30.
		gross, fees := int64(1000+1001+1002), int64(3*59)
		for i := range 12 {
			amount := 2000 + int64(i)*111
			ids = append(ids, k.invoice("c1", amount)["invoiceId"].(string))
			gross += amount
			fees += remit.SandboxFee(amount)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{}); r.Status != 200 {
					t.Errorf("pay %s: %d %s", id, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		items := e.Must(200, "GET", "/v1/merchant-accounts/"+e.Tenant.Sandbox+"/settlements", nil).Data()["items"].([]any)
		var sGross, sFee, sCount int64
		for _, it := range items {
			m := it.(map[string]any)
			sGross, sFee, sCount = sGross+num(m["grossAmount"]), sFee+num(m["feeAmount"]), sCount+num(m["paymentCount"])
		}
		if sCount != 15 || sGross != gross || sFee != fees {
			t.Fatalf("settlements: %d payments, gross %d, fee %d; want 15, %d, %d", sCount, sGross, sFee, gross, fees)
		}
		var numbers []string
		for _, r := range k.receipts("limit=100") {
			numbers = append(numbers, r["receiptNumber"].(string))
		}
		slices.Sort(numbers)
		for i, n := range numbers {
			if want := fmt.Sprintf("RCPT-%06d", i+1); n != want || len(numbers) != 15 {
				t.Fatalf("receipt numbers %v are not 1..15 without gaps", numbers)
			}
		}
	})
}

func TestPaymentReceiptsList(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		ma := e.Tenant.Sandbox
		// Three customers; a and b have two paid invoices each, c one; one declined invoice.
		for _, id := range []string{"a", "b", "c"} {
			k.account(id, "charge_automatically")
			k.attach(id, "pm_card_visa")
		}
		var invoices []string
		for _, id := range []string{"a", "b", "a", "c", "b"} {
			inv := k.invoice(id, 700)
			invoices = append(invoices, inv["invoiceId"].(string))
		}
		k.account("d", "charge_automatically")
		k.attach("d", "pm_card_insufficientFunds")
		k.invoice("d", 700)

		all := k.receipts("")
		if len(all) != 5 {
			t.Fatalf("%d receipts", len(all))
		}
		// Newest first, numbers gap-free in creation order.
		for i, r := range all {
			if want := fmt.Sprintf("RCPT-%06d", 5-i); r["receiptNumber"] != want || r["invoiceId"] != invoices[4-i] ||
				!strings.HasPrefix(r["receiptId"].(string), "rcpt_") || r["object"] != "payment_receipt" {
				t.Fatalf("receipt %d: %v", i, r)
			}
		}
		d := e.Must(200, "GET", "/v1/payment-receipts", nil).Data()
		if d["object"] != "list" || num(d["limit"]) != 20 || num(d["offset"]) != 0 || d["hasMore"] != false {
			t.Fatalf("list envelope %v", d)
		}
		ids := func(rs []map[string]any) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r["receiptId"].(string))
			}
			return out
		}
		want := func(query string, idx ...int) {
			t.Helper()
			var exp []string
			for _, i := range idx {
				exp = append(exp, all[i]["receiptId"].(string))
			}
			if got := ids(k.receipts(query)); !slices.Equal(got, exp) {
				t.Fatalf("%s: %v, want %v", query, got, exp)
			}
		}
		// all[0] is b's second, all[1] c's, all[2] a's second, all[3] b's first, all[4] a's first.
		want("customer=a", 2, 4)
		want("customerId=a", 2, 4)
		want("customer=a&customerId=a", 2, 4)
		want("customerExternalId=ext-b", 0, 3)
		want("billingAccountId=ba-c", 1)
		want("invoice="+invoices[2], 2)
		want("invoiceId="+invoices[2], 2)
		want("paymentId="+all[3]["paymentId"].(string), 3)
		want("paymentIntentId="+all[1]["paymentIntentId"].(string), 1)
		want("status=succeeded", 0, 1, 2, 3, 4)
		want("status=refunded")
		want("customer=a&status=succeeded&billingAccountId=ba-a", 2, 4)
		want("customer=nobody")
		want("limit=2", 0, 1)
		want("limit=2&offset=2", 2, 3)
		want("limit=2&offset=4", 4)
		want("offset=5")
		if d := e.Must(200, "GET", "/v1/payment-receipts?limit=2&offset=2", nil).Data(); d["hasMore"] != true || num(d["offset"]) != 2 || num(d["limit"]) != 2 {
			t.Fatalf("page %v", d)
		}
		if d := e.Must(200, "GET", "/v1/payment-receipts?limit=2&offset=4", nil).Data(); d["hasMore"] != false {
			t.Fatalf("last page %v", d)
		}

		// A refund recorded on a receipt (the credit-notes area's call) moves its status.
		err := e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
			m := mustMerchant(t, e, ma)
			if _, err := e.App.Payments.RecordReceiptRefund(ctx, tx, m, all[1]["paymentId"].(string), 200, e.App.Now(m)); err != nil {
				return err
			}
			_, err := e.App.Payments.RecordReceiptRefund(ctx, tx, m, all[4]["paymentId"].(string), 700, e.App.Now(m))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want("status=partially_refunded", 1)
		want("status=refunded", 4)
		want("status=succeeded", 0, 2, 3)
		if r := e.Must(200, "GET", "/v1/payment-receipts/"+all[1]["receiptId"].(string), nil).Data(); num(r["amountRefunded"]) != 200 || r["status"] != "partially_refunded" {
			t.Fatalf("refunded receipt %v", r)
		}
		err = e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
			m := mustMerchant(t, e, ma)
			_, err := e.App.Payments.RecordReceiptRefund(ctx, tx, m, all[1]["paymentId"].(string), 501, e.App.Now(m))
			return err
		})
		if remit.ErrorCode(err) != remit.EConflict {
			t.Fatalf("refund above the rest: %v", err)
		}

		// Every bad parameter at once.
		wantFields(t, e.Do("GET", "/v1/payment-receipts?limit=0&offset=-1&status=bogus", nil),
			"query:limit:out_of_range", "query:offset:out_of_range", "query:status:invalid_enum")
		wantFields(t, e.Do("GET", "/v1/payment-receipts?limit=x&offset=1.5", nil), "query:limit:invalid_type", "query:offset:invalid_type")
		wantFields(t, e.Do("GET", "/v1/payment-receipts?limit=101&offset=99999999999999999999", nil), "query:limit:out_of_range", "query:offset:out_of_range")
		wantFields(t, e.Do("GET", "/v1/payment-receipts?customer=a&customerId=b&invoice=x&invoiceId=y", nil),
			"query:customerId:conflicting_alias", "query:invoiceId:conflicting_alias")

		// Scope: another merchant account sees none of them.
		other := e.NewTenant("Other", false)
		if d := e.Must(200, "GET", "/v1/payment-receipts", nil, testkit.As(other)).Data(); len(d["items"].([]any)) != 0 {
			t.Fatalf("other tenant sees %v", d)
		}
		e.Must(404, "GET", "/v1/payment-receipts/"+all[0]["receiptId"].(string), nil, testkit.As(other))
		e.Must(404, "GET", "/v1/payment-receipts/rcpt_nope", nil)
	})
}

// Settlements over 30 sandbox days: one settlement per day, closed at the day's end and paid out
// two days later; paged with limit 7 through every page, equal to the unpaginated list.
func TestSettlementsOverThirtyDays(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		ma := e.Tenant.Sandbox
		k.account("v", "charge_automatically")
		k.attach("v", "pm_card_visa")
		k.account("m", "charge_automatically")
		k.attach("m", "pm_card_mastercard")
		k.account("x", "charge_automatically")
		k.attach("x", "pm_card_chargeDeclined")
		k.account("o", "send_invoice")

		// Start at the next noon UTC, so that a day's payments cannot straddle midnight.
		now := k.clockNow()
		noon := now.UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
		if !noon.After(now) {
			noon = noon.Add(24 * time.Hour)
		}
		e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"to": noon.Format(time.RFC3339Nano)})
		day0 := noon.Truncate(24 * time.Hour)

		// Day 0, by hand: 100.00 on visa and 15.00 on mastercard, a declined 50.00, 80.00 out of band.
		//   fee(10000) = 2.9% × 10000 = 290 → 290 + 30 = 320
		//   fee(1500)  = 2.9% × 1500 = 43.5 → 44 (half-up) + 30 = 74
		//   gross 11500, fee 394, net 11500 − 394 = 11106, 2 payments (the decline and the
		//   out-of-band payment are not settled).
		k.invoice("v", 10000)
		k.invoice("m", 1500)
		k.invoice("x", 5000)
		oob := k.invoice("o", 8000)["invoiceId"].(string)
		e.Must(200, "POST", "/v1/invoices/"+oob+"/pay", map[string]any{"outOfBand": true})
		// Day 1, by hand: 5.00 → 2.9% × 500 = 14.5 → 15 + 30 = 45; net 455. A refund of 1.00
		// recorded the same day (RecordSettlementRefund): refund 100, net 455 − 100 = 355.
		// Day d ≥ 2: one payment of 1000 + 100·d.
		dayAmount := func(d int) int64 { return 1000 + 100*int64(d) }
		for d := range 30 {
			switch d {
			case 0:
			case 1:
				k.invoice("v", 500)
				err := e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
					m := mustMerchant(t, e, ma)
					_, err := e.App.Payments.RecordSettlementRefund(ctx, tx, m, "USD", 100, e.App.Now(m))
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			default:
				k.invoice("v", dayAmount(d))
			}
			if d < 29 {
				e.AdvanceClock(24 * 3600)
			}
		}
		// Now: day 29 at noon. Day 29 is open; days 27 and 28 closed (their payouts are due at the
		// start of days 30 and 31); days 0–26 paid (payout at the start of day d+3 ≤ day 29).
		base := "/v1/merchant-accounts/" + ma + "/settlements"
		full := e.Must(200, "GET", base, nil).Data()
		if full["nextCursor"] != nil || full["hasMore"] != false {
			t.Fatalf("unpaginated: %v", full)
		}
		var items []map[string]any
		for _, it := range full["items"].([]any) {
			items = append(items, it.(map[string]any))
		}
		if len(items) != 30 {
			t.Fatalf("%d settlements, want 30", len(items))
		}
		ts := func(v any) time.Time {
			t.Helper()
			s, _ := v.(string)
			x, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("time %v", v)
			}
			return x
		}
		for i, s := range items {
			d := 29 - i // newest first
			start := day0.Add(time.Duration(d) * 24 * time.Hour)
			if !ts(s["periodStart"]).Equal(start) || !ts(s["periodEnd"]).Equal(start.Add(24*time.Hour)) || s["currency"] != "USD" ||
				s["object"] != "settlement" || !strings.HasPrefix(s["settlementId"].(string), "stl_") {
				t.Fatalf("day %d: %v", d, s)
			}
			wantStatus := "paid"
			switch {
			case d == 29:
				wantStatus = "open"
			case d >= 27:
				wantStatus = "closed"
			}
			if s["status"] != wantStatus {
				t.Fatalf("day %d: status %v, want %s", d, s["status"], wantStatus)
			}
			if wantStatus != "open" && !ts(s["closedAt"]).Equal(start.Add(24*time.Hour)) {
				t.Fatalf("day %d closedAt %v", d, s["closedAt"])
			}
			if wantStatus == "paid" {
				if !ts(s["paidAt"]).Equal(start.Add(72*time.Hour)) || s["payoutId"] == nil {
					t.Fatalf("day %d paid: %v", d, s)
				}
				po, err := e.App.DB.Read(context.Background()).GetPayout(context.Background(), ma, s["payoutId"].(string))
				if err != nil || po.Amount != num(s["netAmount"]) || po.SettlementID != s["settlementId"] || po.Status != "paid" {
					t.Fatalf("day %d payout %+v %v", d, po, err)
				}
				if ev := k.eventTypes(ma, s["settlementId"].(string)); !slices.Equal(ev, []string{"settlement.closed", "settlement.paid"}) {
					t.Fatalf("day %d events %v", d, ev)
				}
				if ev := k.eventTypes(ma, po.PayoutID); !slices.Equal(ev, []string{"payout.created"}) {
					t.Fatalf("day %d payout events %v", d, ev)
				}
			} else if s["paidAt"] != nil || s["payoutId"] != nil {
				t.Fatalf("day %d not paid: %v", d, s)
			}
			got := figures(s, "grossAmount", "refundAmount", "feeAmount", "netAmount", "paymentCount", "refundCount")
			var exp string
			switch d {
			case 0:
				exp = "grossAmount=11500 refundAmount=0 feeAmount=394 netAmount=11106 paymentCount=2 refundCount=0 "
			case 1:
				exp = "grossAmount=500 refundAmount=100 feeAmount=45 netAmount=355 paymentCount=1 refundCount=1 "
			case 2:
				// 1200 → 2.9% = 34.8 → 35 + 30 = 65; net 1135.
				exp = "grossAmount=1200 refundAmount=0 feeAmount=65 netAmount=1135 paymentCount=1 refundCount=0 "
			case 5:
				// 1500 → 43.5 → 44 + 30 = 74 (half-up); net 1426.
				exp = "grossAmount=1500 refundAmount=0 feeAmount=74 netAmount=1426 paymentCount=1 refundCount=0 "
			case 29:
				// 3900 → 113.1 → 113 + 30 = 143; net 3757.
				exp = "grossAmount=3900 refundAmount=0 feeAmount=143 netAmount=3757 paymentCount=1 refundCount=0 "
			default:
				a := dayAmount(d)
				fee := remit.RoundHalfUp(a*29, 1000) + 30
				exp = fmt.Sprintf("grossAmount=%d refundAmount=0 feeAmount=%d netAmount=%d paymentCount=1 refundCount=0 ", a, fee, a-fee)
			}
			if got != exp {
				t.Fatalf("day %d: %s, want %s", d, got, exp)
			}
		}

		// Paged with limit 7: 7, 7, 7, 7, 2; the concatenation is the unpaginated list.
		var paged []any
		path, pages := base+"?limit=7", 0
		for {
			d := e.Must(200, "GET", path, nil).Data()
			pages++
			paged = append(paged, d["items"].([]any)...)
			next, _ := d["nextCursor"].(string)
			if next == "" {
				if d["nextCursor"] != nil || d["hasMore"] != false || len(d["items"].([]any)) != 2 {
					t.Fatalf("last page %v", d)
				}
				break
			}
			if d["hasMore"] != true || len(d["items"].([]any)) != 7 {
				t.Fatalf("page %d: %v", pages, d)
			}
			if pages%2 == 0 {
				path = base + "?cursor=" + url.QueryEscape(next) // the cursor keeps the page size
			} else {
				path = base + "?limit=7&cursor=" + url.QueryEscape(next)
			}
		}
		if pages != 5 || fmt.Sprint(paged) != fmt.Sprint(full["items"]) {
			t.Fatalf("%d pages; paged %d items differ from the unpaginated list", pages, len(paged))
		}

		// Scopes.
		count := func(q string) int {
			t.Helper()
			return len(e.Must(200, "GET", base+"?"+q, nil).Data()["items"].([]any))
		}
		if o, c, p, a := count("scope=open"), count("scope=closed"), count("scope=paid"), count("scope=all"); o != 1 || c != 2 || p != 27 || a != 30 {
			t.Fatalf("scopes: open %d closed %d paid %d all %d", o, c, p, a)
		}
		d := e.Must(200, "GET", base+"?scope=paid&limit=5", nil).Data()
		cur := d["nextCursor"].(string)
		if len(d["items"].([]any)) != 5 || count("scope=paid&cursor="+url.QueryEscape(cur)) != 5 {
			t.Fatalf("paid page %v", d)
		}
		wantFields(t, e.Do("GET", base+"?scope=all&cursor="+url.QueryEscape(cur), nil), "query:cursor:invalid_cursor")
		if r := e.Do("GET", base+"?scope=bogus&limit=0", nil); r.Status != 422 || len(r.FieldErrors()) != 2 {
			t.Fatalf("bad scope and limit: %d %s", r.Status, r.Body)
		}
		e.Must(422, "GET", base+"?cursor=garbage", nil)

		// The day ends: day 29 closes and day 27, closed two days ago, is paid out; two days later
		// every settlement is paid.
		e.AdvanceClock(12 * 3600)
		if count("scope=open") != 0 || count("scope=closed") != 2 || count("scope=paid") != 28 {
			t.Fatalf("day 29 did not close: %s", e.Must(200, "GET", base+"?limit=3", nil).Body)
		}
		e.AdvanceClock(2 * 24 * 3600)
		if count("scope=paid") != 30 {
			t.Fatal("not every settlement was paid out")
		}

		// The path names the target: another tenant's account or the production account is 404.
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/merchant-accounts/"+other.Sandbox+"/settlements", nil)
		e.Must(404, "GET", "/v1/merchant-accounts/"+e.Tenant.Production+"/settlements", nil)
		e.Must(404, "GET", base, nil, testkit.As(other))
	})
}

// A finalization that charges at once keeps its events in the order things happened, across
// objects and in the chain, though the merchant account's counters and settlement are taken last
// (docs/performance.md): invoice.finalized shows the invoice before its attempt.
func TestPaidAtFinalizeEventsInOrder(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("order", "charge_automatically")
		k.attach("order", "pm_card_visa")
		inv := k.invoice("order", 2500)
		if inv["status"] != "paid" {
			t.Fatalf("invoice %v", inv)
		}
		page := e.Must(200, "GET", "/v1/events?limit=100", nil).Data()
		var got []string
		var finalized map[string]any
		items, _ := page["items"].([]any)
		for i := len(items) - 1; i >= 0; i-- { // newest first: read oldest first
			ev := items[i].(map[string]any)
			switch typ := ev["type"].(string); typ {
			case "invoice.finalized", "payment.processing", "payment.succeeded", "payment_receipt.created", "invoice.paid":
				got = append(got, typ)
				if typ == "invoice.finalized" {
					finalized = ev["data"].(map[string]any)["object"].(map[string]any)
				}
			}
		}
		want := []string{"invoice.finalized", "payment.processing", "payment.succeeded", "payment_receipt.created", "invoice.paid"}
		if !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		if finalized["number"] != inv["number"] || finalized["status"] != "open" || num(finalized["attemptCount"]) != 0 || finalized["latestPaymentId"] != nil {
			t.Fatalf("invoice.finalized shows %v", finalized)
		}
	})
}
