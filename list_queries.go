package remit

// The queries of the lists (docs/api-conventions.md "Pagination"): each list's own filters beside
// the page and creation range every list takes (ListQuery), every value the raw query string (""
// when absent). The engine checks them (a bad value is 422 naming the parameter) and maps them to
// the store's filters. (The payments', subscriptions', e-mails' and jobs' queries are in their
// areas' files.)

// CustomerQuery is the customers list's query: Email, an e-mail address (exact); Search, the start
// of the name or of the e-mail address (any case).
type CustomerQuery struct {
	Email, Search string
	ListQuery
}

// BillingAccountQuery is the billing accounts list's query.
type BillingAccountQuery struct {
	CustomerID string
	ListQuery
}

// PriceQuery is the prices list's query; Active is "true" (active prices only), "false" (the
// archived ones) or "" (both).
type PriceQuery struct {
	PriceType, MeterID, Currency, ProductID, Active string
	ListQuery
}

// CouponQuery is the coupons list's query; Active as a PriceQuery's.
type CouponQuery struct {
	Active string
	ListQuery
}

// QuoteQuery is the quotes list's query.
type QuoteQuery struct {
	CustomerID, Status string
	ListQuery
}

// InvoiceQuery is the invoices list's query; Number is an invoice's number (INV-000001).
type InvoiceQuery struct {
	CustomerID, BillingAccountID, SubscriptionID, Status, Number string
	ListQuery
}

// CreditNoteQuery is the credit notes list's query.
type CreditNoteQuery struct {
	InvoiceID, CustomerID string
	ListQuery
}

// UsageEventQuery is the usage events list's query. IncludeVoided is "true" to list voided events
// too. Its creation range bounds the events' Timestamp (when the usage happened), not their
// CreatedAt: the list is in timestamp order.
type UsageEventQuery struct {
	CustomerID, MeterID, IncludeVoided string
	ListQuery
}

// UsageThresholdQuery is the usage thresholds list's query.
type UsageThresholdQuery struct {
	CustomerID, MeterID, Status string
	ListQuery
}

// TaxTransactionQuery is the tax transactions list's query.
type TaxTransactionQuery struct {
	Status, SourceDocumentID string
	ListQuery
}

// EventQuery is the events list's query: Type, one event type.
type EventQuery struct {
	Type string
	ListQuery
}

// BalanceEntryQuery is a customer's balance entries list's query: Currency, one currency.
type BalanceEntryQuery struct {
	Currency string
	ListQuery
}

// SettlementQuery is the settlements list's query: Scope, open, closed, paid or all (the default).
// Without Limit and Cursor the list comes whole, in one page.
type SettlementQuery struct {
	Scope string
	ListQuery
}

// SavedPaymentMethod is a customer's payment method as its list shows it: the method, masked, and
// the billing accounts that charge it by default (none: an empty list).
type SavedPaymentMethod struct {
	PaymentMethod
	DefaultForBillingAccountIDs []string `json:"defaultForBillingAccountIds"`
}

// PriceTypes lists the price types, in documentation order (a list filter's values).
var PriceTypes = []string{PriceFixedRecurring, PriceFixedOneTime, PriceUsageMetered, PricePayWhatYouWant, PriceFree, PriceCreditGrant, PriceCreditTopUp}

// QuoteStatuses lists a quote's states (a list filter's values).
var QuoteStatuses = []QuoteStatus{QuoteDraft, QuoteAccepted, QuoteCanceled}

// ThresholdStatuses lists a usage threshold's states (a list filter's values).
var ThresholdStatuses = []ThresholdStatus{ThresholdActive, ThresholdArchived}
