// Package document renders what a merchant's customers read: invoice, credit-note and receipt PDFs
// and the hosted invoice page (HTML). It is presentation only: package app gathers the facts (the
// stored invoice row and its lines, credit notes, the merchant's profile, the customer) into the
// models below, and the functions here turn a model into bytes without I/O, clocks or randomness, so
// the same facts always give the same document, byte for byte.
//
// Every word a customer reads comes from the message catalogs of package locale (keys doc.*), in
// the language of the model's Locale (the customer's preferredLocale; empty or unknown is English).
// Amounts, dates and country names are formatted for that language by its locale.Tr (CLDR data via
// github.com/bojanz/currency: minor-unit digits, symbol, grouping). PDFs are drawn with
// github.com/go-pdf/fpdf in the Go fonts (golang.org/x/image/font/gofont), embedded and subset, so
// a PDF looks the same on every machine and any Latin, Greek or Cyrillic name prints. See
// docs/documents.md ("Languages").
package document

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/locale"
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
	// Locale is the customer's language (remit.Locales); empty or unknown is English.
	Locale   string
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
	Locale     string // the customer's language; empty or unknown is English
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
	Locale   string // the customer's language; empty or unknown is English
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
	PaymentMethod  string    // "Visa •••• 4242"
	OutOfBand      bool      // paid outside Remit: the receipt says so in the customer's language
}

// moneyMemo is tr.Money for one currency, remembering what it formatted: a document's lines repeat
// amounts (unit prices, zeros) and the formatter is the costliest step of a long table.
func moneyMemo(tr *locale.Tr, code string) func(int64) string {
	memo := map[int64]string{}
	return func(n int64) string {
		s, ok := memo[n]
		if !ok {
			s = tr.Money(n, code)
			memo[n] = s
		}
		return s
	}
}

// AddressLines formats a postal address as printed lines: street lines, "City, Region Postal code",
// and the country's name in the document's language (tr.Country).
func AddressLines(tr *locale.Tr, line1 string, line2 *string, city string, region *string, postalCode, country string) []string {
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
	add(tr.Country(country))
	return out
}

// TaxSummary is the tax of one jurisdiction at one rate, summed over a document's lines.
type TaxSummary struct {
	Jurisdiction string
	RatePPM      int64
	Taxable      int64
	Amount       int64
}

// Label is how documents name the tax: "GST 5% (CA)", "TPS 5 % (CA)" in French.
func (t TaxSummary) Label(tr *locale.Tr) string { return TaxLabel(tr, t.Jurisdiction, t.RatePPM) }

// TaxLabel names a jurisdiction's tax at a rate: "PST 7% (CA-BC)".
func TaxLabel(tr *locale.Tr, jurisdiction string, ratePPM int64) string {
	return taxName(tr, jurisdiction) + " " + Rate(tr, ratePPM) + " (" + jurisdiction + ")"
}

// taxKeys are the catalog keys of the tax names tax.Label gives.
var taxKeys = map[string]string{"GST": "doc.tax.gst", "PST": "doc.tax.pst", "QST": "doc.tax.qst", "HST": "doc.tax.hst",
	"Sales tax": "doc.tax.sales", "VAT": "doc.tax.vat", "Tax": "doc.tax.other"}

// taxName is a jurisdiction's tax name (tax.Label) in the document's language: "VAT" is "TVA" in
// French, "USt." in German, "IVA" in Spanish.
func taxName(tr *locale.Tr, jurisdiction string) string {
	l := tax.Label(jurisdiction)
	if k, ok := taxKeys[l]; ok {
		return tr.T(k)
	}
	return l
}

// percent formats fractions per language (CLDR): "5.5%", "5,5 %" (with a no-break space).
var percent = func() map[string]*message.Printer {
	out := map[string]*message.Printer{}
	for _, tag := range remit.Locales {
		out[tag] = message.NewPrinter(language.MustParse(tag))
	}
	return out
}()

// Rate formats a tax rate in parts per million for the document's language: "7%", "9.975%" in
// English, "9,975 %" in French. Rates have at most four decimals of a percent.
func Rate(tr *locale.Tr, ppm int64) string {
	p, ok := percent[tr.Tag()]
	if !ok {
		return tax.FormatRate(ppm)
	}
	return p.Sprint(number.Percent(float64(ppm)/1e6, number.MaxFractionDigits(4)))
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
func lineTaxes(tr *locale.Tr, l remit.InvoiceLine, money func(int64) string) string {
	var parts []string
	for _, t := range l.Taxes {
		if t.TaxAmount == 0 {
			continue
		}
		parts = append(parts, ShortTaxLabel(tr, t.Jurisdiction, t.RatePPM)+" "+money(t.TaxAmount))
	}
	return strings.Join(parts, " · ")
}

// ShortTaxLabel names a jurisdiction's tax at a rate without its code when the name says enough:
// "GST 5%", but "Tax 5% (XX)".
func ShortTaxLabel(tr *locale.Tr, jurisdiction string, ratePPM int64) string {
	if tax.Label(jurisdiction) != "Tax" {
		return taxName(tr, jurisdiction) + " " + Rate(tr, ratePPM)
	}
	return TaxLabel(tr, jurisdiction, ratePPM)
}

// LineTotal is what an invoice line charges: amount − discount − prepaid balance + tax.
func LineTotal(l remit.InvoiceLine) int64 { return remit.LineBilled(l) }

// label is the catalog's word for a value (key prefix+value), or the value itself when the catalog
// has none: a state or reason added later prints as its API value rather than as a key.
func label(tr *locale.Tr, prefix, value string) string {
	k := prefix + value
	if s := tr.T(k); s != k {
		return s
	}
	return value
}

// StatusLabel is an invoice state as customers read it: "Open", "Ouverte", "Offen", "Abierta".
func StatusLabel(tr *locale.Tr, status remit.InvoiceStatus) string {
	return label(tr, "doc.status.", string(status))
}

// ReasonLabel is a credit note's reason as customers read it (none is "Other").
func ReasonLabel(tr *locale.Tr, reason string) string {
	if reason == "" {
		reason = "other"
	}
	return label(tr, "doc.reason.", reason)
}

// BucketLabel says what a credit note line does with its amount.
func BucketLabel(tr *locale.Tr, bucket string) string { return label(tr, "doc.bucket.", bucket) }

// InvoiceNumber is an invoice's number, or "Draft" (in the document's language) before
// finalization.
func InvoiceNumber(tr *locale.Tr, inv remit.Invoice) string {
	if inv.Number != nil {
		return *inv.Number
	}
	return tr.T("doc.invoice.number_draft")
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

// narrowNBSP is the no-break space CLDR groups French amounts with ("1 234,56 €"): the Go fonts
// have no glyph for it, so PDFs print a no-break space instead.
const narrowNBSP = '\u202f'

// printable replaces what the embedded fonts cannot draw (runes outside the Basic Multilingual
// Plane, control characters, the narrow no-break space) so that no text can break a document.
func printable(s string) string {
	ok := true
	for _, r := range s {
		if r > 0xFFFF || (unicode.IsControl(r) && r != '\n') || r == unicode.ReplacementChar || r == narrowNBSP {
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
		case r == narrowNBSP:
			return '\u00a0'
		case r > 0xFFFF || r == unicode.ReplacementChar:
			return '?'
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// Watermark is the word across an invoice that is not a bill to pay: DRAFT before finalization,
// VOID once voided (in the document's language), none otherwise.
func Watermark(tr *locale.Tr, status remit.InvoiceStatus) string {
	switch status {
	case remit.InvoiceDraft:
		return tr.T("doc.watermark.draft")
	case remit.InvoiceVoid:
		return tr.T("doc.watermark.void")
	}
	return ""
}
