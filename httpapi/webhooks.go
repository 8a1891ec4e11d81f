package httpapi

import (
	"context"

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
	}
}

// webhookHandlers registers webhook endpoints, events and their deliveries.
func (s *Server) webhookHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"createWebhookEndpoint": decoded(func(ctx context.Context, r *Request, body api.WebhookEndpointCreateRequest) (any, error) {
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
			return s.eng.Webhooks.CreateWebhookEndpoint(ctx, r.Scope, r.Merchant, in)
		}),
		"listWebhookEndpoints": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Webhooks.ListWebhookEndpoints(ctx, r.Scope, r.Query("limit"), r.Query("cursor"))
		},
		"getWebhookEndpoint": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Webhooks.GetWebhookEndpoint(ctx, r.Scope, r.Path("endpointId"))
		},
		"disableWebhookEndpoint": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Webhooks.DisableWebhookEndpoint(ctx, r.Scope, r.Merchant, r.Path("endpointId"))
		},
		"listEvents": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Webhooks.ListEvents(ctx, r.Scope, r.Query("type"), r.Query("limit"), r.Query("cursor"))
		},
		"getEvent": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Webhooks.GetEvent(ctx, r.Scope, r.Path("eventId"))
		},
		"listEventDeliveries": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Webhooks.ListEventDeliveries(ctx, r.Scope, r.Path("eventId"), r.Query("limit"), r.Query("cursor"))
		},
		"resendEvent": decoded(func(ctx context.Context, r *Request, body api.EventResendRequest) (any, error) {
			return s.eng.Webhooks.ResendEvent(ctx, r.Scope, r.Path("eventId"), body.EndpointId)
		}),
	}
}
