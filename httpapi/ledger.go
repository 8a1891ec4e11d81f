package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// grantCustomerBalance handles POST /v1/customers/{customerId}/balance/grant.
func (s *Server) grantCustomerBalance(ctx context.Context, r *Request, body api.BalanceGrantRequest) (any, error) {
	in := remit.GrantInput{
		EntryID: deref(body.EntryId), Currency: body.Currency, Amount: body.Amount, Description: body.Description,
		EffectiveAt: body.EffectiveAt, ExpiresAt: body.ExpiresAt, Metadata: metadata(body.Metadata), Priority: body.Priority,
	}
	if body.Category != nil {
		in.Category = string(*body.Category)
	}
	if t := body.Targets; t != nil {
		in.Targets = &remit.BalanceTargets{}
		if t.LineTypes != nil {
			for _, lt := range *t.LineTypes {
				in.Targets.LineTypes = append(in.Targets.LineTypes, string(lt))
			}
		}
		if t.PriceIds != nil {
			in.Targets.PriceIDs = *t.PriceIds
		}
		if t.MeterIds != nil {
			in.Targets.MeterIDs = *t.MeterIds
		}
		if in.Targets.LineTypes == nil && in.Targets.PriceIDs == nil && in.Targets.MeterIDs == nil {
			in.Targets = nil // {} restricts nothing
		}
	}
	return s.eng.Ledger.GrantBalance(ctx, r.Merchant, r.Path("customerId"), in)
}

// expireCustomerBalance handles POST /v1/customers/{customerId}/balance/expire.
func (s *Server) expireCustomerBalance(ctx context.Context, r *Request, body api.BalanceExpireRequest) (any, error) {
	return s.eng.Ledger.ExpireBalance(ctx, r.Merchant, r.Path("customerId"), remit.ExpireInput{
		EntryID: deref(body.EntryId), SourceEntryID: body.SourceEntryId, Amount: body.Amount, Description: body.Description,
		EffectiveAt: body.EffectiveAt, Metadata: metadata(body.Metadata),
	})
}

// listCustomerBalanceEntries handles GET /v1/customers/{customerId}/balance/entries.
func (s *Server) listCustomerBalanceEntries(ctx context.Context, r *Request) (any, error) {
	return s.eng.Ledger.ListBalanceEntries(ctx, r.Merchant, r.Path("customerId"), remit.BalanceEntryQuery{Currency: r.Query("currency"), ListQuery: remit.ListQueryOf(r.Query)})
}
