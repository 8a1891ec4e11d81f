package remit

import "time"

// Previews (docs/quotes-and-subscriptions.md "Previews"): what a subscription's change or its next
// renewal would make, answered without anything being written.

// SubscriptionChangePreview is what POST /v1/subscriptions/{id}/change/preview answers: the
// subscription as the change would leave it, the proration it would price (ProrateChange), the
// invoices it would create or revise and the credit notes it would issue, as they would stand,
// and the invoice the next renewal would then make. The IDs in it name nothing stored.
type SubscriptionChangePreview struct {
	Object          string             `json:"object"` // "subscription_change_preview"
	Subscription    Subscription       `json:"subscription"`
	Prorations      []ProrationPreview `json:"prorations"`
	Invoices        []Invoice          `json:"invoices"`
	CreditNotes     []CreditNote       `json:"creditNotes"`
	UpcomingInvoice *Invoice           `json:"upcomingInvoice,omitempty"` // absent when the renewal would make none
}

// ProrationPreview is one line of a change's proration: a credit for the unused time of an old
// item, or a charge for the remaining time of a new one (before discounts and tax).
type ProrationPreview struct {
	PriceID     string    `json:"priceId"`
	Credit      bool      `json:"credit"`
	Amount      int64     `json:"amount"`
	Description string    `json:"description"`
	PeriodStart time.Time `json:"periodStart"`
	PeriodEnd   time.Time `json:"periodEnd"`
}

// ProrationPreviews are a change's proration lines as a preview shows them.
func ProrationPreviews(lines []ProrationLine) []ProrationPreview {
	out := make([]ProrationPreview, 0, len(lines))
	for _, l := range lines {
		out = append(out, ProrationPreview{PriceID: l.Item.PriceID, Credit: l.Credit, Amount: l.Amount, Description: l.Description,
			PeriodStart: l.From, PeriodEnd: l.To})
	}
	return out
}
