package remit

import "fmt"

// Gap-free document numbers (docs/invoices-and-tax.md): each kind of numbered document has a
// counter per merchant account, taken in the transaction that uses the number, and a prefix; the
// number is the prefix and the counter's value in at least six digits (INV-000042).

// NumberedDocument is a kind of numbered document: its counter's name, its number prefix, the
// resource that carries the number and what a reader calls it.
type NumberedDocument struct {
	Counter, Prefix, Resource, Noun string
}

// The numbered documents.
var (
	InvoiceNumbers    = NumberedDocument{Counter: "invoice", Prefix: "INV-", Resource: "invoice", Noun: "invoice"}
	ReceiptNumbers    = NumberedDocument{Counter: "receipt", Prefix: "RCPT-", Resource: "payment_receipt", Noun: "receipt"}
	CreditNoteNumbers = NumberedDocument{Counter: "credit_note", Prefix: "CN-", Resource: "credit_note", Noun: "credit note"}
)

// NumberedDocuments lists them, in the order the verification reports them.
var NumberedDocuments = []NumberedDocument{InvoiceNumbers, ReceiptNumbers, CreditNoteNumbers}

// DocumentNumber is the number n of a kind of document: its prefix and n in six digits or more.
func DocumentNumber(d NumberedDocument, n int64) string { return formatNumber(d.Prefix, n) }

func formatNumber(prefix string, n int64) string { return fmt.Sprintf("%s%06d", prefix, n) }
