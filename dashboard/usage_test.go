package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// A customer's usage of a max meter: one bar per day by the meter's aggregation, and the whole
// span's max (not the days' sum); an unknown meter is 404.
func TestUsagePage(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		openInvoice(t, e)
		e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "peak", "aggregation": "max"})
		now := apiClock(t, e)
		for i, ev := range []struct {
			ago time.Duration
			q   int
		}{{0, 5}, {time.Minute, 9}, {72 * time.Hour, 4}} {
			e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "ev" + string(rune('a'+i)), "customerId": "c1", "meterId": "peak",
				"quantity": ev.q, "timestamp": now.Add(-ev.ago).Format(time.RFC3339Nano)})
		}
		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		a := "/dashboard/accounts/" + e.Tenant.Sandbox
		wantStatus(t, b.get(a), 200, `href="`+a+`/usage"`)
		wantStatus(t, b.get(a+"/usage"), 200, "<code>peak</code>", "max")
		p := b.get(a + "/usage?customer=c1&meter=peak")
		wantStatus(t, p, 200, "Over the 30 days: <strong>9</strong>", `role="img"`)
		if n := strings.Count(p.body, "<rect "); n != remit.RevenueDays {
			t.Fatalf("%d bars", n)
		}
		if !strings.Contains(p.body, now.UTC().Format("Jan 2")+": 9</title>") && !strings.Contains(p.body, now.Add(-time.Minute).UTC().Format("Jan 2")+": 9</title>") {
			t.Fatal("today's bar is not the day's max (9)")
		}
		if !strings.Contains(p.body, now.Add(-72*time.Hour).UTC().Format("Jan 2")+": 4</title>") {
			t.Fatal("three days ago: 4")
		}
		wantStatus(t, b.get(a+"/usage?customer=c1&meter=nope"), 404)
		// A meter used before it was created (a sum): shown too.
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "implicit-1", "customerId": "c1", "meterId": "calls", "quantity": 7})
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "implicit-2", "customerId": "c1", "meterId": "calls", "quantity": 5})
		wantStatus(t, b.get(a+"/usage?customer=c1&meter=calls"), 200, "Over the 30 days: <strong>12</strong> (sum")
	})
}
