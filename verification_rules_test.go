package remit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
)

// wantRule fails unless got has one problem per want, each containing its want (in order); no
// want means no problem.
func wantRule(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d containing %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("problem %d is %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

func i64(v int64) *int64   { return &v }
func str(v string) *string { return &v }

// TestCheckLedgerEntryFacts: a lot's remaining is its amount less what was taken, within 0 and
// its amount; a debit is negative and takes from a lot of the customer in its currency.
func TestCheckLedgerEntryFacts(t *testing.T) {
	lot := func(f func(*remit.LedgerEntryFacts)) remit.LedgerEntryFacts {
		e := remit.LedgerEntryFacts{CustomerID: "c", EntryID: "g", Type: remit.EntryGrant, Currency: "USD", Amount: 1000,
			Remaining: i64(300), Taken: 700}
		if f != nil {
			f(&e)
		}
		return e
	}
	debit := func(f func(*remit.LedgerEntryFacts)) remit.LedgerEntryFacts {
		e := remit.LedgerEntryFacts{CustomerID: "c", EntryID: "a", Type: remit.EntryApplication, Currency: "USD", Amount: -700,
			SourceEntryID: str("g"), InvoiceID: str("inv"), SourceFound: true, SourceType: remit.EntryGrant, SourceCurrency: "USD"}
		if f != nil {
			f(&e)
		}
		return e
	}
	for _, c := range []struct {
		name string
		f    remit.LedgerEntryFacts
		want []string
	}{
		{"grant partly spent", lot(nil), nil},
		{"grant untouched", lot(func(e *remit.LedgerEntryFacts) { e.Remaining, e.Taken = i64(1000), 0 }), nil},
		{"grant all spent", lot(func(e *remit.LedgerEntryFacts) { e.Remaining, e.Taken = i64(0), 1000 }), nil},
		{"credit_note lot", lot(func(e *remit.LedgerEntryFacts) { e.Type, e.CreditNoteID = remit.EntryCreditNote, str("cn") }), nil},
		{"top_up lot", lot(func(e *remit.LedgerEntryFacts) { e.Type, e.InvoiceID = remit.EntryTopUp, str("inv") }), nil},
		{"remaining raised by hand", lot(func(e *remit.LedgerEntryFacts) { e.Remaining = i64(400) }),
			[]string{"has remaining 400 but its amount 1000 less the 700 its expiries and applications took leaves 300"}},
		{"amount raised by hand", lot(func(e *remit.LedgerEntryFacts) { e.Amount = 1200 }), []string{"leaves 500"}},
		{"negative remaining", lot(func(e *remit.LedgerEntryFacts) { e.Remaining, e.Taken = i64(-5), 1005 }),
			[]string{"can never go below 0"}},
		{"remaining above amount", lot(func(e *remit.LedgerEntryFacts) { e.Remaining, e.Taken = i64(1100), -100 }),
			[]string{"more than its amount 1000"}},
		{"negative lot", lot(func(e *remit.LedgerEntryFacts) { e.Amount, e.Remaining, e.Taken = -10, i64(0), -10 }),
			[]string{"a lot must be positive", "more than its amount"}},
		{"lot without remaining", lot(func(e *remit.LedgerEntryFacts) { e.Remaining = nil }), []string{"without a remaining amount"}},
		{"lot with a source", lot(func(e *remit.LedgerEntryFacts) { e.SourceEntryID = str("x") }), []string{"as only debits do"}},
		{"credit_note lot without its note", lot(func(e *remit.LedgerEntryFacts) { e.Type = remit.EntryCreditNote }),
			[]string{"names no credit note"}},
		{"top_up lot without its invoice", lot(func(e *remit.LedgerEntryFacts) { e.Type = remit.EntryTopUp }),
			[]string{"names no invoice"}},
		{"application", debit(nil), nil},
		{"expiry", debit(func(e *remit.LedgerEntryFacts) { e.Type, e.InvoiceID = remit.EntryExpiry, nil }), nil},
		{"debit from a credit_note lot", debit(func(e *remit.LedgerEntryFacts) { e.SourceType = remit.EntryCreditNote }), nil},
		{"positive debit", debit(func(e *remit.LedgerEntryFacts) { e.Amount = 700 }), []string{"a debit must be negative"}},
		{"debit with remaining", debit(func(e *remit.LedgerEntryFacts) { e.Remaining = i64(0) }), []string{"only lots do"}},
		{"application without invoice", debit(func(e *remit.LedgerEntryFacts) { e.InvoiceID = nil }), []string{"names no invoice"}},
		{"debit without source", debit(func(e *remit.LedgerEntryFacts) { e.SourceEntryID, e.SourceFound = nil, false }),
			[]string{"names no lot to take from"}},
		{"debit from a missing lot", debit(func(e *remit.LedgerEntryFacts) { e.SourceFound = false }),
			[]string{"takes 700 from entry g, which is not in the customer's ledger"}},
		{"debit from a debit", debit(func(e *remit.LedgerEntryFacts) { e.SourceType = remit.EntryExpiry }), []string{"which is not a lot"}},
		{"debit in another currency", debit(func(e *remit.LedgerEntryFacts) { e.Currency = "EUR" }),
			[]string{"is in EUR but takes from lot g in USD"}},
		{"unknown type", lot(func(e *remit.LedgerEntryFacts) { e.Type = "gift" }), []string{`has type "gift"`}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckLedgerEntryFacts(c.f), c.want...) })
	}
}

// TestCheckBalanceFacts: a balance is the sum of its entries, which is its lots' remaining, and
// never negative.
func TestCheckBalanceFacts(t *testing.T) {
	for _, c := range []struct {
		name string
		f    remit.BalanceFacts
		want []string
	}{
		{"empty", remit.BalanceFacts{Currency: "USD"}, nil},
		{"balanced", remit.BalanceFacts{Currency: "USD", EntriesTotal: 300, LotsRemaining: 300}, nil},
		{"entries and lots disagree", remit.BalanceFacts{Currency: "USD", EntriesTotal: 300, LotsRemaining: 500},
			[]string{"USD balance whose entries sum to 300 but whose lots have 500 remaining"}},
		{"negative", remit.BalanceFacts{Currency: "USD", EntriesTotal: -200, LotsRemaining: 0},
			[]string{"entries sum to -200", "balance of -200"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckBalanceFacts(c.f), c.want...) })
	}
}

// TestCheckInvoicePaymentFacts: figures add up to the lines, amount paid and refunded total are the
// payments', prepaid applied is the ledger's, and amount remaining and status follow from them.
func TestCheckInvoicePaymentFacts(t *testing.T) {
	// A paid invoice: lines 10000 − 1000 discount − 2000 prepaid + 700 tax = 7700, paid in full,
	// 1200 of it refunded.
	paid := func(f func(*remit.InvoicePaymentFacts)) remit.InvoicePaymentFacts {
		inv := remit.InvoicePaymentFacts{InvoiceID: "inv", Status: remit.InvoicePaid, Subtotal: 10000, DiscountTotal: 1000,
			PrepaidApplied: 2000, TaxTotal: 700, Total: 7700, AmountDue: 7700, AmountPaid: 7700, RefundedTotal: 1200,
			Lines: remit.InvoiceLineTotals{Amount: 10000, Discount: 1000, Prepaid: 2000, Tax: 700}, Paid: 7700, Refunded: 1200, Applied: 2000}
		if f != nil {
			f(&inv)
		}
		return inv
	}
	open := func(inv *remit.InvoicePaymentFacts) {
		inv.Status, inv.AmountPaid, inv.Paid, inv.RefundedTotal, inv.Refunded, inv.AmountRemaining = remit.InvoiceOpen, 0, 0, 0, 0, 7700
	}
	for _, c := range []struct {
		name string
		f    remit.InvoicePaymentFacts
		want []string
	}{
		{"paid", paid(nil), nil},
		{"paid partly by offset", paid(func(inv *remit.InvoicePaymentFacts) { inv.AmountPaid, inv.Paid, inv.OffsetTotal = 5000, 5000, 2700 }), nil},
		{"paid by offset only", paid(func(inv *remit.InvoicePaymentFacts) {
			inv.AmountPaid, inv.Paid, inv.RefundedTotal, inv.Refunded, inv.OffsetTotal = 0, 0, 0, 0, 7700
		}), nil},
		{"open", paid(open), nil},
		{"open partly offset", paid(func(inv *remit.InvoicePaymentFacts) { open(inv); inv.OffsetTotal, inv.AmountRemaining = 700, 7000 }), nil},
		{"uncollectible", paid(func(inv *remit.InvoicePaymentFacts) { open(inv); inv.Status = remit.InvoiceUncollectible }), nil},
		{"void", paid(func(inv *remit.InvoicePaymentFacts) {
			open(inv)
			inv.Status, inv.AmountRemaining = remit.InvoiceVoid, 0
		}), nil},
		{"draft", paid(func(inv *remit.InvoicePaymentFacts) {
			open(inv)
			inv.Status, inv.PrepaidApplied, inv.Lines.Prepaid, inv.Applied, inv.Total, inv.AmountDue, inv.AmountRemaining = remit.InvoiceDraft, 0, 0, 0, 9700, 9700, 9700
		}), nil},
		{"amount paid raised", paid(func(inv *remit.InvoicePaymentFacts) { inv.AmountPaid = 8000 }),
			[]string{"amount paid 8000 but its succeeded payments sum to 7700", "amount remaining 0 but amount due 7700 − paid 8000"}},
		{"payment amount lowered", paid(func(inv *remit.InvoicePaymentFacts) { inv.Paid = 4000 }),
			[]string{"amount paid 7700 but its succeeded payments sum to 4000"}},
		{"refunded total altered", paid(func(inv *remit.InvoicePaymentFacts) { inv.RefundedTotal = 0 }),
			[]string{"refunded total 0 but 1200 of its payments was refunded"}},
		{"total altered", paid(func(inv *remit.InvoicePaymentFacts) { inv.Total = 7000 }),
			[]string{"total 7000 but subtotal 10000 − discounts 1000 − prepaid 2000 + tax 700 is 7700", "amount due 7700 but total 7000"}},
		{"line altered", paid(func(inv *remit.InvoicePaymentFacts) { inv.Lines.Tax = 900 }), []string{"tax total 700 but its lines sum to 900"}},
		{"prepaid without applications", paid(func(inv *remit.InvoicePaymentFacts) { inv.Applied = 1500 }),
			[]string{"prepaid applied 2000 but its balance applications took 1500"}},
		{"paid with something remaining", paid(func(inv *remit.InvoicePaymentFacts) { inv.AmountRemaining = 100 }),
			[]string{"amount remaining 100 but", "is paid but has amount remaining 100"}},
		{"open with nothing remaining", paid(func(inv *remit.InvoicePaymentFacts) { inv.Status = remit.InvoiceOpen }),
			[]string{"is open with amount remaining 0"}},
		{"open remaining altered", paid(func(inv *remit.InvoicePaymentFacts) { open(inv); inv.AmountRemaining = 5 }),
			[]string{"amount remaining 5 but amount due 7700 − paid 0 − offset by credit notes 0 is 7700"}},
		{"void with payments", paid(func(inv *remit.InvoicePaymentFacts) { inv.Status = remit.InvoiceVoid }),
			[]string{"is void but has amount paid 7700"}},
		{"void with something remaining", paid(func(inv *remit.InvoicePaymentFacts) {
			open(inv)
			inv.Status = remit.InvoiceVoid
		}), []string{"is void but has amount remaining 7700"}},
		{"draft with a payment", paid(func(inv *remit.InvoicePaymentFacts) { inv.Status = remit.InvoiceDraft }),
			[]string{"is a draft yet has amount paid 7700"}},
		{"unknown status", paid(func(inv *remit.InvoicePaymentFacts) { inv.Status = "settled" }), []string{`status "settled"`}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckInvoicePaymentFacts(c.f), c.want...) })
	}
}

// TestCheckPaymentReceiptFacts: a succeeded payment has one receipt of the same money; others none;
// amount refunded is what its refunds that did not fail add up to.
func TestCheckPaymentReceiptFacts(t *testing.T) {
	pay := func(f func(*remit.PaymentReceiptFacts)) remit.PaymentReceiptFacts {
		p := remit.PaymentReceiptFacts{PaymentID: "pay", InvoiceID: "inv", Status: remit.PaymentSucceeded, Method: remit.MethodCard,
			Currency: "USD", Amount: 5000, AmountRefunded: 1200, Refunds: 1200, RefundCount: 2,
			Receipt: &remit.ReceiptFacts{ReceiptID: "rcpt", InvoiceID: "inv", Currency: "USD", Method: remit.MethodCard,
				Status: remit.ReceiptPartiallyRefunded, Amount: 5000, AmountRefunded: 1200}}
		if f != nil {
			f(&p)
		}
		return p
	}
	failed := func(p *remit.PaymentReceiptFacts) {
		p.Status, p.Receipt, p.AmountRefunded, p.Refunds, p.RefundCount = remit.PaymentFailed, nil, 0, 0, 0
	}
	for _, c := range []struct {
		name string
		f    remit.PaymentReceiptFacts
		want []string
	}{
		{"partly refunded", pay(nil), nil},
		{"not refunded", pay(func(p *remit.PaymentReceiptFacts) {
			p.AmountRefunded, p.Refunds, p.RefundCount, p.Receipt.AmountRefunded, p.Receipt.Status = 0, 0, 0, 0, remit.ReceiptSucceeded
		}), nil},
		{"fully refunded", pay(func(p *remit.PaymentReceiptFacts) {
			p.AmountRefunded, p.Refunds, p.Receipt.AmountRefunded, p.Receipt.Status = 5000, 5000, 5000, remit.ReceiptRefunded
		}), nil},
		{"failed", pay(failed), nil},
		{"processing", pay(func(p *remit.PaymentReceiptFacts) { failed(p); p.Status = remit.PaymentProcessing }), nil},
		{"no receipt", pay(func(p *remit.PaymentReceiptFacts) { p.Receipt = nil }), []string{"succeeded (5000 USD) but has no receipt"}},
		{"receipt amount altered", pay(func(p *remit.PaymentReceiptFacts) { p.Receipt.Amount = 4000 }),
			[]string{"is for 5000 but its receipt rcpt says 4000"}},
		{"receipt refunded altered", pay(func(p *remit.PaymentReceiptFacts) { p.Receipt.AmountRefunded = 0 }),
			[]string{"amount refunded 1200 but its receipt rcpt says 0", "status partially_refunded, but 0 refunded of 5000 makes it succeeded"}},
		{"receipt status altered", pay(func(p *remit.PaymentReceiptFacts) { p.Receipt.Status = remit.ReceiptRefunded }),
			[]string{"status refunded, but 1200 refunded of 5000 makes it partially_refunded"}},
		{"receipt of another invoice, currency and method", pay(func(p *remit.PaymentReceiptFacts) {
			p.Receipt.InvoiceID, p.Receipt.Currency, p.Receipt.Method = "inv2", "EUR", remit.MethodOutOfBand
		}), []string{"its receipt rcpt is in EUR", "names invoice inv2", "its receipt rcpt says out_of_band"}},
		{"payment refunded altered", pay(func(p *remit.PaymentReceiptFacts) { p.AmountRefunded = 0 }),
			[]string{"amount refunded 0 but its pending and succeeded refunds sum to 1200", "amount refunded 0 but its receipt rcpt says 1200"}},
		{"failed with a receipt", pay(func(p *remit.PaymentReceiptFacts) { p.Status = remit.PaymentFailed }),
			[]string{"is failed yet has receipt rcpt", "is failed yet 2 refunds were made of it"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckPaymentReceiptFacts(c.f), c.want...) })
	}
	wantRule(t, remit.CheckReceiptPaymentFacts(remit.ReceiptPaymentFacts{ReceiptID: "r", PaymentID: "p", PaymentFound: true}))
	wantRule(t, remit.CheckReceiptPaymentFacts(remit.ReceiptPaymentFacts{ReceiptID: "r", PaymentID: "p"}),
		"is the receipt of payment p, which does not exist")
}

// TestCheckCreditNoteFacts: buckets and lines add up to the total, the refund bucket is its
// refunds, the credit bucket (and any failed refund) is on the customer's balance.
func TestCheckCreditNoteFacts(t *testing.T) {
	note := func(f func(*remit.CreditNoteFacts)) remit.CreditNoteFacts {
		c := remit.CreditNoteFacts{CreditNoteID: "cn", InvoiceID: "inv", Currency: "USD", Total: 3000, CreditAmount: 1000,
			RefundAmount: 1500, OffsetAmount: 500, TaxTotal: 210, BalanceEntryID: str("ble"), InvoiceFound: true,
			InvoiceStatus: remit.InvoicePaid, InvoiceCurrency: "USD", Refunds: 1500, FailedRefunds: 400, Credited: 1400,
			Lines: []remit.CreditNoteLine{
				{Bucket: remit.BucketCredit, Amount: 1000, TaxAmount: 70, Allocations: []remit.CreditAllocation{{Amount: 600, TaxAmount: 42}, {Amount: 400, TaxAmount: 28}}},
				{Bucket: remit.BucketRefund, Amount: 1500, TaxAmount: 105, Allocations: []remit.CreditAllocation{{Amount: 1500, TaxAmount: 105}}},
				{Bucket: remit.BucketOffset, Amount: 500, TaxAmount: 35, Allocations: []remit.CreditAllocation{{Amount: 500, TaxAmount: 35}}},
			}}
		if f != nil {
			f(&c)
		}
		return c
	}
	for _, c := range []struct {
		name string
		f    remit.CreditNoteFacts
		want []string
	}{
		{"three buckets, a failed refund credited", note(nil), nil},
		{"on a voided invoice", note(func(c *remit.CreditNoteFacts) { c.InvoiceStatus = remit.InvoiceVoid }), nil},
		{"total altered", note(func(c *remit.CreditNoteFacts) { c.Total = 3500 }),
			[]string{"total 3500 but its credit 1000, refund 1500 and offset 500 buckets add up to 3000", "total 3500 but its lines sum to 3000"}},
		{"bucket altered", note(func(c *remit.CreditNoteFacts) { c.OffsetAmount, c.CreditAmount = 1000, 500 }),
			[]string{"credit bucket 500 but its credit lines sum to 1000", "offset bucket 1000 but its offset lines sum to 500", "should have credited 900"}},
		{"negative bucket", note(func(c *remit.CreditNoteFacts) { c.OffsetAmount, c.CreditAmount = -500, 2000 }),
			[]string{"negative bucket", "credit bucket 2000", "offset bucket -500", "should have credited 2400"}},
		{"tax beyond total", note(func(c *remit.CreditNoteFacts) { c.TaxTotal = 4000 }),
			[]string{"reverses tax 4000 of a total of 3000", "tax total 4000 but its lines' tax sums to 210"}},
		{"line allocations off", note(func(c *remit.CreditNoteFacts) { c.Lines[0].Allocations[1].Amount = 300 }),
			[]string{"a line of 1000 (tax 70) whose allocations to invoice lines add up to 900 (tax 70)"}},
		{"unknown bucket", note(func(c *remit.CreditNoteFacts) { c.Lines[2].Bucket = "gift" }),
			[]string{"offset bucket 500 but its offset lines sum to 0", `in bucket "gift"`}},
		{"unreadable lines", note(func(c *remit.CreditNoteFacts) { c.Lines, c.LinesUnread = nil, true }), []string{"not valid JSON"}},
		{"no invoice", note(func(c *remit.CreditNoteFacts) { c.InvoiceFound = false }), []string{"invoice inv, which does not exist"}},
		{"invoice in another currency", note(func(c *remit.CreditNoteFacts) { c.InvoiceCurrency = "EUR" }), []string{"its invoice inv is in EUR"}},
		{"on a draft", note(func(c *remit.CreditNoteFacts) { c.InvoiceStatus = remit.InvoiceDraft }), []string{"a draft"}},
		{"refund altered", note(func(c *remit.CreditNoteFacts) { c.Refunds = 1000 }), []string{"refund bucket 1500 but its refunds sum to 1000"}},
		{"credit entry altered", note(func(c *remit.CreditNoteFacts) { c.Credited = 1000 }),
			[]string{"should have credited 1400 to the customer's balance (credit bucket 1000 + failed refunds 400) but its balance entries sum to 1000"}},
		{"credit without its entry", note(func(c *remit.CreditNoteFacts) { c.BalanceEntryID = nil }), []string{"names no balance entry"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckCreditNoteFacts(c.f), c.want...) })
	}
}

// TestCheckInvoiceCreditFacts: credited and offset totals are the credit notes', within the
// invoice and its lines.
func TestCheckInvoiceCreditFacts(t *testing.T) {
	inv := func(f func(*remit.InvoiceCreditFacts)) remit.InvoiceCreditFacts {
		i := remit.InvoiceCreditFacts{InvoiceID: "inv", Status: remit.InvoicePaid, Total: 7700, CreditedTotal: 3000, OffsetTotal: 500,
			Notes: 2, NotesTotal: 3000, NotesOffset: 500, LinesCredited: 3000}
		if f != nil {
			f(&i)
		}
		return i
	}
	for _, c := range []struct {
		name string
		f    remit.InvoiceCreditFacts
		want []string
	}{
		{"credited", inv(nil), nil},
		{"uncredited draft", remit.InvoiceCreditFacts{InvoiceID: "d", Status: remit.InvoiceDraft, Total: 100}, nil},
		{"credited in full", inv(func(i *remit.InvoiceCreditFacts) { i.CreditedTotal, i.NotesTotal, i.LinesCredited = 7700, 7700, 7700 }), nil},
		{"credited total altered", inv(func(i *remit.InvoiceCreditFacts) { i.CreditedTotal = 0 }),
			[]string{"credited total 0 but its 2 credit notes total 3000"}},
		{"offset total altered", inv(func(i *remit.InvoiceCreditFacts) { i.OffsetTotal = 800 }),
			[]string{"offset total 800 but its credit notes' offset buckets sum to 500"}},
		{"notes beyond the total", inv(func(i *remit.InvoiceCreditFacts) { i.Total = 2000 }),
			[]string{"credit notes totalling 3000, more than its total 2000"}},
		{"lines disagree", inv(func(i *remit.InvoiceCreditFacts) { i.LinesCredited, i.OverCreditedLines = 9000, 1 }),
			[]string{"lines credited 9000 in all", "1 lines credited beyond what they billed"}},
		{"draft with notes", inv(func(i *remit.InvoiceCreditFacts) { i.Status = remit.InvoiceDraft }), []string{"is a draft with 2 credit notes"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckInvoiceCreditFacts(c.f), c.want...) })
	}
}

// TestCheckInvoiceTaxFacts: the committed sale records the invoice's tax; credit notes and a void
// reverse no more than it, each exactly what its reversal records.
func TestCheckInvoiceTaxFacts(t *testing.T) {
	inv := func(f func(*remit.InvoiceTaxFacts)) remit.InvoiceTaxFacts {
		i := remit.InvoiceTaxFacts{InvoiceID: "inv", Status: remit.InvoicePaid, TaxTotal: 700,
			Sale: &remit.SaleTaxFacts{TaxTransactionID: "txn", Found: true, Type: remit.TaxSale, Status: remit.TaxCommitted,
				SourceDocumentID: "inv", TotalTax: 700, LinesTax: 700},
			NotesTax: 210, NotesReversed: 210, LinesCreditedTax: 210}
		if f != nil {
			f(&i)
		}
		return i
	}
	void := func(i *remit.InvoiceTaxFacts) {
		i.Status, i.NotesTax, i.NotesReversed, i.LinesCreditedTax, i.VoidReversals, i.VoidReversed = remit.InvoiceVoid, 0, 0, 0, 1, 700
	}
	for _, c := range []struct {
		name string
		f    remit.InvoiceTaxFacts
		want []string
	}{
		{"paid, partly reversed", inv(nil), nil},
		{"void", inv(void), nil},
		{"void without tax", inv(func(i *remit.InvoiceTaxFacts) {
			void(i)
			i.TaxTotal, i.Sale.TotalTax, i.Sale.LinesTax, i.VoidReversals, i.VoidReversed = 0, 0, 0, 0, 0
		}), nil},
		{"draft with a quoted sale", inv(func(i *remit.InvoiceTaxFacts) {
			i.Status, i.Sale.Status, i.NotesTax, i.NotesReversed, i.LinesCreditedTax = remit.InvoiceDraft, remit.TaxQuoted, 0, 0, 0
		}), nil},
		{"draft whose sale was committed through the route, then refreshed", inv(func(i *remit.InvoiceTaxFacts) {
			i.Status, i.TaxTotal, i.NotesTax, i.NotesReversed, i.LinesCreditedTax = remit.InvoiceDraft, 900, 0, 0, 0
		}), nil},
		{"draft without tax transaction", remit.InvoiceTaxFacts{InvoiceID: "d", Status: remit.InvoiceDraft}, nil},
		{"sale altered", inv(func(i *remit.InvoiceTaxFacts) { i.Sale.TotalTax = 500 }),
			[]string{"total tax 500 but lines summing to 700", "charged tax 700 but its committed sale txn records 500"}},
		{"sale left quoted", inv(func(i *remit.InvoiceTaxFacts) { i.Sale.Status = remit.TaxQuoted }), []string{"is quoted, not committed"}},
		{"sale of another document", inv(func(i *remit.InvoiceTaxFacts) { i.Sale.Type, i.Sale.SourceDocumentID = remit.TaxReversal, "cn" }),
			[]string{"a reversal of cn, not the sale of this invoice"}},
		{"missing sale", inv(func(i *remit.InvoiceTaxFacts) { i.Sale.Found = false }), []string{"names tax transaction txn, which does not exist"}},
		{"no sale", inv(func(i *remit.InvoiceTaxFacts) { i.Sale = nil }), []string{"is paid with tax 700 but names no tax transaction"}},
		{"unreadable sale lines", inv(func(i *remit.InvoiceTaxFacts) { i.Sale.LinesUnread = true }), []string{"not valid JSON"}},
		{"notes reversed more than charged", inv(func(i *remit.InvoiceTaxFacts) { i.NotesTax, i.NotesReversed, i.LinesCreditedTax = 800, 800, 800 }),
			[]string{"had 800 of tax reversed by its credit notes, more than the 700 it charged"}},
		{"reversal altered", inv(func(i *remit.InvoiceTaxFacts) { i.NotesReversed = 300 }),
			[]string{"credit notes reversing 210 of tax but their reversal transactions record 300"}},
		{"line credited tax altered", inv(func(i *remit.InvoiceTaxFacts) { i.LinesCreditedTax, i.OverReversedLines = 900, 1 }),
			[]string{"lines with 900 of tax reversed", "1 lines with more tax reversed than they charged"}},
		{"void reversed twice", inv(func(i *remit.InvoiceTaxFacts) { void(i); i.VoidReversals, i.VoidReversed = 2, 1400 }),
			[]string{"one reversal of it is due, but 2 name it"}},
		{"void reversal altered", inv(func(i *remit.InvoiceTaxFacts) { void(i); i.VoidReversed = 600 }),
			[]string{"its reversal reverses 600, but 700 of its tax was left to reverse"}},
		{"void after a credit note reverses what the note left", inv(func(i *remit.InvoiceTaxFacts) {
			i.Status, i.VoidReversals, i.VoidReversed = remit.InvoiceVoid, 1, 490
		}), nil},
		{"void after a credit note reversing the sale's whole tax again", inv(func(i *remit.InvoiceTaxFacts) {
			i.Status, i.VoidReversals, i.VoidReversed = remit.InvoiceVoid, 1, 700
		}), []string{"its reversal reverses 700, but 490 of its tax was left to reverse (700 charged, 210 reversed by credit notes)"}},
		{"void after credit notes reversed all its tax", inv(func(i *remit.InvoiceTaxFacts) {
			i.Status, i.NotesTax, i.NotesReversed, i.LinesCreditedTax = remit.InvoiceVoid, 700, 700, 700
		}), nil},
		{"void without reversal", inv(func(i *remit.InvoiceTaxFacts) { void(i); i.VoidReversals, i.VoidReversed = 0, 0 }),
			[]string{"but 0 name it"}},
		{"reversed as void but paid", inv(func(i *remit.InvoiceTaxFacts) { i.VoidReversals, i.VoidReversed = 1, 700 }),
			[]string{"is paid with 490 of tax left unreversed, yet 1 reversal transactions reverse it as voided"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckInvoiceTaxFacts(c.f), c.want...) })
	}
}

// TestCheckTaxReversalFacts: a reversal is committed, negative, adds up, and reverses its credit
// note's tax or a void invoice.
func TestCheckTaxReversalFacts(t *testing.T) {
	rev := func(f func(*remit.TaxReversalFacts)) remit.TaxReversalFacts {
		r := remit.TaxReversalFacts{TaxTransactionID: "txn", Status: remit.TaxCommitted, TotalTax: -210, LinesTax: -210,
			SourceDocumentID: "cn", NoteFound: true, NoteTaxTotal: 210, NoteTaxTransactionID: str("txn")}
		if f != nil {
			f(&r)
		}
		return r
	}
	voided := func(r *remit.TaxReversalFacts) {
		r.SourceDocumentID, r.NoteFound, r.NoteTaxTotal, r.NoteTaxTransactionID = "inv", false, 0, nil
		r.InvoiceFound, r.InvoiceStatus = true, remit.InvoiceVoid
	}
	for _, c := range []struct {
		name string
		f    remit.TaxReversalFacts
		want []string
	}{
		{"of a credit note", rev(nil), nil},
		{"of a void", rev(voided), nil},
		{"quoted", rev(func(r *remit.TaxReversalFacts) { r.Status = remit.TaxQuoted }), []string{"reversal in state quoted"}},
		{"positive", rev(func(r *remit.TaxReversalFacts) { r.TotalTax, r.LinesTax, r.NoteTaxTotal = 210, 210, -210 }),
			[]string{"is a reversal of 210"}},
		{"total altered", rev(func(r *remit.TaxReversalFacts) { r.TotalTax = -100 }),
			[]string{"total tax -100 but its lines sum to -210", "reverses 100 of tax but its credit note cn reverses 210"}},
		{"unreadable lines", rev(func(r *remit.TaxReversalFacts) { r.LinesUnread = true }), []string{"not valid JSON"}},
		{"note names another", rev(func(r *remit.TaxReversalFacts) { r.NoteTaxTransactionID = str("other") }),
			[]string{"which names another tax transaction"}},
		{"invoice not void", rev(func(r *remit.TaxReversalFacts) { voided(r); r.InvoiceStatus = remit.InvoiceOpen }),
			[]string{"as voided, but the invoice is open"}},
		{"of nothing", rev(func(r *remit.TaxReversalFacts) { voided(r); r.InvoiceFound = false }),
			[]string{"reverses document inv, which is neither a credit note nor an invoice"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckTaxReversalFacts(c.f), c.want...) })
	}
}

// TestCheckSettlementFacts: gross, fees and count are the payments'; a paid settlement was paid
// out its net.
func TestCheckSettlementFacts(t *testing.T) {
	stl := func(f func(*remit.SettlementFacts)) remit.SettlementFacts {
		s := remit.SettlementFacts{SettlementID: "stl", Currency: "USD", Status: remit.SettlementPaid, Gross: 10000, Refunds: 1200,
			Fees: 320, PaymentCount: 2, Closed: true, Paid: true,
			Payout:   &remit.PayoutFacts{PayoutID: "po", Found: true, SettlementID: "stl", Currency: "USD", Amount: 8480},
			Payments: 2, PaymentsAmount: 10000, PaymentsFees: 320}
		if f != nil {
			f(&s)
		}
		return s
	}
	open := func(s *remit.SettlementFacts) {
		s.Status, s.Closed, s.Paid, s.Payout = remit.SettlementOpen, false, false, nil
	}
	for _, c := range []struct {
		name string
		f    remit.SettlementFacts
		want []string
	}{
		{"paid", stl(nil), nil},
		{"open", stl(open), nil},
		{"closed", stl(func(s *remit.SettlementFacts) { open(s); s.Status, s.Closed = remit.SettlementClosed, true }), nil},
		{"refunds beyond gross: a negative payout", stl(func(s *remit.SettlementFacts) {
			s.Gross, s.PaymentsAmount, s.Fees, s.PaymentsFees, s.Payments, s.PaymentCount, s.Payout.Amount = 0, 0, 0, 0, 0, 0, -1200
		}), nil},
		{"gross altered", stl(func(s *remit.SettlementFacts) { s.Gross = 11000 }),
			[]string{"gross 11000 but the 2 payments in it sum to 10000", "paid out 8480 USD but its net is 9480 USD"}},
		{"fees and count altered", stl(func(s *remit.SettlementFacts) { s.Fees, s.PaymentCount, s.Payout.Amount = 300, 3, 8500 }),
			[]string{"fees 300 but its payments' fees sum to 320", "counts 3 payments but 2 name it"}},
		{"foreign payments", stl(func(s *remit.SettlementFacts) { s.Foreign = 1 }), []string{"holds 1 payments that are not succeeded card payments in USD"}},
		{"payout altered", stl(func(s *remit.SettlementFacts) { s.Payout.Amount = 9000 }), []string{"was paid out 9000 USD but its net is 8480 USD"}},
		{"payout of another settlement", stl(func(s *remit.SettlementFacts) { s.Payout.SettlementID = "stl2" }), []string{"which pays settlement stl2"}},
		{"payout missing", stl(func(s *remit.SettlementFacts) { s.Payout.Found = false }), []string{"payout po, which does not exist"}},
		{"paid without payout", stl(func(s *remit.SettlementFacts) { s.Payout = nil }), []string{"is paid but names no payout"}},
		{"paid without times", stl(func(s *remit.SettlementFacts) { s.Paid = false }), []string{"lacks its closing or payment time"}},
		{"open with payout", stl(func(s *remit.SettlementFacts) { s.Status = remit.SettlementOpen }), []string{"is open yet names payout po"}},
		{"closed without time", stl(func(s *remit.SettlementFacts) { open(s); s.Status = remit.SettlementClosed }), []string{"no closing time"}},
		{"unknown status", stl(func(s *remit.SettlementFacts) { s.Status = "gone" }), []string{`status "gone"`}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckSettlementFacts(c.f), c.want...) })
	}
}

// TestCheckSettledPaymentFacts: succeeded card payments, and only they, are in a settlement of
// their currency.
func TestCheckSettledPaymentFacts(t *testing.T) {
	card := func(f func(*remit.SettledPaymentFacts)) remit.SettledPaymentFacts {
		p := remit.SettledPaymentFacts{PaymentID: "pay", Status: remit.PaymentSucceeded, Method: remit.MethodCard, Currency: "USD",
			SettlementID: str("stl"), SettlementFound: true, SettlementCurrency: "USD"}
		if f != nil {
			f(&p)
		}
		return p
	}
	unsettled := func(p *remit.SettledPaymentFacts) {
		p.SettlementID, p.SettlementFound, p.SettlementCurrency = nil, false, ""
	}
	for _, c := range []struct {
		name string
		f    remit.SettledPaymentFacts
		want []string
	}{
		{"settled card payment", card(nil), nil},
		{"out of band", card(func(p *remit.SettledPaymentFacts) { unsettled(p); p.Method = remit.MethodOutOfBand }), nil},
		{"failed", card(func(p *remit.SettledPaymentFacts) { unsettled(p); p.Status = remit.PaymentFailed }), nil},
		{"unsettled card payment", card(unsettled), []string{"in no settlement"}},
		{"settled failure", card(func(p *remit.SettledPaymentFacts) { p.Status = remit.PaymentFailed }),
			[]string{"is a failed card payment, yet settlement stl counts it"}},
		{"missing settlement", card(func(p *remit.SettledPaymentFacts) { p.SettlementFound = false }), []string{"settlement stl, which does not exist"}},
		{"settlement in another currency", card(func(p *remit.SettledPaymentFacts) { p.SettlementCurrency = "EUR" }),
			[]string{"is in USD but its settlement stl is in EUR"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckSettledPaymentFacts(c.f), c.want...) })
	}
	wantRule(t, remit.CheckSettlementRefundFacts(remit.SettlementRefundFacts{Currency: "USD", Settled: 900, SettledCount: 2, Refunds: 900, RefundCount: 2}))
	wantRule(t, remit.CheckSettlementRefundFacts(remit.SettlementRefundFacts{Currency: "USD", Settled: 900, SettledCount: 2, Refunds: 1200, RefundCount: 3}),
		"USD settlements hold refunds of 900 but the refunds of card payments that did not fail sum to 1200", "count 2 refunds but 3")
}

// TestDocumentNumbering: every number from 1 to the counter, once, in any order; malformed,
// duplicate and out-of-range numbers and gaps are each reported.
func TestDocumentNumbering(t *testing.T) {
	for _, c := range []struct {
		name     string
		counter  int64
		numbers  []string
		problems []string // one per number, "" for none
		gaps     []string
	}{
		{"none", 0, nil, nil, nil},
		{"in order", 3, []string{"INV-000001", "INV-000002", "INV-000003"}, []string{"", "", ""}, nil},
		{"any order", 3, []string{"INV-000003", "INV-000001", "INV-000002"}, []string{"", "", ""}, nil},
		{"past six digits", 1000001, nil, nil, []string{"1-1000001:1000001"}},
		{"a seven-digit number", 1000000, []string{"INV-1000000"}, []string{""}, []string{"1-999999:999999"}},
		{"a gap", 5, []string{"INV-000001", "INV-000005", "INV-000002"}, []string{"", "", ""}, []string{"3-4:2"}},
		{"counter behind", 2, []string{"INV-000001", "INV-000002", "INV-000003"}, []string{"", "", "beyond the counter, which stands at 2"}, nil},
		{"no counter", 0, []string{"INV-000001"}, []string{"beyond the counter, which stands at 0"}, nil},
		{"counter ahead", 4, []string{"INV-000001", "INV-000002"}, []string{"", ""}, []string{"3-4:2"}},
		{"twice", 2, []string{"INV-000001", "INV-000001"}, []string{"", "which another document carries too"}, []string{"2-2:1"}},
		{"malformed", 3, []string{"INV-00001", "INV-0000001", "INV-00000a", "CN-000001", "INV-000000", "INV-000003"},
			[]string{"not of the form INV-000001", "not of the form", "not of the form", "not of the form", "not of the form", ""},
			[]string{"1-2:2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := remit.NewDocumentNumbering("INV-", c.counter, int64(len(c.numbers)))
			for i, n := range c.numbers {
				got := d.Add(n)
				if (got == "") != (c.problems[i] == "") || !strings.Contains(got, c.problems[i]) {
					t.Errorf("%s: %q, want %q", n, got, c.problems[i])
				}
			}
			var gaps []string
			d.Gaps(func(from, to, unused int64) { gaps = append(gaps, fmt.Sprintf("%d-%d:%d", from, to, unused)) })
			if fmt.Sprint(gaps) != fmt.Sprint(c.gaps) {
				t.Errorf("gaps %v, want %v", gaps, c.gaps)
			}
		})
	}
	// A counter far beyond the documents is followed one by one only so far; the rest is one range
	// with how many of it are unused.
	d := remit.NewDocumentNumbering("CN-", 5<<20, 2)
	for _, n := range []string{"CN-000001", d.Format(4 << 20)} {
		if p := d.Add(n); p != "" {
			t.Fatalf("%s: %s", n, p)
		}
	}
	var gaps []string
	d.Gaps(func(from, to, unused int64) { gaps = append(gaps, fmt.Sprintf("%d-%d:%d", from, to, unused)) })
	if want := fmt.Sprintf("[2-%d:%d %d-%d:%d]", 1<<20+2, 1<<20+1, 1<<20+3, 5<<20, 4<<20-3); fmt.Sprint(gaps) != want {
		t.Errorf("gaps %v, want %s", gaps, want)
	}
}

// TestCheckInvoiceNumberFacts: a draft has no number, every other invoice has one.
func TestCheckInvoiceNumberFacts(t *testing.T) {
	for _, c := range []struct {
		status remit.InvoiceStatus
		number *string
		want   []string
	}{
		{remit.InvoiceDraft, nil, nil},
		{remit.InvoiceOpen, str("INV-000001"), nil},
		{remit.InvoiceVoid, str("INV-000001"), nil},
		{remit.InvoiceDraft, str("INV-000001"), []string{"is a draft but carries number INV-000001"}},
		{remit.InvoicePaid, nil, []string{"is paid but has no number"}},
	} {
		wantRule(t, remit.CheckInvoiceNumberFacts(remit.InvoiceNumberFacts{InvoiceID: "inv", Status: c.status, Number: c.number}), c.want...)
	}
}

// TestCheckProcessorPaymentFacts: a succeeded sandbox payment has its succeeded charge, alike in
// every amount; no other payment has a succeeded sandbox charge; open attempts are left alone.
func TestCheckProcessorPaymentFacts(t *testing.T) {
	pay := func(f func(*remit.ProcessorPaymentFacts)) remit.ProcessorPaymentFacts {
		p := remit.ProcessorPaymentFacts{PaymentID: "pay", Status: remit.PaymentSucceeded, Method: remit.MethodCard,
			Processor: remit.ProcessorSandbox, Currency: "USD", Amount: 5000, Fee: 175, IdempotencyRef: str("pay"),
			ProcessorReference: str("sbch_pay"), Charge: &remit.ProcessorChargeFacts{IdempotencyRef: "pay", Reference: "sbch_pay",
				Status: "succeeded", Currency: "USD", Amount: 5000, Fee: 175}}
		if f != nil {
			f(&p)
		}
		return p
	}
	oob := func(p *remit.ProcessorPaymentFacts) {
		p.Method, p.Processor, p.Fee, p.IdempotencyRef, p.ProcessorReference, p.Charge = remit.MethodOutOfBand, remit.ProcessorOutOfBand, 0, nil, nil, nil
	}
	for _, c := range []struct {
		name string
		f    remit.ProcessorPaymentFacts
		want []string
	}{
		{"succeeded", pay(nil), nil},
		{"out of band", pay(oob), nil},
		{"declined", pay(func(p *remit.ProcessorPaymentFacts) {
			p.Status, p.Charge.Status, p.Charge.Fee = remit.PaymentFailed, "failed", 0
		}), nil},
		{"never reached the processor", pay(func(p *remit.ProcessorPaymentFacts) { p.Status, p.Charge = remit.PaymentFailed, nil }), nil},
		{"processing, charged meanwhile", pay(func(p *remit.ProcessorPaymentFacts) { p.Status, p.ProcessorReference = remit.PaymentProcessing, nil }), nil},
		{"awaiting the customer", pay(func(p *remit.ProcessorPaymentFacts) {
			p.Status, p.Charge.Status = remit.PaymentRequiresAction, "requires_action"
		}), nil},
		{"through stripe", pay(func(p *remit.ProcessorPaymentFacts) {
			p.Processor, p.Charge, p.ProcessorReference = "stripe", nil, str("pi_1")
		}), nil},
		{"no charge", pay(func(p *remit.ProcessorPaymentFacts) { p.Charge = nil }), []string{"succeeded (5000 USD) but the processor made no charge for it"}},
		{"declined charge", pay(func(p *remit.ProcessorPaymentFacts) { p.Charge.Status = "failed" }), []string{"its processor charge sbch_pay failed"}},
		{"amount altered", pay(func(p *remit.ProcessorPaymentFacts) { p.Amount = 6000 }), []string{"is for 6000 USD but the processor charged 5000 USD"}},
		{"fee altered", pay(func(p *remit.ProcessorPaymentFacts) { p.Fee = 0 }), []string{"fee 0 but the processor took a fee of 175"}},
		{"reference altered", pay(func(p *remit.ProcessorPaymentFacts) { p.ProcessorReference = str("sbch_x") }),
			[]string{"names processor reference sbch_x but its charge is sbch_pay"}},
		{"idempotency reference altered", pay(func(p *remit.ProcessorPaymentFacts) { p.IdempotencyRef = str("pay2") }),
			[]string{"is known to the processor by pay2, not by its own ID"}},
		{"status altered to failed", pay(func(p *remit.ProcessorPaymentFacts) { p.Status = remit.PaymentFailed }),
			[]string{"is failed, yet the processor charged 5000 USD for it (charge sbch_pay)"}},
		{"processor altered", pay(func(p *remit.ProcessorPaymentFacts) { p.Processor = "stripe" }),
			[]string{"went through stripe, yet the sandbox processor charged 5000 for it"}},
		{"card recorded out of band", pay(func(p *remit.ProcessorPaymentFacts) { p.Processor = remit.ProcessorOutOfBand }),
			[]string{"card payment recorded as received out of band"}},
		{"out of band charged", pay(func(p *remit.ProcessorPaymentFacts) {
			c := p.Charge
			oob(p)
			p.Charge = c
		}), []string{"yet the sandbox processor has a succeeded charge of 5000 for it"}},
		{"out of band through a processor", pay(func(p *remit.ProcessorPaymentFacts) { oob(p); p.Processor = "sandbox" }),
			[]string{"was received out of band but names processor sandbox"}},
		{"unknown method", pay(func(p *remit.ProcessorPaymentFacts) { p.Method = "cash" }), []string{`"cash", which is no payment method`}},
		{"unknown status", pay(func(p *remit.ProcessorPaymentFacts) { p.Status = "done" }), []string{`status "done"`}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckProcessorPaymentFacts(c.f), c.want...) })
	}
	charge := remit.ProcessorChargeFacts{IdempotencyRef: "pay_gone", Reference: "sbch_pay_gone", Status: "succeeded", Currency: "USD", Amount: 5000, Fee: 175}
	wantRule(t, remit.CheckUnclaimedChargeFacts(charge), "charged 5000 USD (fee 175) for pay_gone, which is no payment of any merchant account")
	charge.Status = "failed"
	wantRule(t, remit.CheckUnclaimedChargeFacts(charge))
}

// TestCheckProcessorRefundFacts: a succeeded sandbox refund was made as recorded; a failed one was
// not made at all.
func TestCheckProcessorRefundFacts(t *testing.T) {
	ref := func(f func(*remit.ProcessorRefundFacts)) remit.ProcessorRefundFacts {
		r := remit.ProcessorRefundFacts{RefundID: "re", Status: remit.RefundSucceeded, Currency: "USD", Amount: 1200, ChargeReference: "sbch_pay",
			Recorded: true, RecordedAmount: 1200, RecordedCurrency: "USD", RecordedChargeReference: "sbch_pay"}
		if f != nil {
			f(&r)
		}
		return r
	}
	for _, c := range []struct {
		name string
		f    remit.ProcessorRefundFacts
		want []string
	}{
		{"succeeded", ref(nil), nil},
		{"pending, not sent yet", ref(func(r *remit.ProcessorRefundFacts) { r.Status, r.Recorded = remit.RefundPending, false }), nil},
		{"pending, made", ref(func(r *remit.ProcessorRefundFacts) { r.Status = remit.RefundPending }), nil},
		{"failed", ref(func(r *remit.ProcessorRefundFacts) { r.Status, r.Recorded = remit.RefundFailed, false }), nil},
		{"not made", ref(func(r *remit.ProcessorRefundFacts) { r.Recorded = false }), []string{"succeeded (1200 USD) but the processor made no such refund"}},
		{"amount altered", ref(func(r *remit.ProcessorRefundFacts) { r.Amount = 1500 }),
			[]string{"is 1500 USD of charge sbch_pay but the processor refunded 1200 USD of charge sbch_pay"}},
		{"failed but made", ref(func(r *remit.ProcessorRefundFacts) { r.Status = remit.RefundFailed }),
			[]string{"failed and was credited to the customer's balance, yet the processor refunded 1200 USD"}},
		{"unknown status", ref(func(r *remit.ProcessorRefundFacts) { r.Status = "done" }), []string{`status "done"`}},
	} {
		t.Run(c.name, func(t *testing.T) { wantRule(t, remit.CheckProcessorRefundFacts(c.f), c.want...) })
	}
}

func TestCheckInvoiceLinesFacts(t *testing.T) {
	for _, c := range []struct {
		f    remit.InvoiceLinesFacts
		want int
	}{
		{remit.InvoiceLinesFacts{InvoiceID: "inv_1", Agree: true}, 0},
		{remit.InvoiceLinesFacts{InvoiceID: "inv_1", Agree: false}, 1},
	} {
		if got := remit.CheckInvoiceLinesFacts(c.f); len(got) != c.want {
			t.Errorf("%+v: %q, want %d problems", c.f, got, c.want)
		}
	}
}
