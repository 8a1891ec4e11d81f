package remit

import "time"

// Customer e-mail (docs/email.md): the messages Remit writes to a merchant's customers, each
// recorded (the e-mail log) in the transaction of the change that causes it, then sent by the
// e-mail worker through SMTP.

// EmailType is what a message is about.
type EmailType string

// The e-mail types. Each has a subject, a text and an HTML body in every language of Locales.
const (
	EmailInvoiceFinalized        EmailType = "invoice.finalized"             // send_invoice accounts: the PDF and the paymentUrl
	EmailPaymentSucceeded        EmailType = "payment.succeeded"             // the receipt PDF
	EmailPaymentFailed           EmailType = "payment.failed"                // a link to attach another method and pay
	EmailPaymentActionRequired   EmailType = "payment.action_required"       // the authenticate link
	EmailSubscriptionRenewalSoon EmailType = "subscription.renewal_upcoming" // 7 days before a renewal
	EmailCreditNoteIssued        EmailType = "credit_note.issued"            // the credit note PDF
)

// EmailTypes lists every e-mail type, in the order docs/email.md describes them.
var EmailTypes = []EmailType{EmailInvoiceFinalized, EmailPaymentSucceeded, EmailPaymentFailed, EmailPaymentActionRequired,
	EmailSubscriptionRenewalSoon, EmailCreditNoteIssued}

// EmailStatus is where a message is: queued until the worker's SMTP server accepts it (sent) or
// refuses it for good or the retries run out (failed); skipped when it was never to be sent (no
// SMTP server configured, or a customer without an e-mail address).
type EmailStatus string

const (
	EmailQueued  EmailStatus = "queued"
	EmailSent    EmailStatus = "sent"
	EmailFailed  EmailStatus = "failed"
	EmailSkipped EmailStatus = "skipped"
)

// Attachment kinds: the PDF a message carries, rendered by the worker from the route's document.
const (
	AttachInvoice    = "invoice"
	AttachReceipt    = "receipt"
	AttachCreditNote = "credit_note"
)

// Email is one recorded message.
type Email struct {
	Object            string      `json:"object"` // "email"
	EmailID           string      `json:"emailId"`
	Type              EmailType   `json:"type"`
	To                *string     `json:"to"` // null when the customer has no e-mail address
	Subject           string      `json:"subject"`
	Locale            string      `json:"locale"`
	Status            EmailStatus `json:"status"`
	StatusReason      *string     `json:"statusReason"` // why it was skipped or failed, or the last retried error
	CustomerID        string      `json:"customerId"`
	InvoiceID         *string     `json:"invoiceId"`
	Attachment        *EmailFile  `json:"attachment"`
	Attempts          int         `json:"attempts"`
	SentAt            *time.Time  `json:"sentAt"`
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`
	TextBody          string      `json:"textBody,omitempty"` // GET /v1/emails/{id} only
	HTMLBody          string      `json:"htmlBody,omitempty"` // GET /v1/emails/{id} only

	NextAttemptAt *time.Time `json:"-"` // real time of the next send attempt while queued
	FromName      string     `json:"-"` // the merchant's display name, shown as the sender's name
}

// EmailFile is the PDF a message carries: which document, and its file name.
type EmailFile struct {
	Kind       string `json:"kind"` // invoice | receipt | credit_note
	DocumentID string `json:"documentId"`
	FileName   string `json:"fileName"`
}

// Why a message was recorded skipped.
const (
	SkipNoAddress = "The customer has no e-mail address."
	SkipNoSMTP    = "No SMTP server is configured (REMIT_SMTP_URL); the message was recorded, not sent."
)

// RenewalNoticeLead is how long before a renewal the subscription.renewal_upcoming message goes out.
const RenewalNoticeLead = 7 * 24 * time.Hour

// RenewalNoticeAt is when the notice of a renewal at periodEnd goes out: RenewalNoticeLead before
// it, on the merchant clock. ok is false when that moment is not after periodStart (a period of a
// week or less gets no notice: its invoice is the notice).
func RenewalNoticeAt(periodStart, periodEnd time.Time) (at time.Time, ok bool) {
	at = periodEnd.Add(-RenewalNoticeLead)
	return at, at.After(periodStart)
}

// EmailQuery is the e-mail log's query, every value the raw query string ("" when absent).
type EmailQuery struct {
	CustomerID, InvoiceID, Type string
	ListQuery
}

// RecurringAmount is what a renewal bills for items with a quantity (fixed recurring prices),
// before coupons, tax and usage: the amount the renewal notice announces.
func RecurringAmount(items []SubscriptionItem) int64 {
	var total int64
	for _, it := range items {
		if it.Quantity != nil {
			total += it.UnitAmount * *it.Quantity
		}
	}
	return total
}

// NextPeriodEnd is when the period after the subscription's current one ends.
func NextPeriodEnd(s Subscription) time.Time {
	return AddInterval(s.BillingCycleAnchor, s.BillingInterval, (s.CyclePeriods+1)*s.BillingIntervalCount)
}

// EmailDelivery decides whether a message is queued for sending or recorded skipped, and why: a
// customer without an address gets none; without an SMTP server nothing is sent.
func EmailDelivery(to *string, smtpConfigured bool) (EmailStatus, *string) {
	reason := func(s string) *string { return &s }
	switch {
	case to == nil:
		return EmailSkipped, reason(SkipNoAddress)
	case !smtpConfigured:
		return EmailSkipped, reason(SkipNoSMTP)
	}
	return EmailQueued, nil
}

// MailsInvoice reports whether a finalized invoice is e-mailed to its customer: send_invoice
// accounts only (charge_automatically customers hear of the payment instead).
func MailsInvoice(collectionMethod string) bool { return collectionMethod == SendInvoice }

// MailsReceipt reports whether a payment's receipt is e-mailed: card payments only (money received
// out of band was settled between the merchant and the customer).
func MailsReceipt(methodType string) bool { return methodType == MethodCard }

// RenewalNoticeHolds reports whether the notice of the renewal at renewsAt still announces
// something: the subscription is in the same period, will renew (active or trialing) and is not set
// to cancel.
func RenewalNoticeHolds(s Subscription, renewsAt time.Time) bool {
	return s.CurrentPeriodEnd.Equal(renewsAt) && s.CancelAt == nil &&
		(s.Status == SubscriptionActive || s.Status == SubscriptionTrialing)
}
