package app

import (
	"context"
	"errors"
	"slices"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Previews (docs/quotes-and-subscriptions.md "Previews"): the upcoming invoice of a subscription
// and the effect of a change, answered by running the very code of the renewal and of the change
// in a store transaction that is always rolled back. So a preview is what the real action would
// make, to the cent, and writes nothing: no row, no event, no job; what the work registers to run
// after a commit (a charge) never runs, since nothing commits.

// errPreviewed rolls a preview's transaction back once its work succeeded.
var errPreviewed = errors.New("app: preview rolled back")

// previewRecord is what a preview's work emitted (the resources after it) and the proration it
// priced.
type previewRecord struct {
	events     []previewEvent
	prorations []remit.ProrationLine
}

type previewEvent struct {
	typ remit.EventType
	obj any
}

type previewKey struct{}

// notePreviewEvent records an event emitted inside a preview (emit calls it; nothing otherwise).
func notePreviewEvent(ctx context.Context, typ remit.EventType, obj any) {
	if rec, ok := ctx.Value(previewKey{}).(*previewRecord); ok {
		rec.events = append(rec.events, previewEvent{typ: typ, obj: obj})
	}
}

// inPreview reports whether ctx is a preview's: what leaves Remit for good (a tax provider's
// recorded transaction) is not done there.
func inPreview(ctx context.Context) bool {
	_, ok := ctx.Value(previewKey{}).(*previewRecord)
	return ok
}

// notePreviewProrations records the proration a change priced, inside a preview.
func notePreviewProrations(ctx context.Context, lines []remit.ProrationLine) {
	if rec, ok := ctx.Value(previewKey{}).(*previewRecord); ok {
		rec.prorations = append(rec.prorations, lines...)
	}
}

// preview runs fn in a transaction of its own that is rolled back whatever fn does, and returns
// what fn emitted. It refuses to run inside another transaction, whose work it would roll back.
func (co *core) preview(ctx context.Context, fn func(ctx context.Context, tx *store.Tx) error) (*previewRecord, error) {
	if store.InTx(ctx) {
		return nil, remit.Internal(errors.New("app: a preview runs in a transaction of its own"))
	}
	rec := &previewRecord{}
	ctx = context.WithValue(ctx, previewKey{}, rec)
	ctx, _ = withFollowUps(ctx) // collected, never run: nothing commits
	err := co.DB.RetryTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		*rec = previewRecord{}
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return errPreviewed
	})
	if errors.Is(err, errPreviewed) {
		return rec, nil
	}
	return nil, err
}

// invoices are the invoices the recorded events carry, each as the last event left it, in the
// order they first appeared; from is the index of the first event to look at.
func (rec *previewRecord) invoices(from int) []remit.Invoice {
	out := []remit.Invoice{}
	for _, ev := range rec.events[from:] {
		var inv remit.Invoice
		switch o := ev.obj.(type) {
		case remit.Invoice:
			inv = o
		case *remit.Invoice:
			inv = *o
		default:
			continue
		}
		if i := slices.IndexFunc(out, func(o remit.Invoice) bool { return o.InvoiceID == inv.InvoiceID }); i >= 0 {
			out[i] = inv
		} else {
			out = append(out, inv)
		}
	}
	return out
}

// creditNotes are the credit notes the recorded events created.
func (rec *previewRecord) creditNotes() []remit.CreditNote {
	out := []remit.CreditNote{}
	for _, ev := range rec.events {
		if cn, ok := ev.obj.(remit.CreditNote); ok && ev.typ == remit.EventCreditNoteCreated {
			out = append(out, cn)
		}
	}
	return out
}

// UpcomingInvoice answers the invoice that the next renewal of the customer's subscription would
// make (subscriptionId, or else the customer's subscription that renews first): the renewal run at
// the end of the current period on the store as it stands (usage so far), rolled back.
//
// Errors: not_found (customer, subscription of another customer, no subscription that renews,
// nothing to invoice), conflict (the subscription does not renew; details.currentState).
func (qs *Quotes) UpcomingInvoice(ctx context.Context, m remit.MerchantAccount, customerID, subscriptionID string) (remit.Invoice, error) {
	sub, err := qs.upcomingSubscription(ctx, m, customerID, subscriptionID)
	if err != nil {
		return remit.Invoice{}, err
	}
	var inv *remit.Invoice
	_, err = qs.preview(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		inv, err = qs.renewalPreview(ctx, tx, m, sub.SubscriptionID)
		return err
	})
	if err != nil {
		return remit.Invoice{}, err
	}
	if inv == nil {
		return remit.Invoice{}, remit.Errorf(remit.ENotFound, "Subscription '%s' has nothing to invoice at its next renewal.", sub.SubscriptionID).
			With("resource", "upcoming_invoice")
	}
	return *inv, nil
}

// upcomingSubscription is the subscription whose renewal UpcomingInvoice previews.
func (qs *Quotes) upcomingSubscription(ctx context.Context, m remit.MerchantAccount, customerID, subscriptionID string) (remit.Subscription, error) {
	q := qs.DB.Read(ctx)
	if _, err := q.GetCustomer(ctx, m.ID, customerID); err != nil {
		return remit.Subscription{}, err
	}
	if subscriptionID != "" {
		sub, err := q.GetSubscription(ctx, m.ID, subscriptionID, store.Unlocked)
		if err == nil && sub.CustomerID != customerID {
			err = remit.NotFound("subscription", subscriptionID, "subscriptionId")
		}
		if err != nil {
			return sub, remit.AtField(err, "subscriptionId")
		}
		if !sub.Status.Renews() {
			return sub, remit.Errorf(remit.EConflict, "Subscription '%s' is %s: it does not renew, so it has no upcoming invoice.", sub.SubscriptionID, sub.Status).
				With("currentState", sub.Status)
		}
		return sub, nil
	}
	subs, err := q.ListSubscriptions(ctx, m.ID, store.SubscriptionFilter{CustomerID: customerID, ListPage: store.ListPage{Limit: 100}})
	if err != nil {
		return remit.Subscription{}, err
	}
	var next *remit.Subscription
	for i := range subs {
		if s := &subs[i]; s.Status.Renews() && (next == nil || s.CurrentPeriodEnd.Before(next.CurrentPeriodEnd)) {
			next = s
		}
	}
	if next == nil {
		return remit.Subscription{}, remit.Errorf(remit.ENotFound, "Customer '%s' has no subscription that renews.", customerID).
			With("resource", "subscription")
	}
	return *next, nil
}

// renewalPreview runs the renewal of the subscription at the end of its current period inside a
// preview's transaction and returns the invoice it made (nil when it made none).
func (qs *Quotes) renewalPreview(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, subscriptionID string) (*remit.Invoice, error) {
	sub, err := tx.GetSubscription(ctx, m.ID, subscriptionID, store.Locked)
	if err != nil {
		return nil, err
	}
	if !sub.Status.Renews() {
		return nil, nil
	}
	rec, _ := ctx.Value(previewKey{}).(*previewRecord)
	from := len(rec.events)
	if err := qs.renew(ctx, tx, m, sub, sub.CurrentPeriodEnd); err != nil {
		return nil, err
	}
	for _, inv := range rec.invoices(from) {
		if inv.SubscriptionID != nil && *inv.SubscriptionID == sub.SubscriptionID {
			return &inv, nil
		}
	}
	return nil, nil
}

// PreviewChange answers what ChangeSubscription with in would make now, without making it: the
// change run and rolled back (preview), then the next renewal after it.
//
// Errors: those of ChangeSubscription.
func (qs *Quotes) PreviewChange(ctx context.Context, m remit.MerchantAccount, id string, in remit.ChangeInput) (remit.SubscriptionChangePreview, error) {
	out := remit.SubscriptionChangePreview{Object: "subscription_change_preview"}
	_, err := qs.preview(ctx, func(ctx context.Context, tx *store.Tx) error {
		sub, err := qs.ChangeSubscription(ctx, m, id, in)
		if err != nil {
			return err
		}
		out.Subscription = sub
		rec, _ := ctx.Value(previewKey{}).(*previewRecord)
		out.Prorations = remit.ProrationPreviews(rec.prorations)
		out.Invoices, out.CreditNotes = rec.invoices(0), rec.creditNotes()
		out.UpcomingInvoice, err = qs.renewalPreview(ctx, tx, m, id)
		return err
	})
	if err != nil {
		return remit.SubscriptionChangePreview{}, err
	}
	return out, nil
}
