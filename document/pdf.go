package document

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/locale"
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
	tr                 *locale.Tr
	left, width, pageH float64
	bottom             float64 // y where content must stop
	footer             string
	watermark          string
	onBreak            func() // redraws what a continued block needs at the top of a new page
}

// pdfMeta is what the PDF's document information says.
type pdfMeta struct {
	tr                     *locale.Tr
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
	f.SetLang(m.tr.Tag())
	f.AddUTF8FontFromBytes(family, "", goregular.TTF)
	f.AddUTF8FontFromBytes(family, "B", gobold.TTF)
	f.SetMargins(marginX, marginTop, marginX)
	f.SetAutoPageBreak(false, marginBottom)
	f.SetCellMargin(cellPad)
	f.AliasNbPages("{nb}")
	w, h := f.GetPageSize()
	p := &pdf{f: f, tr: m.tr, left: marginX, width: w - 2*marginX, pageH: h, bottom: h - marginBottom,
		footer: printable(m.footer), watermark: printable(m.watermark)}
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
	page := p.tr.T("doc.footer.page", "page", strconv.Itoa(f.PageNo()), "pages", "{nb}")
	f.CellFormat(p.width*0.25, 4, printable(page), "", 0, "R", false, 0, "")
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
	s = printable(s)
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
	p.fit(rightW, lineH(20), title, "R", 20)
	f.Ln(lineH(20))
	f.Ln(1)
	labelW := rightW * 0.45
	for _, kv := range facts {
		f.SetX(rightX)
		p.font("", 8.5, colorMuted)
		p.fit(labelW, lineH(8.5), kv[0], "R", 8.5)
		p.font("B", 8.5, colorText)
		p.fit(rightW-labelW, lineH(8.5), kv[1], "R", 8.5)
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
		f.CellFormat(colW, lineH(sizeSmall), printable(strings.ToUpper(heading)), "", 1, "L", false, 0, "")
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
	bottom := block(p.left, p.tr.T("doc.bill_to"), billTo.Name, billTo.Lines)
	if len(customerAddr) > 0 {
		bottom = max(bottom, block(p.left+colW+4, p.tr.T("doc.customer_address"), "", customerAddr))
	}
	// The headline, right-aligned.
	hx, hw := p.left+p.width*0.62, p.width*0.38
	f.SetXY(hx, top)
	p.font("B", sizeSmall, colorMuted)
	p.fit(hw, lineH(sizeSmall), strings.ToUpper(h.Label), "R", sizeSmall)
	f.Ln(lineH(sizeSmall))
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
		f.CellFormat(hw, lineH(8.5), printable(h.LinkText), "", 1, "R", false, 0, h.Link)
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
			p.fit(cw, lineH(sizeTable), r.Cells[i], cols[i].align, sizeTable)
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
		p.fit(w-valueW, lh, t.Label, "L", sizeBody)
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
	p.f.CellFormat(p.width, lineH(10.5)+1, printable(title), "", 1, "L", false, 0, "")
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

// InvoicePDF renders an invoice: the merchant and the customer, the number and dates, every line
// with its quantity, unit amount, discount, prepaid balance and tax by jurisdiction, the totals,
// what was paid, refunded and credited, and the credit notes, in the customer's language
// (d.Locale). Drafts carry a DRAFT watermark and void invoices a VOID one. The PDF depends on the
// model only: a finalized invoice's PDF changes only when a payment or a credit note changes its
// figures.
func InvoicePDF(d Invoice) ([]byte, error) {
	tr := locale.For(d.Locale)
	inv, cur := d.Invoice, d.Invoice.Currency
	number := InvoiceNumber(tr, inv)
	p := newPDF(pdfMeta{tr: tr, title: tr.T("doc.meta.invoice_title", "number", number), author: d.Merchant.Name,
		subject: tr.T("doc.meta.invoice_subject", "number", number, "customer", d.BillTo.Name),
		date:    IssueDate(inv), country: d.Merchant.Country, watermark: Watermark(tr, inv.Status),
		footer: fmt.Sprintf("%s · %s · %s", number, d.Merchant.Name, tr.Money(inv.Total, cur))})

	p.head(d.Merchant, tr.T("doc.invoice"), invoiceFacts(tr, inv))
	p.parties(d.BillTo, d.CustomerAddress, invoiceHeadline(tr, d))
	p.table(invoiceColumns(tr), invoiceRows(tr, inv))
	p.totals(invoiceTotals(tr, d))

	if len(d.CreditNotes) > 0 {
		p.section(tr.T("doc.credit_notes"))
		p.table(creditNoteColumns(tr), creditNoteRows(tr, d.CreditNotes, cur))
	}
	p.f.Ln(6)
	p.note(tr.T("doc.note.invoice", "invoice", inv.InvoiceID, "customer", inv.CustomerID, "account", inv.BillingAccountID, "currency", cur))
	return p.bytes()
}

// invoiceColumns are the invoice's line table: description, quantity, unit price, amount,
// discount, prepaid, tax and total (the hosted page shows the same).
func invoiceColumns(tr *locale.Tr) []column {
	return []column{{tr.T("doc.col.description"), 0.34, "L"}, {tr.T("doc.col.qty"), 0.055, "R"},
		{tr.T("doc.col.unit_price"), 0.105, "R"}, {tr.T("doc.col.amount"), 0.105, "R"}, {tr.T("doc.col.discount"), 0.095, "R"},
		{tr.T("doc.col.prepaid"), 0.095, "R"}, {tr.T("doc.col.tax"), 0.095, "R"}, {tr.T("doc.col.total"), 0.11, "R"}}
}

// creditNoteColumns are the table of an invoice's credit notes.
func creditNoteColumns(tr *locale.Tr) []column {
	return []column{{tr.T("doc.col.credit_note"), 0.17, "L"}, {tr.T("doc.col.date"), 0.13, "L"}, {tr.T("doc.col.reason"), 0.18, "L"},
		{tr.T("doc.col.treatment"), 0.29, "L"}, {tr.T("doc.col.tax"), 0.11, "R"}, {tr.T("doc.col.total"), 0.12, "R"}}
}

// invoiceFacts are the key facts printed beside the title: number, dates, period, status.
func invoiceFacts(tr *locale.Tr, inv remit.Invoice) [][2]string {
	facts := [][2]string{{tr.T("doc.fact.invoice_number"), InvoiceNumber(tr, inv)}, {tr.T("doc.fact.issue_date"), tr.Date(IssueDate(inv))}}
	if inv.PeriodStart != nil && inv.PeriodEnd != nil {
		facts = append(facts, [2]string{tr.T("doc.fact.service_period"), tr.Period(*inv.PeriodStart, *inv.PeriodEnd)})
	}
	facts = append(facts, [2]string{tr.T("doc.fact.status"), StatusLabel(tr, inv.Status)})
	if inv.PaidAt != nil {
		facts = append(facts, [2]string{tr.T("doc.fact.paid_on"), tr.Date(*inv.PaidAt)})
	}
	if inv.VoidedAt != nil {
		facts = append(facts, [2]string{tr.T("doc.fact.voided_on"), tr.Date(*inv.VoidedAt)})
	}
	return facts
}

// invoiceRows are the invoice's lines as table rows: description (with its period, meter and tax
// by jurisdiction below), quantity, unit price, amount, discount, prepaid, tax and line total.
func invoiceRows(tr *locale.Tr, inv remit.Invoice) []row {
	money := moneyMemo(tr, inv.Currency)
	rows := make([]row, 0, len(inv.Lines))
	for _, l := range inv.Lines {
		rows = append(rows, row{
			Cells: []string{l.Description, fmt.Sprint(l.Quantity), money(l.UnitAmount), money(l.Amount),
				money(l.DiscountAmount), money(l.PrepaidApplied), money(l.TaxAmount), money(LineTotal(l))},
			Detail: lineDetail(tr, l, money),
		})
	}
	return rows
}

// creditNoteRows list an invoice's credit notes: number, date, reason, treatment, tax, total.
func creditNoteRows(tr *locale.Tr, notes []remit.CreditNote, cur string) []row {
	var rows []row
	for _, c := range notes {
		rows = append(rows, row{Cells: []string{c.Number, tr.Date(c.CreatedAt), ReasonLabel(tr, c.Reason), Treatment(tr, c),
			tr.Money(c.TaxTotal, cur), tr.Money(c.Total, cur)}})
	}
	return rows
}

func invoiceHeadline(tr *locale.Tr, d Invoice) headline {
	inv, cur := d.Invoice, d.Invoice.Currency
	switch inv.Status {
	case remit.InvoiceDraft:
		return headline{Label: tr.T("doc.total.amount_due"), Amount: tr.Money(inv.AmountDue, cur), Note: tr.T("doc.headline.draft_note")}
	case remit.InvoicePaid:
		h := headline{Label: tr.T("doc.headline.paid"), Amount: tr.Money(inv.AmountPaid, cur)}
		if inv.PaidAt != nil {
			h.Note = tr.T("doc.headline.paid_on", "date", tr.Date(*inv.PaidAt))
		}
		return h
	case remit.InvoiceVoid:
		return headline{Label: tr.T("doc.headline.void"), Amount: tr.Money(0, cur), Note: tr.T("doc.headline.nothing_due")}
	}
	h := headline{Label: tr.T("doc.total.amount_due"), Amount: tr.Money(inv.AmountRemaining, cur)}
	if d.HostedURL != "" {
		h.Link, h.LinkText = d.HostedURL, tr.T("doc.headline.pay_online")
	}
	return h
}

// lineDetail is the muted text under a line's description: its service period, its meter, and
// its tax by jurisdiction.
func lineDetail(tr *locale.Tr, l remit.InvoiceLine, money func(int64) string) []string {
	var out []string
	var facts []string
	if l.PeriodStart != nil && l.PeriodEnd != nil {
		facts = append(facts, tr.Period(*l.PeriodStart, *l.PeriodEnd))
	}
	if l.MeterID != nil {
		facts = append(facts, tr.T("doc.line.usage_of", "meter", *l.MeterID))
	}
	if len(facts) > 0 {
		out = append(out, strings.Join(facts, " · "))
	}
	out = append(out, lineUsage(tr, l, money)...)
	if t := lineTaxes(tr, l, money); t != "" {
		out = append(out, t)
	}
	return out
}

// lineUsage says, in words, how a line's usage was priced: the units behind a package count, each
// tier of a tiered line with its quantity, unit price and flat amount, and the corrections made to
// its usage since it was billed.
func lineUsage(tr *locale.Tr, l remit.InvoiceLine, money func(int64) string) []string {
	var out []string
	if l.UsageQuantity != nil && *l.UsageQuantity != l.Quantity && l.TierBreakdown == nil {
		out = append(out, tr.T("doc.line.packages", "units", tr.Number(*l.UsageQuantity)))
	}
	for _, b := range l.TierBreakdown {
		tier := tr.T("doc.line.tier_top", "quantity", tr.Number(b.Quantity), "unit", money(b.UnitAmount))
		if b.UpTo != nil {
			tier = tr.T("doc.line.tier", "quantity", tr.Number(b.Quantity), "unit", money(b.UnitAmount), "upTo", tr.Number(*b.UpTo))
		}
		if b.FlatAmount != 0 {
			tier = tr.T("doc.line.tier_flat", "tier", tier, "flat", money(b.FlatAmount))
		}
		out = append(out, tier)
	}
	for _, c := range l.UsageCorrections {
		out = append(out, tr.T("doc.line.corrected", "before", tr.Number(c.UsageBefore), "after", tr.Number(c.UsageAfter)))
	}
	return out
}

// Total is one row of a document's totals block: a label, a value, bold or muted.
type Total = total

// InvoiceTotals is the invoice's totals block as its documents show it (the PDF, the hosted page),
// in tr's language; the dashboard's invoice page shows the same rows, so a person reads the same
// figures everywhere (invoiceTotals).
func InvoiceTotals(tr *locale.Tr, d Invoice) []Total { return invoiceTotals(tr, d) }

// invoiceTotals lists the totals block: subtotal, discounts, prepaid balance, tax by jurisdiction,
// total; then, once finalized, what was paid and offset and what remains, and what was refunded
// and credited to the customer's balance.
func invoiceTotals(tr *locale.Tr, d Invoice) []total {
	inv, cur := d.Invoice, d.Invoice.Currency
	money := func(n int64) string { return tr.Money(n, cur) }
	neg := func(n int64) string { return tr.Money(-n, cur) }
	rows := []total{{Label: tr.T("doc.total.subtotal"), Value: money(inv.Subtotal)}}
	if inv.DiscountTotal != 0 {
		label := tr.T("doc.total.discount")
		if len(d.Coupons) > 0 {
			label = tr.T("doc.total.discount_coupons", "coupons", strings.Join(d.Coupons, ", "))
		}
		rows = append(rows, total{Label: label, Value: neg(inv.DiscountTotal)})
	}
	if inv.PrepaidApplied != 0 {
		rows = append(rows, total{Label: tr.T("doc.total.prepaid_applied"), Value: neg(inv.PrepaidApplied)})
	}
	taxes := InvoiceTaxes(inv)
	for _, t := range taxes {
		rows = append(rows, total{Label: t.Label(tr), Value: money(t.Amount)})
	}
	if len(taxes) == 0 {
		rows = append(rows, total{Label: tr.T("doc.total.tax"), Value: money(inv.TaxTotal)})
	}
	rows = append(rows, total{Label: tr.T("doc.total.total"), Value: money(inv.Total), Strong: true})
	if inv.Status == remit.InvoiceDraft {
		return append(rows, total{Label: tr.T("doc.total.amount_due"), Value: money(inv.AmountDue), Strong: true})
	}
	if inv.AmountPaid != 0 {
		rows = append(rows, total{Label: tr.T("doc.total.amount_paid"), Value: neg(inv.AmountPaid)})
	}
	if inv.OffsetTotal != 0 {
		rows = append(rows, total{Label: tr.T("doc.total.offset"), Value: neg(inv.OffsetTotal)})
	}
	rows = append(rows, total{Label: tr.T("doc.total.amount_remaining"), Value: money(inv.AmountRemaining), Strong: true})
	if inv.RefundedTotal != 0 {
		rows = append(rows, total{Label: tr.T("doc.total.refunded"), Value: money(inv.RefundedTotal), Muted: true})
	}
	if bc := BalanceCredited(inv); bc != 0 {
		rows = append(rows, total{Label: tr.T("doc.total.credited_balance"), Value: money(bc), Muted: true})
	}
	if inv.CreditedTotal != 0 {
		rows = append(rows, total{Label: tr.T("doc.total.total_credited"), Value: money(inv.CreditedTotal), Muted: true})
	}
	return rows
}

// Treatment summarizes a credit note's buckets: "Offset $10.00 · Credited to balance $5.00".
func Treatment(tr *locale.Tr, c remit.CreditNote) string {
	var parts []string
	if c.OffsetAmount != 0 {
		parts = append(parts, tr.T("doc.treatment.offset", "amount", tr.Money(c.OffsetAmount, c.Currency)))
	}
	if c.CreditAmount != 0 {
		parts = append(parts, tr.T("doc.treatment.credit", "amount", tr.Money(c.CreditAmount, c.Currency)))
	}
	if c.RefundAmount != 0 {
		parts = append(parts, tr.T("doc.treatment.refund", "amount", tr.Money(c.RefundAmount, c.Currency)))
	}
	return strings.Join(parts, " · ")
}

// CreditNotePDF renders a credit note in the customer's language: the merchant and the customer,
// its number and date, the invoice it credits, each line with what it applies to and what it does,
// and the totals by bucket with the tax given back by jurisdiction. It never changes once issued.
func CreditNotePDF(d CreditNote) ([]byte, error) {
	tr := locale.For(d.Locale)
	c, cur := d.CreditNote, d.CreditNote.Currency
	invNumber := InvoiceNumber(tr, d.Invoice)
	p := newPDF(pdfMeta{tr: tr, title: tr.T("doc.meta.credit_note_title", "number", c.Number), author: d.Merchant.Name,
		subject: tr.T("doc.meta.credit_note_subject", "number", c.Number, "invoice", invNumber),
		date:    c.CreatedAt, country: d.Merchant.Country,
		footer: tr.T("doc.footer.credit_note", "number", c.Number, "merchant", d.Merchant.Name, "invoice", invNumber)})
	facts := [][2]string{{tr.T("doc.fact.credit_note_number"), c.Number}, {tr.T("doc.fact.issue_date"), tr.Date(c.CreatedAt)},
		{tr.T("doc.fact.invoice"), invNumber}, {tr.T("doc.fact.invoice_date"), tr.Date(IssueDate(d.Invoice))},
		{tr.T("doc.fact.reason"), ReasonLabel(tr, c.Reason)}}
	p.head(d.Merchant, tr.T("doc.credit_note"), facts)
	p.parties(d.BillTo, nil, headline{Label: tr.T("doc.total.total_credited"), Amount: tr.Money(c.Total, cur),
		Note: tr.T("doc.headline.credits_invoice", "invoice", invNumber)})
	if c.Description != nil && *c.Description != "" {
		p.note(*c.Description)
		p.f.Ln(3)
	}
	cols := []column{{tr.T("doc.col.description"), 0.46, "L"}, {tr.T("doc.col.treatment"), 0.22, "L"}, {tr.T("doc.col.tax"), 0.14, "R"},
		{tr.T("doc.col.amount"), 0.18, "R"}}
	p.table(cols, creditNoteLineRows(tr, c, d.Invoice))
	p.totals(creditNoteTotals(tr, d, invNumber))
	p.f.Ln(6)
	p.note(tr.T("doc.note.credit_note", "credit_note", c.CreditNoteID, "invoice", c.InvoiceID, "customer", c.CustomerID, "currency", cur))
	return p.bytes()
}

// creditNoteLineRows are a credit note's lines: description (and under it the invoice line it
// applies to, or the whole invoice's split), bucket, tax and amount.
func creditNoteLineRows(tr *locale.Tr, c remit.CreditNote, inv remit.Invoice) []row {
	cur := c.Currency
	lineDesc := map[string]string{}
	for _, l := range inv.Lines {
		lineDesc[l.InvoiceLineID] = l.Description
	}
	var rows []row
	for _, l := range c.Lines {
		var detail []string
		if l.InvoiceLineID != nil {
			detail = append(detail, tr.T("doc.applies_to", "line", lineDesc[*l.InvoiceLineID]))
		} else {
			var parts []string
			for _, a := range l.Allocations {
				parts = append(parts, lineDesc[a.InvoiceLineID]+" "+tr.Money(a.Amount, cur))
			}
			detail = append(detail, tr.T("doc.applies_to_invoice", "lines", strings.Join(parts, " · ")))
		}
		rows = append(rows, row{Cells: []string{l.Description, BucketLabel(tr, l.Bucket), tr.Money(l.TaxAmount, cur), tr.Money(l.Amount, cur)},
			Detail: detail})
	}
	return rows
}

// creditNoteTotals are a credit note's totals: each bucket, the tax given back per jurisdiction,
// the tax included and the total.
func creditNoteTotals(tr *locale.Tr, d CreditNote, invNumber string) []total {
	c, cur := d.CreditNote, d.CreditNote.Currency
	var tot []total
	if c.OffsetAmount != 0 {
		tot = append(tot, total{Label: tr.T("doc.total.offset_invoice", "invoice", invNumber), Value: tr.Money(c.OffsetAmount, cur)})
	}
	if c.CreditAmount != 0 {
		tot = append(tot, total{Label: tr.T("doc.total.credited_balance"), Value: tr.Money(c.CreditAmount, cur)})
	}
	if c.RefundAmount != 0 {
		tot = append(tot, total{Label: tr.T("doc.total.refunded"), Value: tr.Money(c.RefundAmount, cur)})
	}
	for _, t := range reversalTaxes(d.Taxes) {
		tot = append(tot, total{Label: tr.T("doc.total.includes_tax", "tax", t.Label(tr)), Value: tr.Money(t.Amount, cur), Muted: true})
	}
	tot = append(tot, total{Label: tr.T("doc.total.tax_included"), Value: tr.Money(c.TaxTotal, cur), Muted: true})
	return append(tot, total{Label: tr.T("doc.total.total"), Value: tr.Money(c.Total, cur), Strong: true})
}

// ReceiptPDF renders a payment receipt in the customer's language: the merchant and the customer,
// the receipt number, the date paid, the payment method, what the payment paid for (the invoice's
// lines and totals) and what was refunded since.
func ReceiptPDF(d Receipt) ([]byte, error) {
	tr := locale.For(d.Locale)
	r, inv, cur := d.Receipt, d.Invoice, d.Receipt.Currency
	invNumber := InvoiceNumber(tr, inv)
	p := newPDF(pdfMeta{tr: tr, title: tr.T("doc.meta.receipt_title", "number", r.ReceiptNumber), author: d.Merchant.Name,
		subject: tr.T("doc.meta.receipt_subject", "number", r.ReceiptNumber, "invoice", invNumber),
		date:    r.PaidAt, country: d.Merchant.Country,
		footer: tr.T("doc.footer.receipt", "number", r.ReceiptNumber, "merchant", d.Merchant.Name, "amount", tr.Money(r.Amount, cur))})
	facts := [][2]string{{tr.T("doc.fact.receipt_number"), r.ReceiptNumber}, {tr.T("doc.fact.date_paid"), tr.Date(r.PaidAt)},
		{tr.T("doc.fact.invoice"), invNumber}}
	method := r.PaymentMethod
	if r.OutOfBand {
		method = tr.T("doc.receipt.paid_outside")
	}
	if method != "" {
		facts = append(facts, [2]string{tr.T("doc.fact.payment_method"), method})
	}
	p.head(d.Merchant, tr.T("doc.receipt"), facts)
	p.parties(d.BillTo, nil, headline{Label: tr.T("doc.total.amount_paid"), Amount: tr.Money(r.Amount, cur),
		Note: tr.T("doc.headline.paid_on", "date", tr.Date(r.PaidAt))})

	cols := []column{{tr.T("doc.col.description"), 0.5, "L"}, {tr.T("doc.col.qty"), 0.1, "R"}, {tr.T("doc.col.unit_price"), 0.18, "R"},
		{tr.T("doc.col.total"), 0.22, "R"}}
	money := moneyMemo(tr, cur)
	rows := make([]row, 0, len(inv.Lines))
	for _, l := range inv.Lines {
		rows = append(rows, row{Cells: []string{l.Description, fmt.Sprint(l.Quantity), money(l.UnitAmount), money(LineTotal(l))},
			Detail: lineDetail(tr, l, money)})
	}
	p.table(cols, rows)
	p.totals(receiptTotals(tr, r, inv))
	p.f.Ln(6)
	p.note(tr.T("doc.note.receipt", "receipt", r.ReceiptID, "payment", r.PaymentID, "invoice", inv.InvoiceID, "currency", cur))
	return p.bytes()
}

// receiptTotals are a receipt's totals: the invoice's subtotal, discount, prepaid balance, tax by
// jurisdiction and total, then the amount paid and what was refunded since.
func receiptTotals(tr *locale.Tr, r ReceiptFacts, inv remit.Invoice) []total {
	cur := r.Currency
	money := func(n int64) string { return tr.Money(n, cur) }
	tot := []total{{Label: tr.T("doc.total.subtotal"), Value: money(inv.Subtotal)}}
	if inv.DiscountTotal != 0 {
		tot = append(tot, total{Label: tr.T("doc.total.discount"), Value: money(-inv.DiscountTotal)})
	}
	if inv.PrepaidApplied != 0 {
		tot = append(tot, total{Label: tr.T("doc.total.prepaid_applied"), Value: money(-inv.PrepaidApplied)})
	}
	for _, t := range InvoiceTaxes(inv) {
		tot = append(tot, total{Label: t.Label(tr), Value: money(t.Amount)})
	}
	tot = append(tot, total{Label: tr.T("doc.total.invoice_total"), Value: money(inv.Total)})
	tot = append(tot, total{Label: tr.T("doc.total.amount_paid"), Value: money(r.Amount), Strong: true})
	if r.AmountRefunded != 0 {
		tot = append(tot, total{Label: tr.T("doc.total.refunded"), Value: money(-r.AmountRefunded)})
		tot = append(tot, total{Label: tr.T("doc.total.net_paid"), Value: money(r.Amount - r.AmountRefunded), Strong: true})
	}
	return tot
}

// InvoiceFileName names an invoice's PDF after its number, or its ID while it is a draft.
func InvoiceFileName(d Invoice) string {
	if d.Invoice.Number != nil {
		return *d.Invoice.Number + ".pdf"
	}
	return d.Invoice.InvoiceID + "-draft.pdf"
}
