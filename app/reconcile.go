package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// The reconciler (docs/payments.md "The reconciler"): an attempt left processing — the server
// crashed between recording it and recording its outcome, the processor did not answer within
// REMIT_PROCESSOR_TIMEOUT, or it answered "processing" — is finished by asking the processor what
// became of the charge made for the attempt's idempotency reference. serve runs it every
// REMIT_RECONCILE_INTERVAL, and `remit reconcile` once. An attempt is looked at once its
// reconcile_after (real time: the processor timeout after it was sent) has passed; claiming it
// moves that time on by the timeout again, a lease, so that several servers on one PostgreSQL ask
// about one attempt once. Recording the outcome is conditional on the attempt still being open, so
// whatever records first (the request's own follow-up, a webhook, the reconciler) wins and the
// others change nothing.

// reconcileBatch bounds the attempts one pass claims at a time.
const reconcileBatch = 100

// Reconcile finishes the attempts left processing and sends the refunds left pending whose time
// has come (refunds.go), and returns how many it looked at.
func (ps *Payments) Reconcile(ctx context.Context) (int, error) {
	n, err := ps.reconcilePayments(ctx)
	if err != nil {
		return n, err
	}
	r, err := ps.reconcileRefunds(ctx)
	return n + r, err
}

// reconcilePayments finishes the attempts left processing whose time has come.
func (ps *Payments) reconcilePayments(ctx context.Context) (int, error) {
	return reconcileClaimed(ctx, ps, store.Q.AnyOpenPaymentDue, (*store.Tx).ClaimOpenPayments, func(p remit.Payment) error {
		if err := ps.reconcileOne(ctx, p); err != nil {
			ps.Log.Error("reconcile a payment", "paymentId", p.PaymentID, "err", err.Error())
		}
		return nil
	})
}

// reconcileClaimed claims due rows in batches (claim leases them for one processor timeout, in a
// transaction of its own) and hands each to do, until a batch comes back short; it returns how
// many it claimed. An error of do stops it. A read first (anyDue) keeps an idle pass from taking
// the store's writer.
func reconcileClaimed[T any](ctx context.Context, ps *Payments, anyDue func(store.Q, context.Context, time.Time) (bool, error),
	claim func(*store.Tx, context.Context, time.Time, time.Time, int) ([]T, error), do func(T) error) (int, error) {
	seen := 0
	for {
		now := ps.Clock.Now()
		if due, err := anyDue(ps.DB.Read(ctx), ctx, now); err != nil || !due {
			return seen, err
		}
		claimed, err := inTx(ctx, ps.DB, func(ctx context.Context, tx *store.Tx) ([]T, error) {
			return claim(tx, ctx, now, now.Add(ps.Config.ProcessorTimeout), reconcileBatch)
		})
		if err != nil {
			return seen, err
		}
		for _, c := range claimed {
			if err := do(c); err != nil {
				return seen, err
			}
		}
		seen += len(claimed)
		if len(claimed) < reconcileBatch {
			return seen, nil
		}
	}
}

// reconcileOne asks the processor about one claimed attempt and records what it knows.
func (ps *Payments) reconcileOne(ctx context.Context, p remit.Payment) error {
	m, err := ps.DB.Read(ctx).GetMerchantAccount(ctx, p.MerchantAccountID, store.Unlocked)
	if err != nil {
		return err
	}
	proc := ps.processorFor(m)
	if proc == nil {
		return nil // the connector is gone; the attempt waits for one
	}
	cctx, cancel := context.WithTimeout(ctx, ps.Config.ProcessorTimeout)
	cctx, span := processorSpan(cctx, "processor.lookup", proc, p.PaymentID)
	res, found, err := proc.Lookup(cctx, p.IdempotencyRef)
	telemetry.End(span, err)
	cancel()
	if err != nil {
		return err // asked again after the lease
	}
	if !found {
		// The charge never reached the processor (the server stopped before calling it): nothing
		// was taken. The attempt fails; paying the invoice again makes a new one.
		res = processor.ChargeResult{Status: processor.Failed, FailureCode: "processing_error",
			FailureMessage: "The payment processor never received this charge, so nothing was taken. Pay the invoice again to make a new attempt."}
	}
	if !res.Final() && res.Status != processor.RequiresAction {
		return nil // still processing on the processor's side: asked again after the lease
	}
	_, err = ps.recordOutcome(ctx, m, p, res)
	return err
}

// RunReconciler reconciles every interval until ctx ends (serve).
func (ps *Payments) RunReconciler(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := ps.Reconcile(ctx); err != nil && ctx.Err() == nil {
			ps.Log.Error("reconcile payments", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// AuthenticatePayment is the customer portal's PUT /customer-portal/payments/{paymentId}/authenticate
// with the payment's hosted token (its nextAction.url): the customer completes (outcome succeed) or
// fails (fail) the sandbox's 3-D Secure step of a requires_action payment, and the outcome is
// recorded as the processor then answers. It answers the invoice.
//
// Errors: forbidden (a token of another resource), not_found, conflict (the payment does not wait
// for the customer; details.currentState), validation_failure (outcome).
func (ps *Payments) AuthenticatePayment(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, paymentID, outcome string) (remit.Invoice, error) {
	if err := AuthorizeHostedToken(tok, remit.HostedPayment, paymentID); err != nil {
		return remit.Invoice{}, err
	}
	if outcome != "succeed" && outcome != "fail" {
		return remit.Invoice{}, remit.Invalid(remit.FieldError{Field: "outcome", Location: remit.InQuery, Reason: "invalid_enum",
			Message: "outcome must be succeed or fail."})
	}
	p, err := ps.DB.Read(ctx).GetPayment(ctx, m.ID, paymentID, store.Unlocked)
	if err != nil {
		return remit.Invoice{}, err
	}
	if p.Status != remit.PaymentRequiresAction || m.Environment != remit.Sandbox {
		return remit.Invoice{}, remit.StateConflict("payment", p.PaymentID, p.Status, "authenticated (only a requires_action sandbox payment can be)")
	}
	if err := ps.after(ctx, func(ctx context.Context) (any, error) {
		res, err := ps.sandbox.Authenticate(ctx, p.IdempotencyRef, outcome == "succeed")
		if err != nil {
			return nil, err
		}
		return ps.recordOutcome(ctx, m, p, res)
	}); err != nil {
		return remit.Invoice{}, err
	}
	return ps.DB.Read(ctx).GetInvoice(ctx, m.ID, p.InvoiceID, store.Unlocked)
}

// GetPayment returns one payment attempt.
//
// Errors: not_found.
func (ps *Payments) GetPayment(ctx context.Context, m remit.MerchantAccount, paymentID string) (remit.Payment, error) {
	return ps.DB.Read(ctx).GetPayment(ctx, m.ID, paymentID, store.Unlocked)
}

// ListPayments lists the merchant account's payment attempts newest first, filtered by invoice,
// customer and status, paged by cursor.
//
// Errors: validation_failure (status, limit, cursor).
func (ps *Payments) ListPayments(ctx context.Context, m remit.MerchantAccount, in remit.PaymentQuery) (remit.List[remit.Payment], error) {
	return listByStatus(ctx, ps.core, m, "payments", in.ListQuery, in.Status, remit.PaymentStatuses, func(page store.ListPage) ([]remit.Payment, error) {
		return ps.DB.Read(ctx).ListPayments(ctx, m.ID, store.PaymentFilter{InvoiceID: in.InvoiceID, CustomerID: in.CustomerID, Status: in.Status, ListPage: page})
	})
}

// StripeWebhook is POST /processor-webhooks/stripe (docs/payments.md "Stripe"): a verified
// PaymentIntent event of an attempt Remit made through Stripe records its outcome, if the attempt
// is still open, as the reconciler would. An event that is not Remit's, of another object, of an
// unknown or settled attempt, or for another connected account is acknowledged and ignored, as
// Stripe's guidance asks (2xx, so that Stripe stops sending it).
//
// Errors: bad_request (a missing or wrong signature, or no REMIT_STRIPE_WEBHOOK_SECRET to verify it
// with: nothing is recorded).
func (ps *Payments) StripeWebhook(ctx context.Context, payload []byte, signature string) (remit.ProcessorWebhookAck, error) {
	ack := remit.ProcessorWebhookAck{Object: "processor_webhook", Received: true}
	secret := ps.Config.StripeWebhookSecret
	if secret == "" {
		return remit.ProcessorWebhookAck{}, remit.Errorf(remit.EBadRequest, "This deployment has no REMIT_STRIPE_WEBHOOK_SECRET (the endpoint's signing secret from Stripe's dashboard), so no Stripe signature can be verified; nothing was recorded.")
	}
	ev, err := processor.ParseStripeWebhook(payload, signature, secret)
	if err != nil {
		return remit.ProcessorWebhookAck{}, remit.Errorf(remit.EBadRequest, "The Stripe-Signature header does not verify this body with the endpoint's signing secret (or is missing, or too old); nothing was recorded.")
	}
	if !ev.Relevant {
		return ack, nil
	}
	p, found, err := ps.DB.Read(ctx).FindPayment(ctx, ev.Ref)
	if err != nil || !found || p.Processor != "stripe" || !p.Status.Open() {
		return ack, err
	}
	m, err := ps.DB.Read(ctx).GetMerchantAccount(ctx, p.MerchantAccountID, store.Unlocked)
	if err != nil {
		return ack, err
	}
	if ev.Account != m.ProcessorAccountID {
		return ack, nil // an event of another connected account than the one this merchant charges on
	}
	if !ev.Result.Final() && ev.Result.Status != processor.RequiresAction {
		return ack, nil
	}
	if _, err := ps.recordOutcome(ctx, m, p, ev.Result); err != nil {
		return ack, err
	}
	ack.Handled = true
	return ack, nil
}
