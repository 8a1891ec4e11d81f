package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// actorsOf returns the actor of each event about objectID, oldest first, as GET /v1/events/{id}
// shows it.
func actorsOf(t *testing.T, e *testkit.Env, objectID string) map[string]map[string]any {
	t.Helper()
	evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), e.Tenant.Sandbox, objectID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.App.DB.ChainBeforeRead(context.Background(), e.Tenant.Sandbox); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, ev := range evs {
		a, _ := e.Must(200, "GET", "/v1/events/"+ev.ID, nil).Data()["actor"].(map[string]any)
		out[ev.Type] = a
	}
	return out
}

// Every event carries who made it: the API key of an API write, the hosted page's resource of a
// customer's action there, the system for a renewal (even one a clock advance through the API ran).
// The dashboard's operator is tested in package dashboard (TestOperatorEventsCarryTheOperator).
func TestEventActors(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		customerAt(t, e, "c", "US", "TX", true)
		ss, path := k.setupSession("c", map[string]any{"billingAccountId": "ba-c", "setAsDefault": true})
		pm := e.Must(200, "PUT", path+"&paymentMethod=pm_card_visa", nil, testkit.APIKey("")).Data()["paymentMethodId"].(string)
		s, _ := k.subscribe("c", line("plan"))
		id := s["subscriptionId"].(string)
		advanceTo(e, ts(t, s["currentPeriodEnd"]).Add(time.Second))

		want := func(objectID, typ string, actorType remit.ActorType, actorID string) {
			t.Helper()
			a := actorsOf(t, e, objectID)[typ]
			if a == nil || a["type"] != string(actorType) || (actorID != "" && a["id"] != actorID) || (actorID == "" && a["id"] != nil) {
				t.Errorf("%s of %s: actor %v, want %s %q", typ, objectID, a, actorType, actorID)
			}
		}
		want("c", "customer.created", remit.ActorAPIKey, e.Tenant.APIKeyID)
		want(id, "subscription.created", remit.ActorAPIKey, e.Tenant.APIKeyID)
		want(pm, "payment_method.attached", remit.ActorCustomerPortal, ss["sessionId"].(string))
		want(id, "subscription.renewed", remit.ActorSystem, "")

		// The chain still verifies with actors in it (they are part of the hashed event).
		v := e.Must(200, "GET", "/v1/verification", nil).Data()
		if v["status"] != "ok" && v["ok"] != true {
			t.Fatalf("verification %v", v)
		}
	})
}
