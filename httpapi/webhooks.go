package httpapi

import (
	"context"
	"encoding/json"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// webhookPreparers resolves a new endpoint's host name before the transaction: a lookup can take
// seconds, and on SQLite the transaction holds the one writer.
func (s *Server) webhookPreparers() map[string]PrepareFunc {
	return map[string]PrepareFunc{
		"createWebhookEndpoint": func(ctx context.Context, r *Request) context.Context {
			var body api.WebhookEndpointCreateRequest
			if r.Decode(&body) != nil {
				return ctx // the handler answers the problem
			}
			return s.eng.Webhooks.ResolveEndpointHost(ctx, body.Url, r.Scope.Environment)
		},
		"updateWebhookEndpoint": func(ctx context.Context, r *Request) context.Context {
			var body struct {
				URL *string `json:"url"`
			}
			if json.Unmarshal(r.Body, &body) != nil || body.URL == nil {
				return ctx // no new url to look up (or the handler answers the problem)
			}
			return s.eng.Webhooks.ResolveEndpointHost(ctx, *body.URL, r.Scope.Environment)
		},
	}
}

// updateWebhookEndpoint handles PATCH /v1/webhook-endpoints/{endpointId}.
func (s *Server) updateWebhookEndpoint(ctx context.Context, r *Request) (any, error) {
	patch, err := remit.ParsePatch(r.Body)
	if err != nil {
		return nil, err
	}
	return s.eng.Webhooks.UpdateWebhookEndpoint(ctx, r.Scope, r.Merchant, r.Path("endpointId"), patch)
}

// createWebhookEndpoint handles POST /v1/webhook-endpoints.
func (s *Server) createWebhookEndpoint(ctx context.Context, r *Request, body api.WebhookEndpointCreateRequest) (any, error) {
	return s.eng.Webhooks.CreateWebhookEndpoint(ctx, r.Scope, r.Merchant, webhookEndpointInput(body))
}

// webhookEndpointInput maps the body of createWebhookEndpoint to the engine's input.
func webhookEndpointInput(body api.WebhookEndpointCreateRequest) remit.WebhookEndpointInput {
	in := remit.WebhookEndpointInput{URL: body.Url, Description: body.Description}
	if body.EndpointId != nil {
		in.EndpointID = *body.EndpointId
	}
	if body.EnabledEvents != nil {
		in.EnabledEvents = *body.EnabledEvents
	}
	if body.Metadata != nil {
		in.Metadata = *body.Metadata
	}
	return in
}

// listWebhookEndpoints handles GET /v1/webhook-endpoints.
func (s *Server) listWebhookEndpoints(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.ListWebhookEndpoints(ctx, r.Scope, remit.ListQueryOf(r.Query))
}

// getWebhookEndpoint handles GET /v1/webhook-endpoints/{endpointId}.
func (s *Server) getWebhookEndpoint(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.GetWebhookEndpoint(ctx, r.Scope, r.Path("endpointId"))
}

// disableWebhookEndpoint handles POST /v1/webhook-endpoints/{endpointId}/disable.
func (s *Server) disableWebhookEndpoint(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.DisableWebhookEndpoint(ctx, r.Scope, r.Merchant, r.Path("endpointId"))
}

// enableWebhookEndpoint handles POST /v1/webhook-endpoints/{endpointId}/enable.
func (s *Server) enableWebhookEndpoint(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.EnableWebhookEndpoint(ctx, r.Scope, r.Merchant, r.Path("endpointId"))
}

// rotateWebhookEndpointSecret handles POST /v1/webhook-endpoints/{endpointId}/rotate-secret.
func (s *Server) rotateWebhookEndpointSecret(ctx context.Context, r *Request, body api.WebhookEndpointSecretRotateRequest) (any, error) {
	return s.eng.Webhooks.RotateWebhookEndpointSecret(ctx, r.Scope, r.Merchant, r.Path("endpointId"), body.ExpireCurrentAfter)
}

// listEvents handles GET /v1/events.
func (s *Server) listEvents(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.ListEvents(ctx, r.Scope, remit.EventQuery{Type: r.Query("type"), ListQuery: remit.ListQueryOf(r.Query)})
}

// getEvent handles GET /v1/events/{eventId}.
func (s *Server) getEvent(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.GetEvent(ctx, r.Scope, r.Path("eventId"))
}

// listEventDeliveries handles GET /v1/events/{eventId}/deliveries.
func (s *Server) listEventDeliveries(ctx context.Context, r *Request) (any, error) {
	return s.eng.Webhooks.ListEventDeliveries(ctx, r.Scope, r.Path("eventId"), remit.ListQueryOf(r.Query))
}

// resendEvent handles POST /v1/events/{eventId}/resend.
func (s *Server) resendEvent(ctx context.Context, r *Request, body api.EventResendRequest) (any, error) {
	return s.eng.Webhooks.ResendEvent(ctx, r.Scope, r.Path("eventId"), body.EndpointId)
}
