package remit

import "time"

// Keyed is a resource a cursor list pages over: PageKey is where it stands in its list, the time
// and then the ID the list is ordered by, newest first (docs/api-conventions.md "Pagination"). A
// next page's cursor is signed from the key of the last item of a page. The store's keyset reads the
// same two columns (store.ListPage); the keys below are the one place the engine reads them.
type Keyed interface {
	PageKey() (time.Time, string)
}

// The keys of the listed resources: creation time and ID, except where a list has its own order
// (the comment says which).

// PageKey of a balance entry: its creation time, then its append order (Seq).
func (x BalanceEntry) PageKey() (time.Time, string) { return x.CreatedAt, x.Seq }

func (x BillingAccount) PageKey() (time.Time, string) { return x.CreatedAt, x.BillingAccountID }

func (x Coupon) PageKey() (time.Time, string) { return x.CreatedAt, x.CouponID }

func (x CreditNote) PageKey() (time.Time, string) { return x.CreatedAt, x.CreditNoteID }

func (x Customer) PageKey() (time.Time, string) { return x.CreatedAt, x.CustomerID }

func (x Email) PageKey() (time.Time, string) { return x.CreatedAt, x.EmailID }

func (x Event) PageKey() (time.Time, string) { return x.CreatedAt, x.ID }

func (x Feature) PageKey() (time.Time, string) { return x.CreatedAt, x.FeatureKey }

func (x Invoice) PageKey() (time.Time, string) { return x.CreatedAt, x.InvoiceID }

func (x Job) PageKey() (time.Time, string) { return x.CreatedAt, x.ID }

// PageKey of a journal entry: when it was posted, then its ID.
func (x JournalEntry) PageKey() (time.Time, string) { return x.PostedAt, x.EntryID }

func (x MerchantAccountObject) PageKey() (time.Time, string) { return x.CreatedAt, x.MerchantAccountID }

func (x Meter) PageKey() (time.Time, string) { return x.CreatedAt, x.MeterID }

func (x Payment) PageKey() (time.Time, string) { return x.CreatedAt, x.PaymentID }

func (x PriceMigration) PageKey() (time.Time, string) { return x.CreatedAt, x.MigrationID }

func (x Price) PageKey() (time.Time, string) { return x.CreatedAt, x.PriceID }

func (x Product) PageKey() (time.Time, string) { return x.CreatedAt, x.ProductID }

func (x Quote) PageKey() (time.Time, string) { return x.CreatedAt, x.QuoteID }

func (x SavedPaymentMethod) PageKey() (time.Time, string) { return x.CreatedAt, x.PaymentMethodID }

func (x Settlement) PageKey() (time.Time, string) { return x.CreatedAt, x.SettlementID }

func (x Subscription) PageKey() (time.Time, string) { return x.CreatedAt, x.SubscriptionID }

func (x TaxTransaction) PageKey() (time.Time, string) { return x.CreatedAt, x.TaxTransactionID }

// PageKey of a usage event: when the usage happened (its timestamp), then its ID.
func (x UsageEvent) PageKey() (time.Time, string) { return x.Timestamp, x.EventID }

func (x UsageThreshold) PageKey() (time.Time, string) { return x.CreatedAt, x.ThresholdID }

func (x WebhookDelivery) PageKey() (time.Time, string) { return x.CreatedAt, x.ID }

func (x WebhookEndpoint) PageKey() (time.Time, string) { return x.CreatedAt, x.ID }
