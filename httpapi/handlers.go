package httpapi

import (
	"context"
	"fmt"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// area is one area of the edge: its name (the engine's service of the same name, Engine) and its
// operations' handlers by operationId.
type area struct {
	name     string
	handlers map[string]HandlerFunc
}

// areas is the handler registry: every operation of the contract by area, under the names of the
// engine's services (Engine). A handler is a method of Server named after its operationId, in its
// area's file, or a generic handler (byPath) for an operation on one resource.
func (s *Server) areas() []area {
	return []area{
		{"clock", map[string]HandlerFunc{ // clock.go
			"getTestClock":     s.getTestClock,
			"advanceTestClock": decoded(s.advanceTestClock),
		}},
		{"merchants", map[string]HandlerFunc{ // merchants.go
			"createMerchantAccount":    decoded(s.createMerchantAccount),
			"submitMerchantOnboarding": decoded(s.submitMerchantOnboarding),
			"getPayoutProfile":         s.getPayoutProfile,
			"claimOrganization":        s.claimOrganization,
		}},
		{"catalog", map[string]HandlerFunc{ // catalog.go, customers.go
			"createPrice":                     decoded(s.createPrice),
			"getPrice":                        s.getPrice,
			"createCoupon":                    decoded(s.createCoupon),
			"getCoupon":                       s.getCoupon,
			"createCustomer":                  decoded(s.createCustomer),
			"getCustomer":                     s.getCustomer,
			"createBillingAccount":            decoded(s.createBillingAccount),
			"getBillingAccount":               s.getBillingAccount,
			"createPaymentMethodSetupSession": decoded(s.createPaymentMethodSetupSession),
		}},
		{"ledger", map[string]HandlerFunc{ // ledger.go
			"getCustomerBalance":    byPath("customerId", s.eng.Ledger.GetCustomerBalance),
			"grantCustomerBalance":  decoded(s.grantCustomerBalance),
			"expireCustomerBalance": decoded(s.expireCustomerBalance),
		}},
		{"portal", map[string]HandlerFunc{ // portal.go
			"customerPortalPut": s.customerPortalPut,
			"customerPortalGet": s.portalGet,
		}},
		{"quotes", map[string]HandlerFunc{ // quotes.go
			"createQuote":     decoded(s.createQuote),
			"getQuote":        byPath("quoteId", s.eng.Quotes.GetQuote),
			"acceptQuote":     byPath("quoteId", s.eng.Quotes.AcceptQuote),
			"getSubscription": byPath("subscriptionId", s.eng.Quotes.GetSubscription),
		}},
		{"invoicing", map[string]HandlerFunc{ // invoicing.go
			"createInvoice":          decoded(s.createInvoice),
			"getInvoice":             byPath("invoiceId", s.eng.Invoicing.GetInvoice),
			"refreshInvoice":         byPath("invoiceId", s.eng.Invoicing.RefreshInvoice),
			"finalizeInvoice":        decoded(s.finalizeInvoice),
			"voidInvoice":            byPath("invoiceId", s.eng.Invoicing.VoidInvoice),
			"listTaxTransactions":    s.listTaxTransactions,
			"getTaxTransaction":      byPath("taxTransactionId", s.eng.Invoicing.GetTaxTransaction),
			"finalizeTaxTransaction": byPath("taxTransactionId", s.eng.Invoicing.CommitTaxTransaction),
		}},
		{"payments", map[string]HandlerFunc{ // payments.go
			"payInvoice":          decoded(s.payInvoice),
			"listPaymentReceipts": s.listPaymentReceipts,
			"getPaymentReceipt":   byPath("receiptId", s.eng.Payments.GetPaymentReceipt),
			"listSettlements":     s.listSettlements,
		}},
		{"creditNotes", map[string]HandlerFunc{ // creditnotes.go
			"createCreditNote": decoded(s.createCreditNote),
			"getCreditNote":    byPath("creditNoteId", s.eng.CreditNotes.GetCreditNote),
		}},
		{"usage", map[string]HandlerFunc{ // usage.go
			"createUsageEvent":      decoded(s.createUsageEvent),
			"createUsageThreshold":  decoded(s.createUsageThreshold),
			"getUsageThreshold":     byPath("thresholdId", s.eng.Usage.GetUsageThreshold),
			"archiveUsageThreshold": byPath("thresholdId", s.eng.Usage.ArchiveUsageThreshold),
		}},
		{"webhooks", map[string]HandlerFunc{ // webhooks.go
			"createWebhookEndpoint":  decoded(s.createWebhookEndpoint),
			"listWebhookEndpoints":   s.listWebhookEndpoints,
			"getWebhookEndpoint":     s.getWebhookEndpoint,
			"disableWebhookEndpoint": s.disableWebhookEndpoint,
			"listEvents":             s.listEvents,
			"getEvent":               s.getEvent,
			"listEventDeliveries":    s.listEventDeliveries,
			"resendEvent":            decoded(s.resendEvent),
		}},
		{"documents", map[string]HandlerFunc{ // documents.go
			"getInvoicePdf":        s.getInvoicePdf,
			"getCreditNotePdf":     s.getCreditNotePdf,
			"getPaymentReceiptPdf": s.getPaymentReceiptPdf,
		}},
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
		"createMerchantAccount": func(r *Request) []remit.FieldError {
			var body api.MerchantAccountCreateRequest
			r.DecodeLenient(&body)
			return s.eng.Merchants.MerchantAccountProblems(r.Scope, r.Merchant, merchantInput(body)).Fields()
		},
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
