package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/mail"
	"github.com/remit-billing/remit/store"
)

// Customer e-mail (docs/email.md). A message is decided, written and recorded in the transaction
// of the change that causes it: Emit runs the reactions registered here for the event types that
// make mail (invoice.finalized, payment_receipt.created, invoice.payment_failed,
// payment.requires_action, credit_note.created) and the renewal notice job records its own. So a
// message exists exactly when its change committed; the e-mail worker (emailworker.go) sends it
// after. Without an SMTP server (Config.Mailer nil), or for a customer without an address, the
// message is recorded skipped with the reason, so the sandbox shows what would have gone out.

// emailSetupTTL is how long the setup session linked from a payment.failed message stays open:
// long enough for a customer to read the e-mail days later (a portal session lives an hour).
const emailSetupTTL = 7 * 24 * time.Hour

// jobRenewalNotice records the subscription.renewal_upcoming message (RenewalNoticeAt).
const jobRenewalNotice = remit.JobRenewalNotice

// reaction is work an event type causes in the event's own transaction (registered with react).
type reaction func(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, obj any) error

// react runs fn whenever an event of type typ is emitted, in the emitting transaction.
func (co *core) react(typ remit.EventType, fn reaction) {
	co.reactions[typ] = append(co.reactions[typ], fn)
}

// registerReactions installs the e-mails' event reactions and the renewal notice job.
func (es *Emails) registerReactions() {
	// Most finalized invoices and receipts are not mailed: those cost no read (reactToIf).
	es.react(remit.EventInvoiceFinalized, reactToIf(func(inv remit.Invoice) bool { return remit.MailsInvoice(inv.CollectionMethod) },
		es.invoiceFinalized))
	es.react(remit.EventPaymentReceiptCreated, reactToIf(func(r remit.PaymentReceipt) bool { return remit.MailsReceipt(r.PaymentMethod.Type) },
		es.paymentSucceeded))
	es.react(remit.EventInvoicePaymentFailed, reactTo(es.paymentFailed))
	es.react(remit.EventPaymentRequiresAction, reactTo(es.actionRequired))
	es.react(remit.EventCreditNoteCreated, reactTo(es.creditNoteIssued))
	es.RegisterJob(jobRenewalNotice, es.runRenewalNotice)
}

// reactionResource is the resource an event carries, as a T: the emitted value or a pointer to it,
// or another shape of it (a test's map) through its JSON. who names the reaction in the error.
func reactionResource[T any](obj any, who string) (T, error) {
	var v T
	switch o := obj.(type) {
	case T:
		return o, nil
	case *T:
		return *o, nil
	}
	b, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return v, remit.Internal(fmt.Errorf("app: %s got %T: %w", who, obj, err))
	}
	return v, nil
}

// reactTo adapts a reaction to one resource type: Emit passes the resource as a value or a pointer.
func reactTo[T any](fn func(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, v T, now time.Time) error) reaction {
	return reactToIf(nil, fn)
}

// reactToIf is reactTo for a reaction only the resources wants accepts need: for the others it
// reads nothing (an emitting transaction may hold a merchant account's hot rows).
func reactToIf[T any](wants func(T) bool, fn func(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, v T, now time.Time) error) reaction {
	return func(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, obj any) error {
		v, err := reactionResource[T](obj, "an e-mail reaction")
		if err != nil {
			return err
		}
		if wants != nil && !wants(v) {
			return nil
		}
		m, err := tx.GetMerchantAccount(ctx, scope.MerchantAccountID, store.Unlocked)
		if err != nil {
			return err
		}
		return fn(ctx, tx, m, v, now)
	}
}

// invoiceFinalized mails a send_invoice account's finalized invoice: its PDF and its paymentUrl.
func (es *Emails) invoiceFinalized(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, now time.Time) error {
	f := mail.Facts{Type: remit.EmailInvoiceFinalized, InvoiceNumber: deref(inv.Number), Amount: inv.AmountRemaining,
		Currency: inv.Currency, Date: now}
	if inv.PaymentURL != nil {
		f.ActionURL = HostedInvoiceURL(*inv.PaymentURL)
	}
	att := &remit.EmailFile{Kind: remit.AttachInvoice, DocumentID: inv.InvoiceID, FileName: deref(inv.Number) + ".pdf"}
	return es.record(ctx, tx, m, inv.CustomerID, &inv.InvoiceID, att, f, now)
}

// paymentSucceeded mails the receipt of a card payment, its PDF attached.
func (es *Emails) paymentSucceeded(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, r remit.PaymentReceipt, now time.Time) error {
	f := mail.Facts{Type: remit.EmailPaymentSucceeded, InvoiceNumber: deref(r.InvoiceNumber), ReceiptNumber: r.ReceiptNumber,
		Amount: r.Amount, Currency: r.Currency, Date: r.CreatedAt, PaymentMethod: CardLabel(deref(r.PaymentMethod.Brand), deref(r.PaymentMethod.Last4))}
	att := &remit.EmailFile{Kind: remit.AttachReceipt, DocumentID: r.ReceiptID, FileName: r.ReceiptNumber + ".pdf"}
	return es.record(ctx, tx, m, r.CustomerID, &r.InvoiceID, att, f, now)
}

// paymentFailed mails a declined charge: when the next retry is, a link to a setup session that
// saves a new default method (which retries the account's open invoices at once, docs/dunning.md)
// and the hosted invoice page.
func (es *Emails) paymentFailed(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, now time.Time) error {
	f := mail.Facts{Type: remit.EmailPaymentFailed, InvoiceNumber: deref(inv.Number), Amount: inv.AmountRemaining, Currency: inv.Currency,
		Date: now, NextAttempt: inv.NextPaymentAttemptAt}
	if inv.PaymentURL != nil && inv.Status.Allows(remit.ActionPay) {
		f.InvoiceURL = HostedInvoiceURL(*inv.PaymentURL)
	}
	c, err := tx.GetCustomer(ctx, m.ID, inv.CustomerID)
	if err != nil {
		return err
	}
	if c.Email != nil && inv.CollectionMethod == remit.ChargeAutomatically && inv.Status.Payable() {
		ba := inv.BillingAccountID
		s, err := es.catalog.openSetupSession(ctx, tx, m, c.CustomerID, remit.SetupSessionInput{BillingAccountID: &ba, SetAsDefault: true},
			emailSetupTTL, now)
		if err != nil {
			return err
		}
		f.ActionURL = s.URL
	}
	return es.recordFor(ctx, tx, m, c, &inv.InvoiceID, nil, f, now)
}

// actionRequired mails the link where the customer authenticates a charge (3-D Secure).
func (es *Emails) actionRequired(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, p remit.Payment, now time.Time) error {
	inv, err := tx.GetInvoice(ctx, m.ID, p.InvoiceID, store.Unlocked)
	if err != nil {
		return err
	}
	f := mail.Facts{Type: remit.EmailPaymentActionRequired, InvoiceNumber: deref(inv.Number), Amount: p.Amount, Currency: p.Currency, Date: now}
	if p.NextAction != nil {
		f.ActionURL = p.NextAction.URL
	}
	return es.record(ctx, tx, m, p.CustomerID, &p.InvoiceID, nil, f, now)
}

// creditNoteIssued mails a credit note, its PDF attached.
func (es *Emails) creditNoteIssued(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, cn remit.CreditNote, now time.Time) error {
	inv, err := tx.GetInvoice(ctx, m.ID, cn.InvoiceID, store.Unlocked)
	if err != nil {
		return err
	}
	f := mail.Facts{Type: remit.EmailCreditNoteIssued, CreditNoteNumber: cn.Number, InvoiceNumber: deref(inv.Number), Amount: cn.Total,
		Currency: cn.Currency, Date: cn.CreatedAt}
	att := &remit.EmailFile{Kind: remit.AttachCreditNote, DocumentID: cn.CreditNoteID, FileName: cn.Number + ".pdf"}
	return es.record(ctx, tx, m, cn.CustomerID, &cn.InvoiceID, att, f, now)
}

// renewalJob is the renewal notice job's payload: the renewal it announces.
type renewalNoticeJob struct {
	SubscriptionID string    `json:"subscriptionId"`
	RenewsAt       time.Time `json:"renewsAt"`
}

// scheduleRenewalNotice schedules the subscription.renewal_upcoming message of the renewal that
// ends the subscription's current period (none for a period of a week or less).
func (es *Emails) scheduleRenewalNotice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub remit.Subscription) error {
	at, ok := remit.RenewalNoticeAt(sub.CurrentPeriodStart, sub.CurrentPeriodEnd)
	if !ok {
		return nil
	}
	return es.Schedule(ctx, tx, scopeOf(m), jobRenewalNotice, at, renewalNoticeJob{SubscriptionID: sub.SubscriptionID, RenewsAt: sub.CurrentPeriodEnd})
}

// runRenewalNotice records the renewal notice if the subscription will still renew then (active or
// trialing, not set to cancel, the same period).
func (es *Emails) runRenewalNotice(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	m, p, sub, found, err := jobTarget(ctx, tx, scope, job, func(m remit.MerchantAccount, p renewalNoticeJob) (remit.Subscription, error) {
		return tx.GetSubscription(ctx, m.ID, p.SubscriptionID, store.Unlocked)
	})
	if !found || !remit.RenewalNoticeHolds(sub, micro(p.RenewsAt)) {
		return err
	}
	items := sub.Items
	if sub.PendingItems != nil {
		items = sub.PendingItems
	}
	f := mail.Facts{Type: remit.EmailSubscriptionRenewalSoon, Amount: remit.RecurringAmount(items), Currency: sub.Currency,
		Date: sub.CurrentPeriodEnd, Period: [2]time.Time{sub.CurrentPeriodEnd, remit.NextPeriodEnd(sub)}}
	return es.record(ctx, tx, m, sub.CustomerID, nil, nil, f, micro(at))
}

// record loads the customer and records the message (recordFor).
func (es *Emails) record(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, customerID string, invoiceID *string,
	att *remit.EmailFile, f mail.Facts, now time.Time) error {
	c, err := tx.GetCustomer(ctx, m.ID, customerID)
	if err != nil {
		return err
	}
	return es.recordFor(ctx, tx, m, c, invoiceID, att, f, now)
}

// recordFor writes the message of f to customer c in c's language and records it in tx: queued
// and due at once, or skipped (no address, no SMTP server) with the reason.
func (es *Emails) recordFor(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, c remit.Customer, invoiceID *string,
	att *remit.EmailFile, f mail.Facts, now time.Time) error {
	f.Locale, f.Merchant, f.Customer, f.HasAttachment = c.PreferredLocale, m.DisplayName, c.Name, att != nil
	msg, err := mail.Compose(f)
	if err != nil {
		return remit.Internal(err)
	}
	e := remit.Email{
		Object: "email", EmailID: remit.NewID("em"), Type: f.Type, To: c.Email, Subject: msg.Subject, Locale: f.Locale,
		Status: remit.EmailQueued, CustomerID: c.CustomerID, InvoiceID: invoiceID, Attachment: att, Environment: m.Environment,
		MerchantAccountID: m.ID, CreatedAt: micro(now), TextBody: msg.Text, HTMLBody: msg.HTML, FromName: m.DisplayName,
	}
	e.Status, e.StatusReason = remit.EmailDelivery(c.Email, es.Config.Mailer != nil)
	if e.Status == remit.EmailQueued {
		due := micro(es.Clock.Now())
		e.NextAttemptAt = &due
		tx.AfterCommit(es.wakeEmails)
	}
	return tx.InsertEmail(ctx, e)
}

// GetEmail returns a recorded message with its bodies.
//
// Errors: not_found.
func (es *Emails) GetEmail(ctx context.Context, m remit.MerchantAccount, emailID string) (remit.Email, error) {
	return es.DB.Read(ctx).GetEmail(ctx, m.ID, emailID)
}

// ListEmails pages the e-mail log newest first, filtered by customer, invoice and type (the
// contract checks the type), without the bodies.
//
// Errors: validation_failure (limit, cursor).
func (es *Emails) ListEmails(ctx context.Context, m remit.MerchantAccount, in remit.EmailQuery) (remit.List[remit.Email], error) {
	return listPage(ctx, es.core, scopeOf(m), "emails", in.ListQuery, nil, func(page store.ListPage) ([]remit.Email, error) {
		return es.DB.Read(ctx).ListEmails(ctx, m.ID, store.EmailFilter{CustomerID: in.CustomerID, InvoiceID: in.InvoiceID, Type: in.Type, ListPage: page})
	})
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
