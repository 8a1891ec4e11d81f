package app

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Tax transactions (docs/invoices-and-tax.md): quoted while their invoice is a draft, committed at
// finalization; reversal transactions are committed at once.

// ListTaxTransactions lists the merchant account's tax transactions newest first, filtered by
// status and source document, paged by cursor.
//
// Errors: validation_failure (status, limit, cursor, createdFrom, createdTo).
func (iv *Invoicing) ListTaxTransactions(ctx context.Context, m remit.MerchantAccount, in remit.TaxTransactionQuery) (remit.List[remit.TaxTransaction], error) {
	return listByStatus(ctx, iv.core, m, "tax_transactions", in.ListQuery, in.Status, remit.TaxStatuses, func(page store.ListPage) ([]remit.TaxTransaction, error) {
		return iv.DB.Read(ctx).ListTaxTransactions(ctx, m.ID, store.TaxFilter{Status: in.Status, SourceDocumentID: in.SourceDocumentID, ListPage: page})
	})
}

// GetTaxTransaction returns one tax transaction.
//
// Errors: not_found.
func (iv *Invoicing) GetTaxTransaction(ctx context.Context, m remit.MerchantAccount, id string) (remit.TaxTransaction, error) {
	return iv.DB.Read(ctx).GetTaxTransaction(ctx, m.ID, id, store.Unlocked)
}

// CommitTaxTransaction commits a quoted tax transaction and emits tax_transaction.committed. A
// later refresh of its draft invoice quotes a new transaction.
//
// Errors: not_found, conflict (not quoted; details.currentState).
func (iv *Invoicing) CommitTaxTransaction(ctx context.Context, m remit.MerchantAccount, id string) (remit.TaxTransaction, error) {
	state := func(t *remit.TaxTransaction) (string, remit.TaxStatus) { return id, t.Status }
	t, err := transition(ctx, iv.DB, remit.TaxTransactionStates, remit.ActionCommit, state, lockedRow(m.ID, id, store.Q.GetTaxTransaction), func(ctx context.Context, tx *store.Tx, t *remit.TaxTransaction) error {
		now := micro(iv.Now(m))
		t.Status, t.CommittedAt, t.UpdatedAt = remit.TaxCommitted, &now, now
		if err := tx.UpsertTaxTransaction(ctx, *t); err != nil {
			return err
		}
		return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionCommitted, t.TaxTransactionID, *t)
	})
	return t, err
}
