package remit

import (
	"slices"
	"time"
)

// sortedKeys are m's keys in order (an entry's lines in a stable order).
func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The posting rules (docs/ledger.md "Posting rules"): one pure function per money movement, from
// the movement (and what the journal already holds of it) to one balanced entry. ok is false when
// the movement moves no money (nothing to post).

// recognitionDay is the unit revenue is recognized in.
const recognitionDay = 24 * time.Hour

// RevenueSchedule is how one finalized subscription line's revenue is recognized evenly per day
// over its service period: Amount is what the line recognizes in all (its amount less what credit
// notes reversed of it), Deferred the part of it not yet recognized, RecognizedThrough how far
// recognition has reached.
type RevenueSchedule struct {
	InvoiceLineID     string
	InvoiceID         string
	PriceID           string
	Currency          string
	PeriodStart       time.Time
	PeriodEnd         time.Time
	Amount            int64
	Deferred          int64
	RecognizedThrough time.Time
}

// ServiceDays is how many days the service period [start, end) spans, counting a part day as a
// day, at least 1.
func ServiceDays(start, end time.Time) int64 {
	d := int64((end.Sub(start) + recognitionDay - 1) / recognitionDay)
	return max(d, 1)
}

// daysBetween is how many whole days lie between from and to, clamped to [0, limit].
func daysBetween(from, to time.Time, limit int64) int64 {
	if !to.After(from) {
		return 0
	}
	return min(int64(to.Sub(from)/recognitionDay), limit)
}

// Recognize moves what of s is earned up to upTo out of Deferred: the deferred amount spread
// evenly over the days from RecognizedThrough to PeriodEnd, for the whole days passed; at the end
// of the period, all of it. It returns the amount recognized and the schedule after.
func (s RevenueSchedule) Recognize(upTo time.Time) (int64, RevenueSchedule) {
	if s.Deferred <= 0 || !upTo.After(s.RecognizedThrough) {
		return 0, s
	}
	left := ServiceDays(s.RecognizedThrough, s.PeriodEnd)
	if !s.PeriodEnd.After(s.RecognizedThrough) {
		left = 0
	}
	step := daysBetween(s.RecognizedThrough, upTo, left)
	if !upTo.Before(s.PeriodEnd) || step >= left {
		amt := s.Deferred
		s.Deferred, s.RecognizedThrough = 0, s.PeriodEnd
		return amt, s
	}
	if step == 0 {
		return 0, s
	}
	amt, _ := mulDiv(s.Deferred, step, left)
	s.Deferred -= amt
	s.RecognizedThrough = s.RecognizedThrough.Add(time.Duration(step) * recognitionDay)
	return amt, s
}

// recognizedOverTime reports whether line l is recognized over its service period (a subscription
// line with a period); other lines are earned at finalization.
func recognizedOverTime(l InvoiceLine) bool {
	return l.LineType == LineRecurring && l.PeriodStart != nil && l.PeriodEnd != nil && l.PeriodEnd.After(*l.PeriodStart)
}

// topUpLine reports whether l sells prepaid balance: its price is owed to the customer as credit,
// never revenue.
func topUpLine(l InvoiceLine) bool {
	return l.PriceType == PriceCreditGrant || l.PriceType == PriceCreditTopUp
}

// LineSchedule is the recognition schedule of finalized line l of inv at `at` (ok false for a line
// earned at once): the days of its period already passed are earned now, the rest deferred.
func LineSchedule(inv Invoice, l InvoiceLine, at time.Time) (RevenueSchedule, bool) {
	if !recognizedOverTime(l) || topUpLine(l) || l.Amount <= 0 {
		return RevenueSchedule{}, false
	}
	s := RevenueSchedule{InvoiceLineID: l.InvoiceLineID, InvoiceID: inv.InvoiceID, PriceID: l.PriceID, Currency: inv.Currency,
		PeriodStart: *l.PeriodStart, PeriodEnd: *l.PeriodEnd, Amount: l.Amount, Deferred: l.Amount, RecognizedThrough: *l.PeriodStart}
	_, s = s.Recognize(at)
	return s, true
}

// PostInvoiceFinalized is the entry of a finalization: Dr receivable for what the customer owes
// before prepaid balance (subtotal − discounts + tax; the prepaid part is taken off by each
// application's own entry), Dr discounts; Cr revenue for what is earned now, deferred revenue for
// the service days still to come (the schedules returned), customer credit for prepaid balance
// sold (credit_grant and credit_top_up lines, net of their discount), tax payable.
func PostInvoiceFinalized(inv Invoice, at time.Time) (JournalEntry, []RevenueSchedule, bool) {
	b := &entryBuilder{}
	b.dr(AccountReceivable, inv.Subtotal-inv.DiscountTotal+inv.TaxTotal)
	var schedules []RevenueSchedule
	for _, l := range inv.Lines {
		if topUpLine(l) {
			b.cr(AccountCustomerCredit, l.Amount-l.DiscountAmount)
			continue
		}
		b.dr(AccountDiscounts, l.DiscountAmount)
		s, ok := LineSchedule(inv, l, at)
		if !ok {
			b.crOf(AccountRevenue, l.PriceID, l.Amount)
			continue
		}
		b.crOf(AccountRevenue, l.PriceID, l.Amount-s.Deferred).crOf(AccountDeferredRevenue, l.PriceID, s.Deferred)
		if s.Deferred > 0 {
			schedules = append(schedules, s)
		}
	}
	b.cr(AccountTaxPayable, inv.TaxTotal)
	e, ok := b.entry(JournalSource{SourceInvoiceFinalized, inv.InvoiceID}, inv.Currency, "Invoice "+deref(inv.Number)+" finalized", at, inv.InvoiceID)
	return e, schedules, ok
}

// PaidLot reports whether a prepaid lot of that type was paid for (a credit note's credit, a
// top-up): it is customer credit, a liability. A grant was given free.
func PaidLot(lotType string) bool { return lotType == EntryCreditNote || lotType == EntryTopUp }

// PostPrepaidApplied is the entry of prepaid balance spent on an invoice (application entry e,
// taken from a lot of type lotType): Dr customer credit for a paid lot, discounts for a free
// grant; Cr receivable.
func PostPrepaidApplied(e BalanceEntry, lotType string) (JournalEntry, bool) {
	amt := -e.Amount
	from := AccountDiscounts
	if PaidLot(lotType) {
		from = AccountCustomerCredit
	}
	b := (&entryBuilder{}).dr(from, amt).cr(AccountReceivable, amt)
	return b.entry(JournalSource{SourcePrepaidApplied, e.EntryID}, e.Currency, "Prepaid balance applied", e.CreatedAt, deref(e.InvoiceID))
}

// PostPrepaidExpired is the entry of an expiry: what expires of a paid lot is no longer owed and
// becomes revenue (breakage): Dr customer credit, Cr revenue. A free grant's expiry moves no money.
func PostPrepaidExpired(e BalanceEntry, lotType string) (JournalEntry, bool) {
	if !PaidLot(lotType) {
		return JournalEntry{}, false
	}
	amt := -e.Amount
	b := (&entryBuilder{}).dr(AccountCustomerCredit, amt).cr(AccountRevenue, amt)
	return b.entry(JournalSource{SourcePrepaidExpired, e.EntryID}, e.Currency, "Prepaid balance expired", e.CreatedAt, "")
}

// PostPaymentSucceeded is the entry of a successful payment: Dr processor clearing (bank for a
// payment received out of band), Cr receivable (bad debt for the part of an invoice written off,
// writtenOff, which the payment recovers); its fee Dr processor fees, Cr clearing.
func PostPaymentSucceeded(p Payment, writtenOff int64, at time.Time) (JournalEntry, bool) {
	into := AccountProcessorClearing
	if p.Method == MethodOutOfBand {
		into = AccountBank
	}
	recovered := min(max(writtenOff, 0), p.Amount)
	b := (&entryBuilder{}).dr(into, p.Amount).cr(AccountBadDebt, recovered).cr(AccountReceivable, p.Amount-recovered)
	b.dr(AccountProcessorFees, p.FeeAmount).cr(AccountProcessorClearing, p.FeeAmount)
	return b.entry(JournalSource{SourcePaymentSucceeded, p.PaymentID}, p.Currency, "Payment received", at, p.InvoiceID)
}

// PostPayout is the entry of a payout of a settlement's net: Dr bank, Cr processor clearing (the
// other way for a negative payout).
func PostPayout(po Payout) (JournalEntry, bool) {
	b := (&entryBuilder{}).dr(AccountBank, po.Amount).cr(AccountProcessorClearing, po.Amount)
	return b.entry(JournalSource{SourcePayout, po.PayoutID}, po.Currency, "Payout of settlement "+po.SettlementID, po.CreatedAt, "")
}

// PostCreditNote is the entry of a credit note: Dr refunds (contra-revenue) for what it credits
// of revenue already recognized, deferred revenue for its share still deferred (deferred, from
// CreditDeferred), tax payable for the tax it reverses; Cr receivable for the offset bucket (bad
// debt for the part of it on an invoice written off), processor clearing for the refund bucket,
// customer credit for the credit bucket.
func PostCreditNote(cn CreditNote, writtenOff int64, deferred map[string]int64) (JournalEntry, bool) {
	net := cn.Total - cn.TaxTotal
	b := &entryBuilder{}
	var taken int64
	for _, price := range sortedKeys(deferred) {
		d := min(max(deferred[price], 0), max(net-taken, 0))
		b.drOf(AccountDeferredRevenue, price, d)
		taken += d
	}
	b.dr(AccountRefunds, net-taken).dr(AccountTaxPayable, cn.TaxTotal)
	offWritten := min(max(writtenOff, 0), cn.OffsetAmount)
	b.cr(AccountBadDebt, offWritten).cr(AccountReceivable, cn.OffsetAmount-offWritten)
	b.cr(AccountProcessorClearing, cn.RefundAmount).cr(AccountCustomerCredit, cn.CreditAmount)
	return b.entry(JournalSource{SourceCreditNote, cn.CreditNoteID}, cn.Currency, "Credit note "+cn.Number, cn.CreatedAt, cn.InvoiceID)
}

// CreditDeferred is what credit note cn takes of its invoice lines' deferred revenue: each
// allocation on a line with a schedule takes, of its amount before tax, the share of the line's
// revenue still deferred (Deferred/Amount), and the schedule's Amount and Deferred go down by
// as much. It returns what it took per price and the schedules changed.
func CreditDeferred(cn CreditNote, schedules []RevenueSchedule) (map[string]int64, []RevenueSchedule) {
	byLine := map[string]int{}
	for i, s := range schedules {
		byLine[s.InvoiceLineID] = i
	}
	total := map[string]int64{}
	var changed []RevenueSchedule
	for _, l := range cn.Lines {
		for _, a := range l.Allocations {
			i, ok := byLine[a.InvoiceLineID]
			if !ok {
				continue
			}
			s := &schedules[i]
			x := min(a.Amount-a.TaxAmount, s.Amount)
			if x <= 0 || s.Amount <= 0 {
				continue
			}
			share, _ := mulDiv(x, s.Deferred, s.Amount)
			s.Amount -= x
			s.Deferred -= share
			total[s.PriceID] += share
			changed = append(changed, *s)
		}
	}
	return total, changed
}

// PostRefundFailed is the entry of a refund the processor refused: the money stays with the
// processor and is credited to the customer's prepaid balance instead: Dr processor clearing, Cr
// customer credit.
func PostRefundFailed(r Refund, at time.Time) (JournalEntry, bool) {
	b := (&entryBuilder{}).dr(AccountProcessorClearing, r.Amount).cr(AccountCustomerCredit, r.Amount)
	return b.entry(JournalSource{SourceRefundFailed, r.RefundID}, r.Currency, "Refund "+r.RefundID+" failed: credited to the balance", at, r.InvoiceID)
}

// PostInvoiceUncollectible is the entry of an invoice written off: what the journal holds of its
// receivable (receivable) moves to bad debt: Dr bad debt, Cr receivable.
func PostInvoiceUncollectible(inv Invoice, receivable int64, at time.Time) (JournalEntry, bool) {
	b := (&entryBuilder{}).dr(AccountBadDebt, receivable).cr(AccountReceivable, receivable)
	return b.entry(JournalSource{SourceInvoiceUncollectible, inv.InvoiceID}, inv.Currency, "Invoice "+deref(inv.Number)+" written off", at, inv.InvoiceID)
}

// PostInvoiceVoided is the entry of a void: what the journal holds of the invoice's receivable
// (receivable) is reversed: Dr tax payable for its tax not yet reversed, customer credit for the
// prepaid balance it sold, deferred revenue for all its schedules still defer (deferred), revenue
// for the rest; Cr receivable (and Cr revenue when the deferred revenue is more than what is left:
// prepaid balance paid for that part, and it stays revenue). Prepaid balance
// applied before the void is not returned (docs/ledger.md), so its part stays revenue.
func PostInvoiceVoided(inv Invoice, receivable int64, deferred map[string]int64, at time.Time) (JournalEntry, bool) {
	var taxLeft int64 = inv.TaxTotal
	for _, l := range inv.Lines {
		taxLeft -= l.CreditedTax
	}
	var sold int64 // prepaid balance it sold: never paid, so never owed
	for _, l := range inv.Lines {
		if topUpLine(l) {
			sold += l.Amount - l.DiscountAmount
		}
	}
	tax := min(max(taxLeft, 0), max(receivable, 0))
	credit := min(max(sold, 0), max(receivable-tax, 0))
	b := (&entryBuilder{}).dr(AccountTaxPayable, tax).dr(AccountCustomerCredit, credit)
	var def int64 // all of it: the schedules stop (when it is more than the receivable left, prepaid balance paid for part of it, which stays revenue)
	for _, price := range sortedKeys(deferred) {
		d := max(deferred[price], 0)
		b.drOf(AccountDeferredRevenue, price, d)
		def += d
	}
	b.dr(AccountRevenue, receivable-tax-credit-def)
	b.cr(AccountReceivable, receivable)
	return b.entry(JournalSource{SourceInvoiceVoided, inv.InvoiceID}, inv.Currency, "Invoice "+deref(inv.Number)+" voided", at, inv.InvoiceID)
}

// PostRevenueRecognized is the entry of one day's recognition in one currency (sourceID names the
// day), of amounts per price: Dr deferred revenue, Cr revenue, for each price.
func PostRevenueRecognized(currency, sourceID string, amounts map[string]int64, at time.Time) (JournalEntry, bool) {
	b := &entryBuilder{}
	for _, price := range sortedKeys(amounts) {
		b.drOf(AccountDeferredRevenue, price, amounts[price]).crOf(AccountRevenue, price, amounts[price])
	}
	return b.entry(JournalSource{SourceRevenueRecognized, sourceID}, currency, "Revenue recognized for "+sourceID, at, "")
}
