package httpapi

import (
	"context"
	"encoding/json"

	"github.com/remit-billing/remit"
)

// The customer portal's API side (docs/customer-portal.md): sessions and the configuration. The
// contract validated the bodies; they decode straight into the engine's types.

// createCustomerPortalSession handles POST /v1/customer-portal-sessions.
func (s *Server) createCustomerPortalSession(ctx context.Context, r *Request) (any, error) {
	return s.eng.Portal.CreatePortalSession(ctx, r.Merchant, portalSessionInput(r))
}

// portalSessionInput is the session request's body (lenient: the pipeline's body check reads it
// too, before the contract's problems are answered).
func portalSessionInput(r *Request) remit.PortalSessionInput {
	var body struct {
		CustomerID string            `json:"customerId"`
		ReturnURL  *string           `json:"returnUrl"`
		Locale     *string           `json:"locale"`
		Flow       *remit.PortalFlow `json:"flow"`
	}
	_ = json.Unmarshal(r.Body, &body)
	return remit.PortalSessionInput{CustomerID: body.CustomerID, ReturnURL: body.ReturnURL, Locale: body.Locale, Flow: body.Flow}
}

// portalConfiguration is the configuration's body over the defaults.
func portalConfiguration(r *Request) remit.PortalConfiguration {
	c := remit.DefaultPortalConfiguration()
	_ = json.Unmarshal(r.Body, &c)
	return c
}

// getCustomerPortalConfiguration handles GET /v1/customer-portal-configuration.
func (s *Server) getCustomerPortalConfiguration(ctx context.Context, r *Request) (any, error) {
	return s.eng.Portal.GetPortalConfiguration(ctx, r.Merchant)
}

// putCustomerPortalConfiguration handles PUT /v1/customer-portal-configuration: the body over the
// defaults (a member left out takes its default).
func (s *Server) putCustomerPortalConfiguration(ctx context.Context, r *Request) (any, error) {
	return s.eng.Portal.PutPortalConfiguration(ctx, r.Merchant, portalConfiguration(r))
}
