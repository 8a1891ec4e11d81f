package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Webhooks (docs/events.md for receivers). Endpoints subscribe
// a merchant account's events; the outbox dispatcher turns each event into one delivery per
// subscribed enabled endpoint, and the delivery worker (webhookworker.go) sends the attempts.

// CreateWebhookEndpoint creates an enabled endpoint and returns it with its signing secret, which is
// never shown again.
//
// Errors: validation_failure (url, enabledEvents, metadata), conflict (endpointId taken).
func (wh *Webhooks) CreateWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, in remit.WebhookEndpointInput) (remit.WebhookEndpoint, error) {
	var p remit.Problems
	url := wh.checkEndpointURL(ctx, in.URL, scope.Environment, &p)
	events := []string{"*"}
	if in.EnabledEvents != nil {
		events = nil
		for i, t := range in.EnabledEvents {
			if t != "*" && !remit.KnownEventType(t) {
				remit.EventTypeProblem(&p, fmt.Sprintf("enabledEvents[%d]", i), t)
				continue
			}
			if !slices.Contains(events, t) {
				events = append(events, t)
			}
		}
	}
	remit.MetadataProblems(&p, "metadata", in.Metadata)
	if err := p.Err(); err != nil {
		return remit.WebhookEndpoint{}, err
	}
	id := in.EndpointID
	if id == "" {
		id = remit.NewID("we")
	}
	if in.Metadata == nil {
		in.Metadata = map[string]string{}
	}
	ep := remit.WebhookEndpoint{
		Object: "webhook_endpoint", ID: id, URL: url, EnabledEvents: events, Description: in.Description,
		Status: remit.EndpointEnabled, Metadata: in.Metadata, Environment: scope.Environment,
		MerchantAccountID: scope.MerchantAccountID, CreatedAt: wh.Now(m).Truncate(time.Microsecond),
	}
	secret := newWebhookSecret()
	err := wh.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		sealed, err := wh.sealSecret(ctx, ep.MerchantAccountID, ep.ID, secret)
		if err != nil {
			return remit.Internal(err)
		}
		if err := duplicateAs(tx.CreateWebhookEndpoint(ctx, ep, sealed), "webhook endpoint", "endpointId", ep.ID); err != nil {
			return err
		}
		return wh.Emit(ctx, tx, scope, ep.CreatedAt, remit.EventWebhookEndpointCreated, ep.ID, ep)
	})
	if err != nil {
		return remit.WebhookEndpoint{}, err
	}
	ep.Secret = secret
	return ep, nil
}

// GetWebhookEndpoint returns an endpoint (without its secret).
//
// Errors: not_found.
func (wh *Webhooks) GetWebhookEndpoint(ctx context.Context, scope remit.Scope, id string) (remit.WebhookEndpoint, error) {
	ep, _, err := wh.DB.Read(ctx).GetWebhookEndpoint(ctx, scope.MerchantAccountID, id, store.Unlocked)
	return ep, err
}

// ListWebhookEndpoints pages the merchant account's endpoints, newest first.
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (wh *Webhooks) ListWebhookEndpoints(ctx context.Context, scope remit.Scope, in remit.ListQuery) (remit.List[remit.WebhookEndpoint], error) {
	return listPage(ctx, wh.core, scope, "webhook_endpoints", in, nil, func(page store.ListPage) ([]remit.WebhookEndpoint, error) {
		return wh.DB.Read(ctx).ListWebhookEndpoints(ctx, scope.MerchantAccountID, page)
	})
}

// DisableWebhookEndpoint disables an endpoint: it gets no new deliveries, and its pending
// deliveries end as failed without another attempt.
//
// Errors: not_found, conflict (already disabled).
func (wh *Webhooks) DisableWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string) (remit.WebhookEndpoint, error) {
	var out remit.WebhookEndpoint
	err := wh.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		ep, _, err := tx.GetWebhookEndpoint(ctx, scope.MerchantAccountID, id, store.Locked)
		if err != nil {
			return err
		}
		if err := remit.EndpointStates.Check(id, ep.Status, remit.ActionDisable); err != nil {
			return err
		}
		out, err = wh.disableEndpoint(ctx, tx, scope, wh.Now(m).Truncate(time.Microsecond), ep.ID, remit.DisabledRequested)
		return err
	})
	return out, err
}

// EnableWebhookEndpoint enables a disabled endpoint again (whether it was disabled on request or
// because it answered 410 Gone) and emits webhook_endpoint.enabled. It receives the events that
// happen from then on; what happened while it was disabled is not delivered (resend an event to it
// for that), and deliveries that ended as failed stay failed.
//
// Errors: not_found, conflict (already enabled; details.currentState).
func (wh *Webhooks) EnableWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string) (remit.WebhookEndpoint, error) {
	return inTx(ctx, wh.DB, func(ctx context.Context, tx *store.Tx) (remit.WebhookEndpoint, error) {
		ep, _, err := tx.GetWebhookEndpoint(ctx, scope.MerchantAccountID, id, store.Locked)
		if err != nil {
			return ep, err
		}
		if err := remit.EndpointStates.Check(id, ep.Status, remit.ActionEnable); err != nil {
			return ep, err
		}
		now := wh.Now(m).Truncate(time.Microsecond)
		if changed, err := tx.EnableWebhookEndpoint(ctx, scope.MerchantAccountID, ep.ID, now); err != nil || !changed {
			if err == nil {
				err = remit.StateConflict("webhook endpoint", id, remit.EndpointEnabled, remit.ActionEnable)
			}
			return ep, err
		}
		ep.Status, ep.DisabledReason, ep.DisabledAt = remit.EndpointEnabled, nil, nil
		return ep, wh.Emit(ctx, tx, scope, now, remit.EventWebhookEndpointEnabled, ep.ID, ep)
	})
}

// RotateWebhookEndpointSecret gives an endpoint a new signing secret, answered once. The secret it
// replaces keeps signing for expireCurrentAfter seconds (remit.SecretOverlap: 24 hours unless
// given, 0 to 7 days) on the merchant clock: until then every delivery carries both signatures,
// the new one first; a secret an earlier rotation replaced stops at once. Emits
// webhook_endpoint.secret_rotated (without the secret). An endpoint is rotated in either state.
//
// Errors: validation_failure (expireCurrentAfter), not_found.
func (wh *Webhooks) RotateWebhookEndpointSecret(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string, expireCurrentAfter *int64) (remit.WebhookEndpoint, error) {
	var p remit.Problems
	overlap := remit.SecretOverlap(expireCurrentAfter, &p)
	if err := p.Err(); err != nil {
		return remit.WebhookEndpoint{}, err
	}
	secret := newWebhookSecret()
	ep, err := inTx(ctx, wh.DB, func(ctx context.Context, tx *store.Tx) (remit.WebhookEndpoint, error) {
		ep, _, err := tx.GetWebhookEndpoint(ctx, scope.MerchantAccountID, id, store.Locked)
		if err != nil {
			return ep, err
		}
		sealed, err := wh.sealSecret(ctx, ep.MerchantAccountID, ep.ID, secret)
		if err != nil {
			return ep, remit.Internal(err)
		}
		now := wh.Now(m).Truncate(time.Microsecond)
		expires := now.Add(overlap)
		var until *time.Time
		if overlap > 0 {
			until = &expires
		}
		if err := tx.RotateWebhookEndpointSecret(ctx, scope.MerchantAccountID, ep.ID, sealed, until, now); err != nil {
			return ep, err
		}
		ep.PreviousSecretExpiresAt = &expires
		return ep, wh.Emit(ctx, tx, scope, now, remit.EventWebhookEndpointSecretRotated, ep.ID, ep)
	})
	if err != nil {
		return remit.WebhookEndpoint{}, err
	}
	ep.Secret = secret
	return ep, nil
}

// disableEndpoint disables an enabled endpoint and emits webhook_endpoint.disabled.
func (wh *Webhooks) disableEndpoint(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, id, reason string) (remit.WebhookEndpoint, error) {
	changed, err := tx.DisableWebhookEndpoint(ctx, scope.MerchantAccountID, id, reason, now, wh.Clock.Now())
	if err != nil {
		return remit.WebhookEndpoint{}, err
	}
	ep, _, err := tx.GetWebhookEndpoint(ctx, scope.MerchantAccountID, id, store.Unlocked)
	if err != nil || !changed {
		return ep, err
	}
	return ep, wh.Emit(ctx, tx, scope, now, remit.EventWebhookEndpointDisabled, ep.ID, ep)
}

// GetEvent returns one of the merchant account's events.
//
// Errors: not_found.
func (wh *Webhooks) GetEvent(ctx context.Context, scope remit.Scope, id string) (remit.Event, error) {
	if err := wh.DB.ChainBeforeRead(ctx, scope.MerchantAccountID); err != nil {
		return remit.Event{}, err
	}
	return wh.DB.Read(ctx).GetEvent(ctx, scope.MerchantAccountID, id)
}

// ListEvents pages the merchant account's events, newest first, of one type when in.Type is given.
//
// Errors: validation_failure (type, limit, cursor, createdFrom, createdTo).
func (wh *Webhooks) ListEvents(ctx context.Context, scope remit.Scope, in remit.EventQuery) (remit.List[remit.Event], error) {
	list := "events|" + in.Type // a cursor of one type's list does not page another's
	return listPage(ctx, wh.core, scope, list, in.ListQuery, nil, func(page store.ListPage) ([]remit.Event, error) {
		if err := wh.DB.ChainBeforeRead(ctx, scope.MerchantAccountID); err != nil {
			return nil, err
		}
		return wh.DB.Read(ctx).ListEvents(ctx, scope.MerchantAccountID, in.Type, page)
	})
}

// ListEventDeliveries pages an event's deliveries, newest first, each with its attempts.
//
// Errors: not_found (event), validation_failure (limit, cursor, createdFrom, createdTo).
func (wh *Webhooks) ListEventDeliveries(ctx context.Context, scope remit.Scope, eventID string, in remit.ListQuery) (remit.List[remit.WebhookDelivery], error) {
	if _, err := wh.GetEvent(ctx, scope, eventID); err != nil {
		return remit.List[remit.WebhookDelivery]{}, err
	}
	return listPage(ctx, wh.core, scope, "webhook_deliveries|"+eventID, in, nil, func(page store.ListPage) ([]remit.WebhookDelivery, error) {
		return wh.DB.Read(ctx).ListWebhookDeliveries(ctx, scope.MerchantAccountID, eventID, page)
	})
}

// ResendEvent makes a new delivery of an event: to endpointID when given, else to every enabled
// endpoint subscribed to the event's type. The deliveries are due at once; each keeps the event ID
// as webhook-id and is signed with a new timestamp. It answers the deliveries created (an empty
// list when no endpoint is subscribed).
//
// Errors: not_found (event; endpointId, details.field "endpointId"), conflict (endpoint disabled).
func (wh *Webhooks) ResendEvent(ctx context.Context, scope remit.Scope, eventID string, endpointID *string) (remit.List[remit.WebhookDelivery], error) {
	var out []remit.WebhookDelivery
	err := wh.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		ev, err := tx.GetEvent(ctx, scope.MerchantAccountID, eventID)
		if err != nil {
			return err
		}
		var targets []remit.WebhookEndpoint
		if endpointID != nil {
			ep, _, err := tx.GetWebhookEndpoint(ctx, scope.MerchantAccountID, *endpointID, store.Unlocked)
			if remit.ErrorCode(err) == remit.ENotFound {
				return remit.NotFound("webhook endpoint", *endpointID, "endpointId")
			}
			if err != nil {
				return err
			}
			if err := remit.EndpointStates.Check(ep.ID, ep.Status, remit.ActionSend); err != nil {
				return err
			}
			targets = []remit.WebhookEndpoint{ep}
		} else {
			eps, err := tx.EnabledWebhookEndpoints(ctx, scope.MerchantAccountID)
			if err != nil {
				return err
			}
			for _, ep := range eps {
				if ep.Subscribed(ev.Type) {
					targets = append(targets, ep)
				}
			}
		}
		now := wh.Clock.Now().Truncate(time.Microsecond)
		for _, ep := range targets {
			d := newDelivery(ev, ep.ID, remit.TriggerResend, now)
			if err := tx.InsertWebhookDelivery(ctx, d); err != nil {
				return err
			}
			out = append(out, d)
		}
		tx.AfterCommit(wh.wakeWebhooks)
		return nil
	})
	if err != nil {
		return remit.List[remit.WebhookDelivery]{}, err
	}
	return remit.NewList(out, nil), nil
}

// newDelivery is a pending delivery of ev to an endpoint, due at now (real time).
func newDelivery(ev remit.Event, endpointID, trigger string, now time.Time) remit.WebhookDelivery {
	due := now
	return remit.WebhookDelivery{
		Object: "webhook_delivery", ID: remit.NewID("wd"), EventID: ev.ID, EndpointID: endpointID, Trigger: trigger,
		Status: remit.DeliveryPending, NextAttemptAt: &due, AttemptHistory: []remit.WebhookAttempt{},
		Environment: ev.Environment, MerchantAccountID: ev.MerchantAccountID, CreatedAt: now,
	}
}
