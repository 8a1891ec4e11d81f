package remit

import (
	"fmt"
)

// The rules of the money checks of processor charges (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// ProcessorChargeFacts is the sandbox processor's own record of a charge.
type ProcessorChargeFacts struct {
	IdempotencyRef string
	Reference      string
	Status         string
	Currency       string
	Amount         int64
	Fee            int64
}

// ProcessorPaymentFacts is a payment with the charge the sandbox processor made for it (its
// idempotency reference is the payment's ID), if any.
type ProcessorPaymentFacts struct {
	PaymentID          string
	Status             PaymentStatus
	Method             string
	Processor          string
	Currency           string
	Amount             int64
	Fee                int64
	IdempotencyRef     *string
	ProcessorReference *string
	Charge             *ProcessorChargeFacts
}

// CheckProcessorPaymentFacts checks a payment against the processor's charges: a card payment is
// known to the processor by its own ID; a succeeded sandbox payment has a succeeded sandbox charge
// of the same amount, currency, fee and reference; a payment that failed, was canceled, was
// received out of band or went through another processor has no succeeded sandbox charge. Payments
// still processing or awaiting the customer may have a charge whose outcome is not recorded yet.
func CheckProcessorPaymentFacts(f ProcessorPaymentFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	charged := f.Charge != nil && f.Charge.Status == "succeeded"
	switch {
	case f.Method == MethodOutOfBand:
		if f.Processor != ProcessorOutOfBand {
			add("was received out of band but names processor %s", f.Processor)
		}
		if f.Charge != nil {
			add("was received out of band, yet the sandbox processor has a %s charge of %d for it", f.Charge.Status, f.Charge.Amount)
		}
		return out
	case f.Method != MethodCard:
		return []string{fmt.Sprintf("was made by %q, which is no payment method", f.Method)}
	case f.IdempotencyRef == nil || *f.IdempotencyRef != f.PaymentID:
		add("is known to the processor by %s, not by its own ID", strOr(f.IdempotencyRef, "nothing"))
	}
	switch {
	case f.Processor == ProcessorOutOfBand:
		add("is a card payment recorded as received out of band")
	case f.Processor != ProcessorSandbox:
		if charged {
			add("went through %s, yet the sandbox processor charged %d for it", f.Processor, f.Charge.Amount)
		}
	case f.Status == PaymentSucceeded:
		out = append(out, succeededChargeProblems(f)...)
	case f.Status == PaymentFailed || f.Status == PaymentCanceled:
		if charged {
			add("is %s, yet the processor charged %d %s for it (charge %s)", f.Status, f.Charge.Amount, f.Charge.Currency, f.Charge.Reference)
		}
	case !f.Status.Open():
		add("has status %q, which is no payment state", f.Status)
	}
	return out
}

// succeededChargeProblems compares a succeeded sandbox payment with its charge.
func succeededChargeProblems(f ProcessorPaymentFacts) []string {
	c := f.Charge
	switch {
	case c == nil:
		return []string{fmt.Sprintf("succeeded (%d %s) but the processor made no charge for it", f.Amount, f.Currency)}
	case c.Status != "succeeded":
		return []string{fmt.Sprintf("succeeded but its processor charge %s %s", c.Reference, c.Status)}
	}
	var out []string
	if c.Amount != f.Amount || c.Currency != f.Currency {
		out = append(out, fmt.Sprintf("is for %d %s but the processor charged %d %s", f.Amount, f.Currency, c.Amount, c.Currency))
	}
	if c.Fee != f.Fee {
		out = append(out, fmt.Sprintf("has fee %d but the processor took a fee of %d", f.Fee, c.Fee))
	}
	if f.ProcessorReference == nil || *f.ProcessorReference != c.Reference {
		out = append(out, fmt.Sprintf("names processor reference %s but its charge is %s", strOr(f.ProcessorReference, "none"), c.Reference))
	}
	return out
}

func strOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// CheckUnclaimedChargeFacts checks a sandbox charge whose idempotency reference is the ID of no
// payment of any merchant account: a succeeded one is money taken that no payment records.
func CheckUnclaimedChargeFacts(c ProcessorChargeFacts) []string {
	if c.Status != "succeeded" {
		return nil
	}
	return []string{fmt.Sprintf("charged %d %s (fee %d) for %s, which is no payment of any merchant account", c.Amount, c.Currency, c.Fee, c.IdempotencyRef)}
}

// ProcessorRefundFacts is a refund through the sandbox processor with the processor's own record
// of it (its idempotency reference is the refund's ID), if any.
type ProcessorRefundFacts struct {
	RefundID        string
	Status          string
	Currency        string
	Amount          int64
	ChargeReference string
	// The processor's record.
	Recorded                bool
	RecordedAmount          int64
	RecordedCurrency        string
	RecordedChargeReference string
}

// CheckProcessorRefundFacts checks a sandbox refund against the processor's record: a succeeded
// refund was made by the processor as recorded; a failed one (credited to the balance instead) was
// not made. A pending one may or may not have reached the processor yet.
func CheckProcessorRefundFacts(f ProcessorRefundFacts) []string {
	switch f.Status {
	case RefundSucceeded:
		switch {
		case !f.Recorded:
			return []string{fmt.Sprintf("succeeded (%d %s) but the processor made no such refund", f.Amount, f.Currency)}
		case f.RecordedAmount != f.Amount || f.RecordedCurrency != f.Currency || f.RecordedChargeReference != f.ChargeReference:
			return []string{fmt.Sprintf("is %d %s of charge %s but the processor refunded %d %s of charge %s", f.Amount, f.Currency,
				f.ChargeReference, f.RecordedAmount, f.RecordedCurrency, f.RecordedChargeReference)}
		}
	case RefundFailed:
		if f.Recorded {
			return []string{fmt.Sprintf("failed and was credited to the customer's balance, yet the processor refunded %d %s", f.RecordedAmount, f.RecordedCurrency)}
		}
	case RefundPending:
	default:
		return []string{fmt.Sprintf("has status %q, which is no refund state", f.Status)}
	}
	return nil
}
