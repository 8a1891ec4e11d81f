package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The prepaid balance ledger (docs/catalog-and-balance.md).
//
// Model: the ledger is append-only. Every positive entry (grant, credit_note, top_up) is a lot with
// a remaining amount. Every negative entry (expiry, application) takes from exactly one lot, named
// by sourceEntryId, and lowers that lot's remaining by as much, in the same transaction, with the
// lot's row locked (q.ForUpdate) and a guarded update (remaining >= amount) backed by a CHECK
// constraint. Hence, per customer and currency, the sum of the entries equals the sum of the lots'
// remaining, and neither a lot nor a balance can go negative, under any concurrency and across
// several serve processes.
//
// At merchant time t a lot is pending when t < effectiveAt, available when effectiveAt <= t <
// expiresAt (no expiresAt: forever), and expired otherwise. available and pending of a currency are
// the sums of the remaining of its available and pending lots. Grants become available and expire by
// themselves: a grant schedules a job at effectiveAt (when in the future; it emits
// customer_balance.grant_effective) and one at expiresAt, which writes an expiry entry for what
// remains.
//
// The invoices area spends and credits the balance inside its own transaction with
// AvailableGrants, ApplyBalance and CreditBalance.

// Scheduled-job kinds of the ledger.
const (
	JobGrantEffective = remit.JobGrantEffective
	JobGrantExpire    = remit.JobGrantExpire
)

type grantJob struct {
	CustomerID string `json:"customerId"`
	EntryID    string `json:"entryId"`
}

// registerJobs installs the ledger's job kinds: a grant becoming effective, a grant expiring.
func (lg *Ledger) registerJobs() {
	lg.RegisterJob(JobGrantEffective, lg.runGrantEffective)
	lg.RegisterJob(JobGrantExpire, lg.runGrantExpire)
}

var (
	seqMu      sync.Mutex
	seqEntropy = ulid.Monotonic(rand.Reader, 0)
)

// nextSeq is a ULID that grows with every call in this process (and with time across processes):
// the append order of entries that share a creation time.
func nextSeq() string {
	seqMu.Lock()
	defer seqMu.Unlock()
	return ulid.MustNew(ulid.Now(), seqEntropy).String()
}

// micro drops what the store cannot keep, so that an answer and a later read agree.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// GrantBalance appends a grant to the customer's ledger and emits customer_balance.granted. A
// grant effective in the future is pending until then; one with expiresAt expires by itself then.
//
// Errors: validation_failure (currency, amount, expiresAt not later than effectiveAt or not in the
// future, metadata), not_found (the customer; a price of targets.priceIds, with details.field),
// conflict (entryId taken within the customer).
func (lg *Ledger) GrantBalance(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.GrantInput) (remit.BalanceEntry, error) {
	now := micro(lg.Now(m))
	effective := now
	if in.EffectiveAt != nil {
		effective = micro(*in.EffectiveAt)
	}
	var probs remit.Problems
	remit.CurrencyProblem(&probs, remit.InBody, "currency", in.Currency)
	if in.Amount < 1 {
		probs.Body("amount", "out_of_range", "amount must be a positive integer in minor units.")
	}
	var expires *time.Time
	if in.ExpiresAt != nil {
		t := micro(*in.ExpiresAt)
		expires = &t
		switch {
		case !t.After(effective):
			probs.Body("expiresAt", "not_after_effective_at", fmt.Sprintf("expiresAt must be later than effectiveAt (%s).", effective.Format(time.RFC3339Nano)))
		case !t.After(now):
			probs.Body("expiresAt", "not_in_future", fmt.Sprintf("expiresAt must be in the future; the merchant clock is at %s.", now.Format(time.RFC3339Nano)))
		}
	}
	remit.MetadataProblems(&probs, "metadata", in.Metadata)
	priority := int64(remit.DefaultGrantPriority)
	if in.Priority != nil {
		if priority = *in.Priority; priority < 0 || priority > 100 {
			probs.Body("priority", "out_of_range", "priority must be between 0 and 100.")
		}
	}
	if in.Category != "" && in.Category != remit.GrantPaid && in.Category != remit.GrantPromotional {
		probs.Body("category", "invalid_enum", "category must be paid or promotional.")
	}
	if err := probs.Err(); err != nil {
		return remit.BalanceEntry{}, err
	}
	in.EntryID = remit.IDOr(in.EntryID, "ble")
	remaining := in.Amount
	e := remit.BalanceEntry{
		Object: "balance_entry", EntryID: in.EntryID, CustomerID: customerID, Type: remit.EntryGrant, Currency: in.Currency,
		Amount: in.Amount, Remaining: &remaining, Targets: in.Targets, Description: in.Description, EffectiveAt: effective,
		Priority: priority, Category: remit.LotCategory(remit.EntryGrant, in.Category),
		ExpiresAt: expires, Metadata: remit.CopyMetadata(in.Metadata), Environment: m.Environment, MerchantAccountID: m.ID,
		CreatedAt: now, Seq: nextSeq(),
	}
	err := lg.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		// The insert comes first: it is also the customer's check (not_found, by the foreign key).
		if err := duplicateAs(tx.InsertBalanceEntry(ctx, e), "balance entry", "entryId", e.EntryID); err != nil {
			return err
		}
		if in.Targets != nil && len(in.Targets.PriceIDs) > 0 {
			prices, err := tx.GetPrices(ctx, m.ID, in.Targets.PriceIDs)
			if err != nil {
				return err
			}
			for i, id := range in.Targets.PriceIDs {
				if _, ok := prices[id]; !ok {
					return remit.NotFound("price", id, fmt.Sprintf("targets.priceIds[%d]", i))
				}
			}
		}
		job := grantJob{CustomerID: customerID, EntryID: e.EntryID}
		if effective.After(now) {
			if err := lg.Schedule(ctx, tx, scopeOf(m), JobGrantEffective, effective, job); err != nil {
				return err
			}
		}
		if expires != nil {
			if err := lg.Schedule(ctx, tx, scopeOf(m), JobGrantExpire, *expires, job); err != nil {
				return err
			}
		}
		return lg.Emit(ctx, tx, scopeOf(m), now, remit.EventCustomerBalanceGranted, e.EntryID, e)
	})
	return e, err
}

// ExpireBalance takes amount (default: all that remains) from a grant of the customer as an expiry
// entry and emits customer_balance.expired.
//
// Errors: validation_failure (effectiveAt in the future, amount, metadata), not_found (the customer;
// sourceEntryId not a grant of this customer, details.field "sourceEntryId"), conflict (more than
// remains, details.remaining and details.requested; entryId taken).
func (lg *Ledger) ExpireBalance(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.ExpireInput) (remit.BalanceEntry, error) {
	now := micro(lg.Now(m))
	effective := now
	var probs remit.Problems
	if in.EffectiveAt != nil {
		effective = micro(*in.EffectiveAt)
		if effective.After(now) {
			probs.Body("effectiveAt", "in_future", fmt.Sprintf("An expiry takes effect when it is recorded: effectiveAt may not be after the merchant clock (%s). To expire a grant later, give it an expiresAt.", now.Format(time.RFC3339Nano)))
		}
	}
	if in.Amount != nil && *in.Amount < 1 {
		probs.Body("amount", "out_of_range", "amount must be a positive integer in minor units.")
	}
	remit.MetadataProblems(&probs, "metadata", in.Metadata)
	if err := probs.Err(); err != nil {
		return remit.BalanceEntry{}, err
	}
	var out remit.BalanceEntry
	err := lg.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.RequireCustomer(ctx, m.ID, customerID); err != nil {
			return err
		}
		lot, err := tx.GetBalanceEntry(ctx, m.ID, customerID, in.SourceEntryID, store.Locked)
		err = remit.AtField(err, "sourceEntryId")
		if err == nil && lot.Type != remit.EntryGrant {
			err = remit.NotFound("grant", in.SourceEntryID, "sourceEntryId")
		}
		if err != nil {
			return err
		}
		amount := *lot.Remaining
		if in.Amount != nil {
			amount = *in.Amount
		}
		out, err = lg.takeFromLot(ctx, tx, scopeOf(m), lot, debit{
			Kind: remit.EntryExpiry, EntryID: in.EntryID, Amount: amount, Defaulted: in.Amount == nil,
			Description: in.Description, EffectiveAt: effective, Metadata: in.Metadata,
		}, now)
		if err != nil {
			return err
		}
		return lg.Emit(ctx, tx, scopeOf(m), now, remit.EventCustomerBalanceExpired, out.EntryID, out)
	})
	return out, err
}

// debit is a negative entry about to take from one lot.
type debit struct {
	Kind        string // expiry or application
	EntryID     string
	Amount      int64
	Defaulted   bool // the amount was "all that remains"
	InvoiceID   *string
	Description *string
	EffectiveAt time.Time
	Metadata    map[string]string
}

// takeFromLot appends the negative entry d against lot (whose row the caller locked) and lowers the
// lot's remaining by d.Amount.
//
// Errors: conflict (more than remains, with details; entryId taken).
func (lg *Ledger) takeFromLot(ctx context.Context, tx *store.Tx, scope remit.Scope, lot remit.BalanceEntry, d debit, at time.Time) (remit.BalanceEntry, error) {
	remaining := *lot.Remaining
	if d.Amount > remaining || d.Amount < 1 {
		var err *remit.Error
		if remaining == 0 {
			err = remit.Errorf(remit.EConflict, "Nothing remains of %s '%s'.", lot.Type, lot.EntryID)
		} else {
			err = remit.Errorf(remit.EConflict, "Only %d remains of %s '%s'; %d was requested. Ask for at most %d.", remaining, lot.Type, lot.EntryID, d.Amount, remaining)
		}
		err.With("reason", "insufficient_remaining").With("sourceEntryId", lot.EntryID).With("remaining", remaining).With("currency", lot.Currency)
		if !d.Defaulted {
			err.With("requested", d.Amount)
		}
		return remit.BalanceEntry{}, err
	}
	d.EntryID = remit.IDOr(d.EntryID, "ble")
	source := lot.EntryID
	e := remit.BalanceEntry{
		Object: "balance_entry", EntryID: d.EntryID, CustomerID: lot.CustomerID, Type: d.Kind, Currency: lot.Currency,
		Amount: -d.Amount, SourceEntryID: &source, InvoiceID: d.InvoiceID, Description: d.Description, EffectiveAt: micro(d.EffectiveAt),
		Priority: lot.Priority, Category: lot.Category,
		Metadata: remit.CopyMetadata(d.Metadata), Environment: scope.Environment, MerchantAccountID: scope.MerchantAccountID,
		CreatedAt: micro(at), Seq: nextSeq(),
	}
	if err := duplicateAs(tx.InsertBalanceEntry(ctx, e), "balance entry", "entryId", e.EntryID); err != nil {
		return remit.BalanceEntry{}, err
	}
	ok, err := tx.TakeFromLot(ctx, scope.MerchantAccountID, lot.CustomerID, lot.EntryID, d.Amount)
	if err != nil {
		return remit.BalanceEntry{}, err
	}
	if !ok { // the lot was not locked by the caller: refuse rather than go negative
		return remit.BalanceEntry{}, remit.Errorf(remit.EConflict, "The %s '%s' changed concurrently; retry the request.", lot.Type, lot.EntryID).
			With("reason", "insufficient_remaining").With("sourceEntryId", lot.EntryID)
	}
	return e, nil
}

// GetCustomerBalance returns the customer's balance per currency at the merchant clock's now and
// its ledger, newest first.
//
// Errors: not_found.
func (lg *Ledger) GetCustomerBalance(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.CustomerBalance, error) {
	q := lg.DB.Read(ctx)
	if err := q.RequireCustomer(ctx, m.ID, customerID); err != nil {
		return remit.CustomerBalance{}, err
	}
	entries, err := q.ListBalanceEntries(ctx, m.ID, customerID)
	if err != nil {
		return remit.CustomerBalance{}, err
	}
	return remit.CustomerBalance{
		Object: "customer_balance", CustomerID: customerID, Balances: remit.Balances(entries, lg.Now(m)), Entries: entries,
		Environment: m.Environment, MerchantAccountID: m.ID,
	}, nil
}

// ListBalanceEntries pages the customer's ledger entries, in in.Currency when it is not "", newest
// first in the order of GetCustomerBalance's entries (docs/catalog-and-balance.md). A cursor pages
// only the customer and currency it came from.
//
// Errors: validation_failure (currency, limit, cursor, createdFrom, createdTo), not_found (the
// customer).
func (lg *Ledger) ListBalanceEntries(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.BalanceEntryQuery) (remit.List[remit.BalanceEntry], error) {
	list := "balance_entries|" + customerID + "|" + in.Currency
	return listPage(ctx, lg.core, scopeOf(m), list, in.ListQuery, func(p *remit.Problems) { currencyFilter(p, "currency", in.Currency) },
		func(page store.ListPage) ([]remit.BalanceEntry, error) {
			q := lg.DB.Read(ctx)
			if err := q.RequireCustomer(ctx, m.ID, customerID); err != nil {
				return nil, err
			}
			// The keyset is the ledger's order: creation time, then append order (seq), not
			// entryId (remit.BalanceEntry.PageKey).
			return q.PageBalanceEntries(ctx, m.ID, customerID, in.Currency, page)
		})
}

// --- the ledger's API for invoices and credit notes (called inside their transaction) ---

// AvailableGrants locks and returns the customer's lots in currency that can be spent at `at`:
// grants, credit_note and top_up entries with remaining > 0 that are effective and not expired at
// `at`. They come in spending order (remit.SpendingOrder): lowest priority first, then earliest
// expiresAt (lots that never expire last), then earliest effectiveAt, then append order. Each carries Remaining and, for grants, Targets (nil:
// pays any line; see remit.BalanceTargets.Matches). The rows stay locked until tx ends, so the
// amounts read here hold for ApplyBalance in the same transaction; calling it once per customer and
// currency, before any ApplyBalance, keeps lock order the same for every caller (no deadlocks).
func (lg *Ledger) AvailableGrants(ctx context.Context, tx *store.Tx, scope remit.Scope, customerID, currency string, at time.Time) ([]remit.BalanceEntry, error) {
	lots, err := tx.LockSpendableLots(ctx, scope.MerchantAccountID, customerID, currency, at)
	remit.SpendingOrder(lots) // the order the store read (and locked) them in; the rule says it
	return lots, err
}

// ApplyBalance spends amount of the lot grantID (a grant, credit_note or top_up entry returned by
// AvailableGrants) on invoiceID: it appends an application entry (amount -amount, sourceEntryId
// grantID, invoiceId invoiceID, effective and created at `at`), lowers the lot's remaining and emits
// customer_balance.applied. Call it in the invoice's transaction; it locks the lot row itself too.
//
// Errors: not_found (no such lot for the customer), conflict (the lot is not available at `at`,
// details.currentState pending|expired; or less remains than amount, details.remaining).
func (lg *Ledger) ApplyBalance(ctx context.Context, tx *store.Tx, scope remit.Scope, customerID, invoiceID, grantID string, amount int64, at time.Time) (remit.BalanceEntry, error) {
	if amount < 1 {
		return remit.BalanceEntry{}, remit.Internal(fmt.Errorf("app.ApplyBalance: amount %d is not positive", amount))
	}
	lot, err := tx.GetBalanceEntry(ctx, scope.MerchantAccountID, customerID, grantID, store.Locked)
	if err == nil && !remit.IsLot(lot.Type) {
		err = remit.NotFound("grant", grantID, "")
	}
	if err != nil {
		return remit.BalanceEntry{}, err
	}
	switch {
	case lot.PendingAt(at):
		return remit.BalanceEntry{}, remit.StateConflict(lot.Type, grantID, "pending", "applied before its effectiveAt")
	case !lot.AvailableAt(at):
		return remit.BalanceEntry{}, remit.StateConflict(lot.Type, grantID, "expired", "applied")
	}
	inv := invoiceID
	e, err := lg.takeFromLot(ctx, tx, scope, lot, debit{Kind: remit.EntryApplication, Amount: amount, InvoiceID: &inv, EffectiveAt: at}, at)
	if err != nil {
		return e, err
	}
	return e, lg.Emit(ctx, tx, scope, micro(at), remit.EventCustomerBalanceApplied, e.EntryID, e)
}

// CreditBalance appends a credit_note or top_up lot (remaining = amount, effective at `at`, never
// expiring) to the customer's ledger and emits customer_balance.credited. Call it in the caller's
// transaction.
//
// Errors: not_found (customer), conflict (EntryID taken); a malformed credit is an internal error
// (a bug of the caller).
func (lg *Ledger) CreditBalance(ctx context.Context, tx *store.Tx, scope remit.Scope, customerID string, c remit.BalanceCredit, at time.Time) (remit.BalanceEntry, error) {
	switch {
	case c.Amount < 1:
		return remit.BalanceEntry{}, remit.Internal(fmt.Errorf("app.CreditBalance: amount %d is not positive", c.Amount))
	case c.Kind == remit.EntryCreditNote && c.CreditNoteID == "", c.Kind == remit.EntryTopUp && c.InvoiceID == "",
		c.Kind != remit.EntryCreditNote && c.Kind != remit.EntryTopUp:
		return remit.BalanceEntry{}, remit.Internal(fmt.Errorf("app.CreditBalance: kind %q without its reference", c.Kind))
	case remit.CheckCurrency(c.Currency) != "":
		return remit.BalanceEntry{}, remit.Internal(fmt.Errorf("app.CreditBalance: currency %q", c.Currency))
	}
	if err := remit.AtField(tx.RequireCustomer(ctx, scope.MerchantAccountID, customerID), "customerId"); err != nil {
		return remit.BalanceEntry{}, err
	}
	c.EntryID = remit.IDOr(c.EntryID, "ble")
	remaining := c.Amount
	e := remit.BalanceEntry{
		Object: "balance_entry", EntryID: c.EntryID, CustomerID: customerID, Type: c.Kind, Currency: c.Currency,
		Amount: c.Amount, Remaining: &remaining, EffectiveAt: micro(at), Metadata: remit.CopyMetadata(c.Metadata),
		Priority: remit.DefaultGrantPriority, Category: remit.LotCategory(c.Kind, ""),
		Environment: scope.Environment, MerchantAccountID: scope.MerchantAccountID, CreatedAt: micro(at), Seq: nextSeq(),
	}
	if c.InvoiceID != "" {
		e.InvoiceID = &c.InvoiceID
	}
	if c.CreditNoteID != "" {
		e.CreditNoteID = &c.CreditNoteID
	}
	if c.Description != "" {
		e.Description = &c.Description
	}
	if err := duplicateAs(tx.InsertBalanceEntry(ctx, e), "balance entry", "entryId", e.EntryID); err != nil {
		return remit.BalanceEntry{}, err
	}
	return e, lg.Emit(ctx, tx, scope, micro(at), remit.EventCustomerBalanceCredited, e.EntryID, e)
}

// --- scheduled jobs ---

func grantOfJob(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job) (remit.BalanceEntry, bool, error) {
	var p grantJob
	if err := json.Unmarshal(job.Payload, &p); err != nil {
		return remit.BalanceEntry{}, false, fmt.Errorf("payload: %w", err)
	}
	lot, err := tx.GetBalanceEntry(ctx, scope.MerchantAccountID, p.CustomerID, p.EntryID, store.Locked)
	if remit.ErrorCode(err) == remit.ENotFound {
		return lot, false, nil
	}
	if err != nil {
		return lot, false, err
	}
	return lot, lot.Type == remit.EntryGrant, nil
}

// runGrantEffective announces a pending grant that became available (if anything remains of it).
func (lg *Ledger) runGrantEffective(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	lot, ok, err := grantOfJob(ctx, tx, scope, job)
	if err != nil || !ok || *lot.Remaining == 0 {
		return err
	}
	return lg.Emit(ctx, tx, scope, micro(at), remit.EventCustomerBalanceGrantEffective, lot.EntryID, lot)
}

// runGrantExpire expires what remains of a grant at its expiresAt: an expiry entry effective at
// expiresAt, and customer_balance.expired.
func (lg *Ledger) runGrantExpire(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	lot, ok, err := grantOfJob(ctx, tx, scope, job)
	if err != nil || !ok || *lot.Remaining == 0 || lot.ExpiresAt == nil || at.Before(*lot.ExpiresAt) {
		return err
	}
	desc := "Expired at the grant's expiresAt."
	e, err := lg.takeFromLot(ctx, tx, scope, lot, debit{
		Kind: remit.EntryExpiry, Amount: *lot.Remaining, Defaulted: true, Description: &desc, EffectiveAt: *lot.ExpiresAt,
	}, at)
	if err != nil {
		return err
	}
	return lg.Emit(ctx, tx, scope, micro(at), remit.EventCustomerBalanceExpired, e.EntryID, e)
}
