package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/taxprovider"
)

// CreateCreditNote issues a credit note and applies its buckets in one transaction: offset lowers
// the invoice's amount remaining (settling it at 0), refund returns money through the processor,
// credit adds a credit_note entry to the customer's prepaid balance.
//
// Errors: validation_failure (every problem), not_found (invoice; an invoice line of another
// invoice, details.field), conflict (invoice not open or paid; creditNoteId taken; a limit).
func (cns *CreditNotes) CreateCreditNote(ctx context.Context, m remit.MerchantAccount, in remit.CreditNoteInput) (remit.CreditNote, error) {
	var p remit.Problems
	remit.MetadataProblems(&p, "metadata", in.Metadata)
	for i, l := range in.Lines {
		remit.MetadataProblems(&p, fmt.Sprintf("lines[%d].metadata", i), l.Metadata)
	}
	if err := p.Err(); err != nil {
		return remit.CreditNote{}, err
	}
	return inTx(ctx, cns.DB, func(ctx context.Context, tx *store.Tx) (remit.CreditNote, error) {
		return cns.issueCreditNote(ctx, tx, m, in, micro(cns.Now(m)))
	})
}

// issueCreditNote loads the invoice, decides the credit note (remit.PlanCreditNote), numbers it,
// applies its buckets, stores it with the invoice's new figures and its tax reversal, and emits.
func (cns *CreditNotes) issueCreditNote(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.CreditNoteInput, now time.Time) (remit.CreditNote, error) {
	inv, err := tx.GetInvoice(ctx, m.ID, in.InvoiceID, store.Locked)
	err = remit.AtField(err, "invoiceId")
	if err != nil {
		return remit.CreditNote{}, err
	}
	if err := remit.CheckCreditable(inv); err != nil {
		return remit.CreditNote{}, err
	}
	// A charge of the amount remaining is in flight: crediting now would change what it pays.
	if err := cns.payments.noOpenAttempt(ctx, tx, m, inv); err != nil {
		return remit.CreditNote{}, err
	}
	if in.CreditNoteID == "" {
		in.CreditNoteID = remit.NewID("cn")
	} else if taken, err := tx.CreditNoteExists(ctx, m.ID, in.CreditNoteID); err != nil {
		return remit.CreditNote{}, err
	} else if taken {
		return remit.CreditNote{}, remit.Duplicate("credit note", "creditNoteId", in.CreditNoteID)
	}
	plan, err := remit.PlanCreditNote(inv, in)
	if err != nil {
		return remit.CreditNote{}, err
	}
	cn, inv := plan.Note, plan.Invoice
	cn.CreditNoteID, cn.Environment, cn.MerchantAccountID, cn.CreatedAt = in.CreditNoteID, m.Environment, m.ID, now
	for i := range cn.Lines {
		cn.Lines[i].CreditNoteLineID = remit.NewID("cnl")
	}
	n, err := tx.NextNumber(ctx, m.ID, remit.CreditNoteNumbers.Counter)
	if err != nil {
		return cn, err
	}
	cn.Number = remit.DocumentNumber(remit.CreditNoteNumbers, n)
	if err := cns.applyBuckets(ctx, tx, m, &cn, &inv, now); err != nil {
		return cn, err
	}
	for _, j := range plan.Touched {
		if err := tx.UpdateInvoiceLineFigures(ctx, m.ID, inv.InvoiceID, inv.Lines[j]); err != nil {
			return cn, err
		}
	}
	if err := cns.reverseTax(ctx, tx, m, &cn, inv, plan.Reversal, now); err != nil {
		return cn, err
	}
	if err := duplicateAs(tx.InsertCreditNote(ctx, cn), "credit note", "creditNoteId", cn.CreditNoteID); err != nil {
		return cn, err
	}
	return cn, cns.settleByCredit(ctx, tx, m, cn, inv, now)
}

// applyBuckets moves the credit note's money: the offset lowers what remains due on the invoice,
// the refund goes back through the processor, the credit becomes prepaid balance.
func (cns *CreditNotes) applyBuckets(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, cn *remit.CreditNote, inv *remit.Invoice, now time.Time) error {
	if cn.OffsetAmount > 0 {
		inv.AmountRemaining -= cn.OffsetAmount
		inv.OffsetTotal += cn.OffsetAmount
	}
	if cn.RefundAmount > 0 {
		ids, err := cns.payments.refundInvoice(ctx, tx, m, inv, cn.RefundAmount, cn.CreditNoteID, now)
		if err != nil {
			return err
		}
		cn.RefundIDs = ids
		inv.RefundedTotal += cn.RefundAmount
	}
	if cn.CreditAmount > 0 {
		e, err := cns.ledger.CreditBalance(ctx, tx, scopeOf(m), inv.CustomerID, remit.BalanceCredit{Kind: remit.EntryCreditNote, Currency: inv.Currency,
			Amount: cn.CreditAmount, CreditNoteID: cn.CreditNoteID, Description: "Credit note " + cn.Number}, now)
		if err != nil {
			return err
		}
		cn.BalanceEntryID = &e.EntryID
	}
	inv.CreditedTotal += cn.Total
	inv.UpdatedAt = now
	return nil
}

// reverseTax stores the committed reversal tax transaction of a credit note that reverses tax.
func (cns *CreditNotes) reverseTax(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, cn *remit.CreditNote, inv remit.Invoice, lines []remit.TaxTransactionLine, now time.Time) error {
	if cn.TaxTotal <= 0 {
		return nil
	}
	rev := remit.TaxTransaction{Object: "tax_transaction", TaxTransactionID: remit.NewID("txn"), Status: remit.TaxCommitted,
		Type: remit.TaxReversal, SourceDocumentID: cn.CreditNoteID, CustomerID: inv.CustomerID, Currency: inv.Currency,
		Lines: nonZeroTax(lines), TotalTax: -cn.TaxTotal, CommittedAt: &now, Environment: m.Environment, MerchantAccountID: m.ID,
		CreatedAt: now, UpdatedAt: now, Provider: cns.TaxProvider().Name()}
	if inv.TaxTransactionID != nil {
		sale, err := tx.GetTaxTransaction(ctx, m.ID, *inv.TaxTransactionID, store.Unlocked)
		if err != nil {
			return err
		}
		// Stripe Tax: a partial reversal of the sale's Stripe transaction by what the note gives back.
		r := taxprovider.Reversal{Reference: rev.TaxTransactionID, FlatAmount: cn.Total}
		if rev.ProviderTransactionID, err = cns.reverseAtProvider(ctx, sale, r); err != nil {
			return err
		}
	}
	if err := tx.UpsertTaxTransaction(ctx, rev); err != nil {
		return err
	}
	cn.TaxTransactionID = &rev.TaxTransactionID
	return cns.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionReversed, rev.TaxTransactionID, rev)
}

// settleByCredit stores the invoice's new figures (an open invoice with nothing left due is now
// paid) and emits credit_note.created, and invoice.paid when it settled the invoice.
func (cns *CreditNotes) settleByCredit(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, cn remit.CreditNote, inv remit.Invoice, now time.Time) error {
	settled := inv.Status.Allows(remit.ActionSettle) && inv.AmountRemaining == 0
	if settled {
		inv.Status, inv.PaidAt, inv.PaymentURL = remit.InvoicePaid, &now, nil
	}
	if err := tx.UpdateInvoice(ctx, inv, false); err != nil {
		return err
	}
	scope := scopeOf(m)
	if err := cns.Emit(ctx, tx, scope, now, remit.EventCreditNoteCreated, cn.CreditNoteID, cn); err != nil {
		return err
	}
	if !settled {
		return nil
	}
	if err := cns.subscriptionPaymentOutcome(ctx, tx, m, inv, true, now); err != nil {
		return err
	}
	return cns.Emit(ctx, tx, scope, now, remit.EventInvoicePaid, inv.InvoiceID, inv)
}

func nonZeroTax(lines []remit.TaxTransactionLine) []remit.TaxTransactionLine {
	out := lines[:0]
	for _, l := range lines {
		if l.TaxAmount != 0 {
			out = append(out, l)
		}
	}
	return out
}

// GetCreditNote returns a credit note.
//
// Errors: not_found.
func (cns *CreditNotes) GetCreditNote(ctx context.Context, m remit.MerchantAccount, id string) (remit.CreditNote, error) {
	return cns.DB.Read(ctx).GetCreditNote(ctx, m.ID, id)
}

// ListCreditNotes lists the merchant account's credit notes newest first, by invoice and customer.
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (cns *CreditNotes) ListCreditNotes(ctx context.Context, m remit.MerchantAccount, in remit.CreditNoteQuery) (remit.List[remit.CreditNote], error) {
	return listPage(ctx, cns.core, scopeOf(m), "credit_notes", in.ListQuery, nil, func(page store.ListPage) ([]remit.CreditNote, error) {
		return cns.DB.Read(ctx).ListCreditNotes(ctx, m.ID, store.CreditNoteFilter{InvoiceID: in.InvoiceID, CustomerID: in.CustomerID, ListPage: page})
	})
}
