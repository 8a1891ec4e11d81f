package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Tax transactions (docs/invoices-and-tax.md): quoted while their invoice is a draft, committed at
// finalization; reversal transactions are committed at once.

var taxStatuses = map[remit.TaxStatus]bool{remit.TaxQuoted: true, remit.TaxCommitted: true, remit.TaxReversed: true}

// ListTaxTransactions lists the merchant account's tax transactions newest first, filtered by
// status and source document, paged by cursor (limit and cursor as raw query strings).
//
// Errors: validation_failure (status, limit, cursor).
func (iv *Invoicing) ListTaxTransactions(ctx context.Context, m remit.MerchantAccount, status, sourceDocumentID, limit, cursor string) (remit.List[remit.TaxTransaction], error) {
	scope := scopeOf(m)
	page, err := iv.ParsePage(ctx, scope, "tax_transactions", limit, cursor, 20)
	var p remit.Problems
	if status != "" && !taxStatuses[remit.TaxStatus(status)] {
		p.Add(remit.InQuery, "status", "invalid_enum", "status must be one of quoted, committed, reversed.")
	}
	if err := ProblemsOf(&p, err); err != nil {
		return remit.List[remit.TaxTransaction]{}, err
	}
	if err := p.Err(); err != nil {
		return remit.List[remit.TaxTransaction]{}, err
	}
	f := store.TaxFilter{Status: status, SourceDocumentID: sourceDocumentID, Limit: page.Limit}
	if !page.First() {
		f.AfterCreated, f.AfterID = remit.Micros(page.AfterTime), page.AfterID
	}
	items, err := iv.DB.Read(ctx).ListTaxTransactions(ctx, m.ID, f)
	if err != nil {
		return remit.List[remit.TaxTransaction]{}, err
	}
	return finishPage(ctx, iv.core, scope, "tax_transactions", page, items, func(t remit.TaxTransaction) (time.Time, string) {
		return t.CreatedAt, t.TaxTransactionID
	})
}

// GetTaxTransaction returns one tax transaction.
//
// Errors: not_found.
func (iv *Invoicing) GetTaxTransaction(ctx context.Context, m remit.MerchantAccount, id string) (remit.TaxTransaction, error) {
	t, err := iv.DB.Read(ctx).GetTaxTransaction(ctx, m.ID, id, store.Unlocked)
	return t, err
}

// CommitTaxTransaction commits a quoted tax transaction and emits tax_transaction.committed. A
// later refresh of its draft invoice quotes a new transaction.
//
// Errors: not_found, conflict (not quoted; details.currentState).
func (iv *Invoicing) CommitTaxTransaction(ctx context.Context, m remit.MerchantAccount, id string) (remit.TaxTransaction, error) {
	t, err := change(ctx, iv.DB, func(ctx context.Context, tx *store.Tx) (remit.TaxTransaction, error) {
		return tx.GetTaxTransaction(ctx, m.ID, id, store.Locked)
	}, func(ctx context.Context, tx *store.Tx, t *remit.TaxTransaction) error {
		if err := remit.TaxTransactionStates.Check(id, t.Status, remit.ActionCommit); err != nil {
			return err
		}
		now := micro(iv.Now(m))
		t.Status, t.CommittedAt, t.UpdatedAt = remit.TaxCommitted, &now, now
		if err := tx.UpsertTaxTransaction(ctx, *t); err != nil {
			return err
		}
		return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionCommitted, t.TaxTransactionID, *t)
	})
	return t, err
}
