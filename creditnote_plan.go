package remit

import "fmt"

// Credit notes (docs/credit-notes.md): issued on open or paid invoices only, with explicit line
// attribution. Amounts include tax; each credit note reverses the tax share of its amount, rounded
// per line and jurisdiction on the cumulative credited amount, so crediting an invoice in full
// reverses exactly its tax. The limits, in the order they are checked (409 with details.reason
// and what is left): a line no more than what is left of its invoice line, the total no more than
// the invoice total less earlier credit notes, refunds no more than what was paid and not yet
// refunded, offsets no more than what remains due.

// CreditNotePlan is what a credit note does, decided before anything is written.
type CreditNotePlan struct {
	Note     CreditNote           // lines with their allocations, buckets and totals; no ID, number or time
	Invoice  Invoice              // the invoice with the credited figures of its lines updated
	Touched  []int                // the invoice lines whose figures changed, in order
	Reversal []TaxTransactionLine // the tax reversed, per invoice line and jurisdiction (none zero)
}

// ReversalShare is the tax to reverse when credited more of a line's taxable amount is credited,
// after creditedBefore was credited and reversedBefore reversed by earlier credit notes. It rounds
// the cumulative share half-up (line tax × all credited ÷ taxable) and returns the difference, so
// shares never go negative and crediting a line in full reverses exactly its tax, cent for cent,
// however the credits were split.
func ReversalShare(lineTax, lineTaxable, creditedBefore, credited, reversedBefore int64) int64 {
	if lineTaxable <= 0 || credited <= 0 {
		return 0
	}
	total := creditedBefore + credited
	if total >= lineTaxable {
		return lineTax - reversedBefore
	}
	// lineTax × total can pass int64 for lines above about 3·10^9 minor units: 128-bit product.
	q, r := mulDiv(lineTax, total, lineTaxable)
	if 2*r >= lineTaxable {
		q++
	}
	share := q - reversedBefore
	if share < 0 {
		share = 0
	}
	return share
}

// PlanCreditNote decides a credit note on inv (read with its lines) from its request: the state
// and the references (409, 404 at the field), then every problem of the request at once (422),
// then the allocation of each line to the invoice lines (an unattributed line proportionally to
// what is left of each) with the tax each reverses, then the limits (409).
func PlanCreditNote(inv Invoice, in CreditNoteInput) (CreditNotePlan, error) {
	if err := CheckCreditable(inv); err != nil {
		return CreditNotePlan{}, err
	}
	lineIndex := map[string]int{}
	for i, l := range inv.Lines {
		lineIndex[l.InvoiceLineID] = i
	}
	buckets, err := creditBuckets(inv, in, lineIndex)
	if err != nil {
		return CreditNotePlan{}, err
	}
	plan := CreditNotePlan{Invoice: inv, Note: CreditNote{Object: "credit_note", InvoiceID: inv.InvoiceID, CustomerID: inv.CustomerID,
		Currency: inv.Currency, Reason: in.Reason, Status: "issued", Description: in.Description, Metadata: CopyMetadata(in.Metadata), UsageEventID: in.UsageEventID,
		CreditAmount: buckets.sums[BucketCredit], RefundAmount: buckets.sums[BucketRefund], OffsetAmount: buckets.sums[BucketOffset]}}
	plan.Invoice.Lines = append([]InvoiceLine(nil), inv.Lines...)
	for i := range plan.Invoice.Lines {
		plan.Invoice.Lines[i].Taxes = append([]LineTax(nil), inv.Lines[i].Taxes...)
	}
	touched := map[int]bool{}
	for i, li := range in.Lines {
		parts, err := creditParts(plan.Invoice, i, li, lineIndex)
		if err != nil {
			return CreditNotePlan{}, err
		}
		line := CreditNoteLine{InvoiceLineID: li.InvoiceLineID, Bucket: buckets.of[i], Description: li.Description,
			Amount: li.Amount, Metadata: CopyMetadata(li.Metadata)}
		for j, part := range parts {
			if part > 0 {
				line.Allocations = append(line.Allocations, plan.credit(j, part))
				line.TaxAmount += line.Allocations[len(line.Allocations)-1].TaxAmount
				touched[j] = true
			}
		}
		plan.Note.Total += li.Amount
		plan.Note.TaxTotal += line.TaxAmount
		plan.Note.Lines = append(plan.Note.Lines, line)
	}
	for j := range plan.Invoice.Lines {
		if touched[j] {
			plan.Touched = append(plan.Touched, j)
		}
	}
	return plan, creditLimits(inv, plan.Note)
}

// CheckCreditable refuses an invoice that is neither open nor paid: only those take credit notes
// (InvoiceStates).
func CheckCreditable(inv Invoice) error {
	return InvoiceStates.Check(inv.InvoiceID, inv.Status, ActionCredit)
}

// CreditLimit is a credit note asking for more than is left: 409 with the reason, the field and
// what remains.
func CreditLimit(msg, reason, field string, remaining int64) *Error {
	return Errorf(EConflict, "%s", msg).With("reason", reason).With("field", field).With("remaining", remaining)
}

// creditBucketsOf is the bucket of each requested line and the sum of each bucket.
type creditBucketsOf struct {
	of   []string
	sums map[string]int64
}

// creditBuckets checks the lines' references (404) and that the bucket totals given agree with
// the lines (422, every one).
func creditBuckets(inv Invoice, in CreditNoteInput, lineIndex map[string]int) (creditBucketsOf, error) {
	defaultBucket := BucketCredit // paid: the credit becomes prepaid balance
	if inv.Status.Allows(ActionOffset) {
		defaultBucket = BucketOffset // open: the customer owes less
	}
	b := creditBucketsOf{sums: map[string]int64{}}
	for i, l := range in.Lines {
		if l.InvoiceLineID != nil {
			if _, ok := lineIndex[*l.InvoiceLineID]; !ok {
				return b, NotFound("invoice line", *l.InvoiceLineID, fmt.Sprintf("lines[%d].invoiceLineId", i)).With("invoiceId", inv.InvoiceID)
			}
		}
		bucket := defaultBucket
		if l.Bucket != nil {
			bucket = *l.Bucket
		}
		b.of = append(b.of, bucket)
		b.sums[bucket] += l.Amount
	}
	var p Problems
	for _, c := range []struct {
		field, bucket string
		given         *int64
	}{{"creditAmount", BucketCredit, in.CreditAmount}, {"refundAmount", BucketRefund, in.RefundAmount}, {"offsetAmount", BucketOffset, in.OffsetAmount}} {
		if c.given != nil && *c.given != b.sums[c.bucket] {
			p.Body(c.field, "bucket_total_mismatch", fmt.Sprintf("%s is %d but the lines in the %s bucket add up to %d; give the lines' total or leave %s out.", c.field, *c.given, c.bucket, b.sums[c.bucket], c.field))
		}
	}
	return b, p.Err()
}

// creditParts is how requested line i credits each invoice line: all of it on its invoice line,
// or, unattributed, in proportion to what is left of every line. More than is left is a conflict.
func creditParts(inv Invoice, i int, li CreditNoteLineInput, lineIndex map[string]int) ([]int64, error) {
	field := fmt.Sprintf("lines[%d].amount", i)
	if li.InvoiceLineID != nil {
		idx := lineIndex[*li.InvoiceLineID]
		if left := LineCreditable(inv.Lines[idx]); li.Amount > left {
			return nil, CreditLimit(fmt.Sprintf("lines[%d].amount is %d but only %d is left to credit of invoice line '%s'.", i, li.Amount, left, *li.InvoiceLineID),
				"line_amount_exceeds_remaining", field, left)
		}
		parts := make([]int64, len(inv.Lines))
		parts[idx] = li.Amount
		return parts, nil
	}
	left := make([]int64, len(inv.Lines))
	var total int64
	for j, l := range inv.Lines {
		left[j] = LineCreditable(l)
		total += left[j]
	}
	if li.Amount > total {
		return nil, CreditLimit(fmt.Sprintf("lines[%d].amount is %d but only %d is left to credit of invoice '%s'.", i, li.Amount, total, inv.InvoiceID),
			"total_exceeds_invoice", field, total)
	}
	return AllocateProportionally(li.Amount, left), nil
}

// credit credits part (tax included) of invoice line j: it reverses the line's tax share in each
// jurisdiction and records the line's credited figures.
func (plan *CreditNotePlan) credit(j int, part int64) CreditAllocation {
	il := &plan.Invoice.Lines[j]
	billed := LineBilled(*il)
	first := len(plan.Reversal)
	var share int64
	for k := range il.Taxes {
		t := &il.Taxes[k]
		s := ReversalShare(t.TaxAmount, billed, il.CreditedAmount, part, t.Reversed)
		t.Reversed += s
		share += s
		if s > 0 {
			plan.Reversal = append(plan.Reversal, TaxTransactionLine{LineID: il.InvoiceLineID, Jurisdiction: t.Jurisdiction, Rate: t.Rate, RatePPM: t.RatePPM, TaxAmount: -s})
		}
	}
	for k := first; k < len(plan.Reversal); k++ {
		plan.Reversal[k].TaxableAmount = -(part - share) // the credited amount before tax
	}
	il.CreditedAmount += part
	il.CreditedTax += share
	return CreditAllocation{InvoiceLineID: il.InvoiceLineID, Amount: part, TaxAmount: share}
}

// creditLimits checks the credit note's totals against what is left of its invoice.
func creditLimits(inv Invoice, cn CreditNote) error {
	if left := inv.Total - inv.CreditedTotal; cn.Total > left {
		return CreditLimit(fmt.Sprintf("The credit note's total %d is more than the %d left to credit of invoice '%s'.", cn.Total, left, inv.InvoiceID),
			"total_exceeds_invoice", "lines", left)
	}
	if refundable := inv.AmountPaid - inv.RefundedTotal; cn.RefundAmount > refundable {
		return CreditLimit(fmt.Sprintf("The refund bucket is %d but only %d was paid and not yet refunded on invoice '%s'.", cn.RefundAmount, refundable, inv.InvoiceID),
			"refund_exceeds_paid", "refundAmount", refundable)
	}
	if cn.OffsetAmount > inv.AmountRemaining {
		return CreditLimit(fmt.Sprintf("The offset bucket is %d but only %d remains due on invoice '%s'.", cn.OffsetAmount, inv.AmountRemaining, inv.InvoiceID),
			"offset_exceeds_remaining", "offsetAmount", inv.AmountRemaining)
	}
	return nil
}

// UnreversedTax is the tax of a sale not yet reversed by reversals (a credit note's, each line
// negative), per invoice line and jurisdiction, in the sale's order: what voiding the invoice still
// has to reverse. Lines with nothing left are left out.
func UnreversedTax(sale TaxTransaction, reversals []TaxTransaction) []TaxTransactionLine {
	type key struct{ line, jurisdiction string }
	reversed := map[key]TaxTransactionLine{}
	for _, r := range reversals {
		for _, l := range r.Lines {
			k := key{l.LineID, l.Jurisdiction}
			sum := reversed[k]
			sum.TaxableAmount += l.TaxableAmount
			sum.TaxAmount += l.TaxAmount
			reversed[k] = sum
		}
	}
	var out []TaxTransactionLine
	for _, l := range sale.Lines {
		r := reversed[key{l.LineID, l.Jurisdiction}]
		l.TaxableAmount += r.TaxableAmount
		l.TaxAmount += r.TaxAmount
		if l.TaxAmount != 0 {
			out = append(out, l)
		}
	}
	return out
}

// UsageCorrectionTotal is the credit (tax included) of a usage correction that takes amount (the
// difference in the line's price, UsageCorrectionCredit) off finalized invoice line l: the same
// share of what the customer was billed for the line (LineBilled: its discount, prepaid balance
// and tax in proportion) as amount is of the line's amount, rounded half-up, and never more than
// is left to credit of the line.
func UsageCorrectionTotal(l InvoiceLine, amount int64) int64 {
	if amount <= 0 || l.Amount <= 0 {
		return 0
	}
	credit := ProrateAmount(LineBilled(l), min(amount, l.Amount), l.Amount)
	return max(min(credit, LineCreditable(l)), 0)
}
