// Package document renders what a merchant's customers read: invoice, credit-note and receipt PDFs
// and the hosted invoice page (HTML). It is presentation only: package app gathers the facts (the
// stored invoice row and its lines, credit notes, the merchant's profile, the customer) into the
// models below, and the functions here turn a model into bytes without I/O, clocks or randomness, so
// the same facts always give the same document, byte for byte.
//
// Money is formatted per currency with github.com/bojanz/currency (CLDR data: minor-unit digits,
// symbol, grouping), in the "en" locale. PDFs are drawn with github.com/go-pdf/fpdf in the Go fonts
// (golang.org/x/image/font/gofont), embedded and subset, so a PDF looks the same on every machine
// and any Latin, Greek or Cyrillic name prints. See docs/documents.md.
package document

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/bojanz/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/tax"
)

// Party is a document's seller or buyer: a name and the lines printed under it (address, then
// contact details).
type Party struct {
	Name  string
	Lines []string
}

// Merchant is the seller: the merchant account's display name and business address.
type Merchant struct {
	Party
	Country string // the merchant account's country: chooses the paper size (Letter or A4)
}

// Invoice is everything an invoice's PDF and hosted page show.
type Invoice struct {
	Merchant Merchant
	// BillTo is the customer: name, email and billing address (the billing account's tax address,
	// else the customer's address).
	BillTo Party
	// CustomerAddress is the customer's own address when the billing address differs from it.
	CustomerAddress []string
	Invoice         remit.Invoice // the stored row and lines: finalized figures never change
	Coupons         []string      // the names of the invoice's coupons, in order
	CreditNotes     []remit.CreditNote
	// HostedURL is the hosted invoice page (open invoices; printed as a "Pay online" link).
	HostedURL string
}

// CreditNote is everything a credit note's PDF shows.
type CreditNote struct {
	Merchant   Merchant
	BillTo     Party
	CreditNote remit.CreditNote
	Invoice    remit.Invoice // the credited invoice: its number and its lines' descriptions
	// Taxes are the lines of the credit note's reversal tax transaction (negative amounts), which
	// carry the jurisdictions.
	Taxes []remit.TaxTransactionLine
}

// Receipt is everything a payment receipt's PDF shows.
type Receipt struct {
	Merchant Merchant
	BillTo   Party
	Receipt  ReceiptFacts
	Invoice  remit.Invoice // the invoice the payment paid
}

// ReceiptFacts are the receipt's own figures (docs/payments.md).
type ReceiptFacts struct {
	ReceiptID      string
	ReceiptNumber  string
	PaymentID      string
	Amount         int64
	AmountRefunded int64
	Currency       string
	Status         remit.ReceiptStatus
	PaidAt         time.Time // when the payment succeeded (merchant clock)
	PaymentMethod  string    // "Visa •••• 4242", or how an out-of-band payment is described
}

var formatter = func() *currency.Formatter {
	f := currency.NewFormatter(currency.NewLocale("en"))
	return f
}()

// Money formats minor units of a currency for people: "$1,234.56", "¥1,235", "€12.00",
// "CA$5.00" (the "en" locale names every dollar but the US one). The currency's own minor-unit
// digits decide where the decimal point goes.
func Money(amount int64, code string) string {
	a, err := currency.NewAmountFromInt64(amount, code)
	if err != nil {
		return fmt.Sprintf("%d %s", amount, code) // not an ISO code: never happens for stored money
	}
	return formatter.Format(a)
}

// moneyMemo is Money for one currency, remembering what it formatted: a document's lines repeat
// amounts (unit prices, zeros) and the formatter is the costliest step of a long table.
func moneyMemo(code string) func(int64) string {
	memo := map[int64]string{}
	return func(n int64) string {
		s, ok := memo[n]
		if !ok {
			s = Money(n, code)
			memo[n] = s
		}
		return s
	}
}

// Date formats a moment as a UTC calendar date: "Mar 3, 2026".
func Date(t time.Time) string { return t.UTC().Format("Jan 2, 2006") }

// Period formats a service period [start, end) as "Mar 1 – Apr 1, 2026".
func Period(start, end time.Time) string {
	s, e := start.UTC(), end.UTC()
	if s.Year() == e.Year() {
		return s.Format("Jan 2") + " – " + e.Format("Jan 2, 2006")
	}
	return Date(s) + " – " + Date(e)
}

// AddressLines formats a postal address as printed lines: street lines, "City, Region Postal code",
// and the country's English name.
func AddressLines(line1 string, line2 *string, city string, region *string, postalCode, country string) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	add(line1)
	if line2 != nil {
		add(*line2)
	}
	locality := strings.TrimSpace(city)
	var rp []string
	if region != nil && strings.TrimSpace(*region) != "" {
		rp = append(rp, strings.TrimSpace(*region))
	}
	if strings.TrimSpace(postalCode) != "" {
		rp = append(rp, strings.TrimSpace(postalCode))
	}
	if len(rp) > 0 {
		if locality != "" {
			locality += ", "
		}
		locality += strings.Join(rp, " ")
	}
	add(locality)
	add(CountryName(country))
	return out
}

// CountryName is the English name of an ISO 3166-1 alpha-2 code ("CA" → "Canada"), or the code.
func CountryName(code string) string {
	r, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if n := display.English.Regions().Name(r); n != "" {
		return n
	}
	return code
}

// TaxSummary is the tax of one jurisdiction at one rate, summed over a document's lines.
type TaxSummary struct {
	Jurisdiction string
	RatePPM      int64
	Taxable      int64
	Amount       int64
}

// Label is how documents name the tax: "GST 5% (CA)".
func (t TaxSummary) Label() string { return TaxLabel(t.Jurisdiction, t.RatePPM) }

// TaxLabel names a jurisdiction's tax at a rate: "PST 7% (CA-BC)".
func TaxLabel(jurisdiction string, ratePPM int64) string {
	return tax.Label(jurisdiction) + " " + tax.FormatRate(ratePPM) + " (" + jurisdiction + ")"
}

// InvoiceTaxes sums an invoice's line taxes by jurisdiction and rate, in the order they first
// appear. A jurisdiction whose tax is 0 on every line (an exempt customer) is left out.
func InvoiceTaxes(inv remit.Invoice) []TaxSummary {
	var sums taxSums
	for _, l := range inv.Lines {
		for _, t := range l.Taxes {
			sums.add(t.Jurisdiction, t.RatePPM, t.TaxableAmount, t.TaxAmount)
		}
	}
	kept := sums.out[:0]
	for _, t := range sums.out {
		if t.Amount != 0 {
			kept = append(kept, t)
		}
	}
	return kept
}

// reversalTaxes sums a reversal tax transaction's lines by jurisdiction and rate, as positive
// amounts (what the credit note gives back).
func reversalTaxes(lines []remit.TaxTransactionLine) []TaxSummary {
	var sums taxSums
	for _, t := range lines {
		sums.add(t.Jurisdiction, t.RatePPM, -t.TaxableAmount, -t.TaxAmount)
	}
	return sums.out
}

// taxSums adds up taxes by jurisdiction and rate, in the order they first appear.
type taxSums struct {
	out []TaxSummary
	idx map[string]int
}

func (s *taxSums) add(jurisdiction string, ratePPM, taxable, amount int64) {
	key := fmt.Sprintf("%s|%d", jurisdiction, ratePPM)
	i, ok := s.idx[key]
	if !ok {
		if s.idx == nil {
			s.idx = map[string]int{}
		}
		i = len(s.out)
		s.idx[key] = i
		s.out = append(s.out, TaxSummary{Jurisdiction: jurisdiction, RatePPM: ratePPM})
	}
	s.out[i].Taxable += taxable
	s.out[i].Amount += amount
}

// lineTaxes describes one line's tax by jurisdiction: "GST 5% $2.19 · PST 7% $3.06" (the
// jurisdiction's code is added when its tax has no name of its own: "Tax 5% (XX) $1.00").
func lineTaxes(l remit.InvoiceLine, money func(int64) string) string {
	var parts []string
	for _, t := range l.Taxes {
		if t.TaxAmount == 0 {
			continue
		}
		parts = append(parts, ShortTaxLabel(t.Jurisdiction, t.RatePPM)+" "+money(t.TaxAmount))
	}
	return strings.Join(parts, " · ")
}

// ShortTaxLabel names a jurisdiction's tax at a rate without its code when the name says enough:
// "GST 5%", but "Tax 5% (XX)".
func ShortTaxLabel(jurisdiction string, ratePPM int64) string {
	if l := tax.Label(jurisdiction); l != "Tax" {
		return l + " " + tax.FormatRate(ratePPM)
	}
	return TaxLabel(jurisdiction, ratePPM)
}

// LineTotal is what an invoice line charges: amount − discount − prepaid balance + tax.
func LineTotal(l remit.InvoiceLine) int64 { return remit.LineBilled(l) }

// The words customers read for invoice states, credit note reasons and credit note buckets.
var (
	statusLabels = map[remit.InvoiceStatus]string{remit.InvoiceDraft: "Draft", remit.InvoiceOpen: "Open", remit.InvoicePaid: "Paid", remit.InvoiceVoid: "Void",
		remit.InvoiceUncollectible: "Uncollectible"}
	reasonLabels = map[string]string{"duplicated_charge": "Duplicate charge", "product_unsatisfactory": "Product unsatisfactory",
		"order_change": "Order change", "order_cancellation": "Order cancellation", "fraudulent_charge": "Fraudulent charge", "other": "Other", "": "Other"}
	bucketLabels = map[string]string{remit.BucketCredit: "Credited to balance", remit.BucketRefund: "Refunded", remit.BucketOffset: "Offset against invoice"}
)

// label is the customer's word for value, or value itself when it has none.
func label[V ~string](labels map[V]string, value V) string {
	if l, ok := labels[value]; ok {
		return l
	}
	return string(value)
}

// StatusLabel is an invoice state as customers read it.
func StatusLabel(status remit.InvoiceStatus) string { return label(statusLabels, status) }

// ReasonLabel is a credit note's reason as customers read it.
func ReasonLabel(reason string) string { return label(reasonLabels, reason) }

// BucketLabel says what a credit note line does with its amount.
func BucketLabel(bucket string) string { return label(bucketLabels, bucket) }

// InvoiceNumber is an invoice's number, or "Draft" before finalization.
func InvoiceNumber(inv remit.Invoice) string {
	if inv.Number != nil {
		return *inv.Number
	}
	return "Draft"
}

// IssueDate is the date an invoice was issued: its finalization, or its creation for a draft.
func IssueDate(inv remit.Invoice) time.Time {
	if inv.FinalizedAt != nil {
		return *inv.FinalizedAt
	}
	return inv.CreatedAt
}

// BalanceCredited is the part of an invoice's credit notes that went to the customer's prepaid
// balance (neither refunded nor offset).
func BalanceCredited(inv remit.Invoice) int64 {
	return inv.CreditedTotal - inv.OffsetTotal - inv.RefundedTotal
}

// printable replaces what the embedded fonts cannot draw (runes outside the Basic Multilingual
// Plane, control characters) so that no text can break a document.
func printable(s string) string {
	ok := true
	for _, r := range s {
		if r > 0xFFFF || (unicode.IsControl(r) && r != '\n') || r == unicode.ReplacementChar {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r > 0xFFFF || r == unicode.ReplacementChar:
			return '?'
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// Watermark is the word across an invoice that is not a bill to pay: DRAFT before finalization,
// VOID once voided, none otherwise.
func Watermark(status remit.InvoiceStatus) string {
	switch status {
	case remit.InvoiceDraft:
		return "DRAFT"
	case remit.InvoiceVoid:
		return "VOID"
	}
	return ""
}
