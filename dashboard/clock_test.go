package dashboard_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An admin advances a sandbox account's clock from its page: a value that is not a whole number
// and one the engine refuses are shown next to the field; a day moves the clock a day (the API
// agrees). The same form sent again moves it once. A viewer sees the clock but no form, and the
// production account has no sandbox clock.
func TestAdvanceClockFromTheDashboard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		path := "/dashboard/accounts/" + e.Tenant.Sandbox + "/clock"
		wantStatus(t, admin.get("/dashboard"), 200, `href="`+path+`"`)
		before := apiClock(t, e)
		first := admin.get(path)
		wantStatus(t, first, 200, `id="clock-now"`, "/v1/test-helpers/clock/advance?environment=sandbox")

		send := func(p page, seconds string) page {
			return admin.post(path, url.Values{"csrf": {csrfOf(t, p)}, "key": {regexpValue(t, p.body, "key")}, "seconds": {seconds}})
		}
		stale := admin.post(path, url.Values{"csrf": {csrfOf(t, first)}, "key": {""}, "seconds": {"60"}})
		wantStatus(t, stale, 422, `role="alert">This form is out of date`)
		bad := send(first, "a day")
		wantStatus(t, bad, 422, `id="seconds-error"`, "whole number of seconds")
		refused := send(bad, "0")
		wantStatus(t, refused, 422, `id="seconds-error"`)
		if !strings.Contains(refused.body, "seconds") {
			t.Fatalf("the engine's message for 0 seconds: %s", refused.body)
		}
		form := url.Values{"csrf": {csrfOf(t, refused)}, "key": {regexpValue(t, refused.body, "key")}, "seconds": {"86400"}}
		wantRedirect(t, admin.post(path, form), path+"?done=advanced")
		wantRedirect(t, admin.post(path, form), path+"?done=advanced") // the same form: once
		if moved := apiClock(t, e).Sub(before); moved < 24*time.Hour || moved > 25*time.Hour {
			t.Fatalf("the clock moved %s, want a day", moved)
		}
		wantStatus(t, admin.get(path+"?done=advanced"), 200, "The clock moved forward")

		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		v := viewer.get(path)
		wantStatus(t, v, 200, `id="clock-now"`)
		if strings.Contains(v.body, `name="seconds"`) {
			t.Error("a viewer is offered the clock's form")
		}
		wantStatus(t, viewer.post(path, url.Values{"csrf": {csrfOf(t, v)}, "key": {"k"}, "seconds": {"60"}}), 403, "Viewers cannot act")
		wantStatus(t, admin.get("/dashboard/accounts/"+e.Tenant.Production+"/clock"), 403)
	})
}

func apiClock(t *testing.T, e *testkit.Env) time.Time {
	t.Helper()
	now, err := time.Parse(time.RFC3339Nano, e.Must(200, "GET", "/v1/test-helpers/clock", nil).Data()["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return now
}
