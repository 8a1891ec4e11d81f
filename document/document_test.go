package document_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/internal/testkit"
)

func strp(s string) *string { return &s }

// sampleInvoice is an open invoice of n lines in British Columbia (GST + PST).
func sampleInvoice(n int) document.Invoice {
	at := time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
	inv := remit.Invoice{Object: "invoice", InvoiceID: "inv_sample", Number: strp("INV-000042"), CustomerID: "c1", BillingAccountID: "ba1",
		Currency: "USD", Status: remit.InvoiceOpen, FinalizedAt: &at, CreatedAt: at}
	for i := range n {
		l := remit.InvoiceLine{InvoiceLineID: fmt.Sprintf("il_%d", i), Description: fmt.Sprintf("Seat licence %d for the engineering team", i+1),
			Quantity: int64(i%7 + 1), UnitAmount: 1000 + int64(i)*37}
		l.Amount = l.Quantity * l.UnitAmount
		l.DiscountAmount = l.Amount / 10
		taxable := l.Amount - l.DiscountAmount
		gst, pst := remit.RoundHalfUp(taxable*5, 100), remit.RoundHalfUp(taxable*7, 100)
		l.Taxes = []remit.LineTax{{Jurisdiction: "CA", RatePPM: 50000, TaxableAmount: taxable, TaxAmount: gst},
			{Jurisdiction: "CA-BC", RatePPM: 70000, TaxableAmount: taxable, TaxAmount: pst}}
		l.TaxAmount = gst + pst
		inv.Lines = append(inv.Lines, l)
		inv.Subtotal += l.Amount
		inv.DiscountTotal += l.DiscountAmount
		inv.TaxTotal += l.TaxAmount
	}
	inv.Total = inv.Subtotal - inv.DiscountTotal + inv.TaxTotal
	inv.AmountDue, inv.AmountRemaining = inv.Total, inv.Total
	return document.Invoice{
		Merchant: document.Merchant{Party: document.Party{Name: "Northwind Outfitters", Lines: document.AddressLines("500 Market St", nil, "San Francisco", strp("CA"), "94105", "US")}, Country: "US"},
		BillTo:   document.Party{Name: "Ada Lovelace", Lines: append([]string{"ada@example.com"}, document.AddressLines("1 Main St", nil, "Vancouver", strp("BC"), "V5K 0A1", "CA")...)},
		Invoice:  inv, Coupons: []string{"10% off"}, HostedURL: "https://pay.example.com/customer-portal/invoices/inv_sample?token=hpt_x",
	}
}

func TestMoney(t *testing.T) {
	for _, c := range []struct {
		amount int64
		code   string
		want   string
	}{
		{123456, "USD", "$1,234.56"}, {-2484, "USD", "-$24.84"}, {0, "USD", "$0.00"}, {1234567, "JPY", "¥1,234,567"},
		{1200, "EUR", "€12.00"}, {500, "CAD", "CA$5.00"}, {99, "GBP", "£0.99"}, {100000, "CHF", "CHF\u00a01,000.00"},
	} {
		if got := document.Money(c.amount, c.code); got != c.want {
			t.Errorf("Money(%d, %s) = %q, want %q", c.amount, c.code, got, c.want)
		}
	}
}

func TestInvoicePDFDeterministic(t *testing.T) {
	d := sampleInvoice(3)
	a, err := document.InvoicePDF(d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := document.InvoicePDF(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(a, []byte("%PDF-")) || !bytes.Equal(a, b) {
		t.Fatalf("the same model must give the same PDF bytes (%d vs %d bytes)", len(a), len(b))
	}
}

// TestInvoicePDFLongAndUnicode renders 200 lines (several pages, header repeated) and names in
// other scripts, and reads the text back when pdftotext is installed.
func TestInvoicePDFLongAndUnicode(t *testing.T) {
	d := sampleInvoice(200)
	d.BillTo.Name = "Zoë Ångström — Ελένη Пётр 😀"
	out, err := document.InvoicePDF(d)
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	if text == "" {
		return
	}
	for _, want := range []string{"INV-000042", "Seat licence 200 for the engineering team", "Zoë Ångström — Ελένη Пётр ?", "Page 1 of", "GST 5% (CA)", "PST 7% (CA-BC)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if strings.Count(text, "Unit price") < 4 {
		t.Errorf("the table header should repeat on every page:\n%s", text)
	}
}

// pdfText extracts a PDF's text with pdftotext (poppler-utils), or returns "" when it is not
// installed (CI installs it; there, a missing tool fails).
func pdfText(t testing.TB, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatal("pdftotext (poppler-utils) is required in CI")
		}
		t.Log("pdftotext not installed; skipping the text checks")
		return ""
	}
	cmd := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.ReplaceAll(string(b), "\u00a0", " ")
}

// BenchmarkInvoicePDF200Lines renders an invoice of 200 lines (every unit price different, two
// jurisdictions on every line): 9 pages. cpu-ms/op is the process's CPU time per PDF (all
// goroutines, the garbage collector included), which a busy machine does not inflate.
func BenchmarkInvoicePDF200Lines(b *testing.B) {
	d := sampleInvoice(200)
	b.ReportAllocs()
	var size, pages int
	start := testkit.ProcessCPU()
	for b.Loop() {
		out, err := document.InvoicePDF(d)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
		pages = bytes.Count(out, []byte("/Type /Page\n"))
	}
	if cpu := testkit.ProcessCPU() - start; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	b.ReportMetric(float64(size), "bytes/pdf")
	b.ReportMetric(float64(pages), "pages")
}
