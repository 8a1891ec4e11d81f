package remit

import (
	"context"
	"encoding/json"
)

// Actor is who made a change (docs/events.md "Who acted"): every event carries the actor of the
// write that emitted it. The edges put it in the write's context (WithActor): the API an API key,
// the dashboard an operator, the customer portal its session; work that no caller drives (jobs,
// the reconciler, the clock's due work, webhook and email workers) is the system.
type Actor struct {
	Type ActorType `json:"type"`
	ID   string    `json:"id,omitempty"` // the API key, operator or portal session; none for the system
}

// ActorType is the kind of an Actor.
type ActorType string

const (
	ActorAPIKey         ActorType = "api_key"
	ActorOperator       ActorType = "operator"
	ActorCustomerPortal ActorType = "customer_portal"
	ActorSystem         ActorType = "system"
)

// SystemActor is the actor of work no caller drives.
var SystemActor = Actor{Type: ActorSystem}

type actorKey struct{}

// WithActor returns ctx whose writes are a's.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is the actor of the writes made with ctx: the one WithActor set, else the system.
func ActorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return SystemActor
}

// ActorColumn is an actor as the events table stores it (JSON), nil for none.
func ActorColumn(a *Actor) any {
	if a == nil {
		return nil
	}
	b, _ := json.Marshal(a) // two strings: cannot fail
	return string(b)
}

// ParseActorColumn reads the events table's actor column (an event written before actors were
// recorded has none).
func ParseActorColumn(s string, valid bool) *Actor {
	if !valid || s == "" {
		return nil
	}
	var a Actor
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil
	}
	return &a
}
