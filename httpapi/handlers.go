package httpapi

import (
	"context"
	"fmt"

	"github.com/remit-billing/remit"
)

// area is one area of the edge: its name (the engine's service of the same name, httpapi.Engine)
// and its operations' handlers by operationId, registered in the area's own file.
type area struct {
	name     string
	handlers map[string]HandlerFunc
}

// areas is the handler registry: every area of the API, each in its own file.
func (s *Server) areas() []area {
	return []area{
		{"clock", s.clockHandlers()},            // clock.go
		{"merchants", s.merchantHandlers()},     // merchants.go
		{"catalog", s.catalogHandlers()},        // catalog.go: prices, coupons
		{"catalog", s.customerHandlers()},       // customers.go: customers, billing accounts, setup sessions
		{"ledger", s.ledgerHandlers()},          // ledger.go
		{"portal", s.portalHandlers()},          // portal.go: the customer portal (hosted tokens)
		{"quotes", s.quoteHandlers()},           // quotes.go: quotes, subscriptions
		{"invoicing", s.invoicingHandlers()},    // invoicing.go: invoices, tax transactions
		{"payments", s.paymentHandlers()},       // payments.go: payments, receipts, settlements
		{"creditNotes", s.creditNoteHandlers()}, // creditnotes.go
		{"usage", s.usageHandlers()},            // usage.go
		{"webhooks", s.webhookHandlers()},       // webhooks.go: endpoints, events, deliveries
		{"documents", s.documentHandlers()},     // documents.go: PDFs
	}
}

// handlers returns every operation's handler by operationId. An operation of the contract without
// one answers 501; an operationId registered by two areas is a startup error.
func (s *Server) handlers() (map[string]HandlerFunc, error) {
	all := map[string]HandlerFunc{}
	owner := map[string]string{}
	for _, a := range s.areas() {
		for id, h := range a.handlers {
			if prev, dup := owner[id]; dup {
				return nil, fmt.Errorf("operation %q is registered by the %s area and the %s area", id, prev, a.name)
			}
			owner[id], all[id] = a.name, h
		}
	}
	return all, nil
}

// preparers returns the prepare steps of the write operations that have one, by operationId: work
// run before the operation's transaction (see PrepareFunc).
func (s *Server) preparers() map[string]PrepareFunc {
	return s.webhookPreparers()
}

// bodyChecks returns the body rules of the operations that have them, by operationId (see
// BodyCheck).
func (s *Server) bodyChecks() map[string]BodyCheck {
	return map[string]BodyCheck{
		"createPrice":  bodyCheck(priceInput, func(p remit.Price, probs *remit.Problems) { remit.CheckPrice(&p, probs) }),
		"createCoupon": bodyCheck(couponInput, func(c remit.Coupon, probs *remit.Problems) { remit.CheckCoupon(&c, probs) }),
	}
}

// bodyCheck builds an operation's BodyCheck from the mapping of its decoded body to the engine's
// input (the handler's own) and the domain rule the engine applies to that input.
func bodyCheck[B, In any](input func(B) In, rule func(In, *remit.Problems)) BodyCheck {
	return func(r *Request) []remit.FieldError {
		var body B
		r.DecodeLenient(&body)
		var p remit.Problems
		rule(input(body), &p)
		return p.Fields()
	}
}

// decoded adapts a handler that takes the operation's decoded body, a request type generated from
// the contract (package api).
func decoded[B any](f func(ctx context.Context, r *Request, body B) (any, error)) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		var body B
		if err := r.Decode(&body); err != nil {
			return nil, err
		}
		return f(ctx, r, body)
	}
}

// byPath is the handler of an operation on one resource of the acting merchant account, named by
// the path parameter param: a read, or an action without a body.
func byPath[T any](param string, do func(ctx context.Context, m remit.MerchantAccount, id string) (T, error)) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		return do(ctx, r.Merchant, r.Path(param))
	}
}
