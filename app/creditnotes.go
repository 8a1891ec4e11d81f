package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/tax"
)

// Credit notes (product.md "Credit notes"): issued on open or paid invoices only, with explicit
// line attribution. Amounts include tax; each credit note reverses the tax share of its amount in
// a committed reversal tax transaction, rounded per line and jurisdiction on the cumulative
// credited amount, so crediting an invoice in full reverses exactly its tax. The limits, in the
// order they are checked (409 with details.reason and what is left): a line no more than what is
// left of its invoice line, the total no more than the invoice total less earlier credit notes,
// refunds no more than what was paid and not yet refunded, offsets no more than what remains due.

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
	var cn remit.CreditNote
	err := cns.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		cn, err = cns.issueCreditNote(ctx, tx, m, in, micro(cns.Now(m)))
		return err
	})
	return cn, err
}

func (cns *CreditNotes) issueCreditNote(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.CreditNoteInput, now time.Time) (remit.CreditNote, error) {
	inv, err := tx.GetInvoice(ctx, m.ID, in.InvoiceID, "invoiceId", true)
	if err != nil {
		return remit.CreditNote{}, err
	}
	if inv.Status != remit.InvoiceOpen && inv.Status != remit.InvoicePaid {
		return remit.CreditNote{}, remit.StateConflict("invoice", inv.InvoiceID, inv.Status, "credited (credit notes apply to open or paid invoices)")
	}
	if in.CreditNoteID == "" {
		in.CreditNoteID = remit.NewID("cn")
	} else if taken, err := tx.CreditNoteExists(ctx, m.ID, in.CreditNoteID); err != nil {
		return remit.CreditNote{}, err
	} else if taken {
		return remit.CreditNote{}, remit.Duplicate("credit note", "creditNoteId", in.CreditNoteID)
	}
	lineIndex := map[string]int{}
	for i, l := range inv.Lines {
		lineIndex[l.InvoiceLineID] = i
	}
	defaultBucket := remit.BucketOffset
	if inv.Status == remit.InvoicePaid {
		defaultBucket = remit.BucketCredit
	}
	sums := map[string]int64{}
	for i, l := range in.Lines {
		if l.InvoiceLineID != nil {
			if _, ok := lineIndex[*l.InvoiceLineID]; !ok {
				return remit.CreditNote{}, remit.NotFound("invoice line", *l.InvoiceLineID, fmt.Sprintf("lines[%d].invoiceLineId", i)).
					With("invoiceId", inv.InvoiceID)
			}
		}
		b := defaultBucket
		if l.Bucket != nil {
			b = *l.Bucket
		}
		sums[b] += l.Amount
	}
	var p remit.Problems
	for _, c := range []struct {
		field, bucket string
		given         *int64
	}{{"creditAmount", remit.BucketCredit, in.CreditAmount}, {"refundAmount", remit.BucketRefund, in.RefundAmount}, {"offsetAmount", remit.BucketOffset, in.OffsetAmount}} {
		if c.given != nil && *c.given != sums[c.bucket] {
			p.Body(c.field, "bucket_total_mismatch", fmt.Sprintf("%s is %d but the lines in the %s bucket add up to %d; give the lines' total or leave %s out.", c.field, *c.given, c.bucket, sums[c.bucket], c.field))
		}
	}
	if err := p.Err(); err != nil {
		return remit.CreditNote{}, err
	}

	cn := remit.CreditNote{Object: "credit_note", CreditNoteID: in.CreditNoteID, InvoiceID: inv.InvoiceID, CustomerID: inv.CustomerID,
		Currency: inv.Currency, Reason: in.Reason, Status: "issued", Description: in.Description, Metadata: remit.CopyMetadata(in.Metadata),
		CreditAmount: sums[remit.BucketCredit], RefundAmount: sums[remit.BucketRefund], OffsetAmount: sums[remit.BucketOffset],
		Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now}
	touched := map[int]bool{}
	var revLines []remit.TaxTransactionLine
	for i, li := range in.Lines {
		b := defaultBucket
		if li.Bucket != nil {
			b = *li.Bucket
		}
		line := remit.CreditNoteLine{CreditNoteLineID: remit.NewID("cnl"), InvoiceLineID: li.InvoiceLineID, Bucket: b,
			Description: li.Description, Amount: li.Amount, Metadata: remit.CopyMetadata(li.Metadata)}
		var parts []int64
		if li.InvoiceLineID != nil {
			idx := lineIndex[*li.InvoiceLineID]
			if left := remit.LineCreditable(inv.Lines[idx]); li.Amount > left {
				return remit.CreditNote{}, limitConflict(fmt.Sprintf("lines[%d].amount is %d but only %d is left to credit of invoice line '%s'.", i, li.Amount, left, *li.InvoiceLineID),
					"line_amount_exceeds_remaining", fmt.Sprintf("lines[%d].amount", i), left)
			}
			parts = make([]int64, len(inv.Lines))
			parts[idx] = li.Amount
		} else {
			left := make([]int64, len(inv.Lines))
			var total int64
			for j, l := range inv.Lines {
				left[j] = remit.LineCreditable(l)
				total += left[j]
			}
			if li.Amount > total {
				return remit.CreditNote{}, limitConflict(fmt.Sprintf("lines[%d].amount is %d but only %d is left to credit of invoice '%s'.", i, li.Amount, total, inv.InvoiceID),
					"total_exceeds_invoice", fmt.Sprintf("lines[%d].amount", i), total)
			}
			parts = remit.AllocateProportionally(li.Amount, left)
		}
		for j, part := range parts {
			if part <= 0 {
				continue
			}
			il := &inv.Lines[j]
			billed := remit.LineBilled(*il)
			first := len(revLines)
			var share int64
			for k := range il.Taxes {
				t := &il.Taxes[k]
				s := tax.ReversalShare(t.TaxAmount, billed, il.CreditedAmount, part, t.Reversed)
				t.Reversed += s
				share += s
				if s > 0 {
					revLines = append(revLines, remit.TaxTransactionLine{LineID: il.InvoiceLineID, Jurisdiction: t.Jurisdiction, Rate: t.Rate,
						RatePPM: t.RatePPM, TaxAmount: -s, TaxableAmount: 0})
				}
			}
			for k := first; k < len(revLines); k++ {
				revLines[k].TaxableAmount = -(part - share) // the credited amount before tax
			}
			il.CreditedAmount += part
			il.CreditedTax += share
			touched[j] = true
			line.TaxAmount += share
			line.Allocations = append(line.Allocations, remit.CreditAllocation{InvoiceLineID: il.InvoiceLineID, Amount: part, TaxAmount: share})
		}
		cn.Total += li.Amount
		cn.TaxTotal += line.TaxAmount
		cn.Lines = append(cn.Lines, line)
	}
	if left := inv.Total - inv.CreditedTotal; cn.Total > left {
		return remit.CreditNote{}, limitConflict(fmt.Sprintf("The credit note's total %d is more than the %d left to credit of invoice '%s'.", cn.Total, left, inv.InvoiceID),
			"total_exceeds_invoice", "lines", left)
	}
	if refundable := inv.AmountPaid - inv.RefundedTotal; cn.RefundAmount > refundable {
		return remit.CreditNote{}, limitConflict(fmt.Sprintf("The refund bucket is %d but only %d was paid and not yet refunded on invoice '%s'.", cn.RefundAmount, refundable, inv.InvoiceID),
			"refund_exceeds_paid", "refundAmount", refundable)
	}
	if cn.OffsetAmount > inv.AmountRemaining {
		return remit.CreditNote{}, limitConflict(fmt.Sprintf("The offset bucket is %d but only %d remains due on invoice '%s'.", cn.OffsetAmount, inv.AmountRemaining, inv.InvoiceID),
			"offset_exceeds_remaining", "offsetAmount", inv.AmountRemaining)
	}

	n, err := tx.NextNumber(ctx, m.ID, "credit_note")
	if err != nil {
		return cn, err
	}
	cn.Number = fmt.Sprintf("CN-%06d", n)
	scope := scopeOf(m)

	if cn.OffsetAmount > 0 {
		inv.AmountRemaining -= cn.OffsetAmount
		inv.OffsetTotal += cn.OffsetAmount
	}
	if cn.RefundAmount > 0 {
		ids, err := cns.payments.refundInvoice(ctx, tx, m, &inv, cn.RefundAmount, cn.CreditNoteID, now)
		if err != nil {
			return cn, err
		}
		cn.RefundIDs = ids
		inv.RefundedTotal += cn.RefundAmount
	}
	if cn.CreditAmount > 0 {
		e, err := cns.ledger.CreditBalance(ctx, tx, scope, inv.CustomerID, remit.BalanceCredit{Kind: remit.EntryCreditNote, Currency: inv.Currency,
			Amount: cn.CreditAmount, CreditNoteID: cn.CreditNoteID, Description: "Credit note " + cn.Number}, now)
		if err != nil {
			return cn, err
		}
		cn.BalanceEntryID = &e.EntryID
	}
	inv.CreditedTotal += cn.Total
	inv.UpdatedAt = now
	for j := range touched {
		if err := tx.UpdateInvoiceLineFigures(ctx, m.ID, inv.Lines[j]); err != nil {
			return cn, err
		}
	}

	if cn.TaxTotal > 0 {
		rev := remit.TaxTransaction{Object: "tax_transaction", TaxTransactionID: remit.NewID("txn"), Status: remit.TaxCommitted,
			Type: remit.TaxReversal, SourceDocumentID: cn.CreditNoteID, CustomerID: inv.CustomerID, Currency: inv.Currency,
			Lines: nonZeroTax(revLines), TotalTax: -cn.TaxTotal, CommittedAt: &now, Environment: m.Environment, MerchantAccountID: m.ID,
			CreatedAt: now, UpdatedAt: now}
		if err := tx.UpsertTaxTransaction(ctx, rev); err != nil {
			return cn, err
		}
		cn.TaxTransactionID = &rev.TaxTransactionID
		if err := cns.Emit(ctx, tx, scope, now, "tax_transaction.reversed", rev.TaxTransactionID, rev); err != nil {
			return cn, err
		}
	}
	if err := tx.InsertCreditNote(ctx, cn); err != nil {
		return cn, err
	}
	settled := inv.Status == remit.InvoiceOpen && inv.AmountRemaining == 0
	if settled {
		inv.Status, inv.PaidAt, inv.PaymentURL = remit.InvoicePaid, &now, nil
	}
	if err := tx.UpdateInvoice(ctx, inv, false); err != nil {
		return cn, err
	}
	if err := cns.Emit(ctx, tx, scope, now, "credit_note.created", cn.CreditNoteID, cn); err != nil {
		return cn, err
	}
	if settled {
		inv.Environment = m.Environment
		if err := cns.Emit(ctx, tx, scope, now, "invoice.paid", inv.InvoiceID, inv); err != nil {
			return cn, err
		}
	}
	return cn, nil
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

func limitConflict(msg, reason, field string, remaining int64) *remit.Error {
	return remit.Errorf(remit.EConflict, "%s", msg).With("reason", reason).With("field", field).With("remaining", remaining)
}

// GetCreditNote returns a credit note.
//
// Errors: not_found.
func (cns *CreditNotes) GetCreditNote(ctx context.Context, m remit.MerchantAccount, id string) (remit.CreditNote, error) {
	c, err := cns.DB.Read(ctx).GetCreditNote(ctx, m.ID, id)
	c.Environment = m.Environment
	return c, err
}
