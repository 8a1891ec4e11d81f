package remit

import (
	"fmt"
)

// The rules of the money checks of receipts (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// ReceiptFacts is a payment receipt's money.
type ReceiptFacts struct {
	ReceiptID      string
	InvoiceID      string
	Currency       string
	Method         string
	Status         ReceiptStatus
	Amount         int64
	AmountRefunded int64
}

// PaymentReceiptFacts is a payment with its receipt (nil: none) and its refunds.
type PaymentReceiptFacts struct {
	PaymentID      string
	InvoiceID      string
	Status         PaymentStatus
	Method         string
	Currency       string
	Amount         int64
	AmountRefunded int64
	Refunds        int64 // the amounts of its refunds that did not fail (pending or succeeded), summed
	RefundCount    int64 // how many refunds name it, whatever their state
	Receipt        *ReceiptFacts
}

// CheckPaymentReceiptFacts checks that a succeeded payment has one receipt for the same invoice,
// amount, currency, method and refunded amount, with the status those amounts give, that any other
// payment has none (nor refunds), and that a payment's amount refunded is what its refunds that did
// not fail add up to.
func CheckPaymentReceiptFacts(f PaymentReceiptFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.AmountRefunded != f.Refunds {
		add("has amount refunded %d but its pending and succeeded refunds sum to %d", f.AmountRefunded, f.Refunds)
	}
	if f.Status != PaymentSucceeded {
		if f.Receipt != nil {
			add("is %s yet has receipt %s: only a succeeded payment has a receipt", f.Status, f.Receipt.ReceiptID)
		}
		if f.RefundCount > 0 {
			add("is %s yet %d refunds were made of it", f.Status, f.RefundCount)
		}
		return out
	}
	r := f.Receipt
	if r == nil {
		return append(out, fmt.Sprintf("succeeded (%d %s) but has no receipt", f.Amount, f.Currency))
	}
	if r.Amount != f.Amount {
		add("is for %d but its receipt %s says %d", f.Amount, r.ReceiptID, r.Amount)
	}
	if r.AmountRefunded != f.AmountRefunded {
		add("has amount refunded %d but its receipt %s says %d", f.AmountRefunded, r.ReceiptID, r.AmountRefunded)
	}
	if want := ReceiptStatusOf(r.Amount, r.AmountRefunded); r.Status != want {
		add("has receipt %s with status %s, but %d refunded of %d makes it %s", r.ReceiptID, r.Status, r.AmountRefunded, r.Amount, want)
	}
	if r.Currency != f.Currency {
		add("is in %s but its receipt %s is in %s", f.Currency, r.ReceiptID, r.Currency)
	}
	if r.InvoiceID != f.InvoiceID {
		add("pays invoice %s but its receipt %s names invoice %s", f.InvoiceID, r.ReceiptID, r.InvoiceID)
	}
	if r.Method != f.Method {
		add("was made by %s but its receipt %s says %s", f.Method, r.ReceiptID, r.Method)
	}
	return out
}

// ReceiptPaymentFacts is a receipt with whether the payment it names exists.
type ReceiptPaymentFacts struct {
	ReceiptID    string
	PaymentID    string
	PaymentFound bool
}

// CheckReceiptPaymentFacts checks that a receipt's payment exists (the rest is
// CheckPaymentReceiptFacts's).
func CheckReceiptPaymentFacts(f ReceiptPaymentFacts) []string {
	if !f.PaymentFound {
		return []string{fmt.Sprintf("is the receipt of payment %s, which does not exist", f.PaymentID)}
	}
	return nil
}
