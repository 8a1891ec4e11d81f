package httpapi

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
)

// Engine is what the edge needs of the engine, one interface per area, under the same area names
// as the engine's services (package app) and the store's files. wire fills it; the edge imports
// neither the engine nor the store, so data flows one way: edge → engine → store.
type Engine struct {
	Access      Access
	Writes      Writes
	Health      Health
	TestClocks  TestClocks
	Jobs        Jobs
	Merchants   Merchants
	Catalog     Catalog
	Ledger      Ledger
	Quotes      Quotes
	Invoicing   Invoicing
	Payments    Payments
	CreditNotes CreditNotes
	Usage       Usage
	Webhooks    Webhooks
	Documents   Documents
	Emails      Emails
	// Verification runs the money checks (docs/verification.md).
	Verification Verification
	// Foreground is told of every request in flight, so that background work yields to the API
	// (docs/email.md, "While the API is busy"). Optional.
	Foreground Foreground
	// Operations is what GET /metrics shows of the business beside the requests (metrics.go).
	// Optional.
	Operations Operations
	Exports    Exports
	Portal     Portal
	Journal    Journal
}

// Portal is the customer portal's API side: its sessions and the account's configuration.
type Portal interface {
	CreatePortalSession(ctx context.Context, m remit.MerchantAccount, in remit.PortalSessionInput) (remit.PortalSession, error)
	GetPortalConfiguration(ctx context.Context, m remit.MerchantAccount) (remit.PortalConfiguration, error)
	PutPortalConfiguration(ctx context.Context, m remit.MerchantAccount, c remit.PortalConfiguration) (remit.PortalConfiguration, error)
}

// Operations is what GET /metrics reads of the engine (docs/operations.md, "Metrics"): this
// process's counts of what it committed, and the work waiting in the store.
type Operations interface {
	EventCounts() map[remit.EventType]map[remit.Environment]int64
	UsageIngested() map[remit.Environment]int64
	Backlog(ctx context.Context) (remit.Backlog, error)
}

// Foreground marks a request in flight until the returned function is called.
type Foreground interface {
	Serving() (done func())
}

// Access authenticates API keys and resolves the scope a request acts in.
type Access interface {
	Authenticate(ctx context.Context, apiKey string) (remit.Principal, error)
	AuthenticateScoped(ctx context.Context, apiKey, merchantAccountID string) (remit.Principal, *remit.MerchantAccount, error)
	ResolveScope(ctx context.Context, p remit.Principal, env remit.Environment, merchantAccountID string) (remit.Scope, remit.MerchantAccount, error)
	ResolveScopeWith(p remit.Principal, env remit.Environment, merchantAccountID string, m *remit.MerchantAccount) (remit.Scope, remit.MerchantAccount, error)
	ResolveHostedToken(ctx context.Context, token string) (remit.HostedToken, remit.MerchantAccount, error)
}

// Writes is the one owner of a write's transaction and Idempotency-Key.
type Writes interface {
	Write(ctx context.Context, w remit.WriteRequest, run remit.WorkFunc, answer remit.AnswerFunc) (remit.Answer, error)
}

// Health reports whether the store answers, which store it is and whether its schema is current.
type Health interface {
	Ready(ctx context.Context) (remit.Readiness, error)
	// Unavailable reports whether err says the store, or a payment processor an action needed
	// first, could not be reached (answered 503: nothing was applied, retry later).
	Unavailable(err error) bool
}

// TestClocks is the sandbox merchant clock.
type TestClocks interface {
	GetClock(ctx context.Context, scope remit.Scope) (remit.TestClock, error)
	AdvanceClock(ctx context.Context, scope remit.Scope, to *time.Time, seconds *int64) (remit.TestClock, error)
}

// Merchants is merchant accounts, their onboarding and payout profile, and organization claims.
type Merchants interface {
	CreateMerchantAccount(ctx context.Context, scope remit.Scope, acting remit.MerchantAccount, in remit.MerchantAccountInput) (remit.MerchantAccountObject, error)
	// MerchantAccountProblems are the problems of a record to create (the rule the create applies).
	MerchantAccountProblems(scope remit.Scope, acting remit.MerchantAccount, in remit.MerchantAccountInput) *remit.Problems
	SubmitMerchantOnboarding(ctx context.Context, scope remit.Scope, targetID string, in remit.OnboardingSubmission) (remit.MerchantAccountObject, error)
	GetPayoutProfile(ctx context.Context, scope remit.Scope, targetID string) (remit.PayoutProfile, error)
	ClaimOrganization(ctx context.Context, token string) (remit.OrganizationClaim, error)
	UpdateMerchantAccount(ctx context.Context, scope remit.Scope, targetID string, patch remit.Patch) (remit.MerchantAccountObject, error)
	ListMerchantAccounts(ctx context.Context, scope remit.Scope, in remit.ListQuery) (remit.List[remit.MerchantAccountObject], error)
}

// Catalog is prices and coupons, customers, billing accounts and payment-method setup sessions.
type Catalog interface {
	CreatePrice(ctx context.Context, m remit.MerchantAccount, p remit.Price) (remit.Price, error)
	GetPrice(ctx context.Context, m remit.MerchantAccount, priceID string) (remit.Price, error)
	ListPrices(ctx context.Context, m remit.MerchantAccount, in remit.PriceQuery) (remit.List[remit.Price], error)
	CreateCoupon(ctx context.Context, m remit.MerchantAccount, c remit.Coupon) (remit.Coupon, error)
	GetCoupon(ctx context.Context, m remit.MerchantAccount, couponID string) (remit.Coupon, error)
	ListCoupons(ctx context.Context, m remit.MerchantAccount, in remit.CouponQuery) (remit.List[remit.Coupon], error)
	CreateCustomer(ctx context.Context, m remit.MerchantAccount, c remit.Customer) (remit.Customer, error)
	GetCustomer(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.Customer, error)
	ListCustomers(ctx context.Context, m remit.MerchantAccount, in remit.CustomerQuery) (remit.List[remit.Customer], error)
	CreateBillingAccount(ctx context.Context, m remit.MerchantAccount, b remit.BillingAccount) (remit.BillingAccount, error)
	GetBillingAccount(ctx context.Context, m remit.MerchantAccount, billingAccountID string) (remit.BillingAccount, error)
	ListBillingAccounts(ctx context.Context, m remit.MerchantAccount, in remit.BillingAccountQuery) (remit.List[remit.BillingAccount], error)
	ListPaymentMethods(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.ListQuery) (remit.List[remit.SavedPaymentMethod], error)
	CreateSetupSession(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.SetupSessionInput) (remit.SetupSession, error)
	CompleteSetupSession(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, sessionID, paymentMethod string) (remit.SetupSession, error)
	HostedSetupPage(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, sessionID string) (document.SetupPage, error)
	UpdatePrice(ctx context.Context, m remit.MerchantAccount, priceID string, patch remit.Patch) (remit.Price, error)
	UpdateCoupon(ctx context.Context, m remit.MerchantAccount, couponID string, patch remit.Patch) (remit.Coupon, error)
	CreateProduct(ctx context.Context, m remit.MerchantAccount, p remit.Product) (remit.Product, error)
	GetProduct(ctx context.Context, m remit.MerchantAccount, productID string) (remit.Product, error)
	ListProducts(ctx context.Context, m remit.MerchantAccount, in remit.ProductQuery) (remit.List[remit.Product], error)
	UpdateProduct(ctx context.Context, m remit.MerchantAccount, productID string, patch remit.Patch) (remit.Product, error)
	AttachProductFeature(ctx context.Context, m remit.MerchantAccount, productID string, in remit.ProductFeatureInput) (remit.Product, error)
	DetachProductFeature(ctx context.Context, m remit.MerchantAccount, productID, featureKey string) (remit.Product, error)
	CreateFeature(ctx context.Context, m remit.MerchantAccount, f remit.Feature) (remit.Feature, error)
	GetFeature(ctx context.Context, m remit.MerchantAccount, featureKey string) (remit.Feature, error)
	ListFeatures(ctx context.Context, m remit.MerchantAccount, in remit.ListQuery) (remit.List[remit.Feature], error)
	ListCustomerEntitlements(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.List[remit.Entitlement], error)
	GetCustomerEntitlement(ctx context.Context, m remit.MerchantAccount, customerID, featureKey string) (remit.Entitlement, error)
	UpdateCustomer(ctx context.Context, m remit.MerchantAccount, customerID string, patch remit.Patch) (remit.Customer, error)
	UpdateBillingAccount(ctx context.Context, m remit.MerchantAccount, billingAccountID string, patch remit.Patch) (remit.BillingAccount, error)
	// PrepareDetachPaymentMethod runs before the detach's transaction (a prepare step): it
	// detaches a processor's method at the processor, a call no transaction may wait on.
	PrepareDetachPaymentMethod(ctx context.Context, m remit.MerchantAccount, paymentMethodID string) context.Context
	DetachPaymentMethod(ctx context.Context, m remit.MerchantAccount, paymentMethodID string) (remit.PaymentMethod, error)
}

// Ledger is the prepaid balance: grants, expiries, the customer's balance and its entries page by
// page.
type Ledger interface {
	GrantBalance(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.GrantInput) (remit.BalanceEntry, error)
	ExpireBalance(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.ExpireInput) (remit.BalanceEntry, error)
	GetCustomerBalance(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.CustomerBalance, error)
	ListBalanceEntries(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.BalanceEntryQuery) (remit.List[remit.BalanceEntry], error)
}

// Quotes is quotes and the subscriptions they start.
type Quotes interface {
	CreateQuote(ctx context.Context, m remit.MerchantAccount, in remit.QuoteInput) (remit.Quote, error)
	GetQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error)
	ListQuotes(ctx context.Context, m remit.MerchantAccount, in remit.QuoteQuery) (remit.List[remit.Quote], error)
	AcceptQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error)
	CancelQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error)
	GetSubscription(ctx context.Context, m remit.MerchantAccount, subscriptionID string) (remit.Subscription, error)
	ListSubscriptions(ctx context.Context, m remit.MerchantAccount, in remit.SubscriptionQuery) (remit.List[remit.Subscription], error)
	CancelSubscription(ctx context.Context, m remit.MerchantAccount, subscriptionID string, in remit.CancelInput) (remit.Subscription, error)
	PauseSubscription(ctx context.Context, m remit.MerchantAccount, subscriptionID string) (remit.Subscription, error)
	ResumeSubscription(ctx context.Context, m remit.MerchantAccount, subscriptionID string) (remit.Subscription, error)
	ChangeSubscription(ctx context.Context, m remit.MerchantAccount, subscriptionID string, in remit.ChangeInput) (remit.Subscription, error)
	DeleteSubscriptionPendingChange(ctx context.Context, m remit.MerchantAccount, id string) (remit.Subscription, error)
	CreatePriceMigration(ctx context.Context, m remit.MerchantAccount, in remit.PriceMigrationInput) (remit.PriceMigration, error)
	GetPriceMigration(ctx context.Context, m remit.MerchantAccount, migrationID string) (remit.PriceMigration, error)
	ListPriceMigrations(ctx context.Context, m remit.MerchantAccount, in remit.PriceMigrationQuery) (remit.List[remit.PriceMigration], error)
	PreviewChange(ctx context.Context, m remit.MerchantAccount, subscriptionID string, in remit.ChangeInput) (remit.SubscriptionChangePreview, error)
	UpcomingInvoice(ctx context.Context, m remit.MerchantAccount, customerID, subscriptionID string) (remit.Invoice, error)
}

// Invoicing is invoices and their tax transactions.
type Invoicing interface {
	CreateInvoice(ctx context.Context, m remit.MerchantAccount, in remit.InvoiceDraftInput) (remit.Invoice, error)
	GetInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error)
	ListInvoices(ctx context.Context, m remit.MerchantAccount, in remit.InvoiceQuery) (remit.List[remit.Invoice], error)
	RefreshInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error)
	FinalizeInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, finalizedByRef *string) (remit.Invoice, error)
	// PrepareFinalizeInvoice and PrepareRefreshInvoice run before the action's transaction (a
	// prepare step): they ask an external tax provider, a call no transaction may wait on.
	PrepareFinalizeInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) context.Context
	PrepareRefreshInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) context.Context
	VoidInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error)
	ListTaxTransactions(ctx context.Context, m remit.MerchantAccount, in remit.TaxTransactionQuery) (remit.List[remit.TaxTransaction], error)
	GetTaxTransaction(ctx context.Context, m remit.MerchantAccount, id string) (remit.TaxTransaction, error)
	CommitTaxTransaction(ctx context.Context, m remit.MerchantAccount, id string) (remit.TaxTransaction, error)
	UpdateInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, patch remit.Patch) (remit.Invoice, error)
}

// Payments is collecting invoices, receipts and settlements.
type Payments interface {
	PayInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, outOfBand bool) (remit.Invoice, error)
	PayInvoiceFromPortal(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error)
	GetPaymentReceipt(ctx context.Context, m remit.MerchantAccount, receiptID string) (remit.PaymentReceipt, error)
	ListPaymentReceipts(ctx context.Context, m remit.MerchantAccount, in remit.ReceiptQuery) (remit.OffsetList[remit.PaymentReceipt], error)
	ListSettlements(ctx context.Context, scope remit.Scope, targetID string, in remit.SettlementQuery) (remit.List[remit.Settlement], error)
	GetPayment(ctx context.Context, m remit.MerchantAccount, paymentID string) (remit.Payment, error)
	ListPayments(ctx context.Context, m remit.MerchantAccount, in remit.PaymentQuery) (remit.List[remit.Payment], error)
	AuthenticatePayment(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, paymentID, outcome string) (remit.Invoice, error)
	StripeWebhook(ctx context.Context, payload []byte, signature string) (remit.ProcessorWebhookAck, error)
}

// CreditNotes is credit notes on finalized invoices.
type CreditNotes interface {
	CreateCreditNote(ctx context.Context, m remit.MerchantAccount, in remit.CreditNoteInput) (remit.CreditNote, error)
	GetCreditNote(ctx context.Context, m remit.MerchantAccount, id string) (remit.CreditNote, error)
	ListCreditNotes(ctx context.Context, m remit.MerchantAccount, in remit.CreditNoteQuery) (remit.List[remit.CreditNote], error)
}

// Usage is meters, usage events and their corrections, and usage thresholds.
type Usage interface {
	CreateMeter(ctx context.Context, m remit.MerchantAccount, in remit.Meter) (remit.Meter, error)
	GetMeter(ctx context.Context, m remit.MerchantAccount, meterID string) (remit.Meter, error)
	ListMeters(ctx context.Context, m remit.MerchantAccount, in remit.ListQuery) (remit.List[remit.Meter], error)
	CreateUsageEvent(ctx context.Context, m remit.MerchantAccount, in remit.UsageEventInput) (remit.UsageEvent, error)
	CreateUsageEvents(ctx context.Context, m remit.MerchantAccount, events []remit.UsageBatchEvent) ([]remit.UsageBatchOutcome, error)
	GetUsageEvent(ctx context.Context, m remit.MerchantAccount, eventID string) (remit.UsageEvent, error)
	ListUsageEvents(ctx context.Context, m remit.MerchantAccount, in remit.UsageEventQuery) (remit.List[remit.UsageEvent], error)
	VoidUsageEvent(ctx context.Context, m remit.MerchantAccount, eventID string) (remit.UsageEvent, error)
	CreateUsageThreshold(ctx context.Context, m remit.MerchantAccount, t remit.UsageThreshold) (remit.UsageThreshold, error)
	GetUsageThreshold(ctx context.Context, m remit.MerchantAccount, thresholdID string) (remit.UsageThreshold, error)
	ListUsageThresholds(ctx context.Context, m remit.MerchantAccount, in remit.UsageThresholdQuery) (remit.List[remit.UsageThreshold], error)
	ArchiveUsageThreshold(ctx context.Context, m remit.MerchantAccount, thresholdID string) (remit.UsageThreshold, error)
}

// Webhooks is webhook endpoints, events and their deliveries.
type Webhooks interface {
	CreateWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, in remit.WebhookEndpointInput) (remit.WebhookEndpoint, error)
	GetWebhookEndpoint(ctx context.Context, scope remit.Scope, id string) (remit.WebhookEndpoint, error)
	ListWebhookEndpoints(ctx context.Context, scope remit.Scope, in remit.ListQuery) (remit.List[remit.WebhookEndpoint], error)
	DisableWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string) (remit.WebhookEndpoint, error)
	EnableWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string) (remit.WebhookEndpoint, error)
	RotateWebhookEndpointSecret(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string, expireCurrentAfter *int64) (remit.WebhookEndpoint, error)
	// ResolveEndpointHost runs before the create's transaction (a prepare step): the host name
	// lookup must not hold the store's writer.
	ResolveEndpointHost(ctx context.Context, raw string, env remit.Environment) context.Context
	ListEvents(ctx context.Context, scope remit.Scope, in remit.EventQuery) (remit.List[remit.Event], error)
	GetEvent(ctx context.Context, scope remit.Scope, id string) (remit.Event, error)
	ListEventDeliveries(ctx context.Context, scope remit.Scope, eventID string, in remit.ListQuery) (remit.List[remit.WebhookDelivery], error)
	ResendEvent(ctx context.Context, scope remit.Scope, eventID string, endpointID *string) (remit.List[remit.WebhookDelivery], error)
	UpdateWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string, patch remit.Patch) (remit.WebhookEndpoint, error)
}

// Documents gathers what the invoice, credit-note and receipt documents and the hosted invoice
// page show; package document renders them.
type Documents interface {
	InvoiceDocument(ctx context.Context, m remit.MerchantAccount, invoiceID string) (document.Invoice, error)
	CreditNoteDocument(ctx context.Context, m remit.MerchantAccount, creditNoteID string) (document.CreditNote, error)
	ReceiptDocument(ctx context.Context, m remit.MerchantAccount, receiptID string) (document.Receipt, error)
	HostedInvoicePage(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (document.HostedPage, error)
	HostedInvoicePDF(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (document.Invoice, error)
}

// Emails is the e-mail log (docs/email.md).
type Emails interface {
	GetEmail(ctx context.Context, m remit.MerchantAccount, emailID string) (remit.Email, error)
	ListEmails(ctx context.Context, m remit.MerchantAccount, in remit.EmailQuery) (remit.List[remit.Email], error)
}

// Verification runs the money checks over a merchant account (docs/verification.md).
type Verification interface {
	Verify(ctx context.Context, scope remit.Scope) (remit.Verification, error)
	// Violations is the last periodic run's violation count per check (remit_verify_violations).
	Violations() map[string]int
}

// Jobs is the merchant account's scheduled work as operators see it (docs/reliability.md,
// "Scheduled work that fails").
type Jobs interface {
	ListJobs(ctx context.Context, m remit.MerchantAccount, in remit.JobQuery) (remit.List[remit.Job], error)
	GetJob(ctx context.Context, m remit.MerchantAccount, jobID string) (remit.Job, error)
	RetryJob(ctx context.Context, m remit.MerchantAccount, jobID string) (remit.Job, error)
	// FailedJobCounts is the number of jobs failed for good by kind, over every merchant account.
	FailedJobCounts(ctx context.Context) (map[string]int, error)
}

// Exports is the CSV exports (docs/exports.md).
type Exports interface {
	// Export checks an export's query (404 for an unknown dataset, 422 for its filters) and returns
	// it ready to stream: nothing is read before its Rows runs.
	Export(ctx context.Context, m remit.MerchantAccount, q remit.ExportQuery) (remit.Export, error)
}

// Journal is the general ledger: its entries and its accounts' balances (docs/ledger.md).
type Journal interface {
	ListJournalEntries(ctx context.Context, m remit.MerchantAccount, in remit.JournalQuery) (remit.List[remit.JournalEntry], error)
	GetJournalEntry(ctx context.Context, m remit.MerchantAccount, entryID string) (remit.JournalEntry, error)
	GetLedgerBalances(ctx context.Context, m remit.MerchantAccount, asOf string) (remit.LedgerBalances, error)
	GetRevenueReport(ctx context.Context, m remit.MerchantAccount, month string) (remit.RevenueReport, error)
}
