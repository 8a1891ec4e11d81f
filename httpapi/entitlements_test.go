package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// entitlementKit: the lifecycle fixture with features granted by its products: "pro" (price
// "plan") grants sso (boolean), tier gold (static) and 100 api_calls (metered on meter "api");
// "team" (price "team") grants sso, tier silver and 50 api_calls.
type entitlementKit struct{ lifecycleKit }

func newEntitlementKit(t *testing.T, e *testkit.Env) entitlementKit {
	t.Helper()
	k := entitlementKit{newLifecycleKit(t, e)}
	e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "sso", "name": "SSO", "type": "boolean"})
	e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "tier", "name": "Tier", "type": "static"})
	e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "api_calls", "name": "API calls", "type": "metered", "meterId": "api"})
	for product, g := range map[string][]map[string]any{
		"pro":  {{"featureKey": "sso"}, {"featureKey": "tier", "value": "gold"}, {"featureKey": "api_calls", "limit": 100}},
		"team": {{"featureKey": "sso"}, {"featureKey": "tier", "value": "silver"}, {"featureKey": "api_calls", "limit": 50}},
	} {
		for _, body := range g {
			e.Must(200, "POST", "/v1/products/"+product+"/features", body)
		}
	}
	return k
}

// ent answers one entitlement of the customer.
func (k entitlementKit) ent(customer, feature string) map[string]any {
	k.t.Helper()
	return k.e.Must(200, "GET", "/v1/customers/"+customer+"/entitlements/"+feature, nil).Data()
}

func (k entitlementKit) access(customer, feature string) bool {
	k.t.Helper()
	return k.ent(customer, feature)["hasAccess"] == true
}

// changes lists the data.object of the customer's customer.entitlements_changed events, oldest
// first, each as JSON without the customerId.
func (k entitlementKit) changes(customer string) []string {
	k.t.Helper()
	evs, err := k.e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), k.e.Tenant.Sandbox, customer)
	if err != nil {
		k.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type != "customer.entitlements_changed" {
			continue
		}
		var d struct {
			Object struct {
				Added, Removed, Exhausted, Restored []string
			} `json:"object"`
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			k.t.Fatal(err)
		}
		b, _ := json.Marshal(d.Object)
		out = append(out, string(b))
	}
	return out
}

func (k entitlementKit) wantChanges(customer string, want ...string) {
	k.t.Helper()
	got := k.changes(customer)
	if len(got) != len(want) {
		k.t.Fatalf("entitlements_changed of %s:\n%v\nwant\n%v", customer, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			k.t.Fatalf("entitlements_changed #%d of %s:\n%s\nwant\n%s", i, customer, got[i], want[i])
		}
	}
}

func (k entitlementKit) usage(id, customer string, quantity int64) {
	k.t.Helper()
	k.e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": id, "customerId": customer, "meterId": "api", "quantity": quantity})
}

// TestEntitlementsFeatureTypes: each feature type as a subscription grants it, a customer without
// a subscription, an unknown customer and a feature not held.
func TestEntitlementsFeatureTypes(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newEntitlementKit(t, e)
		k.customer("none", "")
		if l := e.Must(200, "GET", "/v1/customers/none/entitlements", nil).Data(); len(l["items"].([]any)) != 0 || l["hasMore"] != false {
			t.Fatalf("no subscription: %v", l)
		}
		if got := k.ent("none", "sso"); got["hasAccess"] != false || got["type"] != nil || got["featureKey"] != "sso" {
			t.Fatalf("not held: %v", got)
		}
		e.Must(404, "GET", "/v1/customers/nobody/entitlements", nil)
		e.Must(404, "GET", "/v1/customers/nobody/entitlements/sso", nil)

		k.customer("c", "")
		s, _ := k.subscribe("c", line("plan"))
		list := e.Must(200, "GET", "/v1/customers/c/entitlements", nil).Data()["items"].([]any)
		end := s["currentPeriodEnd"].(string)
		want := `[{"customerId":"c","environment":"sandbox","featureKey":"api_calls","hasAccess":true,"limit":100,"object":"entitlement","periodEnd":"` + end +
			`","remaining":100,"softLimit":false,"type":"metered","usage":0,"value":null},` +
			`{"customerId":"c","environment":"sandbox","featureKey":"sso","hasAccess":true,"limit":null,"object":"entitlement","periodEnd":null,"remaining":null,"softLimit":false,"type":"boolean","usage":null,"value":null},` +
			`{"customerId":"c","environment":"sandbox","featureKey":"tier","hasAccess":true,"limit":null,"object":"entitlement","periodEnd":null,"remaining":null,"softLimit":false,"type":"static","usage":null,"value":"gold"}]`
		if got := jsonOf(list); got != want {
			t.Fatalf("entitlements\n%s\nwant\n%s", got, want)
		}
		if got := k.ent("c", "nope"); got["hasAccess"] != false {
			t.Fatalf("unknown feature %v", got)
		}
		k.wantChanges("c", `{"Added":["api_calls","sso","tier"],"Removed":[],"Exhausted":[],"Restored":[]}`)
		// A product that stops granting a feature takes it away at once.
		e.Must(200, "DELETE", "/v1/products/pro/features/sso", nil)
		if k.access("c", "sso") {
			t.Fatal("sso after the product stopped granting it")
		}
		k.wantChanges("c", `{"Added":["api_calls","sso","tier"],"Removed":[],"Exhausted":[],"Restored":[]}`,
			`{"Added":[],"Removed":["sso"],"Exhausted":[],"Restored":[]}`)
	})
}

// TestEntitlementsTwoProducts: two subscriptions granting one feature: boolean held, static the
// first subscription's value, metered limits added up.
func TestEntitlementsTwoProducts(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newEntitlementKit(t, e)
		k.customer("c", "")
		k.subscribe("c", line("plan"))
		k.subscribe("c", line("team"))
		if got := k.ent("c", "api_calls"); num(got["limit"]) != 150 || num(got["remaining"]) != 150 {
			t.Fatalf("metered %v", got)
		}
		if got := k.ent("c", "tier"); got["value"] != "gold" {
			t.Fatalf("static %v", got)
		}
		k.usage("u1", "c", 120)
		if got := k.ent("c", "api_calls"); got["hasAccess"] != true || num(got["remaining"]) != 30 || num(got["usage"]) != 120 {
			t.Fatalf("after 120 %v", got)
		}
		k.usage("u2", "c", 30)
		if k.access("c", "api_calls") {
			t.Fatal("access at 150 of 150")
		}
	})
}

// TestEntitlementsFollowTheLifecycle: trialing and past_due grant, pause and cancel take away,
// resume and a change give back, each at once.
func TestEntitlementsFollowTheLifecycle(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newEntitlementKit(t, e)
		k.customer("t", "")
		s, _ := k.subscribe("t", line("plan", "trialDays", 14))
		if s["status"] != "trialing" || !k.access("t", "sso") {
			t.Fatalf("trialing: %v %v", s["status"], k.ent("t", "sso"))
		}
		e.Must(200, "POST", "/v1/subscriptions/"+s["subscriptionId"].(string)+"/cancel", map[string]any{"at": "now"})
		if k.access("t", "sso") {
			t.Fatal("sso after the trial was canceled")
		}
		k.customer("a", "")
		s, _ = k.subscribe("a", line("plan"))
		id := s["subscriptionId"].(string)
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/pause", map[string]any{})
		if k.access("a", "sso") {
			t.Fatal("sso while paused")
		}
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/resume", map[string]any{})
		if !k.access("a", "sso") {
			t.Fatal("no sso after resume")
		}
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}})
		if got := k.ent("a", "tier"); got["value"] != "silver" {
			t.Fatalf("after a change to team: %v", got)
		}
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/cancel", map[string]any{"at": "now"})
		if k.access("a", "sso") || k.access("a", "tier") {
			t.Fatal("access after cancel")
		}
		k.wantChanges("t", `{"Added":["api_calls","sso","tier"],"Removed":[],"Exhausted":[],"Restored":[]}`,
			`{"Added":[],"Removed":["api_calls","sso","tier"],"Exhausted":[],"Restored":[]}`)
		k.wantChanges("a", `{"Added":["api_calls","sso","tier"],"Removed":[],"Exhausted":[],"Restored":[]}`,
			`{"Added":[],"Removed":["api_calls","sso","tier"],"Exhausted":[],"Restored":[]}`,
			`{"Added":["api_calls","sso","tier"],"Removed":[],"Exhausted":[],"Restored":[]}`,
			`{"Added":[],"Removed":["api_calls","sso","tier"],"Exhausted":[],"Restored":[]}`)

		k.customer("p", "pm_card_chargeDeclined")
		s, start := k.subscribe("p", line("plan"))
		advanceTo(e, start.Add(time.Hour+time.Second))
		if got := k.sub(s["subscriptionId"].(string)); got["status"] != "past_due" || !k.access("p", "sso") {
			t.Fatalf("past_due: %v %v", got["status"], k.ent("p", "sso"))
		}
	})
}

// TestEntitlementsMetered: a usage event exhausts a metered feature and a void restores it; a
// soft limit lets use go past; the next period starts from 0.
func TestEntitlementsMetered(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newEntitlementKit(t, e)
		k.customer("c", "")
		s, _ := k.subscribe("c", line("plan"))
		k.usage("u1", "c", 60)
		k.usage("u2", "c", 40)
		if got := k.ent("c", "api_calls"); got["hasAccess"] != false || num(got["usage"]) != 100 || num(got["remaining"]) != 0 {
			t.Fatalf("exhausted %v", got)
		}
		e.Must(200, "POST", "/v1/usage-events/u2/void", nil)
		if got := k.ent("c", "api_calls"); got["hasAccess"] != true || num(got["usage"]) != 60 {
			t.Fatalf("after the void %v", got)
		}
		k.wantChanges("c", `{"Added":["api_calls","sso","tier"],"Removed":[],"Exhausted":[],"Restored":[]}`,
			`{"Added":[],"Removed":[],"Exhausted":["api_calls"],"Restored":[]}`,
			`{"Added":[],"Removed":[],"Exhausted":[],"Restored":["api_calls"]}`)

		// A soft limit: use goes past and access stays.
		e.Must(200, "POST", "/v1/products/pro/features", map[string]any{"featureKey": "api_calls", "limit": 100, "softLimit": true})
		k.usage("u3", "c", 500)
		if got := k.ent("c", "api_calls"); got["hasAccess"] != true || got["softLimit"] != true || num(got["usage"]) != 560 || num(got["remaining"]) != 0 {
			t.Fatalf("soft %v", got)
		}
		// The next period counts from 0.
		advanceTo(e, ts(t, s["currentPeriodEnd"]).Add(time.Second))
		if got := k.ent("c", "api_calls"); num(got["usage"]) != 0 {
			t.Fatalf("next period %v", got)
		}
	})
}

// TestEntitlementsAcrossServers: two servers on one store (two processes on PostgreSQL), each
// with its own cache. A change made through one is seen by the very next check through the other
// (the versions are read on every check), which is within the second the brief allows.
func TestEntitlementsAcrossServers(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			url := testkit.MigratedStoreURL(t, s)
			a := testkit.StartOn(t, s, url, testkit.Options{})
			b := testkit.StartOn(t, s, url, testkit.Options{})
			b.Tenant = a.Tenant
			k := newEntitlementKit(t, a)
			k.customer("c", "")
			sub, _ := k.subscribe("c", line("plan"))
			kb := entitlementKit{k.lifecycleKit}
			kb.e = b
			if !kb.access("c", "api_calls") || !kb.access("c", "sso") { // b caches them
				t.Fatal("b: no access")
			}
			k.usage("u1", "c", 100) // through a
			if kb.access("c", "api_calls") {
				t.Fatal("b: access after a exhausted the feature")
			}
			a.Must(200, "POST", "/v1/subscriptions/"+sub["subscriptionId"].(string)+"/pause", map[string]any{})
			if kb.access("c", "sso") {
				t.Fatal("b: sso after a paused the subscription")
			}
			b.Must(200, "POST", "/v1/subscriptions/"+sub["subscriptionId"].(string)+"/resume", map[string]any{})
			if !k.access("c", "sso") {
				t.Fatal("a: no sso after b resumed the subscription")
			}
		})
	}
}
