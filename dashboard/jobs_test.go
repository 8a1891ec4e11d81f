package dashboard_test

import (
	"context"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// subscribe creates a monthly subscription of the customer c1 (openInvoice made it) and answers its
// ID.
func subscribe(t *testing.T, e *testkit.Env) string {
	t.Helper()
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 9000})
	q := e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "c1", "billingAccountId": "ba-c1",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "team"}}}).Data()
	return e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()["subscriptionId"].(string)
}

// renewalJob is the ID of the sandbox account's pending renewal job (the API's list).
func renewalJob(t *testing.T, e *testkit.Env) string {
	t.Helper()
	items := e.Must(200, "GET", "/v1/jobs?status=pending&kind=subscription.renew", nil).Data()["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("pending renewals: %v", items)
	}
	return items[0].(map[string]any)["jobId"].(string)
}

// setPayload writes a job's payload in the store, as a bug might (or its fix).
func setPayload(t *testing.T, e *testkit.Env, jobID, payload string) {
	t.Helper()
	res, err := e.App.DB.SQL().ExecContext(context.Background(), `UPDATE jobs SET payload = $2 WHERE id = $1`, jobID, payload)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("no job %s", jobID)
	}
}

// failForGood breaks a pending job of the sandbox account (a payload its function cannot read)
// and moves the clock through its first attempt and every retry of remit.JobRetryDelays: it is
// failed for good.
func failForGood(t *testing.T, e *testkit.Env, jobID string) {
	t.Helper()
	setPayload(t, e, jobID, `{"subscriptionId": 5}`)
	due, err := time.Parse(time.RFC3339Nano, e.Must(200, "GET", "/v1/jobs/"+jobID, nil).Data()["dueAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"to": due.Add(time.Second).UTC().Format(time.RFC3339Nano)})
	for _, d := range remit.JobRetryDelays {
		e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": int64(d / time.Second)})
	}
	if got := e.Must(200, "GET", "/v1/jobs/"+jobID, nil).Data(); got["status"] != "failed" {
		t.Fatalf("the broken job after every attempt: %v", got)
	}
}

var jobRow = regexp.MustCompile(`/jobs/(job_[0-9a-z]+)"`)

func jobIDs(body string) []string { return firstGroups(jobRow, body) }

// The Jobs list: failed jobs unless asked otherwise, the status and kind filters, paging like the
// API, a bad filter next to its field; the account's page links it.
func TestJobsList(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		openInvoice(t, e)
		subscribe(t, e)
		renewal := renewalJob(t, e)
		var all []string // newest first, as the API lists them
		for _, it := range e.Must(200, "GET", "/v1/jobs", nil).Data()["items"].([]any) {
			all = append(all, it.(map[string]any)["jobId"].(string))
		}
		if len(all) < 2 {
			t.Fatalf("jobs %v: the paging needs two", all)
		}
		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		a := "/dashboard/accounts/" + e.Tenant.Sandbox
		home := b.get(a)
		wantStatus(t, home, 200, `href="`+a+`/jobs"`)
		if strings.Contains(home.body, "failed every attempt") {
			t.Error("the account's page announces failed jobs where there is none")
		}

		failed := b.get(a + "/jobs")
		wantStatus(t, failed, 200, "<h1>Jobs</h1>", `<option value="failed" selected>`, "No job matches.", "on the account&#39;s clock")
		if n := strings.Count(failed.body, `<option value="">any</option>`); n != 1 { // the kind's; the status has "all"
			t.Errorf("%d filters offer \"any\", want the kind's only", n)
		}
		pending := b.get(a + "/jobs?status=pending&kind=subscription.renew")
		wantStatus(t, pending, 200, `href="`+a+`/jobs/`+renewal+`"`, "subscription.renew", "pending", `<option value="subscription.renew" selected>`)
		if got := jobIDs(pending.body); len(got) != 1 {
			t.Fatalf("pending renewals listed: %v", got)
		}
		if got := jobIDs(b.get(a + "/jobs?status=all").body); strings.Join(got, " ") != strings.Join(all, " ") {
			t.Fatalf("all jobs %v, want the API's %v", got, all)
		}
		if got := jobIDs(b.get(a + "/jobs?status=done").body); len(got) != 0 {
			t.Fatalf("done jobs %v", got)
		}

		first := b.get(a + "/jobs?status=all&limit=1")
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
		if got := jobIDs(first.body); len(got) != 1 || got[0] != all[0] || next == nil || !strings.Contains(next[1], "status=all") {
			t.Fatalf("first page %v (want [%s]), next %v", got, all[0], next)
		}
		if got := jobIDs(b.get(html.UnescapeString(next[1])).body); len(got) != 1 || got[0] != all[1] {
			t.Fatalf("second page %v, want [%s]", got, all[1])
		}
		wantStatus(t, b.get(a+"/jobs?status=lost"), 422, `id="f-status-error"`, "status must be one of pending, done, failed.")
		wantStatus(t, b.get(a+"/jobs?limit=0"), 422)
		wantStatus(t, b.get("/dashboard/accounts/ma_nope/jobs"), 404)
	})
}

// A renewal job fails on every attempt: the job's page shows its attempts and last error at each
// step, the account's page announces it, and an admin retries it through the confirmation (once
// for a form sent twice); the scheduler's next pass (here, a clock advance) renews the
// subscription. A retry of a job that is not failed shows the rule's 409; a viewer is offered no
// retry and is refused it; another organization finds nothing.
func TestJobRetryFromTheDashboard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		openInvoice(t, e)
		subID := subscribe(t, e)
		jobID := renewalJob(t, e)
		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		a := "/dashboard/accounts/" + e.Tenant.Sandbox
		path := a + "/jobs/" + jobID
		page := admin.get(path)
		wantStatus(t, page, 200, "<h1>Job "+jobID+"</h1>", "subscription.renew", "pending", `href="`+a+`/subscriptions/`+subID+`"`)
		if strings.Contains(page.body, path+"/retry") {
			t.Error("a pending job is offered the retry")
		}
		// A form for a job that is not failed: the rule's refusal, in its words.
		early := admin.get(path + "/retry")
		wantStatus(t, early, 200, "/v1/jobs/"+jobID+"/retry?environment=sandbox&amp;merchantAccountId="+e.Tenant.Sandbox)
		wantStatus(t, admin.post(path+"/retry", url.Values{"csrf": {csrfOf(t, early)}, "key": {regexpValue(t, early.body, "key")}}),
			409, "The job &#39;"+jobID+"&#39; is pending; it can be retried only when failed.")

		failForGood(t, e, jobID)
		home := admin.get(a)
		wantStatus(t, home, 200, "1 scheduled job failed every attempt", `href="`+a+`/jobs?status=failed"`)
		failed := admin.get(a + "/jobs")
		wantStatus(t, failed, 200, "failed", "internal_error: An internal error occurred")
		if got := jobIDs(failed.body); len(got) != 1 || got[0] != jobID {
			t.Fatalf("failed jobs listed: %v", got)
		}
		page = admin.get(path)
		wantStatus(t, page, 200, "failed", "<code>internal_error</code>", "<dt>subscriptionId</dt><dd>5</dd>", `href="`+path+`/retry"`, "Finished")

		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		v := viewer.get(path)
		wantStatus(t, v, 200, jobID, "failed")
		if strings.Contains(v.body, path+"/retry") {
			t.Error("a viewer is offered the retry")
		}
		wantStatus(t, viewer.get(path+"/retry"), 403, "Viewers cannot act")
		wantStatus(t, viewer.post(path+"/retry", url.Values{"csrf": {csrfOf(t, v)}, "key": {strings.Repeat("a", 64)}}), 403, "Viewers cannot act")

		// Fixed, then retried by an admin.
		setPayload(t, e, jobID, `{"subscriptionId": "`+subID+`"}`)
		confirm := admin.get(path + "/retry")
		wantStatus(t, confirm, 200, "Retry job "+jobID+"?", "Its last error: internal_error: An internal error occurred",
			"under the job&#39;s ID. The event job.retried is sent.", "Idempotency-Key: ")
		form := url.Values{"csrf": {csrfOf(t, confirm)}, "key": {regexpValue(t, confirm.body, "key")}}
		wantRedirect(t, admin.post(path+"/retry", form), path+"?done=retry")
		wantRedirect(t, admin.post(path+"/retry", form), path+"?done=retry") // the same form: once
		wantStatus(t, admin.get(path+"?done=retry"), 200, "The job is pending again", "pending", `href="`+a+`/subscriptions/`+subID+`"`)
		if n := len(e.Must(200, "GET", "/v1/events?type=job.retried", nil).Data()["items"].([]any)); n != 1 {
			t.Fatalf("job.retried events: %d", n)
		}
		if strings.Contains(admin.get(a).body, "failed every attempt") {
			t.Error("the account's page still announces the retried job")
		}
		e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 1})
		wantStatus(t, admin.get(path), 200, "done")
		if got := jobIDs(admin.get(a + "/jobs?status=done&kind=subscription.renew").body); len(got) != 1 || got[0] != jobID {
			t.Fatalf("done renewals: %v", got)
		}

		// Another organization's admin: 404 on the list, the job and its retry, and nothing changed.
		other := signedInTo(t, e, e.NewTenant("Globex Other", false).OrganizationID, "admin@globex.example", remit.OperatorAdmin)
		for _, p := range []string{a + "/jobs", a + "/jobs?status=all", path, path + "/retry"} {
			got := other.get(p)
			wantStatus(t, got, 404)
			if strings.Contains(got.body, jobID) || strings.Contains(got.body, "Acme Test") {
				t.Errorf("%s as another organization shows the job or the organization", p)
			}
		}
		wantStatus(t, other.post(path+"/retry", url.Values{"csrf": {csrfOf(t, other.get("/dashboard"))}, "key": {strings.Repeat("b", 64)}}), 404)
		wantStatus(t, admin.get(a+"/jobs/job_nope"), 404)
		if n := len(e.Must(200, "GET", "/v1/events?type=job.retried", nil).Data()["items"].([]any)); n != 1 {
			t.Fatalf("job.retried events after another organization's attempt: %d", n)
		}
	})
}
