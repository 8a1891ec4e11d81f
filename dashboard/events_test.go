package dashboard_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// The events list and an event's page with its deliveries; an admin resends the event (one new
// delivery per subscribed endpoint, once for a form sent twice); a viewer cannot.
func TestEventsAndResend(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"endpointId": "ops", "url": "https://hooks.example.com/ops",
			"enabledEvents": []string{"invoice.voided"}})
		id := openInvoice(t, e)
		e.Must(200, "POST", "/v1/invoices/"+id+"/void", map[string]any{})
		evs := e.Must(200, "GET", "/v1/events?type=invoice.voided", nil).Data()["items"].([]any)
		eventID := evs[0].(map[string]any)["eventId"].(string)

		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		base := "/dashboard/accounts/" + e.Tenant.Sandbox + "/events"
		wantStatus(t, admin.get(base), 200, eventID, "invoice.voided", "customer.created")
		filtered := admin.get(base + "?type=invoice.voided")
		wantStatus(t, filtered, 200, eventID)
		if strings.Contains(filtered.body, "customer.created") {
			t.Error("the type filter let another type through")
		}
		paged := admin.get(base + "?limit=1")
		wantStatus(t, paged, 200, `rel="next"`)
		wantStatus(t, admin.get(base+"?limit=0"), 422)

		path := base + "/" + eventID
		ev := admin.get(path)
		wantStatus(t, ev, 200, "&#34;status&#34;: &#34;void&#34;", "/v1/events/"+eventID+"/resend?")
		before := deliveries(ev.body)
		form := url.Values{"csrf": {csrfOf(t, ev)}, "key": {regexpValue(t, ev.body, "key")}}
		wantRedirect(t, admin.post(path+"/resend", form), path+"?resent=1")
		wantRedirect(t, admin.post(path+"/resend", form), path+"?resent=1") // the same form: once
		after := admin.get(path + "?resent=1")
		wantStatus(t, after, 200, "Sent again: 1 new deliveries.", "<code>ops</code>", "resend")
		// The webhook worker may have made the event's first delivery meanwhile: one more, or two.
		if got := deliveries(after.body); got != before+1 && got != before+2 {
			t.Fatalf("deliveries %d after the resend, %d before", got, before)
		}

		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		v := viewer.get(path)
		wantStatus(t, v, 200, eventID)
		if strings.Contains(v.body, "Resend the event") {
			t.Error("a viewer is offered the resend")
		}
		wantStatus(t, viewer.post(path+"/resend", url.Values{"csrf": {csrfOf(t, v)}, "key": {"k"}}), 403)
		wantStatus(t, admin.get(base+"/evt_nope"), 404)
	})
}

var deliveryRow = regexp.MustCompile(`<code>wd_[0-9a-z]+</code>`)

func deliveries(body string) int { return len(deliveryRow.FindAllString(body, -1)) }
