package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// The engine-level tests (invoices_engine_test.go, payments_engine_test.go) call the engine's Go
// API with its typed inputs and read the store back; no HTTP. This file is their fixture: an
// engine over a fresh store per configured store (SQLite; PostgreSQL when REMIT_TEST_POSTGRES_URL
// is set), one bootstrapped sandbox merchant account, and a helper per step.

// engineOptions adjust the engine a test runs.
type engineOptions struct {
	fixedClock       bool          // a clock the test moves (engine.clock) instead of real time
	processorTimeout time.Duration // 0: the engine's default (10 s)
	sandboxLatency   time.Duration // every sandbox charge and refund takes this long
}

// engine is app.New over a fresh store, with one organization's sandbox merchant account.
type engine struct {
	t       *testing.T
	app     *app.App
	clock   *remit.FixedClock // engineOptions.fixedClock: the engine's clock
	m       remit.MerchantAccount
	scope   remit.Scope
	numbers []string // the invoice numbers finalizations took, in order (finalize)
}

const publicURL = "http://remit.test"

// runEngine runs fn on a new engine on every configured store, the stores side by side.
func runEngine(t *testing.T, opts engineOptions, fn func(t *testing.T, e *engine)) {
	t.Helper()
	for _, kind := range testkit.Stores() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			fn(t, newEngine(t, kind, opts))
		})
	}
}

// newEngine wires the engine as wire.Open does, without the HTTP edge and without the background
// workers (no scheduler, reconciler or webhook worker runs unless a test calls it).
func newEngine(t *testing.T, kind testkit.Store, opts engineOptions) *engine {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, testkit.MigratedStoreURL(t, kind))
	if err != nil {
		t.Fatalf("open %s: %v", kind, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", kind, err)
	}
	var clock remit.Clock = remit.SystemClock{}
	fixed := remit.NewFixedClock(time.Now())
	if opts.fixedClock {
		clock = fixed
	}
	a := app.New(db, clock, slog.New(slog.DiscardHandler), app.Config{PublicURL: publicURL,
		ProcessorTimeout: opts.processorTimeout, SandboxLatency: opts.sandboxLatency})
	boot, err := a.Merchants.Bootstrap(ctx, "Engine Test", false)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	m, err := db.Read(ctx).GetMerchantAccount(ctx, boot.MerchantAccounts["sandbox"], store.Unlocked)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{t: t, app: a, clock: fixed, m: m, scope: remit.Scope{OrganizationID: boot.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}}
	e.price("item")
	return e
}

// write runs one engine call as the edge runs a write: through App.Write, which owns the call's
// transaction and, once it committed, runs what the call registered to follow it (a payment
// attempt's charge, a refund's processor call). It returns what the write answered: the call's
// result, or the follow-ups' (the invoice as the charge left it).
func write[T any](e *engine, call func(ctx context.Context) (T, error)) (T, error) {
	var data any
	var answered error
	_, err := e.app.Write(context.Background(), remit.WriteRequest{Scope: e.scope, Route: "engine test"},
		func(ctx context.Context) (any, error) { return call(ctx) },
		func(d any, err error) remit.Answer { data, answered = d, err; return remit.Answer{Status: 200} })
	if err == nil {
		err = answered
	}
	v, _ := data.(T)
	return v, err
}

// mustWrite is write for a step that must succeed.
func mustWrite[T any](e *engine, call func(ctx context.Context) (T, error)) T {
	e.t.Helper()
	v, err := write(e, call)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// must fails the test on err and returns v: must[T](t)(call()) for a call answering (T, error).
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// price creates the one-time USD price id, whose lines give their own unit amount.
func (e *engine) price(id string) {
	e.t.Helper()
	amount := int64(100)
	mustWrite(e, func(ctx context.Context) (remit.Price, error) {
		return e.app.Catalog.CreatePrice(ctx, e.m, remit.Price{PriceID: id, ProductID: id, Name: "Item", PriceType: remit.PriceFixedOneTime,
			Currency: "USD", UnitAmount: &amount})
	})
}

// customer creates customer id and its USD billing account "ba-"+id collected by collection.
func (e *engine) customer(id, collection string) {
	e.t.Helper()
	mustWrite(e, func(ctx context.Context) (remit.Customer, error) {
		return e.app.Catalog.CreateCustomer(ctx, e.m, remit.Customer{CustomerID: id, Name: "Customer " + id})
	})
	mustWrite(e, func(ctx context.Context) (remit.BillingAccount, error) {
		return e.app.Catalog.CreateBillingAccount(ctx, e.m, remit.BillingAccount{BillingAccountID: "ba-" + id, CustomerID: id,
			Currency: "USD", CollectionMethod: collection})
	})
}

// attachCard makes the sandbox test card token the default payment method of the customer's
// billing account, as the customer does on the hosted setup page: a setup session, completed
// with its hosted token.
func (e *engine) attachCard(customerID, token string) {
	e.t.Helper()
	ba := "ba-" + customerID
	s := mustWrite(e, func(ctx context.Context) (remit.SetupSession, error) {
		return e.app.Catalog.CreateSetupSession(ctx, e.m, customerID, remit.SetupSessionInput{BillingAccountID: &ba, SetAsDefault: true})
	})
	tok, m, err := e.app.Access.ResolveHostedToken(context.Background(), s.Token)
	if err != nil {
		e.t.Fatal(err)
	}
	done := mustWrite(e, func(ctx context.Context) (remit.SetupSession, error) {
		return e.app.Catalog.CompleteSetupSession(ctx, tok, m, s.SessionID, token)
	})
	if done.Status != remit.SessionCompleted {
		e.t.Fatalf("setup session %s: %s", s.SessionID, done.Status)
	}
}

// grant adds a prepaid balance grant of amount to the customer and returns its entry.
func (e *engine) grant(customerID string, amount int64) remit.BalanceEntry {
	e.t.Helper()
	return mustWrite(e, func(ctx context.Context) (remit.BalanceEntry, error) {
		return e.app.Ledger.GrantBalance(ctx, e.m, customerID, remit.GrantInput{Currency: "USD", Amount: amount})
	})
}

// draft creates a draft invoice of one line of amount for the customer and returns its ID.
func (e *engine) draft(customerID string, amount int64) string {
	e.t.Helper()
	inv := mustWrite(e, func(ctx context.Context) (remit.Invoice, error) {
		return e.app.Invoicing.CreateInvoice(ctx, e.m, remit.InvoiceDraftInput{CustomerID: customerID, BillingAccountID: "ba-" + customerID,
			Currency: "USD", Lines: []remit.InvoiceLineInput{{PriceID: "item", UnitAmount: &amount}}})
	})
	if inv.Status != remit.InvoiceDraft || inv.Number != nil || inv.Total != amount {
		e.t.Fatalf("draft: %s, number %v, total %d", inv.Status, inv.Number, inv.Total)
	}
	return inv.InvoiceID
}

// finalize finalizes a draft through the write path and, when it succeeded, notes the number it
// took (wantNumbers).
func (e *engine) finalize(invoiceID string) (remit.Invoice, error) {
	e.t.Helper()
	inv, err := write(e, func(ctx context.Context) (remit.Invoice, error) {
		return e.app.Invoicing.FinalizeInvoice(ctx, e.m, invoiceID, nil)
	})
	if err == nil {
		if inv.Number == nil {
			e.t.Fatalf("finalized invoice %s has no number", invoiceID)
		}
		e.numbers = append(e.numbers, *inv.Number)
	}
	return inv, err
}

// invoiceOf creates a draft of amount for the customer and finalizes it.
func (e *engine) invoiceOf(customerID string, amount int64) remit.Invoice {
	e.t.Helper()
	return must[remit.Invoice](e.t)(e.finalize(e.draft(customerID, amount)))
}

// pay is POST /v1/invoices/{id}/pay through the write path: a charge of the default card.
func (e *engine) pay(invoiceID string) (remit.Invoice, error) {
	return write(e, func(ctx context.Context) (remit.Invoice, error) {
		return e.app.Payments.PayInvoice(ctx, e.m, invoiceID, false)
	})
}

// void is POST /v1/invoices/{id}/void through the write path.
func (e *engine) void(invoiceID string) (remit.Invoice, error) {
	return write(e, func(ctx context.Context) (remit.Invoice, error) {
		return e.app.Invoicing.VoidInvoice(ctx, e.m, invoiceID)
	})
}

// refund issues a credit note on the invoice whose one line of amount goes to the refund bucket.
func (e *engine) refund(invoiceID string, amount int64) (remit.CreditNote, error) {
	bucket := remit.BucketRefund
	return write(e, func(ctx context.Context) (remit.CreditNote, error) {
		return e.app.CreditNotes.CreateCreditNote(ctx, e.m, remit.CreditNoteInput{InvoiceID: invoiceID, Reason: "product_unsatisfactory",
			Lines: []remit.CreditNoteLineInput{{Description: "Refund", Amount: amount, Bucket: &bucket}}})
	})
}

// Reads, straight from the store.

func (e *engine) read() store.Q { return e.app.DB.Read(context.Background()) }

// stored is the invoice as the store has it.
func (e *engine) stored(invoiceID string) remit.Invoice {
	e.t.Helper()
	return must[remit.Invoice](e.t)(e.read().GetInvoice(context.Background(), e.m.ID, invoiceID, store.Unlocked))
}

// payments are the invoice's payment attempts, first first.
func (e *engine) payments(invoiceID string) []remit.Payment {
	e.t.Helper()
	return must[[]remit.Payment](e.t)(e.read().ListInvoicePayments(context.Background(), e.m.ID, invoiceID))
}

// onePayment is the invoice's only payment attempt, which it names as its latest.
func (e *engine) onePayment(inv remit.Invoice) remit.Payment {
	e.t.Helper()
	ps := e.payments(inv.InvoiceID)
	if len(ps) != 1 || inv.LatestPaymentID == nil || *inv.LatestPaymentID != ps[0].PaymentID {
		e.t.Fatalf("invoice %s: latest payment %s, %s", inv.InvoiceID, deref(inv.LatestPaymentID), briefPayments(ps))
	}
	return ps[0]
}

// receipts are the invoice's payment receipts.
func (e *engine) receipts(invoiceID string) []remit.PaymentReceipt {
	e.t.Helper()
	return must[[]remit.PaymentReceipt](e.t)(e.read().ListReceipts(context.Background(), e.m.ID, store.ReceiptFilter{InvoiceID: invoiceID, Limit: 100}))
}

// events are the types of the events about one object, oldest first.
func (e *engine) events(objectID string) []string {
	e.t.Helper()
	evs := must[[]remit.Event](e.t)(e.read().ListEventsByObject(context.Background(), e.m.ID, objectID))
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// wantEvents fails unless the object's events are exactly want, in order.
func (e *engine) wantEvents(objectID string, want ...remit.EventType) {
	e.t.Helper()
	w := make([]string, len(want))
	for i, typ := range want {
		w[i] = string(typ)
	}
	if got := e.events(objectID); !slices.Equal(got, w) {
		e.t.Fatalf("events of %s: %v, want %v", objectID, got, w)
	}
}

// wantNumbers fails unless the finalizations so far took INV-000001, INV-000002, … in order, and
// the store's invoices carry exactly those numbers, each once.
func (e *engine) wantNumbers() {
	e.t.Helper()
	for i, n := range e.numbers {
		if want := remit.DocumentNumber(remit.InvoiceNumbers, int64(i+1)); n != want {
			e.t.Fatalf("finalization %d took %s, want %s (all: %v)", i+1, n, want, e.numbers)
		}
	}
	invs := must[[]remit.Invoice](e.t)(e.read().ListInvoices(context.Background(), e.m.ID, store.InvoiceFilter{ListPage: store.ListPage{Limit: 1000}}))
	var stored []string
	for _, inv := range invs {
		if inv.Number != nil {
			stored = append(stored, *inv.Number)
		}
	}
	slices.Sort(stored)
	if !slices.Equal(stored, e.numbers) {
		e.t.Fatalf("stored invoice numbers %v, finalizations took %v", stored, e.numbers)
	}
}

// wantConflict fails unless err is the engine's conflict whose details hold want.
func wantConflict(t *testing.T, err error, want map[string]any) *remit.Error {
	t.Helper()
	var re *remit.Error
	if !errors.As(err, &re) || re.Code != remit.EConflict {
		t.Fatalf("want a conflict, got %v", err)
	}
	for k, v := range want {
		if got := re.Details[k]; fmt.Sprint(got) != fmt.Sprint(v) {
			t.Fatalf("conflict details[%s] = %v, want %v (%s)", k, got, v, re.Message)
		}
	}
	return re
}

// brief is an invoice in a failure message: its state and figures, pointers followed.
func brief(inv remit.Invoice) string {
	lpe := "none"
	if inv.LastPaymentError != nil {
		lpe = inv.LastPaymentError.Code + " (" + inv.LastPaymentError.PaymentID + ")"
	}
	return fmt.Sprintf("invoice %s %s number %s: subtotal %d prepaid %d total %d paid %d remaining %d; paymentUrl %s, latest payment %s, "+
		"lastPaymentError %s, attempts %d, paidAt %s, voidedAt %s", inv.InvoiceID, inv.Status, deref(inv.Number), inv.Subtotal,
		inv.PrepaidApplied, inv.Total, inv.AmountPaid, inv.AmountRemaining, deref(inv.PaymentURL), deref(inv.LatestPaymentID), lpe,
		inv.AttemptCount, deref(inv.PaidAt), deref(inv.VoidedAt))
}

// briefPayment is a payment attempt in a failure message.
func briefPayment(p remit.Payment) string {
	return fmt.Sprintf("payment %s %s: attempt %d of %d by %s from %s, failure %s, fee %d, reference %s, settlement %s, next action %s",
		p.PaymentID, p.Status, p.Attempt, p.Amount, p.Processor, p.Source, deref(p.FailureCode), p.FeeAmount,
		deref(p.ProcessorReference), deref(p.SettlementID), deref(p.NextAction))
}

// deref is what p points to, or "null".
func deref[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%v", *p)
}

// briefPayments is a list of payment attempts in a failure message.
func briefPayments(ps []remit.Payment) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = briefPayment(p)
	}
	return fmt.Sprintf("%d payments [%s]", len(ps), strings.Join(out, "; "))
}
