package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Dunning (docs/dunning.md): an automatic charge (at finalization, or a retry) that fails is
// retried on the merchant clock by the billing account's policy (its own `dunning`, or the
// deployment's REMIT_DUNNING_SCHEDULE): each retry is a job due that many days after the first
// failure, and runs as a new payment attempt (source dunning). When the schedule is exhausted the
// final action runs: mark_uncollectible (open → uncollectible), leave_open, or
// cancel_subscription (uncollectible, and the invoice's subscription canceled now). A retry never
// charges an invoice that is no longer open, or one with an attempt in progress; a payment made
// another way stops the schedule (MarkInvoicePaid). A new default payment method attached through
// the portal retries the billing account's open invoices at once (retryOpenInvoices).

const jobDunningRetry = remit.JobDunningRetry

// dunningJob names the invoice and the retry number a retry job is for: a job whose retry is no
// longer the invoice's next one (the invoice moved on) does nothing.
type dunningJob struct {
	InvoiceID string `json:"invoiceId"`
	Retry     int64  `json:"retry"`
}

// dunningPolicy is the invoice's billing account's policy, or the deployment's.
func (ps *Payments) dunningPolicy(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice) (remit.Dunning, error) {
	ba, err := tx.GetBillingAccount(ctx, m.ID, inv.BillingAccountID, store.Unlocked)
	if err != nil {
		return remit.Dunning{}, err
	}
	return ba.Dunning.OrDefault(ps.Config.Dunning), nil
}

// dunningAfterFailure moves a charge_automatically invoice along its schedule after an automatic
// attempt failed (the caller stores the invoice): the next retry is scheduled, or the schedule is
// exhausted and the returned final action is to run once the failure is recorded.
func (ps *Payments) dunningAfterFailure(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, p remit.Payment, now time.Time) (func() error, error) {
	none := func() error { return nil }
	if inv.CollectionMethod != remit.ChargeAutomatically || (p.Source != remit.SourceFinalize && p.Source != remit.SourceDunning) ||
		inv.DunningStatus == remit.DunningExhausted || !inv.Status.Allows(remit.ActionDun) {
		return none, nil
	}
	policy, err := ps.dunningPolicy(ctx, tx, m, *inv)
	if err != nil {
		return none, err
	}
	if inv.DunningStartedAt == nil {
		inv.DunningStartedAt = &now
	}
	if at, ok := policy.NextRetry(*inv.DunningStartedAt, inv.DunningRetries); ok {
		// A retry already overdue (the clock jumped past it) is due at once: the scheduler and a
		// clock advance run past-due jobs first.
		inv.NextPaymentAttemptAt, inv.DunningStatus = &at, remit.DunningRetrying
		return none, ps.Schedule(ctx, tx, m.ID, jobDunningRetry, at, dunningJob{InvoiceID: inv.InvoiceID, Retry: inv.DunningRetries})
	}
	inv.NextPaymentAttemptAt, inv.DunningStatus = nil, remit.DunningExhausted
	return func() error { return ps.finalAction(ctx, tx, m, inv, policy.FinalAction, now) }, nil
}

// finalAction runs what the policy says when its schedule is exhausted.
func (ps *Payments) finalAction(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, action string, now time.Time) error {
	if action == remit.FinalLeaveOpen {
		return nil
	}
	inv.Status, inv.UpdatedAt = remit.InvoiceUncollectible, now
	if err := tx.UpdateInvoice(ctx, *inv, false); err != nil {
		return err
	}
	if err := ps.Emit(ctx, tx, scopeOf(m), now, remit.EventInvoiceMarkedUncollectible, inv.InvoiceID, *inv); err != nil {
		return err
	}
	if action != remit.FinalCancelSubscription || inv.SubscriptionID == nil {
		return nil
	}
	return ps.cancelForDunning(ctx, tx, m, *inv.SubscriptionID, now)
}

// cancelForDunning ends the invoice's subscription now, without proration (nothing of the unpaid
// period was paid), unless it has ended already.
func (ps *Payments) cancelForDunning(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, subscriptionID string, now time.Time) error {
	sub, err := tx.GetSubscription(ctx, m.ID, subscriptionID, store.Locked)
	if err != nil || !sub.Status.Allows(remit.ActionCancel) {
		return err
	}
	sub.Status, sub.CanceledAt, sub.CancelAt, sub.UpdatedAt = remit.SubscriptionCanceled, &now, nil, now
	sub.PendingItems, sub.PendingCouponIDs, sub.PendingQuoteID = nil, nil, nil
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	return ps.Emit(ctx, tx, scopeOf(m), now, remit.EventSubscriptionCanceled, sub.SubscriptionID, sub)
}

// runDunningRetry is a retry job: a new attempt on the invoice's default payment method, if the
// invoice is still open, this is still its next retry and no attempt is in progress.
func (ps *Payments) runDunningRetry(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	m, p, inv, found, err := jobTarget(ctx, tx, scope, job, func(m remit.MerchantAccount, p dunningJob) (remit.Invoice, error) {
		return tx.GetInvoice(ctx, m.ID, p.InvoiceID, store.Locked)
	})
	if !found || !inv.Status.Allows(remit.ActionDun) || inv.DunningStatus != remit.DunningRetrying || inv.DunningRetries != p.Retry {
		return err
	}
	inv.DunningRetries++
	inv.NextPaymentAttemptAt = nil
	return ps.retryCharge(ctx, tx, m, &inv, remit.SourceDunning, micro(at))
}

// retryCharge opens an attempt on the invoice's default payment method, unless one is in progress
// or there is no method or processor; the invoice is stored either way.
func (ps *Payments) retryCharge(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, source string, now time.Time) error {
	proc := ps.processorFor(m)
	pm, err := ps.defaultPaymentMethod(ctx, tx, m, *inv)
	if err != nil {
		return err
	}
	if open := ps.noOpenAttempt(ctx, tx, m, *inv); open != nil || proc == nil || pm == nil {
		inv.UpdatedAt = now
		return tx.UpdateInvoice(ctx, *inv, false)
	}
	return ps.openAttempt(ctx, tx, m, inv, proc, *pm, source, now)
}

// retryOpenInvoices charges, at once, every open invoice of a billing account whose automatic
// charge failed, after the customer attached a new default payment method through the portal.
func (ps *Payments) retryOpenInvoices(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, billingAccountID string, now time.Time) error {
	ids, err := tx.ListDunningInvoices(ctx, m.ID, billingAccountID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		inv, err := tx.GetInvoice(ctx, m.ID, id, store.Locked)
		if err != nil {
			return err
		}
		if !inv.Status.Allows(remit.ActionDun) || inv.AmountRemaining <= 0 {
			continue
		}
		if err := ps.retryCharge(ctx, tx, m, &inv, remit.SourceDunning, now); err != nil {
			return err
		}
	}
	return nil
}
