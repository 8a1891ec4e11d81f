package remit

import (
	"fmt"
	"time"
)

// Quotes and subscriptions (docs/quotes-and-subscriptions.md).
//
// A quote is created with version 1 in draft and accepted once (draft → accepted), or canceled
// (draft → canceled; QuoteStates). Accepting it
// does what its order type says: one_off makes a draft invoice, subscription_creation makes an
// active subscription and its first draft invoice, subscription_amendment replaces a subscription's
// items from its next period.

// Quote states (a quote's status is its current version's).
// QuoteStatus is a quote version's state.
type QuoteStatus string

const (
	QuoteDraft    QuoteStatus = "draft"
	QuoteAccepted QuoteStatus = "accepted"
	QuoteCanceled QuoteStatus = "canceled"
)

// Quote order types.
const (
	OrderOneOff                = "one_off"
	OrderSubscriptionCreation  = "subscription_creation"
	OrderSubscriptionAmendment = "subscription_amendment"
)

// ValidOrderType reports whether t is one of the order types.
func ValidOrderType(t string) bool {
	return t == OrderOneOff || t == OrderSubscriptionCreation || t == OrderSubscriptionAmendment
}

// SubscriptionStatus is a subscription's state.
type SubscriptionStatus string

// Subscription states (docs/quotes-and-subscriptions.md "States"); subscription.go has the moves.
const (
	SubscriptionTrialing SubscriptionStatus = "trialing"
	SubscriptionActive   SubscriptionStatus = "active"
	SubscriptionPastDue  SubscriptionStatus = "past_due"
	SubscriptionPaused   SubscriptionStatus = "paused"
	SubscriptionCanceled SubscriptionStatus = "canceled"
)

// QuoteLine is a priced quote line. UnitAmount is the catalog price's unless the line overrode
// it. A usage_metered line has no quantity (nil): usage is measured and billed in arrears, so its
// amount on the quote is 0.
type QuoteLine struct {
	PriceID              string  `json:"priceId"`
	PriceType            string  `json:"priceType"`
	LineType             string  `json:"lineType"` // recurring | one_time | usage
	Description          string  `json:"description"`
	Quantity             *int64  `json:"quantity"`
	UnitAmount           int64   `json:"unitAmount"`
	Amount               int64   `json:"amount"`
	DiscountAmount       int64   `json:"discountAmount"`
	BillingInterval      *string `json:"billingInterval"`
	BillingIntervalCount *int64  `json:"billingIntervalCount"`
	TrialDays            *int64  `json:"trialDays"` // subscription_creation: days of free trial (the longest line's is the subscription's)
}

// TrialDays is the trial a subscription_creation quote's lines give: the longest, or 0.
func (v QuoteVersion) TrialDays() int64 {
	var days int64
	for _, l := range v.Lines {
		if l.TrialDays != nil && *l.TrialDays > days {
			days = *l.TrialDays
		}
	}
	return days
}

// QuoteVersion is one version of a quote's lines and figures. Total = Subtotal − DiscountTotal:
// a quote shows neither tax (computed on the invoice, from the billing address in force then) nor
// prepaid balance (applied at the invoice's finalization).
type QuoteVersion struct {
	Version       int64       `json:"version"`
	Status        QuoteStatus `json:"status"`
	Lines         []QuoteLine `json:"lines"`
	Subtotal      int64       `json:"subtotal"`
	DiscountTotal int64       `json:"discountTotal"`
	Total         int64       `json:"total"`
	CreatedAt     time.Time   `json:"createdAt"`
}

// Quote is a billing quote. Status, Lines and the figures are the current version's.
type Quote struct {
	Object            string            `json:"object"` // "quote"
	QuoteID           string            `json:"quoteId"`
	Status            QuoteStatus       `json:"status"`
	OrderType         string            `json:"orderType"`
	CustomerID        string            `json:"customerId"`
	BillingAccountID  string            `json:"billingAccountId"`
	SubscriptionID    *string           `json:"subscriptionId"` // amended, or created on acceptance
	Currency          string            `json:"currency"`
	Version           int64             `json:"version"`
	Versions          []QuoteVersion    `json:"versions"`
	Lines             []QuoteLine       `json:"lines"`
	CouponIDs         []string          `json:"couponIds"`
	Subtotal          int64             `json:"subtotal"`
	DiscountTotal     int64             `json:"discountTotal"`
	Total             int64             `json:"total"`
	Terms             *string           `json:"terms"`
	InvoiceID         *string           `json:"invoiceId"` // the draft invoice made on acceptance
	AcceptedAt        *time.Time        `json:"acceptedAt"`
	CanceledAt        *time.Time        `json:"canceledAt"`
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
	UpdatedAt         time.Time         `json:"updatedAt"`
}

// Current returns the quote's current version.
func (q *Quote) Current() *QuoteVersion {
	for i := range q.Versions {
		if q.Versions[i].Version == q.Version {
			return &q.Versions[i]
		}
	}
	return nil
}

// SyncCurrent copies the current version's status, lines and figures to the quote's top level.
func (q *Quote) SyncCurrent() {
	if v := q.Current(); v != nil {
		q.Status, q.Lines, q.Subtotal, q.DiscountTotal, q.Total = v.Status, v.Lines, v.Subtotal, v.DiscountTotal, v.Total
	}
}

// SubscriptionItem is one recurring item of a subscription, at the unit amount agreed on the
// quote. Quantity is nil for usage_metered items (billed for the usage measured in each period).
type SubscriptionItem struct {
	PriceID     string `json:"priceId"`
	PriceType   string `json:"priceType"`
	Quantity    *int64 `json:"quantity"`
	UnitAmount  int64  `json:"unitAmount"`
	Description string `json:"description"`
}

// Subscription bills its items every period of BillingIntervalCount × BillingInterval. Period k
// (from 1) of a cycle ends at AddInterval(BillingCycleAnchor, interval, k × count), so month-end
// anchors do not drift (Jan 31 → Feb 28 → Mar 31).
type Subscription struct {
	Object               string             `json:"object"` // "subscription"
	SubscriptionID       string             `json:"subscriptionId"`
	Status               SubscriptionStatus `json:"status"`
	CustomerID           string             `json:"customerId"`
	BillingAccountID     string             `json:"billingAccountId"`
	Currency             string             `json:"currency"`
	Items                []SubscriptionItem `json:"items"`
	PendingItems         []SubscriptionItem `json:"pendingItems"`     // from the next period (an accepted amendment), else null
	PendingCouponIDs     []string           `json:"pendingCouponIds"` // with PendingItems
	PendingQuoteID       *string            `json:"pendingQuoteId"`   // the amendment that set them
	BillingInterval      string             `json:"billingInterval"`
	BillingIntervalCount int64              `json:"billingIntervalCount"`
	BillingCycleAnchor   time.Time          `json:"billingCycleAnchor"`
	CyclePeriods         int64              `json:"-"` // periods since the anchor, the current one included
	CurrentPeriodStart   time.Time          `json:"currentPeriodStart"`
	CurrentPeriodEnd     time.Time          `json:"currentPeriodEnd"`
	LatestInvoiceID      *string            `json:"latestInvoiceId"`
	QuoteID              *string            `json:"quoteId"` // the quote that created it
	CouponIDs            []string           `json:"couponIds"`
	Metadata             map[string]string  `json:"metadata"`
	Environment          Environment        `json:"environment"`
	MerchantAccountID    string             `json:"merchantAccountId"`
	CreatedAt            time.Time          `json:"createdAt"`
	UpdatedAt            time.Time          `json:"updatedAt"`
	TrialEnd             *time.Time         `json:"trialEnd"`   // trialing: when the first paid period starts
	CancelAt             *time.Time         `json:"cancelAt"`   // canceled at period end: when it ends
	CanceledAt           *time.Time         `json:"canceledAt"` // when it ended
	PausedAt             *time.Time         `json:"pausedAt"`   // paused: since when
	// PendingProrations are charges for the remaining time of items added by a change
	// (create_prorations), billed on the next renewal invoice.
	PendingProrations []PendingProration `json:"pendingProrations"`
}

// PendingProration is one proration charge waiting for the next renewal invoice.
type PendingProration struct {
	PriceID     string    `json:"priceId"`
	Description string    `json:"description"`
	Amount      int64     `json:"amount"`
	PeriodStart time.Time `json:"periodStart"`
	PeriodEnd   time.Time `json:"periodEnd"`
}

// AddInterval returns t plus n billing intervals ("day", "week", "month", "year") in UTC. Months
// and years keep t's day of the month, clamped to the target month's last day (Jan 31 + 1 month
// is Feb 28 or 29, never Mar 3).
func AddInterval(t time.Time, interval string, n int64) time.Time {
	t = t.UTC()
	switch interval {
	case "day":
		return t.AddDate(0, 0, int(n))
	case "week":
		return t.AddDate(0, 0, 7*int(n))
	case "month":
		return addMonths(t, n)
	case "year":
		return addMonths(t, 12*n)
	}
	panic(fmt.Sprintf("remit.AddInterval: unknown interval %q", interval))
}

func addMonths(t time.Time, n int64) time.Time {
	y, mo, d := t.Date()
	total := int64(y)*12 + int64(mo-1) + n
	ny, nm := int(total/12), time.Month(total%12+1)
	if last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
		d = last
	}
	return time.Date(ny, nm, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// QuoteInput is a quote to create. Lines use the invoice line shape: priceId, quantity (default 1;
// none for usage_metered prices), unitAmount (overrides the catalog price), description.
type QuoteInput struct {
	QuoteID          string
	OrderType        string
	CustomerID       string
	BillingAccountID string
	SubscriptionID   *string
	Currency         string
	Lines            []InvoiceLineInput
	CouponIDs        []string
	Terms            *string
	Metadata         map[string]string
}
