package remit

import (
	"reflect"
	"testing"
	"time"
)

func TestPostingRules(t *testing.T) {
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feb1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	num := "INV-000001"
	cnum := "ble_lot"
	inv := Invoice{InvoiceID: "inv_1", Number: &num, Currency: "usd", Subtotal: 3100 + 500, DiscountTotal: 310, TaxTotal: 329,
		Lines: []InvoiceLine{
			{InvoiceLineID: "il_sub", LineType: LineRecurring, PriceID: "pro", Amount: 3100, DiscountAmount: 310, PeriodStart: &jan1, PeriodEnd: &feb1},
			{InvoiceLineID: "il_once", LineType: LineOneTime, PriceID: "setup", Amount: 500},
		}}
	topUp := Invoice{InvoiceID: "inv_2", Currency: "usd", Subtotal: 1000, DiscountTotal: 100,
		Lines: []InvoiceLine{{InvoiceLineID: "il_t", LineType: LineOneTime, PriceType: PriceCreditTopUp, Amount: 1000, DiscountAmount: 100}}}
	cn := CreditNote{CreditNoteID: "cn_1", InvoiceID: "inv_1", Number: "CN-000001", Currency: "usd", Total: 1100, TaxTotal: 100,
		OffsetAmount: 300, RefundAmount: 500, CreditAmount: 300}
	rows := []struct {
		name  string
		entry func() (JournalEntry, bool)
		want  []Posting
	}{
		{"finalized at the period's start: the subscription line deferred", func() (JournalEntry, bool) {
			e, _, ok := PostInvoiceFinalized(inv, jan1)
			return e, ok
		}, []Posting{{AccountReceivable, 3619, 0, ""}, {AccountDiscounts, 310, 0, ""}, {AccountDeferredRevenue, 0, 3100, "pro"}, {AccountRevenue, 0, 500, "setup"}, {AccountTaxPayable, 0, 329, ""}}},
		{"finalized ten days into the period: ten of 31 days earned", func() (JournalEntry, bool) {
			e, _, ok := PostInvoiceFinalized(inv, jan1.Add(10*recognitionDay+time.Hour))
			return e, ok
		}, []Posting{{AccountReceivable, 3619, 0, ""}, {AccountDiscounts, 310, 0, ""}, {AccountRevenue, 0, 1000, "pro"}, {AccountDeferredRevenue, 0, 2100, "pro"},
			{AccountRevenue, 0, 500, "setup"}, {AccountTaxPayable, 0, 329, ""}}},
		{"finalized top-up: customer credit", func() (JournalEntry, bool) {
			e, _, ok := PostInvoiceFinalized(topUp, jan1)
			return e, ok
		}, []Posting{{AccountReceivable, 900, 0, ""}, {AccountCustomerCredit, 0, 900, ""}}},
		{"prepaid from a free grant", func() (JournalEntry, bool) {
			return PostPrepaidApplied(BalanceEntry{EntryID: "ble_a", Amount: -200, Currency: "usd", InvoiceID: &cnum}, EntryGrant)
		}, []Posting{{AccountDiscounts, 200, 0, ""}, {AccountReceivable, 0, 200, ""}}},
		{"prepaid from a paid lot", func() (JournalEntry, bool) {
			return PostPrepaidApplied(BalanceEntry{EntryID: "ble_a", Amount: -200, Currency: "usd"}, EntryTopUp)
		}, []Posting{{AccountCustomerCredit, 200, 0, ""}, {AccountReceivable, 0, 200, ""}}},
		{"paid lot expired: breakage", func() (JournalEntry, bool) {
			return PostPrepaidExpired(BalanceEntry{EntryID: "ble_x", Amount: -50, Currency: "usd"}, EntryCreditNote)
		}, []Posting{{AccountCustomerCredit, 50, 0, ""}, {AccountRevenue, 0, 50, ""}}},
		{"card payment with its fee", func() (JournalEntry, bool) {
			return PostPaymentSucceeded(Payment{PaymentID: "pay_1", InvoiceID: "inv_1", Amount: 3419, FeeAmount: 129, Currency: "usd", Method: MethodCard}, 0, jan1)
		}, []Posting{{AccountProcessorClearing, 3419, 0, ""}, {AccountReceivable, 0, 3419, ""}, {AccountProcessorFees, 129, 0, ""}, {AccountProcessorClearing, 0, 129, ""}}},
		{"out-of-band payment of an invoice written off", func() (JournalEntry, bool) {
			return PostPaymentSucceeded(Payment{PaymentID: "pay_2", Amount: 1000, Currency: "usd", Method: MethodOutOfBand}, 1000, jan1)
		}, []Posting{{AccountBank, 1000, 0, ""}, {AccountBadDebt, 0, 1000, ""}}},
		{"payout", func() (JournalEntry, bool) {
			return PostPayout(Payout{PayoutID: "po_1", SettlementID: "stl_1", Amount: 3290, Currency: "usd"})
		}, []Posting{{AccountBank, 3290, 0, ""}, {AccountProcessorClearing, 0, 3290, ""}}},
		{"negative payout", func() (JournalEntry, bool) {
			return PostPayout(Payout{PayoutID: "po_2", Amount: -70, Currency: "usd"})
		}, []Posting{{AccountBank, 0, 70, ""}, {AccountProcessorClearing, 70, 0, ""}}},
		{"credit note, all three buckets, part deferred", func() (JournalEntry, bool) {
			return PostCreditNote(cn, 0, map[string]int64{"pro": 400})
		}, []Posting{{AccountDeferredRevenue, 400, 0, "pro"}, {AccountRefunds, 600, 0, ""}, {AccountTaxPayable, 100, 0, ""},
			{AccountReceivable, 0, 300, ""}, {AccountProcessorClearing, 0, 500, ""}, {AccountCustomerCredit, 0, 300, ""}}},
		{"credit note offset on an invoice written off", func() (JournalEntry, bool) {
			c := CreditNote{CreditNoteID: "cn_2", Currency: "usd", Total: 300, OffsetAmount: 300}
			return PostCreditNote(c, 200, nil)
		}, []Posting{{AccountRefunds, 300, 0, ""}, {AccountBadDebt, 0, 200, ""}, {AccountReceivable, 0, 100, ""}}},
		{"refund failed", func() (JournalEntry, bool) {
			return PostRefundFailed(Refund{RefundID: "re_1", Amount: 500, Currency: "usd"}, jan1)
		}, []Posting{{AccountProcessorClearing, 500, 0, ""}, {AccountCustomerCredit, 0, 500, ""}}},
		{"written off", func() (JournalEntry, bool) {
			return PostInvoiceUncollectible(inv, 3419, jan1)
		}, []Posting{{AccountBadDebt, 3419, 0, ""}, {AccountReceivable, 0, 3419, ""}}},
		{"voided after prepaid balance paid part of its deferred line", func() (JournalEntry, bool) {
			return PostInvoiceVoided(inv, 1000, map[string]int64{"pro": 2000}, jan1)
		}, []Posting{{AccountTaxPayable, 329, 0, ""}, {AccountDeferredRevenue, 2000, 0, "pro"}, {AccountRevenue, 0, 1329, ""}, {AccountReceivable, 0, 1000, ""}}},
		{"voided", func() (JournalEntry, bool) {
			return PostInvoiceVoided(inv, 3419, map[string]int64{"pro": 2000}, jan1)
		}, []Posting{{AccountTaxPayable, 329, 0, ""}, {AccountDeferredRevenue, 2000, 0, "pro"}, {AccountRevenue, 1090, 0, ""}, {AccountReceivable, 0, 3419, ""}}},
		{"a recognitionDay recognized", func() (JournalEntry, bool) {
			return PostRevenueRecognized("usd", "2026-01-02", map[string]int64{"pro": 100}, jan1)
		}, []Posting{{AccountDeferredRevenue, 100, 0, "pro"}, {AccountRevenue, 0, 100, "pro"}}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			e, ok := r.entry()
			if !ok {
				t.Fatal("no entry")
			}
			if !e.Balanced() {
				t.Errorf("not balanced: %+v", e.Lines)
			}
			if !reflect.DeepEqual(e.Lines, r.want) {
				t.Errorf("lines\n got %+v\nwant %+v", e.Lines, r.want)
			}
		})
	}
}

func TestPostingRulesNothingToPost(t *testing.T) {
	if _, ok := PostPrepaidExpired(BalanceEntry{Amount: -50}, EntryGrant); ok {
		t.Error("a free grant's expiry posted")
	}
	if _, ok := PostPayout(Payout{}); ok {
		t.Error("a zero payout posted")
	}
}

func TestRevenueScheduleRecognize(t *testing.T) {
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := RevenueSchedule{PeriodStart: jan1, PeriodEnd: jan1.AddDate(0, 1, 0), Amount: 3100, Deferred: 3100, RecognizedThrough: jan1}
	var total int64
	for d := 1; d <= 31; d++ {
		amt, next := s.Recognize(jan1.Add(time.Duration(d) * recognitionDay))
		if amt != 100 {
			t.Fatalf("recognitionDay %d recognized %d, want 100", d, amt)
		}
		s, total = next, total+amt
		if again, _ := s.Recognize(jan1.Add(time.Duration(d) * recognitionDay)); again != 0 {
			t.Fatalf("recognitionDay %d recognized twice", d)
		}
	}
	if total != 3100 || s.Deferred != 0 {
		t.Fatalf("total %d, deferred %d", total, s.Deferred)
	}
	// A 40-day jump recognizes everything at once.
	s = RevenueSchedule{PeriodStart: jan1, PeriodEnd: jan1.AddDate(0, 1, 0), Amount: 1000, Deferred: 1000, RecognizedThrough: jan1}
	if amt, next := s.Recognize(jan1.Add(40 * recognitionDay)); amt != 1000 || next.Deferred != 0 {
		t.Fatalf("jump: %d, %+v", amt, next)
	}
}

func TestCreditDeferredTakesTheDeferredShare(t *testing.T) {
	scheds := []RevenueSchedule{{InvoiceLineID: "il_sub", PriceID: "pro", Amount: 3100, Deferred: 2100}}
	cn := CreditNote{Lines: []CreditNoteLine{{Allocations: []CreditAllocation{{InvoiceLineID: "il_sub", Amount: 1650, TaxAmount: 100}, {InvoiceLineID: "il_once", Amount: 100}}}}}
	got, changed := CreditDeferred(cn, scheds)
	if got["pro"] != 1050 || len(changed) != 1 || changed[0].Amount != 1550 || changed[0].Deferred != 1050 {
		t.Fatalf("got %v, %+v", got, changed)
	}
}
