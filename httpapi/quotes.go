package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// listQuotes handles GET /v1/quotes.
func (s *Server) listQuotes(ctx context.Context, r *Request) (any, error) {
	return s.eng.Quotes.ListQuotes(ctx, r.Merchant, remit.QuoteQuery{CustomerID: r.Query("customerId"), Status: r.Query("status"),
		ListQuery: remit.ListQueryOf(r.Query)})
}

func quoteInput(body api.QuoteCreateRequest) remit.QuoteInput {
	return remit.QuoteInput{
		QuoteID: deref(body.QuoteId), OrderType: string(body.OrderType), CustomerID: body.CustomerId,
		BillingAccountID: body.BillingAccountId, SubscriptionID: body.SubscriptionId, Currency: body.Currency,
		Terms: body.Terms, Metadata: metadata(body.Metadata), CouponIDs: derefSlice(body.CouponIds), Lines: quoteLineInputs(body.Lines),
	}
}

// listSubscriptions handles GET /v1/subscriptions.
func (s *Server) listSubscriptions(ctx context.Context, r *Request) (any, error) {
	return s.eng.Quotes.ListSubscriptions(ctx, r.Merchant, remit.SubscriptionQuery{CustomerID: r.Query("customerId"), Status: r.Query("status"), ListQuery: remit.ListQueryOf(r.Query)})
}

func cancelInput(body api.SubscriptionCancelRequest) remit.CancelInput {
	return remit.CancelInput{At: string(body.At), Prorate: body.Prorate}
}

// getUpcomingInvoice handles GET /v1/customers/{customerId}/upcoming-invoice.
func (s *Server) getUpcomingInvoice(ctx context.Context, r *Request) (any, error) {
	return s.eng.Quotes.UpcomingInvoice(ctx, r.Merchant, r.Path("customerId"), r.Query("subscriptionId"))
}

func changeInput(body api.SubscriptionChangeRequest) remit.ChangeInput {
	in := remit.ChangeInput{}
	if body.ProrationBehavior != nil {
		in.ProrationBehavior = string(*body.ProrationBehavior)
	}
	if body.Effective != nil {
		in.Effective = string(*body.Effective)
	}
	for _, it := range body.Items {
		in.Items = append(in.Items, remit.ChangeItem{PriceID: it.PriceId, Quantity: it.Quantity})
	}
	return in
}

// listPriceMigrations handles GET /v1/price-migrations.
func (s *Server) listPriceMigrations(ctx context.Context, r *Request) (any, error) {
	return s.eng.Quotes.ListPriceMigrations(ctx, r.Merchant, remit.PriceMigrationQuery{Status: r.Query("status"), ListQuery: remit.ListQueryOf(r.Query)})
}

func priceMigrationInput(body api.PriceMigrationCreateRequest) remit.PriceMigrationInput {
	in := remit.PriceMigrationInput{FromPriceID: body.FromPriceId, ToPriceID: body.ToPriceId, Effective: string(body.Effective)}
	if body.ProrationBehavior != nil {
		in.ProrationBehavior = string(*body.ProrationBehavior)
	}
	if body.CustomerIds != nil {
		in.CustomerIDs = append([]string{}, *body.CustomerIds...)
	}
	return in
}
