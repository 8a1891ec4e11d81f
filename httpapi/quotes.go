package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// quoteHandlers registers quotes and subscriptions.
func (s *Server) quoteHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"createQuote": decoded(func(ctx context.Context, r *Request, body api.QuoteCreateRequest) (any, error) {
			in := remit.QuoteInput{
				QuoteID: deref(body.QuoteId), OrderType: string(body.OrderType), CustomerID: body.CustomerId,
				BillingAccountID: body.BillingAccountId, SubscriptionID: body.SubscriptionId, Currency: body.Currency,
				Terms: body.Terms, Metadata: metadata(body.Metadata),
			}
			if body.CouponIds != nil {
				in.CouponIDs = *body.CouponIds
			}
			for _, l := range body.Lines {
				in.Lines = append(in.Lines, remit.InvoiceLineInput{PriceID: l.PriceId, Quantity: l.Quantity, UnitAmount: l.UnitAmount, Description: l.Description})
			}
			return s.eng.Quotes.CreateQuote(ctx, r.Merchant, in)
		}),
		"getQuote": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Quotes.GetQuote(ctx, r.Merchant, r.Path("quoteId"))
		},
		"acceptQuote": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Quotes.AcceptQuote(ctx, r.Merchant, r.Path("quoteId"))
		},
		"getSubscription": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Quotes.GetSubscription(ctx, r.Merchant, r.Path("subscriptionId"))
		},
	}
}
