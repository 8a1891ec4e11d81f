package remit

import (
	"fmt"
	"time"
)

// The money checks' rules (docs/verification.md): pure functions over facts the store reads in
// pages, each returning what is wrong with one record in words a finance person reads (nil: the
// record is consistent). The facts hold exactly what Remit's own writes keep in step, so every
// rule holds on every state the engine produces, and altering a stored amount or status by hand
// breaks one.
//
// Each family of checks has its rules in a file of its own: verification_balances.go,
// verification_invoices.go (and the invoice_lines check), verification_receipts.go,
// verification_credit_notes.go, verification_tax.go, verification_settlements.go,
// verification_numbers.go, verification_processor.go, verification_due.go and
// verification_ledger.go.

// Verification is the result of the money checks over one merchant account (GET
// /v1/verification, `remit verify`): every check, its violations, and whether all passed.
// docs/verification.md says what each check means and what to do about a violation.
type Verification struct {
	Object            string              `json:"object"` // always "verification"
	MerchantAccountID string              `json:"merchantAccountId"`
	OK                bool                `json:"ok"`
	CheckedAt         time.Time           `json:"checkedAt"`
	Checks            []VerificationCheck `json:"checks"`
}

// VerificationCheck is one check's result. Violations lists at most MaxViolationsShown of them;
// ViolationCount counts them all.
type VerificationCheck struct {
	Name           string      `json:"name"`
	OK             bool        `json:"ok"`
	ViolationCount int         `json:"violationCount"`
	Violations     []Violation `json:"violations"`
}

// Violation names one record that breaks a check and says how.
type Violation struct {
	Resource string `json:"resource"` // event, invoice, payment, ...
	ID       string `json:"id"`
	Detail   string `json:"detail"`
}

// MaxViolationsShown bounds the violations a check lists (memory stays flat however many there
// are); the rest are counted.
const MaxViolationsShown = 100

// The checks, in the order they run and are reported. docs/verification.md describes each.
const (
	CheckEventChain       = "event_chain"
	CheckBalances         = "balances"
	CheckInvoicePayments  = "invoice_payments"
	CheckReceipts         = "receipts"
	CheckCreditNotes      = "credit_notes"
	CheckTaxReversals     = "tax_reversals"
	CheckSettlements      = "settlements"
	CheckDocumentNumbers  = "document_numbers"
	CheckProcessorCharges = "processor_charges"
	CheckInvoiceLines     = "invoice_lines"
	CheckDueWork          = "due_work"
	CheckGeneralLedger    = "general_ledger"
)

// VerificationChecks lists every check by name, in order.
var VerificationChecks = []string{
	CheckEventChain, CheckBalances, CheckInvoicePayments, CheckReceipts, CheckCreditNotes,
	CheckTaxReversals, CheckSettlements, CheckDocumentNumbers, CheckProcessorCharges, CheckInvoiceLines, CheckDueWork,
	CheckGeneralLedger,
}

// Add records a violation in the check: listed while fewer than MaxViolationsShown are, counted
// always.
func (c *VerificationCheck) Add(v Violation) {
	c.ViolationCount++
	c.OK = false
	if len(c.Violations) < MaxViolationsShown {
		c.Violations = append(c.Violations, v)
	}
}

// Finish sets the verification's OK from its checks.
func (v *Verification) Finish() {
	v.OK = true
	for _, c := range v.Checks {
		v.OK = v.OK && c.OK
	}
}

// ChainLink checks one stored event against its predecessor in the merchant account's chain:
// wantSeq is the sequence it must have (the predecessor's + 1) and prevHash the predecessor's
// stored hash. It returns what is wrong, or "" when the link holds. A chain is read on from the
// stored hash, so one altered event is reported once, not with every event after it.
func ChainLink(wantSeq int64, prevHash string, e Event) string {
	if e.Sequence != wantSeq {
		if e.Sequence == 0 {
			return "has no place in the chain (no sequence)"
		}
		return fmt.Sprintf("has sequence %d where %d follows: an event before it is missing or was reordered", e.Sequence, wantSeq)
	}
	got, err := ChainHash(prevHash, e)
	if err != nil {
		return "its stored payload is not valid JSON"
	}
	if got != e.Hash {
		return fmt.Sprintf("stored hash %.12s… does not match its content and predecessor (recomputed %.12s…): the event or the one before it was changed", e.Hash, got)
	}
	return ""
}
