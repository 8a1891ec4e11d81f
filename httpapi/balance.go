package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// balanceHandlers registers the prepaid balance ledger's routes.
func (s *Server) balanceHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"getCustomerBalance": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Ledger.GetCustomerBalance(ctx, r.Merchant, r.Path("customerId"))
		},
		"grantCustomerBalance": func(ctx context.Context, r *Request) (any, error) {
			var body api.BalanceGrantRequest
			if err := r.Decode(&body); err != nil {
				return nil, err
			}
			in := remit.GrantInput{
				EntryID: deref(body.EntryId), Currency: body.Currency, Amount: body.Amount, Description: body.Description,
				EffectiveAt: body.EffectiveAt, ExpiresAt: body.ExpiresAt, Metadata: metadata(body.Metadata),
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
		},
		"expireCustomerBalance": func(ctx context.Context, r *Request) (any, error) {
			var body api.BalanceExpireRequest
			if err := r.Decode(&body); err != nil {
				return nil, err
			}
			return s.eng.Ledger.ExpireBalance(ctx, r.Merchant, r.Path("customerId"), remit.ExpireInput{
				EntryID: deref(body.EntryId), SourceEntryID: body.SourceEntryId, Amount: body.Amount, Description: body.Description,
				EffectiveAt: body.EffectiveAt, Metadata: metadata(body.Metadata),
			})
		},
	}
}
