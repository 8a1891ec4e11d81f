package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// createQuote handles POST /v1/quotes.
func (s *Server) createQuote(ctx context.Context, r *Request, body api.QuoteCreateRequest) (any, error) {
	return s.eng.Quotes.CreateQuote(ctx, r.Merchant, quoteInput(body))
}

func quoteInput(body api.QuoteCreateRequest) remit.QuoteInput {
	return remit.QuoteInput{
		QuoteID: deref(body.QuoteId), OrderType: string(body.OrderType), CustomerID: body.CustomerId,
		BillingAccountID: body.BillingAccountId, SubscriptionID: body.SubscriptionId, Currency: body.Currency,
		Terms: body.Terms, Metadata: metadata(body.Metadata), CouponIDs: derefSlice(body.CouponIds), Lines: lineInputs(body.Lines),
	}
}
