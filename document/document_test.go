package document_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/locale"
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
	en := locale.For("en")
	return document.Invoice{
		Merchant: document.Merchant{Party: document.Party{Name: "Northwind Outfitters", Lines: document.AddressLines(en, "500 Market St", nil, "San Francisco", strp("CA"), "94105", "US")}, Country: "US"},
		BillTo:   document.Party{Name: "Ada Lovelace", Lines: append([]string{"ada@example.com"}, document.AddressLines(en, "1 Main St", nil, "Vancouver", strp("BC"), "V5K 0A1", "CA")...)},
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
		if got := locale.For("en").Money(c.amount, c.code); got != c.want {
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

// localizedInvoice is sampleInvoice(3) for a customer who reads lang: in euros, with a service
// period, a first line of more than a thousand euros, and the parties' countries in lang.
func localizedInvoice(lang string) document.Invoice {
	d := sampleInvoice(3)
	tr := locale.For(lang)
	d.Locale = lang
	d.Invoice.Currency = "EUR"
	ps, pe := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	d.Invoice.PeriodStart, d.Invoice.PeriodEnd = &ps, &pe
	d.Invoice.Lines[0].UnitAmount = 123456
	d.Merchant.Lines = document.AddressLines(tr, "500 Market St", nil, "San Francisco", strp("CA"), "94105", "US")
	d.BillTo.Lines = append([]string{"ada@example.com"}, document.AddressLines(tr, "1 Main St", nil, "Vancouver", strp("BC"), "V5K 0A1", "CA")...)
	return d
}

// localizedCreditNote credits localizedInvoice, paid: 10.00 offset on its first line, and 7.00 of
// the whole invoice, 5.00 to the customer's balance and 2.00 refunded.
func localizedCreditNote(lang string) document.CreditNote {
	d := localizedInvoice(lang)
	at := time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC)
	cn := remit.CreditNote{CreditNoteID: "cn_1", Number: "CN-000001", InvoiceID: "inv_sample", CustomerID: "c1", Currency: "EUR",
		Reason: "order_change", CreatedAt: at, OffsetAmount: 1000, CreditAmount: 500, RefundAmount: 200, TaxTotal: 100, Total: 1700}
	line := "il_0"
	cn.Lines = []remit.CreditNoteLine{{InvoiceLineID: &line, Description: "Seat refund", Bucket: remit.BucketOffset, Amount: 1000, TaxAmount: 50},
		{Description: "Goodwill", Bucket: remit.BucketCredit, Amount: 700, TaxAmount: 50,
			Allocations: []remit.CreditAllocation{{InvoiceLineID: "il_0", Amount: 300}, {InvoiceLineID: "il_1", Amount: 400}}}}
	return document.CreditNote{Locale: lang, Merchant: d.Merchant, BillTo: d.BillTo, CreditNote: cn, Invoice: d.Invoice,
		Taxes: []remit.TaxTransactionLine{{Jurisdiction: "CA", RatePPM: 50000, TaxableAmount: -1000, TaxAmount: -50}}}
}

// localizedReceipt is the receipt of a payment of localizedInvoice made outside Remit, 2.00 of it
// refunded since.
func localizedReceipt(lang string) document.Receipt {
	d := localizedInvoice(lang)
	r := document.ReceiptFacts{ReceiptID: "rcpt_1", ReceiptNumber: "RCPT-0001", PaymentID: "pay_1", Amount: d.Invoice.Total, AmountRefunded: 200,
		Currency: "EUR", PaidAt: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC), OutOfBand: true}
	return document.Receipt{Locale: lang, Merchant: d.Merchant, BillTo: d.BillTo, Receipt: r, Invoice: d.Invoice}
}

// What each language's documents show: words, dates (medium pattern), amounts (CLDR) and country
// names, as pdftotext reads them (spaces collapsed, no-break spaces as spaces).
var localizedTexts = []struct {
	lang                               string
	invoice, creditNote, receipt, page []string
}{
	{"fr",
		[]string{"Facture", "Numéro de facture INV-000042", "Date d’émission 3 mars 2026", "Période de service 1 mars – 1 avr. 2026",
			"Statut Ouverte", "FACTURÉ À", "MONTANT DÛ", "Payer en ligne", "États-Unis", "Canada", "Prix unitaire",
			"1 234,56 €", "TPS 5 % 0,45 € · TVP 7 % 0,63 €", "Sous-total 62,96 €", "Remise (10% off) -6,29 €", "TPS 5 % (CA) 2,83 €",
			"Reste à payer 63,47 €", "Montants en EUR.", "Page 1 sur 1"},
		[]string{"Avoir", "Numéro d’avoir CN-000001", "Date d’émission 5 mars 2026", "Date de la facture 3 mars 2026",
			"Motif Modification de commande", "TOTAL CRÉDITÉ", "Avoir sur la facture INV-000042", "S’applique à : Seat licence 1",
			"Déduit de la facture", "Crédité sur le solde", "Déduit de la facture INV-000042 10,00 €",
			"Crédité sur le solde du client 5,00 €", "Remboursé 2,00 €", "Dont TPS 5 % (CA) 0,50 €", "Taxes incluses 1,00 €", "Page 1 sur 1"},
		[]string{"Reçu", "Numéro de reçu RCPT-0001", "Date de paiement 4 mars 2026", "Moyen de paiement Payé en dehors de Remit",
			"MONTANT PAYÉ", "Payé le 4 mars 2026", "Total de la facture 63,47 €", "Net payé 61,47 €", "Page 1 sur 1"},
		[]string{`<html lang="fr">`, "<title>Facture INV-000042 de Northwind Outfitters</title>", "Facturé à", "Payer 63,47 €",
			"avec Visa •••• 4242", "Télécharger le PDF", "3 mars 2026", ">Ouverte<", "Reste à payer", "1 234,56 €", "Qté",
			`data-text-paid="Paiement reçu. Merci ! Cette facture est payée."`, `data-text-status-paid="Payée"`, "Cette page vous est personnelle"}},
	{"de",
		[]string{"Rechnung", "Rechnungsnummer INV-000042", "Ausstellungsdatum 03.03.2026", "Leistungszeitraum 01.03. – 01.04.2026",
			"Status Offen", "RECHNUNGSEMPFÄNGER", "BETRAG FÄLLIG", "Online bezahlen", "Vereinigte Staaten", "Kanada",
			"Einzelpreis", "1.234,56 €", "GST 5 % 0,45 € · PST 7 % 0,63 €", "Zwischensumme 62,96 €", "Rabatt (10% off) -6,29 €",
			"Offener Betrag 63,47 €", "Beträge in EUR.", "Seite 1 von 1"},
		[]string{"Gutschrift", "Gutschriftsnummer CN-000001", "Ausstellungsdatum 05.03.2026", "Rechnungsdatum 03.03.2026",
			"Grund Bestelländerung", "INSGESAMT GUTGESCHRIEBEN", "Gutschrift zur Rechnung INV-000042", "Betrifft: Seat licence 1",
			"Mit Rechnung INV-000042 verrechnet 10,00 €", "Dem Kundenguthaben gutgeschrieben 5,00 €", "Erstattet 2,00 €",
			"Enthält GST 5 % (CA) 0,50 €", "Enthaltene Steuer 1,00 €", "Seite 1 von 1"},
		[]string{"Quittung", "Quittungsnummer RCPT-0001", "Zahlungsdatum 04.03.2026", "Zahlungsmethode Außerhalb von Remit bezahlt",
			"BEZAHLTER BETRAG", "Bezahlt am 04.03.2026", "Rechnungsbetrag 63,47 €", "Netto bezahlt 61,47 €", "Seite 1 von 1"},
		[]string{`<html lang="de">`, "<title>Rechnung INV-000042 von Northwind Outfitters</title>", "Rechnungsempfänger",
			"63,47 € bezahlen", "mit Visa •••• 4242", "PDF herunterladen", "03.03.2026", ">Offen<", "Betrag fällig", "1.234,56 €",
			`data-text-processing="Ihre Zahlung wird verarbeitet…"`, "Diese Seite ist nur für Sie bestimmt"}},
	{"es",
		[]string{"Factura", "Número de factura INV-000042", "Fecha de emisión 3 mar 2026", "Período de servicio 1 mar – 1 abr 2026",
			"Estado Abierta", "FACTURAR A", "IMPORTE ADEUDADO", "Pagar en línea", "Estados Unidos", "Canadá",
			"Precio unitario", "1234,56 €", "GST 5 % 0,45 € · PST 7 % 0,63 €", "Subtotal 62,96 €", "Descuento (10% off) -6,29 €",
			"Importe pendiente 63,47 €", "Importes en EUR.", "Página 1 de 1"},
		[]string{"Nota de crédito", "Número de nota de crédito CN-000001", "Fecha de emisión 5 mar 2026",
			"Motivo Cambio en el pedido", "TOTAL ABONADO", "Abona la factura INV-000042", "Se aplica a: Seat licence 1",
			"Compensado con la factura INV-000042 10,00 €", "Abonado al saldo del cliente 5,00 €", "Reembolsado 2,00 €",
			"Incluye GST 5 % (CA) 0,50 €", "Impuestos incluidos 1,00 €", "Página 1 de 1"},
		[]string{"Recibo", "Número de recibo RCPT-0001", "Fecha de pago 4 mar 2026", "Método de pago Pagado fuera de Remit",
			"IMPORTE PAGADO", "Pagado el 4 mar 2026", "Total de la factura 63,47 €", "Neto pagado 61,47 €", "Página 1 de 1"},
		[]string{`<html lang="es">`, "<title>Factura INV-000042 de Northwind Outfitters</title>", "Facturar a", "Pagar 63,47 €",
			"con Visa •••• 4242", "Descargar PDF", "3 mar 2026", ">Abierta<", "Importe adeudado", "1234,56 €",
			`data-text-offline="No se pudo conectar con el servidor.`, "Esta página es solo para usted"}},
}

// TestDocumentsInCustomerLanguage renders each kind of document in French, German and Spanish
// and finds the language's words, dates and amounts, and no English label.
func TestDocumentsInCustomerLanguage(t *testing.T) {
	for _, c := range localizedTexts {
		t.Run(c.lang, func(t *testing.T) {
			inv, err := document.InvoicePDF(localizedInvoice(c.lang))
			if err != nil {
				t.Fatal(err)
			}
			cn, err := document.CreditNotePDF(localizedCreditNote(c.lang))
			if err != nil {
				t.Fatal(err)
			}
			rcpt, err := document.ReceiptPDF(localizedReceipt(c.lang))
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := document.InvoicePDF(localizedInvoice(c.lang)); !bytes.Equal(inv, again) {
				t.Errorf("the same %s invoice gave other PDF bytes", c.lang)
			}
			page := hostedPage(t, localizedInvoice(c.lang))
			wantAll(t, "the hosted page", page, c.page)
			for _, english := range []string{"Bill to", "Amount due", "Download PDF", "Unit price", `lang="en"`} {
				if strings.Contains(page, english) {
					t.Errorf("the %s hosted page says %q", c.lang, english)
				}
			}
			for _, doc := range []struct {
				name string
				pdf  []byte
				want []string
			}{{"invoice", inv, c.invoice}, {"credit note", cn, c.creditNote}, {"receipt", rcpt, c.receipt}} {
				if !bytes.Contains(doc.pdf, []byte("/Lang ("+c.lang+")")) {
					t.Errorf("the %s PDF does not declare /Lang (%s)", doc.name, c.lang)
				}
				text := pdfText(t, doc.pdf)
				if text == "" {
					continue
				}
				wantAll(t, "the "+doc.name+" PDF", flat(text), doc.want)
				for _, english := range []string{"Page 1 of", "Unit price", "Date of issue", "BILL TO", "Amounts in"} {
					if strings.Contains(text, english) {
						t.Errorf("the %s %s PDF says %q", c.lang, doc.name, english)
					}
				}
			}
		})
	}
}

// hostedPage renders the hosted page of an open invoice payable with a card on file, its
// no-break spaces as spaces.
func hostedPage(t *testing.T, d document.Invoice) string {
	t.Helper()
	b, err := document.InvoiceHTML(document.HostedPage{Invoice: d, Payable: true, PaymentMethod: "Visa •••• 4242",
		PayURL: "./inv_sample/pay?token=hpt_x", PDFURL: "./inv_sample/pdf?token=hpt_x"})
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(string(b))
}

// flat collapses runs of spaces (pdftotext's layout) into one.
func flat(s string) string {
	return regexp.MustCompile(`[ \t]+`).ReplaceAllString(strings.ReplaceAll(s, "\u202f", " "), " ")
}

func wantAll(t *testing.T, what, text string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// TestPDFMetadataInCustomerLanguage reads the title and subject of a German credit note and a
// Spanish invoice with pdfinfo (poppler-utils).
func TestPDFMetadataInCustomerLanguage(t *testing.T) {
	cn, err := document.CreditNotePDF(localizedCreditNote("de"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := document.InvoicePDF(localizedInvoice("es"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pdf  []byte
		want []string
	}{
		{cn, []string{"Title: Gutschrift CN-000001", "Subject: Gutschrift CN-000001 zur Rechnung INV-000042"}},
		{inv, []string{"Title: Factura INV-000042", "Subject: Factura INV-000042 para Ada Lovelace"}},
	} {
		if info := pdfInfo(t, c.pdf); info != "" {
			wantAll(t, "pdfinfo", flat(info), c.want)
		}
	}
}

// pdfInfo is pdfinfo's answer for a PDF, or "" when poppler-utils is not installed (outside CI).
func pdfInfo(t testing.TB, pdf []byte) string {
	t.Helper()
	if pdfText(t, pdf) == "" {
		return ""
	}
	cmd := exec.Command("pdfinfo", "-enc", "UTF-8", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	return string(b)
}

// TestUnknownLocaleIsEnglish: a locale Remit does not speak renders exactly the English
// documents, and so does none.
func TestUnknownLocaleIsEnglish(t *testing.T) {
	render := func(lang string) [][]byte {
		d := localizedInvoice(lang)
		d.Merchant, d.BillTo = sampleInvoice(0).Merchant, sampleInvoice(0).BillTo
		inv, err1 := document.InvoicePDF(d)
		c := localizedCreditNote(lang)
		c.Merchant, c.BillTo = d.Merchant, d.BillTo
		cn, err2 := document.CreditNotePDF(c)
		r := localizedReceipt(lang)
		r.Merchant, r.BillTo = d.Merchant, d.BillTo
		rcpt, err3 := document.ReceiptPDF(r)
		page, err4 := document.InvoiceHTML(document.HostedPage{Invoice: d, Payable: true, PaymentMethod: "Visa •••• 4242", PDFURL: "./pdf"})
		setup, err5 := document.SetupHTML(document.SetupPage{Locale: lang, Merchant: "Northwind", Status: remit.SessionOpen})
		for _, err := range []error{err1, err2, err3, err4, err5} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return [][]byte{inv, cn, rcpt, page, setup}
	}
	english, unknown, empty := render("en"), render("xx"), render("")
	for i := range english {
		if !bytes.Equal(english[i], unknown[i]) || !bytes.Equal(english[i], empty[i]) {
			t.Errorf("document %d: locale \"xx\" or \"\" is not rendered as English", i)
		}
	}
	wantAll(t, "the hosted page", string(english[3]), []string{`<html lang="en">`, "Bill to", "Amount due", "Pay €63.47", "Mar 3, 2026",
		"Mar 1 – Apr 1, 2026", "€1,234.56", "GST 5% (CA)", "Amount remaining", "Download PDF"})
	wantAll(t, "the setup page", string(english[4]), []string{`<html lang="en">`, "Save a card", "will charge this card"})
	if text := pdfText(t, english[0]); text != "" {
		wantAll(t, "the English invoice", flat(text), []string{"Invoice number INV-000042", "Date of issue Mar 3, 2026",
			"Service period Mar 1 – Apr 1, 2026", "BILL TO", "AMOUNT DUE", "€1,234.56", "Subtotal €62.96", "Page 1 of 1"})
	}
}

// TestPageScriptsAreTheSameInEveryLanguage: the hosted pages' scripts carry no text (their texts
// are data-text-* attributes), so the script every language's page serves is the one its
// Content-Security-Policy pins.
func TestPageScriptsAreTheSameInEveryLanguage(t *testing.T) {
	script := regexp.MustCompile(`(?s)<script>(.*)</script>`)
	pinned := func(page []byte, csp string) bool {
		m := script.FindSubmatch(page)
		if m == nil {
			return false
		}
		sum := sha256.Sum256(m[1])
		return strings.Contains(csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	for _, lang := range remit.Locales {
		page, err := document.InvoiceHTML(document.HostedPage{Invoice: localizedInvoice(lang), Payable: true, PaymentMethod: "Visa •••• 4242"})
		if err != nil {
			t.Fatal(err)
		}
		if !pinned(page, document.HostedPageCSP) {
			t.Errorf("%s: the hosted invoice page's script is not the one HostedPageCSP pins", lang)
		}
		sp := document.SetupPage{Locale: lang, Merchant: "Northwind", Status: remit.SessionOpen}
		setup, err := document.SetupHTML(sp)
		if err != nil {
			t.Fatal(err)
		}
		if !pinned(setup, document.SetupPageCSP(sp)) {
			t.Errorf("%s: the setup page's script is not the one SetupPageCSP pins", lang)
		}
	}
}

// TestSetupPageInCustomerLanguage renders the sandbox setup page and a completed one in French.
func TestSetupPageInCustomerLanguage(t *testing.T) {
	var cards []document.SetupOption
	for _, c := range remit.TestCards {
		if got := locale.Catalog("en")["doc.setup.outcome."+c.Token]; got != c.Outcome {
			t.Errorf("the catalog's outcome of test card %s is %q, remit.TestCards says %q", c.Token, got, c.Outcome)
		}
		cards = append(cards, document.SetupOption{Token: c.Token, Label: c.Brand + " " + c.Last4, Outcome: c.Outcome})
	}
	cards = append(cards, document.SetupOption{Token: "pm_card_new", Label: "New", Outcome: "an outcome the catalog lacks"})
	open, err := document.SetupHTML(document.SetupPage{Locale: "fr", Merchant: "Northwind", Status: remit.SessionOpen, TestCards: cards})
	if err != nil {
		t.Fatal(err)
	}
	done, err := document.SetupHTML(document.SetupPage{Locale: "fr", Merchant: "Northwind", Status: remit.SessionCompleted, PaymentMethod: "Visa •••• 4242"})
	if err != nil {
		t.Fatal(err)
	}
	nbsp := strings.NewReplacer("\u00a0", " ")
	wantAll(t, "the French setup page", nbsp.Replace(string(open)), []string{`<html lang="fr">`, "<title>Enregistrer une carte pour Northwind</title>",
		"Northwind débitera cette carte", "Environnement de test : choisissez une carte de test", "les paiements sont refusés (card_declined)",
		"an outcome the catalog lacks", `data-text-saving="Enregistrement de votre carte…"`,
		`data-text-saved-last4="Carte enregistrée (•••• {last4}). Vous pouvez fermer cette page."`})
	wantAll(t, "the completed French setup page", nbsp.Replace(string(done)), []string{"Cette carte est enregistrée : Visa •••• 4242. Vous pouvez fermer cette page."})
}

// TestLabelsInCustomerLanguage: states, reasons, buckets and watermarks in the catalogs, and a
// value the catalogs lack printed as it is.
func TestLabelsInCustomerLanguage(t *testing.T) {
	fr, de, es := locale.For("fr"), locale.For("de"), locale.For("es")
	for _, c := range []struct{ got, want string }{
		{document.StatusLabel(fr, remit.InvoicePaid), "Payée"}, {document.StatusLabel(de, remit.InvoiceUncollectible), "Uneinbringlich"},
		{document.StatusLabel(es, "someday"), "someday"}, {document.ReasonLabel(de, ""), "Sonstiges"},
		{document.ReasonLabel(fr, remit.ReasonSubscriptionCanceled), "Résiliation de l’abonnement"},
		{document.BucketLabel(es, remit.BucketRefund), "Reembolsado"}, {document.Watermark(fr, remit.InvoiceDraft), "BROUILLON"},
		{document.Watermark(de, remit.InvoiceVoid), "STORNIERT"}, {document.Watermark(es, remit.InvoiceOpen), ""},
		{document.InvoiceNumber(es, remit.Invoice{}), "Borrador"}, {document.TaxLabel(fr, "FR", 200000), "TVA 20\u00a0% (FR)"},
		{document.ShortTaxLabel(de, "CA-QC", 99750), "QST 9,975\u00a0%"}, {document.ShortTaxLabel(es, "XX", 50000), "Impuesto 5\u00a0% (XX)"},
		{document.ShortTaxLabel(locale.For("en"), "CA-QC", 99750), "QST 9.975%"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestTieredLineInWords: a tiered usage line says on the PDF how each tier was charged, and a
// corrected line how its usage changed, in the customer's language.
func TestTieredLineInWords(t *testing.T) {
	for _, c := range []struct {
		lang string
		want []string
	}{
		{"en", []string{"100 × $0.10 in the tier up to 100", "900 × $0.05 in the tier up to 1,000, plus $2.00",
			"200 × $0.01 in the top tier", "usage corrected from 1,200 to 1,000"}},
		{"fr", []string{"dans la tranche jusqu'à 1 000", "2,00 $US pour la tranche", "dans la dernière tranche",
			"consommation corrigée de 1 200 à 1 000"}},
	} {
		t.Run(c.lang, func(t *testing.T) {
			d := sampleInvoice(1)
			d.Locale = c.lang
			up := func(n int64) *int64 { return &n }
			l := &d.Invoice.Lines[0]
			l.TierBreakdown = []remit.TierBreakdown{{UpTo: up(100), Quantity: 100, UnitAmount: 10, Amount: 1000},
				{UpTo: up(1000), Quantity: 900, UnitAmount: 5, FlatAmount: 200, Amount: 4700}, {Quantity: 200, UnitAmount: 1, Amount: 200}}
			l.UsageCorrections = []remit.UsageCorrection{{EventID: "e2", UsageBefore: 1200, UsageAfter: 1000, Amount: 200}}
			pdf, err := document.InvoicePDF(d)
			if err != nil {
				t.Fatal(err)
			}
			if text := pdfText(t, pdf); text != "" {
				wantAll(t, "the invoice PDF", flat(text), c.want)
			}
		})
	}
}

// BenchmarkInvoicePDF3Lines renders the invoice most e-mail carries: three lines, one page.
func BenchmarkInvoicePDF3Lines(b *testing.B) {
	d := localizedInvoice("fr")
	b.ReportAllocs()
	start := testkit.ProcessCPU()
	for b.Loop() {
		if _, err := document.InvoicePDF(d); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := testkit.ProcessCPU() - start; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

// TestPDFsRenderedAtOnceMatch renders documents in every language from many goroutines at once:
// each must be byte for byte what a render alone gives. The renderer shares parsed fonts and
// compressors between documents (third_party/fpdf/REMIT.md); under -race this also checks that
// nothing shared is written.
func TestPDFsRenderedAtOnceMatch(t *testing.T) {
	langs := []string{"en", "fr", "de", "es"}
	render := func(i int) []byte {
		lang := langs[i%len(langs)]
		var out []byte
		var err error
		switch i % 3 {
		case 0:
			out, err = document.InvoicePDF(localizedInvoice(lang))
		case 1:
			out, err = document.CreditNotePDF(localizedCreditNote(lang))
		default:
			out, err = document.ReceiptPDF(localizedReceipt(lang))
		}
		if err != nil {
			t.Error(err)
		}
		return out
	}
	const kinds = 12 // every language with every document
	want := make([][]byte, kinds)
	for i := range want {
		want[i] = render(i)
	}
	var wg sync.WaitGroup
	for i := range 4 * kinds {
		wg.Go(func() {
			if got := render(i % kinds); !bytes.Equal(got, want[i%kinds]) {
				t.Errorf("render %d at once differs from the render alone (%d against %d bytes)", i%kinds, len(got), len(want[i%kinds]))
			}
		})
	}
	wg.Wait()
}
