package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/wire"
)

// A payment attempt is a resource with its own states (docs/payments.md "Payments as intents"):
// recorded processing, then the processor's outcome; GET /v1/payments/{id} and the list show it,
// and the invoice names its latest attempt.
func TestPaymentIntentsReadAndList(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "charge_automatically")
		k.attach("c1", "pm_card_visa")
		inv := k.invoice("c1", 12345)
		if inv["status"] != "paid" || inv["latestPaymentId"] == nil {
			t.Fatalf("finalize: %v", inv)
		}
		pid := inv["latestPaymentId"].(string)
		p := e.Must(200, "GET", "/v1/payments/"+pid, nil).Data()
		if p["status"] != "succeeded" || p["processor"] != "sandbox" || p["processorReference"] != "sbch_"+pid ||
			p["nextAction"] != nil || p["invoiceId"] != inv["invoiceId"] || num(p["attempt"]) != 1 || p["updatedAt"] == nil {
			t.Fatalf("payment: %v", p)
		}
		k.account("c2", "charge_automatically")
		k.attach("c2", "pm_card_chargeDeclined")
		declined := k.invoice("c2", 500)
		for query, want := range map[string]int{"": 2, "customerId=c1": 1, "invoiceId=" + declined["invoiceId"].(string): 1,
			"status=failed": 1, "status=succeeded": 1, "status=processing": 0} {
			items := e.Must(200, "GET", "/v1/payments?"+query, nil).Data()["items"].([]any)
			if len(items) != want {
				t.Fatalf("?%s: %d items, want %d", query, len(items), want)
			}
		}
		wantFields(t, e.Do("GET", "/v1/payments?status=pending", nil), "query:status:invalid_enum")
		if r := e.Do("GET", "/v1/payments/pay_nope", nil); r.Status != 404 {
			t.Fatalf("unknown payment: %d", r.Status)
		}
	})
}

// pm_card_threeDSecureRequired: the attempt waits for the customer (requires_action, nextAction.url
// on the portal), a second pay is refused while it waits, and the customer's authentication pays
// the invoice; a failed authentication fails the attempt and leaves the invoice open.
func TestPaymentRequiresAction(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		ma := e.Tenant.Sandbox
		k.account("c1", "charge_automatically")
		k.attach("c1", "pm_card_threeDSecureRequired")
		for _, outcome := range []string{"succeed", "fail"} {
			inv := k.invoice("c1", 2000)
			id, pid := inv["invoiceId"].(string), inv["latestPaymentId"].(string)
			if inv["status"] != "open" {
				t.Fatalf("finalize: %v", inv)
			}
			p := e.Must(200, "GET", "/v1/payments/"+pid, nil).Data()
			next, _ := p["nextAction"].(map[string]any)
			if p["status"] != "requires_action" || next["type"] != "redirect_to_url" {
				t.Fatalf("payment: %v", p)
			}
			if ev := k.eventTypes(ma, pid); len(ev) != 2 || ev[0] != "payment.processing" || ev[1] != "payment.requires_action" {
				t.Fatalf("payment events %v", ev)
			}
			if ev := k.eventTypes(ma, id); ev[len(ev)-1] != "invoice.payment_action_required" {
				t.Fatalf("invoice events %v", ev)
			}
			r := e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{})
			if r.Status != 409 || r.ErrorDetails()["reason"] != "payment_in_progress" || r.ErrorDetails()["paymentId"] != pid {
				t.Fatalf("second pay: %d %s", r.Status, r.Body)
			}
			if r := e.Do("POST", "/v1/invoices/"+id+"/void", map[string]any{}); r.Status != 409 || r.ErrorDetails()["reason"] != "payment_in_progress" {
				t.Fatalf("void while waiting: %d %s", r.Status, r.Body)
			}
			u, err := url.Parse(next["url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			wantFields(t, e.Do("PUT", u.RequestURI()+"&outcome=maybe", nil, testkit.APIKey("")), "query:outcome:invalid_enum")
			done := e.Must(200, "PUT", u.RequestURI()+"&outcome="+outcome, nil, testkit.APIKey("")).Data()
			p = e.Must(200, "GET", "/v1/payments/"+pid, nil).Data()
			switch outcome {
			case "succeed":
				if done["status"] != "paid" || p["status"] != "succeeded" || len(k.receipts("invoiceId="+id)) != 1 {
					t.Fatalf("authenticated: invoice %v, payment %v", done, p)
				}
			case "fail":
				lpe, _ := done["lastPaymentError"].(map[string]any)
				if done["status"] != "open" || p["status"] != "failed" || p["failureCode"] != "authentication_failed" || lpe["paymentId"] != pid {
					t.Fatalf("failed authentication: invoice %v, payment %v", done, p)
				}
			}
			// The step is done: the link does nothing more.
			if r := e.Do("PUT", u.RequestURI()+"&outcome=succeed", nil, testkit.APIKey("")); r.Status != 409 {
				t.Fatalf("second authentication: %d %s", r.Status, r.Body)
			}
		}
		k.account("c2", "charge_automatically")
		k.attach("c2", "pm_card_expired")
		inv := k.invoice("c2", 700)
		if p := e.Must(200, "GET", "/v1/payments/"+inv["latestPaymentId"].(string), nil).Data(); p["status"] != "failed" || p["failureCode"] != "expired_card" {
			t.Fatalf("expired card: %v", p)
		}
	})
}

// A processor slower than REMIT_PROCESSOR_TIMEOUT: the pay answer is the open invoice naming a
// processing attempt, and the reconciler finishes it from the processor's own record — one charge,
// one success, one receipt.
func TestPaymentTimeoutIsReconciled(t *testing.T) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.ProcessorTimeout, cfg.SandboxLatency = 50*time.Millisecond, 300*time.Millisecond
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "send_invoice")
		k.attach("c1", "pm_card_visa")
		inv := k.invoice("c1", 4200)
		id := inv["invoiceId"].(string)
		paid := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}).Data()
		pid, _ := paid["latestPaymentId"].(string)
		if paid["status"] != "open" || pid == "" {
			t.Fatalf("pay past the timeout: %v", paid)
		}
		if p := e.Must(200, "GET", "/v1/payments/"+pid, nil).Data(); p["status"] != "processing" {
			t.Fatalf("payment: %v", p)
		}
		testkit.WaitFor(t, 10*time.Second, "the reconciler to record the charge", func() bool {
			if _, err := e.App.Payments.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			return e.Must(200, "GET", "/v1/payments/"+pid, nil).Data()["status"] == "succeeded"
		})
		if got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data(); got["status"] != "paid" || len(k.receipts("invoiceId="+id)) != 1 {
			t.Fatalf("after reconciling: %v", got)
		}
		charges, err := e.Remit.DB.SandboxCharges().List(context.Background())
		if err != nil || len(charges) != 1 || charges[0].IdempotencyRef != pid {
			t.Fatalf("sandbox charges %+v, %v", charges, err)
		}
	})
}

// A connector that cannot be reached: the attempt stays processing, and when the processor never
// got the charge the reconciler fails it (nothing was taken) so the invoice can be paid again.
func TestPaymentNeverReachedTheProcessor(t *testing.T) {
	down := &unreachable{}
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.ProcessorTimeout = time.Millisecond
	cfg.Processor = down
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		down.charges.Store(0)
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "send_invoice")
		saveCard(t, e, &down.fakeVault, "c1", "pm_1Card")
		inv := k.invoice("c1", 900)
		id := inv["invoiceId"].(string)
		paid := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Production()).Data()
		pid := paid["latestPaymentId"].(string)
		if paid["status"] != "open" || down.charges.Load() != 1 {
			t.Fatalf("pay with the processor down: %v (%d charges)", paid, down.charges.Load())
		}
		testkit.WaitFor(t, 5*time.Second, "the reconciler to fail the attempt", func() bool {
			if _, err := e.App.Payments.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			return e.Must(200, "GET", "/v1/payments/"+pid, nil, testkit.Production()).Data()["status"] == "failed"
		})
		p := e.Must(200, "GET", "/v1/payments/"+pid, nil, testkit.Production()).Data()
		if p["failureCode"] != "processing_error" || p["processor"] != "unreachable" {
			t.Fatalf("reconciled: %v", p)
		}
		// Nothing is in progress any more: a new attempt may be made.
		e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Production())
		if down.charges.Load() != 2 {
			t.Fatalf("charges %d", down.charges.Load())
		}
	})
}

// unreachable is a connector whose processor never answers and never received anything (it keeps
// payment methods, so that production cards can be saved).
type unreachable struct {
	fakeVault
	charges atomic.Int64
}

func (u *unreachable) Name() string { return "unreachable" }
func (u *unreachable) Charge(ctx context.Context, _ processor.ChargeRequest) (processor.ChargeResult, error) {
	u.charges.Add(1)
	return processor.ChargeResult{}, errors.New("connection refused")
}
func (u *unreachable) Lookup(context.Context, string) (processor.ChargeResult, bool, error) {
	return processor.ChargeResult{}, false, nil
}
func (u *unreachable) Refund(context.Context, processor.RefundRequest) (processor.RefundResult, error) {
	return processor.RefundResult{}, errors.New("connection refused")
}

// lostAnswers is a connector whose charges go through but whose answers never arrive (the call
// runs into the timeout); Lookup finds every charge and counts how often each was asked about.
type lostAnswers struct {
	fakeVault
	mu     sync.Mutex
	lookup map[string]int
}

func (*lostAnswers) Name() string { return "stripe" }
func (*lostAnswers) Charge(ctx context.Context, _ processor.ChargeRequest) (processor.ChargeResult, error) {
	<-ctx.Done()
	return processor.ChargeResult{}, ctx.Err()
}
func (l *lostAnswers) Lookup(_ context.Context, ref string) (processor.ChargeResult, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lookup[ref]++
	return processor.ChargeResult{Status: processor.Succeeded, Reference: "pi_" + ref}, true, nil
}
func (*lostAnswers) Refund(context.Context, processor.RefundRequest) (processor.RefundResult, error) {
	return processor.RefundResult{}, errors.New("not in this test")
}

// Four reconcilers (as four serve processes on one store would) race over twelve attempts whose
// answers were lost: each attempt is claimed and asked about once, and recorded once.
func TestReconcilersResolveEachAttemptOnce(t *testing.T) {
	proc := &lostAnswers{}
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.ProcessorTimeout = time.Second
	cfg.Processor = proc
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		proc.mu.Lock()
		proc.lookup = map[string]int{}
		proc.mu.Unlock()
		k := newPayKit(t, e, testkit.Production())
		var ids []string
		for i := range 12 {
			c := fmt.Sprintf("c%d", i)
			k.account(c, "charge_automatically")
			saveCard(t, e, &proc.fakeVault, c, "pm_1Card"+c)
			ids = append(ids, k.draft(c, 1000+int64(i)))
		}
		var wg sync.WaitGroup
		for _, id := range ids { // each finalization waits out the timeout: its attempt is then due
			wg.Add(1)
			go func() {
				defer wg.Done()
				if inv := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}, testkit.Production()).Data(); inv["status"] != "open" {
					t.Errorf("finalize with a lost answer: %v", inv["status"])
				}
			}()
		}
		wg.Wait()
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.App.Payments.Reconcile(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		proc.mu.Lock()
		defer proc.mu.Unlock()
		if len(proc.lookup) != 12 {
			t.Fatalf("attempts asked about: %d of 12 (%v)", len(proc.lookup), proc.lookup)
		}
		for ref, n := range proc.lookup {
			if n != 1 {
				t.Fatalf("attempt %s was asked about %d times", ref, n)
			}
		}
		for _, id := range ids {
			inv := e.Must(200, "GET", "/v1/invoices/"+id, nil, testkit.Production()).Data()
			if inv["status"] != "paid" || len(k.receipts("invoiceId="+id)) != 1 {
				t.Fatalf("invoice %s after reconciling: %v", id, inv["status"])
			}
		}
	})
}
