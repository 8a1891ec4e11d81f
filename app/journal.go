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
		remit.EventCustomerBalanceApplied: postOn(j.fromLot(remit.PostPrepaidApplied)),
		remit.EventCustomerBalanceExpired: postOn(j.fromLot(remit.PostPrepaidExpired)),
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
	if err := putSchedules(ctx, tx, scope, schedules); err != nil {
		return err
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

// fromLot is the posting of prepaid balance taken from a lot (an application, an expiry): rule
// posts the balance entry given the type of the lot it took from (lotType).
func (j *Journal) fromLot(rule func(remit.BalanceEntry, string) (remit.JournalEntry, bool)) func(ctx context.Context, tx *store.Tx, scope remit.Scope, b remit.BalanceEntry, now time.Time) error {
	return func(ctx context.Context, tx *store.Tx, scope remit.Scope, b remit.BalanceEntry, now time.Time) error {
		typ, err := lotType(ctx, tx, scope, b)
		if err != nil {
			return err
		}
		e, ok := rule(b, typ)
		return j.post(ctx, tx, scope, e, ok)
	}
}

// postOnInvoice posts the entry rule returns for a movement on an invoice, given what the invoice
// holds in account (what was written off of it, or its receivable left) and, with release, the
// deferred revenue, by price, that the movement takes back from the invoice's schedules: its
// revenue recognized up to now first (recognizedSchedules, under key), then release says what is
// taken back and what the schedules become, which are stored.
func (j *Journal) postOnInvoice(ctx context.Context, tx *store.Tx, scope remit.Scope, invoiceID, account string, now time.Time, key string,
	release func([]remit.RevenueSchedule) (map[string]int64, []remit.RevenueSchedule), rule func(balance int64, deferred map[string]int64) (remit.JournalEntry, bool)) error {
	balance, err := tx.InvoiceAccountBalance(ctx, scope.MerchantAccountID, invoiceID, account)
	if err != nil {
		return err
	}
	var deferred map[string]int64
	if release != nil {
		schedules, err := j.recognizedSchedules(ctx, tx, scope, invoiceID, now, key)
		if err != nil {
			return err
		}
		var changed []remit.RevenueSchedule
		deferred, changed = release(schedules)
		if err := putSchedules(ctx, tx, scope, changed); err != nil {
			return err
		}
	}
	e, ok := rule(balance, deferred)
	return j.post(ctx, tx, scope, e, ok)
}

// putSchedules stores revenue schedules, in order.
func putSchedules(ctx context.Context, tx *store.Tx, scope remit.Scope, schedules []remit.RevenueSchedule) error {
	for _, s := range schedules {
		if err := tx.UpsertRevenueSchedule(ctx, scope.MerchantAccountID, s); err != nil {
			return err
		}
	}
	return nil
}

func (j *Journal) paymentSucceeded(ctx context.Context, tx *store.Tx, scope remit.Scope, p remit.Payment, now time.Time) error {
	return j.postOnInvoice(ctx, tx, scope, p.InvoiceID, remit.AccountBadDebt, now, "", nil, func(writtenOff int64, _ map[string]int64) (remit.JournalEntry, bool) {
		return remit.PostPaymentSucceeded(p, writtenOff, now)
	})
}

func (j *Journal) creditNoteCreated(ctx context.Context, tx *store.Tx, scope remit.Scope, cn remit.CreditNote, now time.Time) error {
	release := func(schedules []remit.RevenueSchedule) (map[string]int64, []remit.RevenueSchedule) {
		return remit.CreditDeferred(cn, schedules)
	}
	return j.postOnInvoice(ctx, tx, scope, cn.InvoiceID, remit.AccountBadDebt, now, cn.CreditNoteID, release, func(writtenOff int64, deferred map[string]int64) (remit.JournalEntry, bool) {
		return remit.PostCreditNote(cn, writtenOff, deferred)
	})
}

func (j *Journal) invoiceUncollectible(ctx context.Context, tx *store.Tx, scope remit.Scope, inv remit.Invoice, now time.Time) error {
	return j.postOnInvoice(ctx, tx, scope, inv.InvoiceID, remit.AccountReceivable, now, "", nil, func(receivable int64, _ map[string]int64) (remit.JournalEntry, bool) {
		return remit.PostInvoiceUncollectible(inv, receivable, now)
	})
}

func (j *Journal) invoiceVoided(ctx context.Context, tx *store.Tx, scope remit.Scope, inv remit.Invoice, now time.Time) error {
	return j.postOnInvoice(ctx, tx, scope, inv.InvoiceID, remit.AccountReceivable, now, "void "+inv.InvoiceID, voidedSchedules, func(receivable int64, deferred map[string]int64) (remit.JournalEntry, bool) {
		return remit.PostInvoiceVoided(inv, receivable, deferred, now)
	})
}

// voidedSchedules is what a void takes back from its invoice's schedules: all they still defer, by
// price; a voided invoice recognizes nothing more.
func voidedSchedules(schedules []remit.RevenueSchedule) (map[string]int64, []remit.RevenueSchedule) {
	deferred := map[string]int64{}
	for i := range schedules {
		deferred[schedules[i].PriceID] += schedules[i].Deferred
		schedules[i].Amount, schedules[i].Deferred = 0, 0
	}
	return deferred, schedules
}
