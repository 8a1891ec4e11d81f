package httpapi

import (
	"context"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
)

// customerPortalPut handles PUT /customer-portal/{tail...}?token=, authorized by a hosted token
// instead of an API key. The operation has no scope; the merchant account comes from the token.
// Routing by tail happens here, after the token is resolved (401 first, then 404 for an unknown
// tail, then 403 for a token of another resource):
//
//	setup-sessions/{sessionId}/complete?paymentMethod=pm_card_...   attach a test card, complete
//	invoices/{invoiceId}/pay                                        pay an open invoice (payments area)
//	payments/{paymentId}/authenticate?outcome=succeed|fail          complete a sandbox 3-D Secure step
//
// GET /customer-portal/{tail...} (customerPortalGet), the hosted invoice page and its PDF, is
// routed in portal_pages.go by the same rules.
func (s *Server) customerPortalPut(ctx context.Context, r *Request) (any, error) {
	tok, m, parts, err := s.portalRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	// The customer acts through a hosted page: its events' actor names the page's resource
	// (docs/events.md "Who acted").
	ctx = remit.WithActor(ctx, remit.Actor{Type: remit.ActorCustomerPortal, ID: tok.ResourceID})
	switch {
	case tailIs(parts, "setup-sessions", "complete"):
		return s.eng.Catalog.CompleteSetupSession(ctx, tok, m, parts[1], r.Query("paymentMethod"))
	case tailIs(parts, "invoices", "pay"):
		return s.portalPayInvoice(ctx, r, tok, m, parts[1])
	case tailIs(parts, "payments", "authenticate"):
		return s.eng.Payments.AuthenticatePayment(ctx, tok, m, parts[1], r.Query("outcome"))
	}
	return nil, remit.Errorf(remit.ENotFound, "No such customer-portal route. The portal's PUT routes are /customer-portal/setup-sessions/{sessionId}/complete, /customer-portal/invoices/{invoiceId}/pay and /customer-portal/payments/{paymentId}/authenticate.")
}

// portalPayInvoice is PUT /customer-portal/invoices/{invoiceId}/pay: it pays an open invoice with
// its billing account's default payment method (app.PayInvoiceFromPortal). A declined charge is
// recorded and answered 409 with details.reason "payment_failed", as on POST /v1/invoices/{id}/pay.
func (s *Server) portalPayInvoice(ctx context.Context, r *Request, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (any, error) {
	return s.eng.Payments.PayInvoiceFromPortal(ctx, tok, m, invoiceID)
}

// tailIs reports whether a portal route's tail (split at "/") is kind/{id}/action, or kind/{id}
// when action is "", with an {id} that is not empty.
func tailIs(parts []string, kind, action string) bool {
	if action == "" {
		return len(parts) == 2 && parts[0] == kind && parts[1] != ""
	}
	return len(parts) == 3 && parts[0] == kind && parts[1] != "" && parts[2] == action
}

// portalRequest resolves a portal request's hosted token (401 for a bad one) and splits the path
// after /customer-portal/ into its parts, for the routing of both portal operations.
func (s *Server) portalRequest(ctx context.Context, r *Request) (remit.HostedToken, remit.MerchantAccount, []string, error) {
	tok, m, err := s.eng.Access.ResolveHostedToken(ctx, r.Query("token"))
	if err == nil {
		telemetry.SetMerchant(ctx, m.ID)
	}
	return tok, m, strings.Split(r.Path("tail"), "/"), err
}
