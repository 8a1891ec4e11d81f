package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The general ledger (docs/ledger.md). Every money movement emits its event in its own
// transaction; the reactions registered here post what the movement's posting rule (package
// remit, journal_rules.go) returns, through one helper (post), in that same transaction. So an
// entry exists exactly when its movement committed. Not the customers' prepaid balance (ledger.go).

// registerReactions installs one posting per money movement, and the daily recognition job.
func (j *Journal) registerReactions() {
	for typ, fn := range j.postings() {
		j.react(typ, fn)
	}
	j.RegisterJob(jobRecognizeRevenue, j.runRecognition)
}

// postings is the posting of each money movement's event type (the backfill replays them).
func (j *Journal) postings() map[remit.EventType]reaction {
	return map[remit.EventType]reaction{
		remit.EventInvoiceFinalized:       postOn(j.invoiceFinalized),
		remit.EventCustomerBalanceApplied: postOn(j.prepaidApplied),
		remit.EventCustomerBalanceExpired: postOn(j.prepaidExpired),
		remit.EventPaymentSucceeded:       postOn(j.paymentSucceeded),
		remit.EventPayoutCreated: postOn(func(ctx context.Context, tx *store.Tx, scope remit.Scope, po remit.Payout, now time.Time) error {
			e, ok := remit.PostPayout(po)
			return j.post(ctx, tx, scope, e, ok)
		}),
		remit.EventCreditNoteCreated: postOn(j.creditNoteCreated),
		remit.EventRefundFailed: postOn(func(ctx context.Context, tx *store.Tx, scope remit.Scope, r remit.Refund, now time.Time) error {
			e, ok := remit.PostRefundFailed(r, now)
			return j.post(ctx, tx, scope, e, ok)
		}),
		remit.EventInvoiceMarkedUncollectible: postOn(j.invoiceUncollectible),
		remit.EventInvoiceVoided:              postOn(j.invoiceVoided),
	}
}

// postOn adapts a posting to the resource type its event carries (as a value or a pointer, or
// another shape of it through its JSON).
func postOn[T any](fn func(ctx context.Context, tx *store.Tx, scope remit.Scope, v T, now time.Time) error) reaction {
	return func(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, obj any) error {
		v, err := reactionResource[T](obj, "a journal posting")
		if err != nil {
			return err
		}
		return fn(ctx, tx, scope, v, now)
	}
}

// post stores the entry a posting rule returned (when it returned one) in tx: every posting goes
// through here. An unbalanced entry is a bug of the rule and fails the movement's transaction.
// A movement posts once: a second posting of its source is dropped (the backfill relies on it).
func (j *Journal) post(ctx context.Context, tx *store.Tx, scope remit.Scope, e remit.JournalEntry, ok bool) error {
	if !ok {
		return nil
	}
	e.EntryID, e.MerchantAccountID, e.Environment, e.PostedAt = remit.NewID("je"), scope.MerchantAccountID, scope.Environment, micro(e.PostedAt)
	if err := e.CheckBalanced(); err != nil {
		return err
	}
	posted, err := tx.InsertJournalEntry(ctx, e)
	if err == nil && !posted && e.Source.Type == remit.SourceRevenueRecognized {
		// Its schedules moved in this transaction: an entry dropped would leave deferred revenue wrong.
		return remit.Internal(fmt.Errorf("app: recognition %s posted twice", e.Source.ID))
	}
	return err
}

func (j *Journal) invoiceFinalized(ctx context.Context, tx *store.Tx, scope remit.Scope, inv remit.Invoice, now time.Time) error {
	at := now
	if inv.FinalizedAt != nil {
		at = *inv.FinalizedAt
	}
	e, schedules, ok := remit.PostInvoiceFinalized(inv, at)
	for _, s := range schedules {
		if err := tx.UpsertRevenueSchedule(ctx, scope.MerchantAccountID, s); err != nil {
			return err
		}
	}
	if len(schedules) > 0 {
		if err := j.scheduleRecognition(ctx, tx, scope, at); err != nil {
			return err
		}
	}
	return j.post(ctx, tx, scope, e, ok)
}

// lotType is the type of the prepaid lot an application or expiry took from.
func lotType(ctx context.Context, tx *store.Tx, scope remit.Scope, e remit.BalanceEntry) (string, error) {
	if e.SourceEntryID == nil {
		return "", remit.Internal(fmt.Errorf("app: balance entry %s names no lot", e.EntryID))
	}
	lot, err := tx.GetBalanceEntry(ctx, scope.MerchantAccountID, e.CustomerID, *e.SourceEntryID, store.Unlocked)
	return lot.Type, err
}

func (j *Journal) prepaidApplied(ctx context.Context, tx *store.Tx, scope remit.Scope, b remit.BalanceEntry, now time.Time) error {
	typ, err := lotType(ctx, tx, scope, b)
	if err != nil {
		return err
	}
	e, ok := remit.PostPrepaidApplied(b, typ)
	return j.post(ctx, tx, scope, e, ok)
}

func (j *Journal) prepaidExpired(ctx context.Context, tx *store.Tx, scope remit.Scope, b remit.BalanceEntry, now time.Time) error {
	typ, err := lotType(ctx, tx, scope, b)
	if err != nil {
		return err
	}
	e, ok := remit.PostPrepaidExpired(b, typ)
	return j.post(ctx, tx, scope, e, ok)
}

func (j *Journal) paymentSucceeded(ctx context.Context, tx *store.Tx, scope remit.Scope, p remit.Payment, now time.Time) error {
	writtenOff, err := tx.InvoiceAccountBalance(ctx, scope.MerchantAccountID, p.InvoiceID, remit.AccountBadDebt)
	if err != nil {
		return err
	}
	e, ok := remit.PostPaymentSucceeded(p, writtenOff, now)
	return j.post(ctx, tx, scope, e, ok)
}

func (j *Journal) creditNoteCreated(ctx context.Context, tx *store.Tx, scope remit.Scope, cn remit.CreditNote, now time.Time) error {
	writtenOff, err := tx.InvoiceAccountBalance(ctx, scope.MerchantAccountID, cn.InvoiceID, remit.AccountBadDebt)
	if err != nil {
		return err
	}
	schedules, err := j.recognizedSchedules(ctx, tx, scope, cn.InvoiceID, now, cn.CreditNoteID)
	if err != nil {
		return err
	}
	deferred, changed := remit.CreditDeferred(cn, schedules)
	for _, s := range changed {
		if err := tx.UpsertRevenueSchedule(ctx, scope.MerchantAccountID, s); err != nil {
			return err
		}
	}
	e, ok := remit.PostCreditNote(cn, writtenOff, deferred)
	return j.post(ctx, tx, scope, e, ok)
}

func (j *Journal) invoiceUncollectible(ctx context.Context, tx *store.Tx, scope remit.Scope, inv remit.Invoice, now time.Time) error {
	receivable, err := tx.InvoiceAccountBalance(ctx, scope.MerchantAccountID, inv.InvoiceID, remit.AccountReceivable)
	if err != nil {
		return err
	}
	e, ok := remit.PostInvoiceUncollectible(inv, receivable, now)
	return j.post(ctx, tx, scope, e, ok)
}

func (j *Journal) invoiceVoided(ctx context.Context, tx *store.Tx, scope remit.Scope, inv remit.Invoice, now time.Time) error {
	receivable, err := tx.InvoiceAccountBalance(ctx, scope.MerchantAccountID, inv.InvoiceID, remit.AccountReceivable)
	if err != nil {
		return err
	}
	schedules, err := j.recognizedSchedules(ctx, tx, scope, inv.InvoiceID, now, "void "+inv.InvoiceID)
	if err != nil {
		return err
	}
	deferred := map[string]int64{}
	for _, s := range schedules {
		deferred[s.PriceID] += s.Deferred
		s.Amount, s.Deferred = 0, 0 // a voided invoice recognizes nothing more
		if err := tx.UpsertRevenueSchedule(ctx, scope.MerchantAccountID, s); err != nil {
			return err
		}
	}
	e, ok := remit.PostInvoiceVoided(inv, receivable, deferred, now)
	return j.post(ctx, tx, scope, e, ok)
}
