package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// Payments (docs/payments.md).
//
// An open invoice is collected in three ways: at finalization (charge_automatically with a default
// payment method), by POST /v1/invoices/{id}/pay, and by the customer portal's
// PUT /customer-portal/invoices/{id}/pay. Each attempt is one payment (pay_) under the invoice's
// payment intent (pi_), and is an intent of its own (docs/payments.md "Payments as intents"):
//
//  1. openAttempt, in the request's transaction, under the invoice's row lock with its state
//     checked after the lock: the attempt is recorded processing (payment.processing) and the
//     invoice names it (latestPaymentId). At most one attempt per invoice is open.
//  2. chargeAttempt, a follow-up (followup.go) that runs once that transaction committed, with no
//     transaction open: the processor is called with the attempt's idempotency reference, for at
//     most REMIT_PROCESSOR_TIMEOUT.
//  3. recordOutcome, a second transaction: it locks the invoice and the payment again and records
//     what the processor answered, if the attempt is still open. A success pays the invoice in
//     full, makes a receipt and lands in the day's settlement; a decline leaves the invoice open
//     with lastPaymentError; requires_action waits for the customer; no answer (a fault, a
//     timeout) leaves the attempt processing for the reconciler (reconcile.go).
//
// A declined attempt is part of the record: at finalization the finalize still succeeds (its answer
// shows the open invoice and its lastPaymentError); on the pay routes the route answers 409 with
// details.reason "payment_failed".

// processorFor is the processor that charges for m: the built-in sandbox processor in the sandbox,
// the configured connector in production (nil when none is configured: production charges are 501).
func (ps *Payments) processorFor(m remit.MerchantAccount) processor.Processor {
	if m.Environment == remit.Sandbox && !(ps.Config.ProcessorInSandbox && ps.Config.Processor != nil) {
		return ps.sandbox
	}
	return ps.Config.Processor
}

// PayInvoice collects an open invoice (POST /v1/invoices/{invoiceId}/pay): it charges the billing
// account's default payment method, or with outOfBand records a payment the merchant received
// outside Remit (method out_of_band, no processor call, never settled). It answers the paid invoice.
//
// Errors: not_found; conflict (not open, details.currentState; no default payment method,
// details.reason no_payment_method; the charge was declined, details.reason payment_failed with
// failureCode and paymentId — the declined attempt is committed); not_implemented (a card charge in
// production without a processor connector).
func (ps *Payments) PayInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, outOfBand bool) (remit.Invoice, error) {
	return ps.payInvoice(ctx, m, invoiceID, outOfBand, remit.SourceAPI)
}

// answerAttempt registers, after the charge of the invoice's new attempt, the follow-up that
// answers the request with the invoice as the attempt left it: on the pay routes a declined
// attempt is 409 payment_failed.
func (ps *Payments) answerAttempt(ctx context.Context, m remit.MerchantAccount, inv remit.Invoice, source string) error {
	if inv.LatestPaymentID == nil {
		return nil
	}
	paymentID := *inv.LatestPaymentID
	return ps.after(ctx, func(ctx context.Context) (any, error) {
		q := ps.DB.Read(ctx)
		inv, err := q.GetInvoice(ctx, m.ID, inv.InvoiceID, store.Unlocked)
		if err != nil {
			return nil, err
		}
		p, err := q.GetPayment(ctx, m.ID, paymentID, store.Unlocked)
		if err != nil {
			return nil, err
		}
		if source != remit.SourceFinalize && p.Status == remit.PaymentFailed {
			return inv, paymentFailedError(inv, p)
		}
		return inv, nil
	})
}

// PayInvoiceFromPortal is the customer portal's PUT /customer-portal/invoices/{invoiceId}/pay with
// the invoice's hosted token: the same collection as PayInvoice with the default payment method.
//
// Errors: forbidden (a token of another resource), and those of PayInvoice.
func (ps *Payments) PayInvoiceFromPortal(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error) {
	if err := AuthorizeHostedToken(tok, remit.HostedInvoice, invoiceID); err != nil {
		return remit.Invoice{}, err
	}
	return ps.payInvoice(ctx, m, invoiceID, false, remit.SourcePortal)
}

func (ps *Payments) payInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, outOfBand bool, source string) (remit.Invoice, error) {
	inv, err := inTx(ctx, ps.DB, func(ctx context.Context, tx *store.Tx) (remit.Invoice, error) {
		// The lock comes first and the state is read after it: of two racing attempts (API and
		// portal, or two servers) the second sees the invoice paid, or its attempt open.
		inv, err := tx.GetInvoice(ctx, m.ID, invoiceID, store.Locked)
		if err != nil {
			return inv, err
		}
		if err := remit.InvoiceStates.Check(inv.InvoiceID, inv.Status, remit.ActionPay); err != nil {
			return inv, err
		}
		now := micro(ps.Now(m))
		if err := ps.noOpenAttempt(ctx, tx, m, inv); err != nil {
			return inv, err
		}
		if outOfBand {
			_, err := ps.recordOutOfBand(ctx, tx, m, &inv, source, now)
			return inv, err
		}
		proc := ps.processorFor(m)
		if proc == nil {
			return inv, remit.Errorf(remit.ENotImplemented, "Charging a payment method in production needs a payment processor connector, and this deployment has none. To record a payment the merchant received outside Remit, send POST /v1/invoices/%s/pay with {\"outOfBand\": true}.", inv.InvoiceID)
		}
		pm, err := ps.defaultPaymentMethod(ctx, tx, m, inv)
		if err != nil {
			return inv, err
		}
		if pm == nil {
			return inv, remit.Errorf(remit.EConflict, "Billing account '%s' has no default payment method to charge. Attach one through a setup session (POST /v1/customers/%s/payment-method-setup with billingAccountId and setAsDefault), or record a payment received outside Remit with {\"outOfBand\": true}.", inv.BillingAccountID, inv.CustomerID).
				With("reason", "no_payment_method").With("currentState", inv.Status).With("billingAccountId", inv.BillingAccountID)
		}
		if err := ps.openAttempt(ctx, tx, m, &inv, proc, *pm, source, now); err != nil {
			return inv, err
		}
		return inv, ps.answerAttempt(ctx, m, inv, source)
	})
	return inv, err
}

// noOpenAttempt refuses a second attempt while one of the invoice's is processing or waits for
// the customer (409 payment_in_progress): one attempt at a time, never two charges.
func (ps *Payments) noOpenAttempt(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice) error {
	if inv.LatestPaymentID == nil {
		return nil
	}
	p, err := tx.GetPayment(ctx, m.ID, *inv.LatestPaymentID, store.Unlocked)
	if err != nil || !p.Status.Open() {
		return err
	}
	return remit.Errorf(remit.EConflict, "Invoice '%s' has a payment in progress (%s, %s); wait for its outcome (GET /v1/payments/%s) and try again.",
		inv.InvoiceID, p.PaymentID, p.Status, p.PaymentID).
		With("reason", "payment_in_progress").With("paymentId", p.PaymentID).With("currentState", inv.Status)
}

// paymentFailedError is the pay routes' answer to a declined charge, recorded by then: 409 with
// the failure.
func paymentFailedError(inv remit.Invoice, p remit.Payment) error {
	code, msg := strOf(p.FailureCode), strOf(p.FailureMessage)
	e := remit.Errorf(remit.EConflict, "The charge of %s on %s •••• %s was declined (%s). %s", formatMoney(p.Amount, p.Currency),
		p.PaymentMethod.Brand, p.PaymentMethod.Last4, code, msg).
		With("reason", "payment_failed").With("failureCode", code).With("failureMessage", msg).
		With("paymentId", p.PaymentID).With("invoiceId", inv.InvoiceID).With("currentState", inv.Status)
	return e
}

func strOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// formatMoney writes minor units as a decimal amount with the currency ("160.79 USD", "500 JPY").
func formatMoney(amount int64, currency string) string {
	digits := remit.SupportedCurrencies[currency]
	if digits == 0 {
		return fmt.Sprintf("%d %s", amount, currency)
	}
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	pow := int64(1)
	for range digits {
		pow *= 10
	}
	return fmt.Sprintf("%s%d.%0*d %s", sign, amount/pow, digits, amount%pow, currency)
}

// defaultPaymentMethod returns the invoice's billing account's default payment method, or nil
// (also when it was detached: remit.PaymentMethodStates). The method's row is read shared, so that
// a detach waits for the charge's transaction to commit and then sees the invoice it opened.
func (ps *Payments) defaultPaymentMethod(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice) (*remit.PaymentMethod, error) {
	ba, err := tx.GetBillingAccount(ctx, m.ID, inv.BillingAccountID, store.Unlocked)
	if err != nil || ba.DefaultPaymentMethod == nil {
		return nil, err
	}
	pm, err := tx.PaymentMethodFor(ctx, m.ID, ba.DefaultPaymentMethod.PaymentMethodID, store.Shared)
	if err != nil || !pm.Status.Allows(remit.ActionCharge) {
		return nil, err
	}
	return &pm, nil
}

// nextAttempt returns the invoice's payment intent (created on the first attempt, its amount kept
// equal to what is due) and the number of the attempt about to be made.
func (ps *Payments) nextAttempt(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) (remit.PaymentIntent, int64, error) {
	pi, ok, err := tx.GetInvoicePaymentIntent(ctx, m.ID, inv.InvoiceID)
	if err != nil {
		return pi, 0, err
	}
	if !ok {
		pi = remit.PaymentIntent{Object: "payment_intent", PaymentIntentID: remit.NewID("pi"), InvoiceID: inv.InvoiceID,
			CustomerID: inv.CustomerID, Currency: inv.Currency, Status: remit.IntentRequiresPaymentMethod,
			MerchantAccountID: m.ID, CreatedAt: now}
	}
	pi.Amount, pi.UpdatedAt = inv.AmountRemaining, now
	n, err := tx.LastPaymentAttempt(ctx, m.ID, inv.InvoiceID)
	return pi, n + 1, err
}

func (ps *Payments) newPayment(m remit.MerchantAccount, inv *remit.Invoice, pi remit.PaymentIntent, attempt int64, source string, now time.Time) remit.Payment {
	return remit.Payment{
		Object: "payment", PaymentID: remit.NewID("pay"), PaymentIntentID: pi.PaymentIntentID, InvoiceID: inv.InvoiceID,
		CustomerID: inv.CustomerID, BillingAccountID: inv.BillingAccountID, Attempt: attempt, Amount: inv.AmountRemaining,
		Currency: inv.Currency, Source: source, Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now,
	}
}

// openAttempt records a charge of the invoice's amount remaining to pm as a processing attempt
// (payment.processing), names it on the invoice, and registers the charge to run once the
// transaction committed (chargeAttempt).
func (ps *Payments) openAttempt(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, proc processor.Processor,
	pm remit.PaymentMethod, source string, now time.Time) error {
	pi, attempt, err := ps.nextAttempt(ctx, tx, m, inv, now)
	if err != nil {
		return err
	}
	if err := tx.UpsertPaymentIntent(ctx, pi); err != nil {
		return err
	}
	p := ps.newPayment(m, inv, pi, attempt, source, now)
	p.Method, p.PaymentMethod, p.Status, p.Processor = remit.MethodCard, pm.Summary(), remit.PaymentProcessing, proc.Name()
	// What the processor knows the attempt by: stable across every retry of this charge.
	p.IdempotencyRef, p.MethodToken, p.ProcessorCustomer = p.PaymentID, pm.Token, pm.ProcessorCustomer
	lease := ps.Clock.Now().Add(ps.Config.ProcessorTimeout)
	p.ReconcileAfter = &lease
	if err := concurrentPayment(tx.InsertPayment(ctx, p), p.InvoiceID); err != nil {
		return err
	}
	inv.LatestPaymentID, inv.UpdatedAt = &p.PaymentID, now
	inv.AttemptCount++
	if err := tx.UpdateInvoice(ctx, *inv, false); err != nil {
		return err
	}
	if err := ps.Emit(ctx, tx, scopeOf(m), now, remit.EventPaymentProcessing, p.PaymentID, p); err != nil {
		return err
	}
	return ps.after(ctx, func(ctx context.Context) (any, error) { return ps.chargeAttempt(ctx, m, p) })
}

// chargeAttempt calls the processor for an open attempt, with no transaction open, and records
// what it answered (recordOutcome). A fault or a timeout leaves the attempt processing, for the
// reconciler to finish. It answers nothing of its own: the request's answer comes from the
// follow-up answerAttempt registered after it.
func (ps *Payments) chargeAttempt(ctx context.Context, m remit.MerchantAccount, p remit.Payment) (any, error) {
	proc := ps.processorFor(m)
	if proc == nil {
		return nil, nil
	}
	cctx, cancel := context.WithTimeout(ctx, ps.Config.ProcessorTimeout)
	cctx, span := processorSpan(cctx, "processor.charge", proc, p.PaymentID)
	res, err := proc.Charge(cctx, processor.ChargeRequest{Amount: p.Amount, Currency: p.Currency, PaymentMethod: p.MethodToken,
		IdempotencyRef: p.IdempotencyRef, Description: "Invoice " + p.InvoiceID, Account: m.ProcessorAccountID, Customer: p.ProcessorCustomer})
	telemetry.Strings(span, "remit.charge_status", string(res.Status))
	telemetry.End(span, err)
	cancel()
	if err != nil {
		ps.Log.WarnContext(ctx, "payment processor did not answer; the attempt stays processing for the reconciler",
			"paymentId", p.PaymentID, "processor", proc.Name(), "err", err.Error())
		return nil, nil
	}
	_, err = ps.recordOutcome(ctx, m, p, res)
	return nil, err
}

// processorSpan starts the client span of a call to the payment processor about one payment or
// refund (name is a constant: "processor.charge", "processor.lookup", "processor.refund").
func processorSpan(ctx context.Context, name string, proc processor.Processor, id string) (context.Context, trace.Span) {
	ctx, span := telemetry.Start(ctx, name, trace.SpanKindClient)
	telemetry.Strings(span, "remit.processor", proc.Name(), "remit.object_id", id)
	return ctx, span
}

// recordOutcome records in a transaction of its own what the processor answered for attempt p,
// if the attempt is still open (the reconciler, a webhook or the customer's authentication may
// have recorded it first), and returns the invoice as it stands after.
func (ps *Payments) recordOutcome(ctx context.Context, m remit.MerchantAccount, p remit.Payment, res processor.ChargeResult) (remit.Invoice, error) {
	inv, err := inTx(ctx, ps.DB, func(ctx context.Context, tx *store.Tx) (remit.Invoice, error) {
		inv, err := tx.GetInvoice(ctx, m.ID, p.InvoiceID, store.Locked)
		if err != nil {
			return inv, err
		}
		cur, err := tx.GetPayment(ctx, m.ID, p.PaymentID, store.Locked)
		if err != nil || !cur.Status.Open() {
			return inv, err
		}
		return inv, ps.applyOutcome(ctx, tx, m, &inv, cur, res, micro(ps.Now(m)))
	})
	return inv, err
}

// applyOutcome moves an open attempt to what the processor answered, with its effects and events.
func (ps *Payments) applyOutcome(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, p remit.Payment, res processor.ChargeResult, now time.Time) error {
	from, cur := p.Status, p.ProcessorReference
	if to := remit.PaymentStatus(res.Status); to != from && !from.CanMove(to) {
		return nil // an answer the attempt's state machine does not take (remit.PaymentStatus.CanMove)
	}
	if res.Reference != "" {
		p.ProcessorReference = &res.Reference
	}
	p.UpdatedAt = now
	pi, _, err := tx.GetInvoicePaymentIntent(ctx, m.ID, inv.InvoiceID)
	if err != nil {
		return err
	}
	switch res.Status {
	case processor.Succeeded:
		if res.Fee < 0 {
			return remit.Internal(fmt.Errorf("app.applyOutcome: processor reported a negative fee %d", res.Fee))
		}
		p.Status, p.FeeAmount, p.NextAction, p.ReconcileAfter = remit.PaymentSucceeded, res.Fee, nil, nil
		return ps.paymentSucceeded(ctx, tx, m, inv, pi, &p, from, now)
	case processor.Failed:
		code, msg := res.FailureCode, res.FailureMessage
		if code == "" {
			code = "processing_error"
		}
		if msg == "" {
			msg = "The processor refused the charge. Ask the customer for another payment method."
		}
		p.Status, p.FailureCode, p.FailureMessage, p.NextAction, p.ReconcileAfter = remit.PaymentFailed, &code, &msg, nil, nil
		return ps.paymentFailed(ctx, tx, m, inv, pi, p, from, now)
	case processor.RequiresAction:
		if from == remit.PaymentRequiresAction {
			return nil
		}
		return ps.paymentRequiresAction(ctx, tx, m, inv, p, res.NextActionURL, now)
	case processor.Processing:
		if from == remit.PaymentRequiresAction { // the customer acted; the processor is on it
			p.Status = remit.PaymentProcessing
			lease := ps.Clock.Now().Add(ps.Config.ProcessorTimeout)
			p.ReconcileAfter = &lease
			return ps.savePayment(ctx, tx, p, from)
		}
		if res.Reference != "" && !sameRef(cur, res.Reference) { // still processing: what the processor knows it by, from its first answer on
			return ps.savePayment(ctx, tx, p, from)
		}
		return nil
	}
	return remit.Internal(fmt.Errorf("app.applyOutcome: processor answered status %q", res.Status))
}

// sameRef reports whether the stored reference ref is already s.
func sameRef(ref *string, s string) bool { return ref != nil && *ref == s }

// paymentRequiresAction records an attempt the customer must complete (3-D Secure): its next
// action (the processor's URL, or in the sandbox the portal's authenticate route with a hosted
// token of the payment), payment.requires_action and invoice.payment_action_required.
func (ps *Payments) paymentRequiresAction(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, p remit.Payment, url string, now time.Time) error {
	from := p.Status
	if url == "" {
		token, err := ps.access.IssueHostedToken(ctx, tx, m.ID, remit.HostedPayment, p.PaymentID, now.AddDate(0, 0, 7))
		if err != nil {
			return err
		}
		url = fmt.Sprintf("%s/customer-portal/payments/%s/authenticate?token=%s", ps.Config.PublicURL, p.PaymentID, token)
	}
	p.Status, p.NextAction, p.ReconcileAfter = remit.PaymentRequiresAction, &remit.NextAction{Type: "redirect_to_url", URL: url}, nil
	if err := ps.savePayment(ctx, tx, p, from); err != nil {
		return err
	}
	scope := scopeOf(m)
	if err := ps.Emit(ctx, tx, scope, now, remit.EventPaymentRequiresAction, p.PaymentID, p); err != nil {
		return err
	}
	return ps.Emit(ctx, tx, scope, now, remit.EventInvoicePaymentActionRequired, inv.InvoiceID, *inv)
}

// savePayment writes an attempt's new state over the one it was read in (from); "" inserts it.
// Another process that recorded it first is a conflict: the transaction rolls back.
func (ps *Payments) savePayment(ctx context.Context, tx *store.Tx, p remit.Payment, from remit.PaymentStatus) error {
	if from == "" {
		return concurrentPayment(tx.InsertPayment(ctx, p), p.InvoiceID)
	}
	ok, err := tx.UpdatePaymentOutcome(ctx, p, from)
	if err != nil {
		return concurrentPayment(err, p.InvoiceID)
	}
	if !ok {
		return remit.Errorf(remit.EConflict, "Payment '%s' was recorded by another process meanwhile.", p.PaymentID).
			With("reason", "payment_in_progress").With("paymentId", p.PaymentID)
	}
	return nil
}

// recordOutOfBand records a payment of the amount remaining that the merchant received outside
// Remit: no processor call, no fee, no settlement.
func (ps *Payments) recordOutOfBand(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, source string, now time.Time) (remit.Payment, error) {
	pi, attempt, err := ps.nextAttempt(ctx, tx, m, inv, now)
	if err != nil {
		return remit.Payment{}, err
	}
	p := ps.newPayment(m, inv, pi, attempt, source, now)
	p.Method, p.Status, p.Processor = remit.MethodOutOfBand, remit.PaymentSucceeded, remit.ProcessorOutOfBand
	inv.LatestPaymentID = &p.PaymentID
	return p, ps.paymentSucceeded(ctx, tx, m, inv, pi, &p, "", now)
}

// paymentSucceeded records a successful payment: the payment, the intent, the paid invoice, the
// settlement (card payments) and the receipt, with their events in the order payment.succeeded,
// payment_receipt.created, then the invoice's (invoice.paid last).
//
// The merchant account's hot rows (the day's settlement, the receipt counter) are taken last and
// held for the last few statements only (docs/performance.md, "A PostgreSQL request's round
// trips"): the invoice is marked paid first, and the events of the steps that take them move
// ahead of its.
func (ps *Payments) paymentSucceeded(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, pi remit.PaymentIntent, p *remit.Payment, from remit.PaymentStatus, now time.Time) error {
	cust, err := tx.GetCustomer(ctx, m.ID, inv.CustomerID)
	if err != nil {
		return err
	}
	pi.Status, pi.LastPaymentError = remit.IntentSucceeded, nil
	if err := tx.UpsertPaymentIntent(ctx, pi); err != nil {
		return err
	}
	billed := *inv // the invoice as the receipt shows it
	inv.AmountPaid += p.Amount
	inv.AmountRemaining -= p.Amount
	inv.LastPaymentError = nil
	if inv.AmountRemaining != 0 {
		return remit.Internal(fmt.Errorf("app.paymentSucceeded: invoice %s has %d remaining after a full payment", inv.InvoiceID, inv.AmountRemaining))
	}
	mark := tx.EventMark()
	if err := ps.invoicing.MarkInvoicePaid(ctx, tx, m, inv, now); err != nil {
		return err
	}
	return tx.EventsAt(mark, func() error {
		return ps.settlePayment(ctx, tx, m, billed, cust, p, from, now)
	})
}

// settlePayment is paymentSucceeded's last step, the one that takes the merchant account's hot
// rows: the payment's settlement, the payment, and its receipt with the next receipt number.
func (ps *Payments) settlePayment(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, cust remit.Customer, p *remit.Payment, from remit.PaymentStatus, now time.Time) error {
	if p.Settled() {
		s, err := ps.settle(ctx, tx, m, p.Currency, now, func(s *remit.Settlement) {
			s.GrossAmount += p.Amount
			s.FeeAmount += p.FeeAmount
			s.PaymentCount++
		})
		if err != nil {
			return err
		}
		p.SettlementID = &s.SettlementID
	}
	if err := ps.savePayment(ctx, tx, *p, from); err != nil {
		return err
	}
	if err := ps.Emit(ctx, tx, scopeOf(m), now, remit.EventPaymentSucceeded, p.PaymentID, *p); err != nil {
		return err
	}
	_, err := ps.createReceipt(ctx, tx, m, inv, cust, *p, now)
	return err
}

// paymentFailed records a declined attempt: the payment, the intent's and the invoice's
// lastPaymentError, and the events payment.failed and invoice.payment_failed.
func (ps *Payments) paymentFailed(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, pi remit.PaymentIntent, p remit.Payment, from remit.PaymentStatus, now time.Time) error {
	scope := scopeOf(m)
	if err := ps.savePayment(ctx, tx, p, from); err != nil {
		return err
	}
	perr := &remit.PaymentError{Code: *p.FailureCode, Message: *p.FailureMessage, PaymentID: p.PaymentID, At: now}
	pi.Status, pi.LastPaymentError = remit.IntentRequiresPaymentMethod, perr
	if err := tx.UpsertPaymentIntent(ctx, pi); err != nil {
		return err
	}
	inv.LastPaymentError, inv.UpdatedAt = perr, now
	final, err := ps.dunningAfterFailure(ctx, tx, m, inv, p, now)
	if err != nil {
		return err
	}
	if err := tx.UpdateInvoice(ctx, *inv, false); err != nil {
		return err
	}
	if err := ps.Emit(ctx, tx, scope, now, remit.EventPaymentFailed, p.PaymentID, p); err != nil {
		return err
	}
	if err := final(); err != nil {
		return err
	}
	if err := ps.subscriptionPaymentOutcome(ctx, tx, m, *inv, false, now); err != nil {
		return err
	}
	return ps.Emit(ctx, tx, scope, now, remit.EventInvoicePaymentFailed, inv.InvoiceID, *inv)
}

// createReceipt makes the receipt of a successful payment with the next gap-free receipt number of
// the merchant account, and emits payment_receipt.created.
func (ps *Payments) createReceipt(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, cust remit.Customer, p remit.Payment, now time.Time) (remit.PaymentReceipt, error) {
	n, err := tx.NextNumber(ctx, m.ID, remit.ReceiptNumbers.Counter)
	if err != nil {
		return remit.PaymentReceipt{}, err
	}
	r := remit.PaymentReceipt{
		Object: "payment_receipt", ReceiptID: remit.NewID("rcpt"), ReceiptNumber: remit.DocumentNumber(remit.ReceiptNumbers, n),
		InvoiceID: inv.InvoiceID, InvoiceNumber: inv.Number, CustomerID: inv.CustomerID, CustomerExternalID: cust.ExternalID,
		BillingAccountID: inv.BillingAccountID, PaymentID: p.PaymentID, PaymentIntentID: p.PaymentIntentID, Amount: p.Amount,
		Currency: p.Currency, Status: remit.ReceiptSucceeded, PaymentMethod: remit.ReceiptPaymentMethod{Type: p.Method},
		Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now,
	}
	if p.PaymentMethod != nil {
		brand, last4 := p.PaymentMethod.Brand, p.PaymentMethod.Last4
		r.PaymentMethod.Brand, r.PaymentMethod.Last4 = &brand, &last4
	}
	if err := tx.InsertReceipt(ctx, r); err != nil {
		return r, err
	}
	return r, ps.Emit(ctx, tx, scopeOf(m), now, remit.EventPaymentReceiptCreated, r.ReceiptID, r)
}

// RecordReceiptRefund reflects a refund of amount on a payment's receipt (amountRefunded and status
// succeeded → partially_refunded → refunded) and on the payment, in the caller's transaction, and
// emits payment_receipt.updated. The credit-notes area calls it after the processor refunded, and
// RecordSettlementRefund for the settlement.
//
// Errors: not_found (payment or receipt), conflict (more than what was paid and not yet refunded).
func (ps *Payments) RecordReceiptRefund(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, paymentID string, amount int64, at time.Time) (remit.PaymentReceipt, error) {
	if amount == 0 {
		return remit.PaymentReceipt{}, remit.Internal(fmt.Errorf("app.RecordReceiptRefund: amount is 0"))
	}
	r, err := tx.GetPaymentReceipt(ctx, m.ID, paymentID, store.Locked)
	if err != nil {
		return r, err
	}
	ok, err := tx.AddPaymentRefund(ctx, m.ID, paymentID, amount)
	if err != nil {
		return r, err
	}
	if !ok || r.AmountRefunded+amount > r.Amount || r.AmountRefunded+amount < 0 {
		return r, remit.Errorf(remit.EConflict, "Payment '%s' has %s left to refund; refund at most that.", paymentID,
			formatMoney(r.Amount-r.AmountRefunded, r.Currency)).With("reason", "amount_exceeds_refundable")
	}
	at = micro(at)
	r.AmountRefunded += amount
	r.Status, r.UpdatedAt = remit.ReceiptStatusOf(r.Amount, r.AmountRefunded), at
	if err := tx.UpdateReceiptRefund(ctx, r); err != nil {
		return r, err
	}
	return r, ps.Emit(ctx, tx, scopeOf(m), at, remit.EventPaymentReceiptUpdated, r.ReceiptID, r)
}

// ListInvoicePayments returns an invoice's payment attempts, first first.
//
// Errors: not_found (invoice).
func (ps *Payments) ListInvoicePayments(ctx context.Context, m remit.MerchantAccount, invoiceID string) ([]remit.Payment, error) {
	q := ps.DB.Read(ctx)
	if _, err := q.GetInvoice(ctx, m.ID, invoiceID, store.Unlocked); err != nil {
		return nil, err
	}
	payments, err := q.ListInvoicePayments(ctx, m.ID, invoiceID)
	return payments, err
}

// ListPaymentReceipts lists the merchant account's receipts newest first, filtered by every given
// parameter and paged by limit (1–100, default 20) and offset (≥ 0).
//
// Errors: validation_failure listing every bad parameter (limit or offset that does not parse or is
// out of range, an unknown status, aliases given with different values).
func (ps *Payments) ListPaymentReceipts(ctx context.Context, m remit.MerchantAccount, in remit.ReceiptQuery) (remit.OffsetList[remit.PaymentReceipt], error) {
	var p remit.Problems
	f := store.ReceiptFilter{CustomerExternalID: in.CustomerExternalID, BillingAccountID: in.BillingAccountID,
		PaymentID: in.PaymentID, PaymentIntentID: in.PaymentIntentID, Status: in.Status, Limit: 20}
	f.CustomerID = queryAlias(&p, "customer", in.Customer, "customerId", in.CustomerID)
	f.InvoiceID = queryAlias(&p, "invoice", in.Invoice, "invoiceId", in.InvoiceID)
	if in.Status != "" && !slices.Contains(remit.ReceiptStatuses, in.Status) {
		p.Add(remit.InQuery, "status", "invalid_enum", "status must be one of "+strings.Join(remit.ReceiptStatuses, ", ")+".")
	}
	if in.Limit != "" {
		n, err := strconv.Atoi(in.Limit)
		switch {
		case err != nil && !looksInteger(in.Limit):
			p.Add(remit.InQuery, "limit", "invalid_integer", "limit must be an integer from 1 to 100.")
		case err != nil || n < 1 || n > 100:
			p.Add(remit.InQuery, "limit", "out_of_range", "limit must be an integer from 1 to 100.")
		default:
			f.Limit = n
		}
	}
	if in.Offset != "" {
		n, err := strconv.ParseInt(in.Offset, 10, 64)
		switch {
		case err != nil && !looksInteger(in.Offset):
			p.Add(remit.InQuery, "offset", "invalid_integer", "offset must be an integer of 0 or more.")
		case err != nil || n < 0:
			p.Add(remit.InQuery, "offset", "out_of_range", "offset must be an integer of 0 or more.")
		default:
			f.Offset = n
		}
	}
	from, to := remit.ListQuery{CreatedFrom: in.CreatedFrom, CreatedTo: in.CreatedTo}.CreatedRange(&p)
	if !from.IsZero() {
		f.CreatedFrom = remit.Micros(from)
	}
	if !to.IsZero() {
		f.CreatedTo = remit.Micros(to)
	}
	if err := p.Err(); err != nil {
		return remit.OffsetList[remit.PaymentReceipt]{}, err
	}
	items, err := ps.DB.Read(ctx).ListReceipts(ctx, m.ID, f)
	if err != nil {
		return remit.OffsetList[remit.PaymentReceipt]{}, err
	}
	more := len(items) > f.Limit
	if more {
		items = items[:f.Limit]
	}
	return remit.NewOffsetList(items, more, f.Offset, f.Limit), nil
}

// queryAlias returns the value of a filter that has two names; both given and different is a problem.
func queryAlias(p *remit.Problems, name1, v1, name2, v2 string) string {
	if v1 != "" && v2 != "" && v1 != v2 {
		p.Add(remit.InQuery, name2, "conflicting_alias", fmt.Sprintf("%s and %s name the same filter; give one of them, or the same value in both.", name1, name2))
	}
	if v1 != "" {
		return v1
	}
	return v2
}

// looksInteger reports whether s is an optional sign and decimal digits (an integer, maybe too large).
func looksInteger(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// GetPaymentReceipt returns one receipt.
//
// Errors: not_found.
func (ps *Payments) GetPaymentReceipt(ctx context.Context, m remit.MerchantAccount, receiptID string) (remit.PaymentReceipt, error) {
	return ps.DB.Read(ctx).GetReceipt(ctx, m.ID, receiptID)
}

// concurrentPayment answers a payment attempt another request recorded first (the store's
// duplicate attempt number) as a conflict on the invoice.
func concurrentPayment(err error, invoiceID string) error {
	if errors.Is(err, store.ErrDuplicate) {
		return remit.Errorf(remit.EConflict, "Invoice '%s' was paid or attempted by another request at the same time; read it again.", invoiceID).
			With("reason", "concurrent_payment")
	}
	return err
}
