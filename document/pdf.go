package document

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/remit-billing/remit"
)

// Layout of every PDF, in millimetres and points. One family (the Go fonts, embedded) so the
// documents look the same wherever they are rendered.
const (
	marginX      = 16.0
	marginTop    = 16.0
	marginBottom = 18.0 // the footer lives below this
	cellPad      = 1.6  // horizontal padding inside table cells
	family       = "go"
	sizeBody     = 9.0
	sizeSmall    = 7.5
	sizeTable    = 8.5
	sizeDetail   = 7.0
)

type rgb struct{ r, g, b int }

var (
	colorText   = rgb{31, 41, 55}
	colorMuted  = rgb{107, 114, 128}
	colorRule   = rgb{229, 231, 235}
	colorHeadBg = rgb{243, 244, 246}
	colorMark   = rgb{220, 38, 38}
	colorLink   = rgb{37, 99, 235}
)

// letterCountries print on US Letter; everyone else on A4.
var letterCountries = map[string]bool{"US": true, "CA": true, "MX": true, "PH": true, "CL": true, "CO": true, "VE": true, "GT": true, "PR": true}

// pdf is one document being drawn: fpdf plus the content box and the page furniture (footer,
// watermark). Page breaks are ours (auto page break is off), so a table row or a totals block is
// never split and table headers repeat on every page.
type pdf struct {
	f                  *fpdf.Fpdf
	left, width, pageH float64
	bottom             float64 // y where content must stop
	footer             string
	watermark          string
	onBreak            func() // redraws what a continued block needs at the top of a new page
}

// pdfMeta is what the PDF's document information says.
type pdfMeta struct {
	title, author, subject string
	date                   time.Time // creation and modification date: the document's own date, never the render time
	country                string
	footer, watermark      string
}

func newPDF(m pdfMeta) *pdf {
	size := "A4"
	if letterCountries[m.country] {
		size = "Letter"
	}
	f := fpdf.New("P", "mm", size, "")
	f.SetCatalogSort(true)
	f.SetCompression(true)
	f.SetCreationDate(m.date.UTC())
	f.SetModificationDate(m.date.UTC())
	f.SetTitle(printable(m.title), true)
	f.SetAuthor(printable(m.author), true)
	f.SetSubject(printable(m.subject), true)
	f.SetCreator("Remit", true)
	f.SetProducer("Remit", true)
	f.SetLang("en")
	f.AddUTF8FontFromBytes(family, "", goregular.TTF)
	f.AddUTF8FontFromBytes(family, "B", gobold.TTF)
	f.SetMargins(marginX, marginTop, marginX)
	f.SetAutoPageBreak(false, marginBottom)
	f.SetCellMargin(cellPad)
	f.AliasNbPages("{nb}")
	w, h := f.GetPageSize()
	p := &pdf{f: f, left: marginX, width: w - 2*marginX, pageH: h, bottom: h - marginBottom,
		footer: printable(m.footer), watermark: m.watermark}
	f.SetHeaderFunc(p.drawWatermark)
	f.SetFooterFunc(p.drawFooter)
	f.AddPage()
	p.font("", sizeBody, colorText)
	return p
}

func (p *pdf) font(style string, size float64, c rgb) {
	p.f.SetFont(family, style, size)
	p.f.SetTextColor(c.r, c.g, c.b)
}

// lineH is the line height for a font size in points.
func lineH(size float64) float64 { return size * 0.3528 * 1.35 }

func (p *pdf) drawWatermark() {
	if p.watermark == "" {
		return
	}
	f := p.f
	w, h := f.GetPageSize()
	f.SetFont(family, "B", 110)
	f.SetTextColor(colorMark.r, colorMark.g, colorMark.b)
	f.SetAlpha(0.12, "Normal")
	f.TransformBegin()
	f.TransformRotate(35, w/2, h/2)
	tw := f.GetStringWidth(p.watermark)
	f.Text(w/2-tw/2, h/2+12, p.watermark)
	f.TransformEnd()
	f.SetAlpha(1, "Normal")
}

func (p *pdf) drawFooter() {
	f := p.f
	f.SetY(p.pageH - 12)
	f.SetDrawColor(colorRule.r, colorRule.g, colorRule.b)
	f.Line(p.left, p.pageH-13, p.left+p.width, p.pageH-13)
	p.font("", sizeSmall, colorMuted)
	f.SetX(p.left)
	f.CellFormat(p.width*0.75, 4, p.footer, "", 0, "L", false, 0, "")
	f.CellFormat(p.width*0.25, 4, fmt.Sprintf("Page %d of {nb}", f.PageNo()), "", 0, "R", false, 0, "")
}

// ensure starts a new page unless h millimetres still fit on this one.
func (p *pdf) ensure(h float64) {
	if p.f.GetY()+h <= p.bottom {
		return
	}
	p.f.AddPage()
	p.f.SetY(marginTop)
	if p.onBreak != nil {
		p.onBreak()
	}
}

// fit draws s in a cell of width w, shrinking the font (down to 60%) when s is wider than the cell.
func (p *pdf) fit(w, h float64, s, align string, size float64) {
	f := p.f
	avail := w - 2*cellPad
	if sw := f.GetStringWidth(s); sw > avail && sw > 0 {
		ns := size * avail / sw
		if ns < size*0.6 {
			ns = size * 0.6
		}
		f.SetFontSize(ns)
		f.CellFormat(w, h, s, "", 0, align, false, 0, "")
		f.SetFontSize(size)
		return
	}
	f.CellFormat(w, h, s, "", 0, align, false, 0, "")
}

// head draws the top of the first page: the merchant on the left; the document's title and its
// key facts on the right.
func (p *pdf) head(m Merchant, title string, facts [][2]string) {
	f := p.f
	top := f.GetY()
	leftW := p.width * 0.52
	p.font("B", 14, colorText)
	for _, l := range f.SplitText(printable(m.Name), leftW) {
		f.SetX(p.left)
		f.CellFormat(leftW, lineH(14), l, "", 1, "L", false, 0, "")
	}
	p.font("", 8.5, colorMuted)
	for _, l := range m.Lines {
		for _, s := range f.SplitText(printable(l), leftW) {
			f.SetX(p.left)
			f.CellFormat(leftW, lineH(8.5), s, "", 1, "L", false, 0, "")
		}
	}
	leftBottom := f.GetY()

	rightX, rightW := p.left+leftW, p.width-leftW
	f.SetXY(rightX, top)
	p.font("B", 20, colorText)
	f.CellFormat(rightW, lineH(20), title, "", 1, "R", false, 0, "")
	f.Ln(1)
	labelW := rightW * 0.45
	for _, kv := range facts {
		f.SetX(rightX)
		p.font("", 8.5, colorMuted)
		f.CellFormat(labelW, lineH(8.5), kv[0], "", 0, "R", false, 0, "")
		p.font("B", 8.5, colorText)
		p.fit(rightW-labelW, lineH(8.5), printable(kv[1]), "R", 8.5)
		f.Ln(lineH(8.5))
	}
	f.SetY(max(leftBottom, f.GetY()) + 7)
}

// headline is the big figure under the parties: what is due, or what was paid or credited.
type headline struct {
	Label, Amount, Note string
	Link, LinkText      string
}

// parties draws "Bill to" (and the customer's own address when it differs) on the left, and the
// headline on the right.
func (p *pdf) parties(billTo Party, customerAddr []string, h headline) {
	f := p.f
	top := f.GetY()
	colW := p.width * 0.3
	block := func(x float64, heading string, name string, lines []string) float64 {
		f.SetXY(x, top)
		p.font("B", sizeSmall, colorMuted)
		f.CellFormat(colW, lineH(sizeSmall), heading, "", 1, "L", false, 0, "")
		if name != "" {
			p.font("B", sizeBody, colorText)
			for _, s := range f.SplitText(printable(name), colW) {
				f.SetX(x)
				f.CellFormat(colW, lineH(sizeBody), s, "", 1, "L", false, 0, "")
			}
		}
		p.font("", 8.5, colorText)
		for _, l := range lines {
			for _, s := range f.SplitText(printable(l), colW) {
				f.SetX(x)
				f.CellFormat(colW, lineH(8.5), s, "", 1, "L", false, 0, "")
			}
		}
		return f.GetY()
	}
	bottom := block(p.left, "BILL TO", billTo.Name, billTo.Lines)
	if len(customerAddr) > 0 {
		bottom = max(bottom, block(p.left+colW+4, "CUSTOMER ADDRESS", "", customerAddr))
	}
	// The headline, right-aligned.
	hx, hw := p.left+p.width*0.62, p.width*0.38
	f.SetXY(hx, top)
	p.font("B", sizeSmall, colorMuted)
	f.CellFormat(hw, lineH(sizeSmall), strings.ToUpper(h.Label), "", 1, "R", false, 0, "")
	f.SetX(hx)
	p.font("B", 18, colorText)
	p.fit(hw, lineH(18), h.Amount, "R", 18)
	f.Ln(lineH(18))
	if h.Note != "" {
		f.SetX(hx)
		p.font("", 8.5, colorMuted)
		f.CellFormat(hw, lineH(8.5), printable(h.Note), "", 1, "R", false, 0, "")
	}
	if h.Link != "" {
		f.SetX(hx)
		p.font("B", 8.5, colorLink)
		f.CellFormat(hw, lineH(8.5), h.LinkText, "", 1, "R", false, 0, h.Link)
	}
	f.SetY(max(bottom, f.GetY()) + 6)
}

// column is one table column: a title, a share of the content width and an alignment.
type column struct {
	title string
	share float64
	align string
}

// row is one table row: its cells, and muted detail lines printed under the first cell.
type row struct {
	Cells  []string
	Detail []string
}

func (p *pdf) tableHeader(cols []column) {
	f := p.f
	h := lineH(sizeSmall) + 2.4
	f.SetFillColor(colorHeadBg.r, colorHeadBg.g, colorHeadBg.b)
	f.Rect(p.left, f.GetY(), p.width, h, "F")
	p.font("B", sizeSmall, colorMuted)
	f.SetX(p.left)
	for _, c := range cols {
		p.fit(c.share*p.width, h, c.title, c.align, sizeSmall)
	}
	f.Ln(h)
}

// table draws rows under a header that repeats on every page the table continues on. A row is
// never split across pages.
func (p *pdf) table(cols []column, rows []row) {
	f := p.f
	p.ensure(lineH(sizeSmall) + 2.4 + 3*lineH(sizeTable))
	p.tableHeader(cols)
	p.onBreak = func() { p.tableHeader(cols) }
	defer func() { p.onBreak = nil }()
	w0 := cols[0].share * p.width
	for _, r := range rows {
		p.font("", sizeTable, colorText)
		main := f.SplitText(printable(r.Cells[0]), w0)
		if len(main) == 0 {
			main = []string{""}
		}
		p.font("", sizeDetail, colorMuted)
		var detail []string
		for _, d := range r.Detail {
			detail = append(detail, f.SplitText(printable(d), w0)...)
		}
		h := 3.2 + float64(len(main))*lineH(sizeTable) + float64(len(detail))*lineH(sizeDetail)
		p.ensure(h)
		y := f.GetY()
		f.SetXY(p.left, y+1.6)
		p.font("", sizeTable, colorText)
		for _, s := range main {
			f.SetX(p.left)
			f.CellFormat(w0, lineH(sizeTable), s, "", 1, "L", false, 0, "")
		}
		p.font("", sizeDetail, colorMuted)
		for _, s := range detail {
			f.SetX(p.left)
			f.CellFormat(w0, lineH(sizeDetail), s, "", 1, "L", false, 0, "")
		}
		p.font("", sizeTable, colorText)
		x := p.left + w0
		for i := 1; i < len(cols) && i < len(r.Cells); i++ {
			cw := cols[i].share * p.width
			f.SetXY(x, y+1.6)
			p.fit(cw, lineH(sizeTable), printable(r.Cells[i]), cols[i].align, sizeTable)
			x += cw
		}
		f.SetDrawColor(colorRule.r, colorRule.g, colorRule.b)
		f.SetLineWidth(0.2)
		f.Line(p.left, y+h, p.left+p.width, y+h)
		f.SetY(y + h)
	}
}

// total is one row of a totals block.
type total struct {
	Label, Value string
	Strong       bool // bold, with a rule above
	Muted        bool
}

// totals draws a right-aligned block of label/value rows, kept on one page.
func (p *pdf) totals(rows []total) {
	f := p.f
	lh := lineH(sizeBody) + 1.2
	p.ensure(float64(len(rows))*lh + 6)
	f.Ln(3)
	x, w := p.left+p.width*0.46, p.width*0.54
	valueW := w * 0.38
	for _, t := range rows {
		y := f.GetY()
		if t.Strong {
			f.SetDrawColor(colorText.r, colorText.g, colorText.b)
			f.SetLineWidth(0.3)
			f.Line(x, y, x+w, y)
			f.SetY(y + 0.8)
		}
		style, c := "", colorText
		if t.Strong {
			style = "B"
		}
		if t.Muted {
			c = colorMuted
		}
		f.SetX(x)
		p.font(style, sizeBody, c)
		p.fit(w-valueW, lh, printable(t.Label), "L", sizeBody)
		p.fit(valueW, lh, t.Value, "R", sizeBody)
		f.Ln(lh)
	}
}

// section starts a titled section, on a new page when little room is left.
func (p *pdf) section(title string) {
	p.ensure(24)
	p.f.Ln(6)
	p.font("B", 10.5, colorText)
	p.f.SetX(p.left)
	p.f.CellFormat(p.width, lineH(10.5)+1, title, "", 1, "L", false, 0, "")
	p.f.Ln(1)
}

// note prints a muted paragraph across the content width.
func (p *pdf) note(s string) {
	p.font("", sizeSmall, colorMuted)
	for _, l := range p.f.SplitText(printable(s), p.width) {
		p.ensure(lineH(sizeSmall))
		p.f.SetX(p.left)
		p.f.CellFormat(p.width, lineH(sizeSmall), l, "", 1, "L", false, 0, "")
	}
}

func (p *pdf) bytes() ([]byte, error) {
	var buf bytes.Buffer
	if err := p.f.Output(&buf); err != nil {
		return nil, fmt.Errorf("document: render PDF: %w", err)
	}
	return buf.Bytes(), nil
}

func neg(amount int64, code string) string { return Money(-amount, code) }

// InvoicePDF renders an invoice: the merchant and the customer, the number and dates, every line
// with its quantity, unit amount, discount, prepaid balance and tax by jurisdiction, the totals,
// what was paid, refunded and credited, and the credit notes. Drafts carry a DRAFT watermark and
// void invoices a VOID one. The PDF depends on the model only: a finalized invoice's PDF changes
// only when a payment or a credit note changes its figures.
func InvoicePDF(d Invoice) ([]byte, error) {
	inv, cur := d.Invoice, d.Invoice.Currency
	number := InvoiceNumber(inv)
	mark := Watermark(inv.Status)
	p := newPDF(pdfMeta{title: "Invoice " + number, author: d.Merchant.Name, subject: "Invoice " + number + " for " + d.BillTo.Name,
		date: IssueDate(inv), country: d.Merchant.Country, watermark: mark,
		footer: fmt.Sprintf("%s · %s · %s", number, d.Merchant.Name, Money(inv.Total, cur))})

	facts := invoiceFacts(inv)
	p.head(d.Merchant, "Invoice", facts)
	p.parties(d.BillTo, d.CustomerAddress, invoiceHeadline(d))

	cols := []column{{"Description", 0.34, "L"}, {"Qty", 0.055, "R"}, {"Unit price", 0.105, "R"}, {"Amount", 0.105, "R"},
		{"Discount", 0.095, "R"}, {"Prepaid", 0.095, "R"}, {"Tax", 0.095, "R"}, {"Total", 0.11, "R"}}
	p.table(cols, invoiceRows(inv))
	p.totals(invoiceTotals(d))

	if len(d.CreditNotes) > 0 {
		p.section("Credit notes")
		cnCols := []column{{"Credit note", 0.17, "L"}, {"Date", 0.13, "L"}, {"Reason", 0.18, "L"}, {"Treatment", 0.29, "L"},
			{"Tax", 0.11, "R"}, {"Total", 0.12, "R"}}
		p.table(cnCols, creditNoteRows(d.CreditNotes, cur))
	}
	p.f.Ln(6)
	p.note(fmt.Sprintf("Invoice %s · Customer %s · Billing account %s · Amounts in %s.", inv.InvoiceID, inv.CustomerID, inv.BillingAccountID, cur))
	return p.bytes()
}

// invoiceFacts are the key facts printed beside the title: number, dates, period, status.
func invoiceFacts(inv remit.Invoice) [][2]string {
	facts := [][2]string{{"Invoice number", InvoiceNumber(inv)}, {"Date of issue", Date(IssueDate(inv))}}
	if inv.PeriodStart != nil && inv.PeriodEnd != nil {
		facts = append(facts, [2]string{"Service period", Period(*inv.PeriodStart, *inv.PeriodEnd)})
	}
	facts = append(facts, [2]string{"Status", StatusLabel(inv.Status)})
	if inv.PaidAt != nil {
		facts = append(facts, [2]string{"Paid on", Date(*inv.PaidAt)})
	}
	if inv.VoidedAt != nil {
		facts = append(facts, [2]string{"Voided on", Date(*inv.VoidedAt)})
	}
	return facts
}

// invoiceRows are the invoice's lines as table rows: description (with its period, meter and tax
// by jurisdiction below), quantity, unit price, amount, discount, prepaid, tax and line total.
func invoiceRows(inv remit.Invoice) []row {
	money := moneyMemo(inv.Currency)
	rows := make([]row, 0, len(inv.Lines))
	for _, l := range inv.Lines {
		rows = append(rows, row{
			Cells: []string{l.Description, fmt.Sprint(l.Quantity), money(l.UnitAmount), money(l.Amount),
				money(l.DiscountAmount), money(l.PrepaidApplied), money(l.TaxAmount), money(LineTotal(l))},
			Detail: lineDetail(l, money),
		})
	}
	return rows
}

// creditNoteRows list an invoice's credit notes: number, date, reason, treatment, tax, total.
func creditNoteRows(notes []remit.CreditNote, cur string) []row {
	var rows []row
	for _, c := range notes {
		rows = append(rows, row{Cells: []string{c.Number, Date(c.CreatedAt), ReasonLabel(c.Reason), Treatment(c),
			Money(c.TaxTotal, cur), Money(c.Total, cur)}})
	}
	return rows
}

func invoiceHeadline(d Invoice) headline {
	inv, cur := d.Invoice, d.Invoice.Currency
	switch inv.Status {
	case remit.InvoiceDraft:
		return headline{Label: "Amount due", Amount: Money(inv.AmountDue, cur), Note: "Draft: figures may still change"}
	case remit.InvoicePaid:
		h := headline{Label: "Paid", Amount: Money(inv.AmountPaid, cur)}
		if inv.PaidAt != nil {
			h.Note = "Paid on " + Date(*inv.PaidAt)
		}
		return h
	case remit.InvoiceVoid:
		return headline{Label: "Void", Amount: Money(0, cur), Note: "Nothing is due"}
	}
	h := headline{Label: "Amount due", Amount: Money(inv.AmountRemaining, cur)}
	if d.HostedURL != "" {
		h.Link, h.LinkText = d.HostedURL, "Pay online"
	}
	return h
}

// lineDetail is the muted text under a line's description: its service period, its meter, and
// its tax by jurisdiction.
func lineDetail(l remit.InvoiceLine, money func(int64) string) []string {
	var out []string
	var facts []string
	if l.PeriodStart != nil && l.PeriodEnd != nil {
		facts = append(facts, Period(*l.PeriodStart, *l.PeriodEnd))
	}
	if l.MeterID != nil {
		facts = append(facts, "usage of "+*l.MeterID)
	}
	if len(facts) > 0 {
		out = append(out, strings.Join(facts, " · "))
	}
	if t := lineTaxes(l, money); t != "" {
		out = append(out, t)
	}
	return out
}

// invoiceTotals lists the totals block: subtotal, discounts, prepaid balance, tax by jurisdiction,
// total; then, once finalized, what was paid and offset and what remains, and what was refunded
// and credited to the customer's balance.
func invoiceTotals(d Invoice) []total {
	inv, cur := d.Invoice, d.Invoice.Currency
	rows := []total{{Label: "Subtotal", Value: Money(inv.Subtotal, cur)}}
	if inv.DiscountTotal != 0 {
		label := "Discount"
		if len(d.Coupons) > 0 {
			label += " (" + strings.Join(d.Coupons, ", ") + ")"
		}
		rows = append(rows, total{Label: label, Value: neg(inv.DiscountTotal, cur)})
	}
	if inv.PrepaidApplied != 0 {
		rows = append(rows, total{Label: "Prepaid balance applied", Value: neg(inv.PrepaidApplied, cur)})
	}
	taxes := InvoiceTaxes(inv)
	for _, t := range taxes {
		rows = append(rows, total{Label: t.Label(), Value: Money(t.Amount, cur)})
	}
	if len(taxes) == 0 {
		rows = append(rows, total{Label: "Tax", Value: Money(inv.TaxTotal, cur)})
	}
	rows = append(rows, total{Label: "Total", Value: Money(inv.Total, cur), Strong: true})
	if inv.Status == remit.InvoiceDraft {
		return append(rows, total{Label: "Amount due", Value: Money(inv.AmountDue, cur), Strong: true})
	}
	if inv.AmountPaid != 0 {
		rows = append(rows, total{Label: "Amount paid", Value: neg(inv.AmountPaid, cur)})
	}
	if inv.OffsetTotal != 0 {
		rows = append(rows, total{Label: "Offset by credit notes", Value: neg(inv.OffsetTotal, cur)})
	}
	rows = append(rows, total{Label: "Amount remaining", Value: Money(inv.AmountRemaining, cur), Strong: true})
	if inv.RefundedTotal != 0 {
		rows = append(rows, total{Label: "Refunded", Value: Money(inv.RefundedTotal, cur), Muted: true})
	}
	if bc := BalanceCredited(inv); bc != 0 {
		rows = append(rows, total{Label: "Credited to customer balance", Value: Money(bc, cur), Muted: true})
	}
	if inv.CreditedTotal != 0 {
		rows = append(rows, total{Label: "Total credited", Value: Money(inv.CreditedTotal, cur), Muted: true})
	}
	return rows
}

// Treatment summarizes a credit note's buckets: "Offset $10.00 · Credited to balance $5.00".
func Treatment(c remit.CreditNote) string {
	var parts []string
	if c.OffsetAmount != 0 {
		parts = append(parts, "Offset "+Money(c.OffsetAmount, c.Currency))
	}
	if c.CreditAmount != 0 {
		parts = append(parts, "Credited to balance "+Money(c.CreditAmount, c.Currency))
	}
	if c.RefundAmount != 0 {
		parts = append(parts, "Refunded "+Money(c.RefundAmount, c.Currency))
	}
	return strings.Join(parts, " · ")
}

// CreditNotePDF renders a credit Note: the merchant and the customer, its number and date, the
// invoice it credits, each line with what it applies to and what it does, and the totals by
// bucket with the tax given back by jurisdiction. It never changes once issued.
func CreditNotePDF(d CreditNote) ([]byte, error) {
	c, cur := d.CreditNote, d.CreditNote.Currency
	invNumber := InvoiceNumber(d.Invoice)
	p := newPDF(pdfMeta{title: "Credit note " + c.Number, author: d.Merchant.Name, subject: "Credit note " + c.Number + " for invoice " + invNumber,
		date: c.CreatedAt, country: d.Merchant.Country,
		footer: fmt.Sprintf("%s · %s · credits invoice %s", c.Number, d.Merchant.Name, invNumber)})
	facts := [][2]string{{"Credit note number", c.Number}, {"Date of issue", Date(c.CreatedAt)}, {"Invoice", invNumber},
		{"Invoice date", Date(IssueDate(d.Invoice))}, {"Reason", ReasonLabel(c.Reason)}}
	p.head(d.Merchant, "Credit note", facts)
	p.parties(d.BillTo, nil, headline{Label: "Total credited", Amount: Money(c.Total, cur), Note: "Credits invoice " + invNumber})
	if c.Description != nil && *c.Description != "" {
		p.note(*c.Description)
		p.f.Ln(3)
	}

	lineDesc := map[string]string{}
	for _, l := range d.Invoice.Lines {
		lineDesc[l.InvoiceLineID] = l.Description
	}
	cols := []column{{"Description", 0.46, "L"}, {"Treatment", 0.22, "L"}, {"Tax", 0.14, "R"}, {"Amount", 0.18, "R"}}
	var rows []row
	for _, l := range c.Lines {
		var detail []string
		if l.InvoiceLineID != nil {
			detail = append(detail, "Applies to: "+lineDesc[*l.InvoiceLineID])
		} else {
			var parts []string
			for _, a := range l.Allocations {
				parts = append(parts, lineDesc[a.InvoiceLineID]+" "+Money(a.Amount, cur))
			}
			detail = append(detail, "Applies to the whole invoice: "+strings.Join(parts, " · "))
		}
		rows = append(rows, row{Cells: []string{l.Description, BucketLabel(l.Bucket), Money(l.TaxAmount, cur), Money(l.Amount, cur)}, Detail: detail})
	}
	p.table(cols, rows)

	var tot []total
	if c.OffsetAmount != 0 {
		tot = append(tot, total{Label: "Offset against invoice " + invNumber, Value: Money(c.OffsetAmount, cur)})
	}
	if c.CreditAmount != 0 {
		tot = append(tot, total{Label: "Credited to customer balance", Value: Money(c.CreditAmount, cur)})
	}
	if c.RefundAmount != 0 {
		tot = append(tot, total{Label: "Refunded", Value: Money(c.RefundAmount, cur)})
	}
	for _, t := range reversalTaxes(d.Taxes) {
		tot = append(tot, total{Label: "Includes " + t.Label(), Value: Money(t.Amount, cur), Muted: true})
	}
	tot = append(tot, total{Label: "Tax included", Value: Money(c.TaxTotal, cur), Muted: true})
	tot = append(tot, total{Label: "Total", Value: Money(c.Total, cur), Strong: true})
	p.totals(tot)
	p.f.Ln(6)
	p.note(fmt.Sprintf("Credit note %s · Invoice %s · Customer %s · Amounts in %s and include tax.", c.CreditNoteID, c.InvoiceID, c.CustomerID, cur))
	return p.bytes()
}

// ReceiptPDF renders a payment receipt: the merchant and the customer, the receipt number, the
// date paid, the payment method, what the payment paid for (the invoice's lines and totals) and
// what was refunded since.
func ReceiptPDF(d Receipt) ([]byte, error) {
	r, inv, cur := d.Receipt, d.Invoice, d.Receipt.Currency
	invNumber := InvoiceNumber(inv)
	p := newPDF(pdfMeta{title: "Receipt " + r.ReceiptNumber, author: d.Merchant.Name, subject: "Receipt " + r.ReceiptNumber + " for invoice " + invNumber,
		date: r.PaidAt, country: d.Merchant.Country,
		footer: fmt.Sprintf("%s · %s · %s paid", r.ReceiptNumber, d.Merchant.Name, Money(r.Amount, cur))})
	facts := [][2]string{{"Receipt number", r.ReceiptNumber}, {"Date paid", Date(r.PaidAt)}, {"Invoice", invNumber}}
	if r.PaymentMethod != "" {
		facts = append(facts, [2]string{"Payment method", r.PaymentMethod})
	}
	p.head(d.Merchant, "Receipt", facts)
	h := headline{Label: "Amount paid", Amount: Money(r.Amount, cur), Note: "Paid on " + Date(r.PaidAt)}
	p.parties(d.BillTo, nil, h)

	cols := []column{{"Description", 0.5, "L"}, {"Qty", 0.1, "R"}, {"Unit price", 0.18, "R"}, {"Total", 0.22, "R"}}
	money := moneyMemo(cur)
	rows := make([]row, 0, len(inv.Lines))
	for _, l := range inv.Lines {
		rows = append(rows, row{Cells: []string{l.Description, fmt.Sprint(l.Quantity), money(l.UnitAmount), money(LineTotal(l))},
			Detail: lineDetail(l, money)})
	}
	p.table(cols, rows)
	tot := []total{{Label: "Subtotal", Value: Money(inv.Subtotal, cur)}}
	if inv.DiscountTotal != 0 {
		tot = append(tot, total{Label: "Discount", Value: neg(inv.DiscountTotal, cur)})
	}
	if inv.PrepaidApplied != 0 {
		tot = append(tot, total{Label: "Prepaid balance applied", Value: neg(inv.PrepaidApplied, cur)})
	}
	for _, t := range InvoiceTaxes(inv) {
		tot = append(tot, total{Label: t.Label(), Value: Money(t.Amount, cur)})
	}
	tot = append(tot, total{Label: "Invoice total", Value: Money(inv.Total, cur)})
	tot = append(tot, total{Label: "Amount paid", Value: Money(r.Amount, cur), Strong: true})
	if r.AmountRefunded != 0 {
		tot = append(tot, total{Label: "Refunded", Value: neg(r.AmountRefunded, cur)})
		tot = append(tot, total{Label: "Net paid", Value: Money(r.Amount-r.AmountRefunded, cur), Strong: true})
	}
	p.totals(tot)
	p.f.Ln(6)
	p.note(fmt.Sprintf("Receipt %s · Payment %s · Invoice %s · Amounts in %s.", r.ReceiptID, r.PaymentID, inv.InvoiceID, cur))
	return p.bytes()
}
