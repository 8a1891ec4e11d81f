package remit

import (
	"fmt"
)

// The rules of the money checks of settlements (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// PayoutFacts is the payout a settlement names.
type PayoutFacts struct {
	PayoutID     string
	Found        bool
	SettlementID string
	Currency     string
	Amount       int64
}

// SettlementFacts is a settlement's figures with the payments that name it and its payout.
type SettlementFacts struct {
	SettlementID string
	Currency     string
	Status       SettlementStatus
	Gross        int64
	Refunds      int64
	Fees         int64
	PaymentCount int64
	Closed       bool // closedAt is set
	Paid         bool // paidAt is set
	Payout       *PayoutFacts
	// The payments that name it: how many, their amounts and fees summed, and how many of them
	// are not succeeded card payments in its currency.
	Payments       int64
	PaymentsAmount int64
	PaymentsFees   int64
	Foreign        int64
}

// CheckSettlementFacts checks that a settlement's gross, fees and payment count are those of its
// payments, and that a paid settlement was paid out its net (gross − refunds − fees).
func CheckSettlementFacts(f SettlementFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.Gross != f.PaymentsAmount {
		add("has gross %d but the %d payments in it sum to %d", f.Gross, f.Payments, f.PaymentsAmount)
	}
	if f.Fees != f.PaymentsFees {
		add("has fees %d but its payments' fees sum to %d", f.Fees, f.PaymentsFees)
	}
	if f.PaymentCount != f.Payments {
		add("counts %d payments but %d name it", f.PaymentCount, f.Payments)
	}
	if f.Foreign > 0 {
		add("holds %d payments that are not succeeded card payments in %s", f.Foreign, f.Currency)
	}
	net := f.Gross - f.Refunds - f.Fees
	switch f.Status {
	case SettlementOpen, SettlementClosed:
		if f.Status == SettlementClosed && !f.Closed {
			add("is closed but has no closing time")
		}
		if f.Payout != nil {
			add("is %s yet names payout %s", f.Status, f.Payout.PayoutID)
		}
	case SettlementPaid:
		switch p := f.Payout; {
		case !f.Closed || !f.Paid:
			add("is paid but lacks its closing or payment time")
		case p == nil:
			add("is paid but names no payout")
		case !p.Found:
			add("is paid by payout %s, which does not exist", p.PayoutID)
		case p.SettlementID != f.SettlementID:
			add("is paid by payout %s, which pays settlement %s", p.PayoutID, p.SettlementID)
		case p.Amount != net || p.Currency != f.Currency:
			add("was paid out %d %s but its net is %d %s (gross %d − refunds %d − fees %d)", p.Amount, p.Currency, net, f.Currency, f.Gross, f.Refunds, f.Fees)
		}
	default:
		add("has status %q, which is no settlement state", f.Status)
	}
	return out
}

// SettledPaymentFacts is a payment with the settlement it names.
type SettledPaymentFacts struct {
	PaymentID          string
	Status             PaymentStatus
	Method             string
	Currency           string
	SettlementID       *string
	SettlementFound    bool
	SettlementCurrency string
}

// CheckSettledPaymentFacts checks that a succeeded card payment is in a settlement of its currency
// and that no other payment is in one.
func CheckSettledPaymentFacts(f SettledPaymentFacts) []string {
	settles := f.Status == PaymentSucceeded && f.Method == MethodCard
	switch {
	case settles && f.SettlementID == nil:
		return []string{"is a succeeded card payment in no settlement"}
	case !settles && f.SettlementID != nil:
		return []string{fmt.Sprintf("is a %s %s payment, yet settlement %s counts it", f.Status, f.Method, *f.SettlementID)}
	case f.SettlementID == nil:
		return nil
	case !f.SettlementFound:
		return []string{fmt.Sprintf("is in settlement %s, which does not exist", *f.SettlementID)}
	case f.SettlementCurrency != f.Currency:
		return []string{fmt.Sprintf("is in %s but its settlement %s is in %s", f.Currency, *f.SettlementID, f.SettlementCurrency)}
	}
	return nil
}

// SettlementRefundFacts is one currency's refunds as the settlements count them and as the
// refunds of card payments that did not fail add up.
type SettlementRefundFacts struct {
	Currency     string
	Settled      int64 // the settlements' refund amounts, summed
	SettledCount int64 // their refund counts, summed
	Refunds      int64 // the refunds of card payments that did not fail, summed
	RefundCount  int64 // how many
}

// CheckSettlementRefundFacts checks that the settlements of a currency hold exactly the refunds
// made of card payments in it (a refund lands in the settlement open when it is made, and one that
// fails is taken back out of the one open then).
func CheckSettlementRefundFacts(f SettlementRefundFacts) []string {
	var out []string
	if f.Settled != f.Refunds {
		out = append(out, fmt.Sprintf("%s settlements hold refunds of %d but the refunds of card payments that did not fail sum to %d", f.Currency, f.Settled, f.Refunds))
	}
	if f.SettledCount != f.RefundCount {
		out = append(out, fmt.Sprintf("%s settlements count %d refunds but %d refunds of card payments did not fail", f.Currency, f.SettledCount, f.RefundCount))
	}
	return out
}
