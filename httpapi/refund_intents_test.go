package httpapi_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/wire"
)

// refundKit starts a production Remit whose connector is proc, with customer c1 paying a 100.00
// invoice by card, and answers the paid invoice's ID.
func refundKit(t *testing.T, proc *vaultCharges, run func(t *testing.T, e *testkit.Env, invoiceID string)) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.ProcessorTimeout = time.Second
	cfg.Processor = proc
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		proc.mu.Lock()
		proc.charged, proc.refunded = nil, nil
		proc.mu.Unlock()
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "charge_automatically")
		saveCard(t, e, &proc.fakeVault, "c1", "pm_1Card")
		inv := k.invoice("c1", 10000)
		if inv["status"] != "paid" {
			t.Fatalf("invoice %v", inv)
		}
		run(t, e, inv["invoiceId"].(string))
	})
}

func refundEvents(t *testing.T, e *testkit.Env, refundID string) []string {
	t.Helper()
	return newCatalogKit(t, e).eventTypes(e.Tenant.Production, refundID)
}

// A refund the processor refuses: the credit note stays issued, the refund is failed, what it
// had changed is taken back (payment and receipt amountRefunded, the invoice's refundedTotal, the
// settlement's refund), and the customer's prepaid balance holds the amount instead.
func TestRefundRefusedByTheProcessor(t *testing.T) {
	proc := &vaultCharges{refund: func(processor.RefundRequest) (processor.RefundResult, error) {
		return processor.RefundResult{Status: processor.Failed, FailureCode: "expired_or_canceled_card", FailureMessage: "The card is closed."}, nil
	}}
	refundKit(t, proc, func(t *testing.T, e *testkit.Env, id string) {
		cn := e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 2500)), testkit.Production()).Data()
		ref := cn["refundIds"].([]any)[0].(string)
		if ev := refundEvents(t, e, ref); !slices.Equal(ev, []string{"refund.created", "refund.failed"}) {
			t.Fatalf("refund events %v", ev)
		}
		inv := e.Must(200, "GET", "/v1/invoices/"+id, nil, testkit.Production()).Data()
		if num(inv["refundedTotal"]) != 0 || num(inv["creditedTotal"]) != 2500 || inv["status"] != "paid" {
			t.Fatalf("invoice %v", figures(inv, "refundedTotal", "creditedTotal"))
		}
		rc := payKit{catalogKit: newCatalogKit(t, e), opts: []testkit.Opt{testkit.Production()}}.receipts("invoiceId=" + id)
		if num(rc[0]["amountRefunded"]) != 0 || rc[0]["status"] != "succeeded" {
			t.Fatalf("receipt %v", rc[0])
		}
		bal := e.Must(200, "GET", "/v1/customers/c1/balance", nil, testkit.Production()).Data()
		b := bal["balances"].([]any)[0].(map[string]any)
		if num(b["available"]) != 2500 {
			t.Fatalf("balance %v", bal)
		}
		stl := e.Must(200, "GET", "/v1/merchant-accounts/"+e.Tenant.Production+"/settlements", nil, testkit.Production()).Data()["items"].([]any)
		if s := stl[0].(map[string]any); num(s["refundAmount"]) != 0 || num(s["refundCount"]) != 0 {
			t.Fatalf("settlement %v", s)
		}
		// The whole payment is refundable again (what is left to credit on the invoice: 75.00).
		e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 7500)), testkit.Production())
	})
}

// A refund the processor does not answer stays pending; the reconciler sends it again with the
// same reference, and it is recorded once.
func TestRefundLeftPendingIsSentByTheReconciler(t *testing.T) {
	down := func(processor.RefundRequest) (processor.RefundResult, error) {
		return processor.RefundResult{}, errors.New("connection reset")
	}
	proc := &vaultCharges{}
	refundKit(t, proc, func(t *testing.T, e *testkit.Env, id string) {
		proc.mu.Lock()
		proc.refund = down
		proc.mu.Unlock()
		cn := e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 4000)), testkit.Production()).Data()
		ref := cn["refundIds"].([]any)[0].(string)
		if ev := refundEvents(t, e, ref); !slices.Equal(ev, []string{"refund.created"}) {
			t.Fatalf("refund events while the processor is down %v", ev)
		}
		// Nothing is sent before the refund's lease ran out; after it, the reconciler sends it.
		if _, err := e.App.Payments.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		proc.mu.Lock()
		proc.refund = nil // the processor answers again
		proc.mu.Unlock()
		testkit.WaitFor(t, 10*time.Second, "the reconciler to send the refund", func() bool {
			if _, err := e.App.Payments.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			return slices.Equal(refundEvents(t, e, ref), []string{"refund.created", "refund.succeeded"})
		})
		proc.mu.Lock()
		defer proc.mu.Unlock()
		if len(proc.refunded) != 2 || proc.refunded[0].IdempotencyRef != ref || proc.refunded[1].IdempotencyRef != ref {
			t.Fatalf("refund calls %+v", proc.refunded)
		}
		if _, err := e.App.Payments.Reconcile(context.Background()); err != nil || len(proc.refunded) != 2 {
			t.Fatalf("a settled refund was sent again: %v %d", err, len(proc.refunded))
		}
	})
}

// Eight credit notes refunding 30.00 each race against a paid 100.00 invoice: three are issued,
// the others are 409, and the processor refunded exactly 90.00, once per issued refund.
func TestConcurrentRefundsNeverExceedThePayment(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "charge_automatically")
		k.attach("c1", "pm_card_visa")
		inv := k.invoice("c1", 10000)
		id := inv["invoiceId"].(string)
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = e.Do("POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 3000))).Status
			}()
		}
		wg.Wait()
		if n := slices.IndexFunc(statuses, func(s int) bool { return s != 200 && s != 409 }); n >= 0 || count(statuses, 200) != 3 {
			t.Fatalf("statuses %v", statuses)
		}
		refunds, err := e.Remit.DB.SandboxCharges().ListRefunds(context.Background())
		var total int64
		for _, r := range refunds {
			total += r.Amount
		}
		if err != nil || len(refunds) != 3 || total != 9000 {
			t.Fatalf("sandbox refunds %+v, %v", refunds, err)
		}
		rc := k.receipts("invoiceId=" + id)
		if num(rc[0]["amountRefunded"]) != 9000 {
			t.Fatalf("receipt %v", rc[0])
		}
	})
}

func count[T comparable](xs []T, x T) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
