package document

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"

	"github.com/remit-billing/remit/locale"
)

// The hosted invoice page is one HTML document with its styles and script inline, both embedded
// in the binary: the page loads nothing from anywhere, and its Content-Security-Policy allows only
// those two blocks (by hash) and requests to its own origin (the pay route).

var (
	//go:embed assets/invoice.html
	invoicePageSource string
	//go:embed assets/portal.css
	portalCSS string
	//go:embed assets/portal.js
	portalJS string

	invoicePage = template.Must(template.New("invoice").Parse(invoicePageSource))
)

// HostedPageCSP is the Content-Security-Policy of the hosted pages: nothing but the page's own
// inline style and script (pinned by their SHA-256) and fetches to its own origin.
var HostedPageCSP = fmt.Sprintf("default-src 'none'; style-src '%s'; script-src '%s'; connect-src 'self'; img-src 'self' data:; "+
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'", hashSource(portalCSS), hashSource(portalJS))

func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// HostedPage is what the hosted invoice page shows: the invoice's document, whether it can be paid
// now and with which payment method, and the URLs of the page's actions (relative to the page).
type HostedPage struct {
	Invoice       Invoice
	Payable       bool   // open with an amount remaining
	PaymentMethod string // the billing account's default method ("Visa •••• 4242"), if any
	PayURL        string // PUT: pays the invoice with the default method
	PDFURL        string // GET: the invoice's PDF
	BackURL       string // a link back (the customer portal's page that opened it), if any
}

// InvoiceHTML renders the hosted invoice page in the customer's language (p.Invoice.Locale): the
// same content as the invoice's PDF, and for an open invoice a button that pays it and shows the
// outcome. The script's texts are attributes of that button (data-text-*), so the script is the
// same for every language and its hash stays pinned in HostedPageCSP.
func InvoiceHTML(p HostedPage) ([]byte, error) {
	d := p.Invoice
	tr := locale.For(d.Locale)
	inv := d.Invoice
	h := invoiceHeadline(tr, d)
	h.Link = "" // the page has its own pay button
	view := map[string]any{
		"Tr":                tr,
		"CSS":               template.CSS(portalCSS),
		"JS":                template.JS(portalJS),
		"Number":            InvoiceNumber(tr, inv),
		"Merchant":          d.Merchant,
		"BillTo":            d.BillTo,
		"CustomerAddress":   d.CustomerAddress,
		"Inv":               inv,
		"Status":            StatusLabel(tr, inv.Status),
		"Watermark":         Watermark(tr, inv.Status),
		"Facts":             invoiceFacts(tr, inv),
		"Headline":          h,
		"Columns":           columnTitles(invoiceColumns(tr)),
		"Lines":             invoiceRows(tr, inv),
		"Totals":            invoiceTotals(tr, d),
		"CreditNoteColumns": columnTitles(creditNoteColumns(tr)),
		"CreditNotes":       creditNoteRows(tr, d.CreditNotes, inv.Currency),
		"Payable":           p.Payable,
		"PaymentMethod":     p.PaymentMethod,
		"PayURL":            p.PayURL,
		"PDFURL":            p.PDFURL,
		"BackURL":           p.BackURL,
	}
	var buf bytes.Buffer
	if err := invoicePage.Execute(&buf, view); err != nil {
		return nil, fmt.Errorf("document: render hosted invoice page: %w", err)
	}
	return buf.Bytes(), nil
}

// columnTitles are a table's column titles, for the page's table headers.
func columnTitles(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.title
	}
	return out
}
