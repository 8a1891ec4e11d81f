// Package mail writes and sends the e-mails Remit sends to a merchant's customers
// (docs/email.md). Compose turns the facts of one message into its subject, plain-text body and
// HTML body, in the customer's language (package locale), through two templates embedded in the
// binary (templates/message.txt and templates/message.html): pure, no I/O. SMTP sends composed
// messages through an SMTP server (github.com/wneessen/go-mail).
package mail

import (
	"bytes"
	_ "embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/locale"
)

// Facts are what one message says. Which fields a type uses is in its compose function below.
type Facts struct {
	Type     remit.EmailType
	Locale   string
	Merchant string // the merchant account's display name
	Customer string // the customer's name

	InvoiceNumber string
	Amount        int64 // amount due, paid, credited or to be billed, in Currency's minor units
	Currency      string
	Date          time.Time  // finalized, paid, failed, issued, or the renewal date
	DueDate       *time.Time // invoice.finalized: when the invoice is due
	NextAttempt   *time.Time // payment.failed: the next automatic retry, if one is scheduled

	ReceiptNumber    string
	CreditNoteNumber string
	PaymentMethod    string // "Visa •••• 4242"
	Period           [2]time.Time

	ActionURL     string // the button: pay, attach a method, authenticate
	InvoiceURL    string // payment.failed: the hosted invoice page
	HasAttachment bool   // a PDF is attached
}

// Message is a composed e-mail.
type Message struct {
	Subject string
	Text    string
	HTML    string
}

// content is what the templates lay out: every string already in the customer's language.
type content struct {
	Lang       string
	Subject    string
	Greeting   string
	Paragraphs []string
	Facts      [][2]string
	Button     string
	ButtonURL  string
	Links      [][2]string // further links: label, URL
	Footer     string
}

var (
	//go:embed templates/message.txt
	textSource string
	//go:embed templates/message.html
	htmlSource string

	textTemplate = texttemplate.Must(texttemplate.New("text").Parse(textSource))
	htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Parse(htmlSource))
)

// Compose writes the message of f in f.Locale (English when unknown).
func Compose(f Facts) (Message, error) {
	tr := locale.For(f.Locale)
	c := content{
		Lang: tr.Tag(), Greeting: tr.T("email.greeting", "name", f.Customer),
		Footer: tr.T("email.footer", "merchant", f.Merchant),
	}
	build, ok := composers[f.Type]
	if !ok {
		return Message{}, fmt.Errorf("mail: no message for type %q", f.Type)
	}
	build(tr, f, &c)
	if f.HasAttachment {
		c.Paragraphs = append(c.Paragraphs, tr.T("email.attached"))
	}
	var text, html bytes.Buffer
	if err := textTemplate.Execute(&text, c); err != nil {
		return Message{}, fmt.Errorf("mail: text body: %w", err)
	}
	if err := htmlTemplate.Execute(&html, c); err != nil {
		return Message{}, fmt.Errorf("mail: HTML body: %w", err)
	}
	return Message{Subject: oneLine(c.Subject), Text: text.String(), HTML: html.String()}, nil
}

// oneLine keeps a subject on one header line whatever a merchant's name holds.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

var composers = map[remit.EmailType]func(tr *locale.Tr, f Facts, c *content){
	remit.EmailInvoiceFinalized:        invoiceFinalized,
	remit.EmailPaymentSucceeded:        paymentSucceeded,
	remit.EmailPaymentFailed:           paymentFailed,
	remit.EmailPaymentActionRequired:   actionRequired,
	remit.EmailSubscriptionRenewalSoon: renewalUpcoming,
	remit.EmailCreditNoteIssued:        creditNoteIssued,
}

func invoiceFinalized(tr *locale.Tr, f Facts, c *content) {
	amount := tr.Money(f.Amount, f.Currency)
	c.Subject = tr.T("email.invoice_finalized.subject", "number", f.InvoiceNumber, "merchant", f.Merchant)
	c.Paragraphs = []string{tr.T("email.invoice_finalized.intro", "merchant", f.Merchant, "number", f.InvoiceNumber, "amount", amount)}
	c.Facts = [][2]string{{tr.T("email.fact.invoice_number"), f.InvoiceNumber}, {tr.T("email.fact.amount_due"), amount}}
	if f.DueDate != nil {
		c.Facts = append(c.Facts, [2]string{tr.T("email.fact.due_date"), tr.Date(*f.DueDate)})
	}
	if f.ActionURL != "" {
		c.Button, c.ButtonURL = tr.T("email.invoice_finalized.button"), f.ActionURL
	}
}

func paymentSucceeded(tr *locale.Tr, f Facts, c *content) {
	amount := tr.Money(f.Amount, f.Currency)
	c.Subject = tr.T("email.payment_succeeded.subject", "merchant", f.Merchant, "number", f.ReceiptNumber)
	c.Paragraphs = []string{tr.T("email.payment_succeeded.intro", "amount", amount, "merchant", f.Merchant, "invoice", f.InvoiceNumber)}
	c.Facts = [][2]string{{tr.T("email.fact.receipt_number"), f.ReceiptNumber}, {tr.T("email.fact.invoice_number"), f.InvoiceNumber},
		{tr.T("email.fact.amount_paid"), amount}, {tr.T("email.fact.date_paid"), tr.Date(f.Date)}}
	if f.PaymentMethod != "" {
		c.Facts = append(c.Facts, [2]string{tr.T("email.fact.payment_method"), f.PaymentMethod})
	}
}

func paymentFailed(tr *locale.Tr, f Facts, c *content) {
	amount := tr.Money(f.Amount, f.Currency)
	c.Subject = tr.T("email.payment_failed.subject", "number", f.InvoiceNumber, "merchant", f.Merchant)
	c.Paragraphs = []string{tr.T("email.payment_failed.intro", "amount", amount, "merchant", f.Merchant, "number", f.InvoiceNumber)}
	if f.NextAttempt != nil {
		c.Paragraphs = append(c.Paragraphs, tr.T("email.payment_failed.retry", "date", tr.Date(*f.NextAttempt)))
	}
	c.Facts = [][2]string{{tr.T("email.fact.invoice_number"), f.InvoiceNumber}, {tr.T("email.fact.amount_due"), amount}}
	if f.PaymentMethod != "" {
		c.Facts = append(c.Facts, [2]string{tr.T("email.fact.payment_method"), f.PaymentMethod})
	}
	if f.ActionURL != "" {
		c.Paragraphs = append(c.Paragraphs, tr.T("email.payment_failed.update"))
		c.Button, c.ButtonURL = tr.T("email.payment_failed.button"), f.ActionURL
	}
	if f.InvoiceURL != "" {
		c.Links = append(c.Links, [2]string{tr.T("email.view_invoice"), f.InvoiceURL})
	}
}

func actionRequired(tr *locale.Tr, f Facts, c *content) {
	amount := tr.Money(f.Amount, f.Currency)
	c.Subject = tr.T("email.action_required.subject", "merchant", f.Merchant)
	c.Paragraphs = []string{tr.T("email.action_required.intro", "amount", amount, "merchant", f.Merchant, "number", f.InvoiceNumber)}
	c.Facts = [][2]string{{tr.T("email.fact.invoice_number"), f.InvoiceNumber}, {tr.T("email.fact.amount_due"), amount}}
	if f.ActionURL != "" {
		c.Button, c.ButtonURL = tr.T("email.action_required.button"), f.ActionURL
	}
}

func renewalUpcoming(tr *locale.Tr, f Facts, c *content) {
	amount := tr.Money(f.Amount, f.Currency)
	c.Subject = tr.T("email.renewal_upcoming.subject", "merchant", f.Merchant, "date", tr.Date(f.Date))
	c.Paragraphs = []string{tr.T("email.renewal_upcoming.intro", "merchant", f.Merchant, "date", tr.Date(f.Date))}
	c.Facts = [][2]string{{tr.T("email.fact.renewal_date"), tr.Date(f.Date)}, {tr.T("email.fact.next_period"), tr.Period(f.Period[0], f.Period[1])},
		{tr.T("email.fact.estimated_amount"), amount}}
}

func creditNoteIssued(tr *locale.Tr, f Facts, c *content) {
	amount := tr.Money(f.Amount, f.Currency)
	c.Subject = tr.T("email.credit_note_issued.subject", "number", f.CreditNoteNumber, "merchant", f.Merchant)
	c.Paragraphs = []string{tr.T("email.credit_note_issued.intro", "merchant", f.Merchant, "amount", amount, "invoice", f.InvoiceNumber)}
	c.Facts = [][2]string{{tr.T("email.fact.credit_note_number"), f.CreditNoteNumber}, {tr.T("email.fact.invoice_number"), f.InvoiceNumber},
		{tr.T("email.fact.total_credited"), amount}, {tr.T("email.fact.date_issued"), tr.Date(f.Date)}}
}
