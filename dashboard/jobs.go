package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/remit-billing/remit"
)

// The Jobs page of an account: its scheduled work (GET /v1/jobs), the failed jobs first, since it
// is the page an operator opens when something is wrong; a job's page; and an admin's retry of a
// job failed for good (docs/reliability.md "Scheduled work that fails").

// jobStatusOptions are the status filter's choices: a state, or "all" (no filter). No status
// asked is "failed".
var jobStatusOptions = []string{string(remit.JobFailed), string(remit.JobPending), string(remit.JobDone), "all"}

// jobsPage lists an account's jobs, newest first, by status (failed unless asked) and kind.
func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	shown := q.Get("status")
	if shown == "" {
		shown = string(remit.JobFailed)
	}
	in := remit.JobQuery{Status: shown, Kind: q.Get("kind"), ListQuery: remit.ListQueryOf(q.Get)}
	if shown == "all" {
		in.Status = ""
	}
	m, l, err := s.eng.AccountJobs(r.Context(), operatorOf(r), r.PathValue("account"), in)
	a := accountPath(m)
	v := listView{Heading: "Jobs", Action: a + "/jobs", Empty: "No job matches.",
		Filters: []filterField{{Name: "status", Param: "status", Label: "Status", Value: shown, Options: jobStatusOptions, Required: true},
			{Name: "kind", Param: "kind", Label: "Kind", Value: in.Kind, Options: remit.JobKinds}},
		Headers: []string{"Job", "Kind", "Status", "Attempts", "Last error", "Scheduled for", "Next attempt", "Finished"}}
	if m.Environment == remit.Sandbox {
		v.Note = "Scheduled for and next attempt are on the account's clock, finished is real time: they differ once the clock was advanced."
	}
	for _, j := range l.Items {
		v.Rows = append(v.Rows, []cell{code(j.ID, jobPath(m.ID, j.ID)), text(j.Kind), text(string(j.Status)),
			text(strconv.Itoa(j.Attempts)), text(lastError(j)), when(j.ScheduledFor), nextAttempt(j), finished(j)})
	}
	s.listPage(w, r, s.accountBase(r, m, "Jobs"), v, l.NextCursor, err)
}

func jobPath(account, id string) string { return resourcePath(account, "jobs", id) }

// lastError is a job's last error as "code: message", "–" when none.
func lastError(j remit.Job) string {
	if j.LastError == nil {
		return "–"
	}
	return string(j.LastError.Code) + ": " + j.LastError.Message
}

// nextAttempt is when a pending job runs next; a done or failed job has none.
func nextAttempt(j remit.Job) cell {
	if j.Status != remit.JobPending {
		return text("–")
	}
	return when(j.DueAt)
}

func finished(j remit.Job) cell {
	if j.FinishedAt == nil {
		return text("–")
	}
	return when(*j.FinishedAt)
}

// payloadField is one field of a job's payload: what it acts on, linked to its page when the
// dashboard has one.
type payloadField struct {
	Name  string
	Value cell
}

// payloadPages are the payload's ID fields the dashboard has a page for, by the path under the
// account.
var payloadPages = map[string]string{"subscriptionId": "/subscriptions/", "invoiceId": "/invoices/", "customerId": "/customers/"}

// jobPayload is a job's payload field by field (by name), or nil when it is not a JSON object
// (the page shows it as it is).
func jobPayload(m remit.MerchantAccount, payload json.RawMessage) []payloadField {
	var fields map[string]json.RawMessage
	if json.Unmarshal(payload, &fields) != nil || fields == nil {
		return nil
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]payloadField, 0, len(names))
	for _, name := range names {
		var id string
		if json.Unmarshal(fields[name], &id) != nil { // not a string: as it is
			out = append(out, payloadField{name, text(string(fields[name]))})
			continue
		}
		href := ""
		if under, ok := payloadPages[name]; ok && id != "" {
			href = accountPath(m) + under + url.PathEscape(id)
		}
		out = append(out, payloadField{name, code(id, href)})
	}
	return out
}

// loadJob reads the job the path names (false: answered).
func (s *Server) loadJob(w http.ResponseWriter, r *http.Request) (page, bool) {
	p, j, ok := loadResource(s, w, r, "job", s.eng.OperatorJob)
	if !ok {
		return p, false
	}
	p.Title, p.Job, p.JobPayload, p.JobRetry = "Job "+j.ID, j, jobPayload(p.Account, j.Payload), j.Status.Allows(remit.ActionRetry)
	return p, true
}

// jobPage shows a job and, to an admin, the retry of a job failed for good.
func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) {
	s.show(w, r, (*Server).loadJob, "job", doneNotice(r, "retry", "The job is pending again, due now: the scheduler runs it at its next pass."))
}

// jobRetryConfirmation is the confirmation page of a job's retry.
func jobRetryConfirmation(p page) confirmation {
	j, base := p.Job, jobPath(p.Account.ID, p.Job.ID)
	explain := "The " + j.Kind + " job goes back to pending, due now on the account's clock, and the scheduler runs it once more as it was " +
		"scheduled (for " + j.ScheduledFor.Format("2006-01-02 15:04 UTC") + "). If that attempt fails too, it is failed again at once: fix the cause first."
	if j.LastError != nil {
		explain += " Its last error: " + strings.TrimSuffix(lastError(j), ".") + "."
	}
	return confirmation{Title: "Retry job " + j.ID + "?", Explain: explain + " The event job.retried is sent.", Back: base,
		BackLabel: "Back to the job", API: "/v1/jobs/" + j.ID + "/retry", Body: `{}`, Post: base + "/retry", Button: "Retry the job"}
}

// jobRetryPage asks an admin to confirm the retry.
func (s *Server) jobRetryPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadJob(w, r)
	if !ok || !s.admin(w, r, p) {
		return
	}
	s.confirm(w, r, p, jobRetryConfirmation)
}

// retryJob retries the job through the engine, under the form's Idempotency-Key.
func (s *Server) retryJob(w http.ResponseWriter, r *http.Request) {
	p, ok := s.adminPost(w, r, (*Server).loadJob)
	if !ok {
		return
	}
	_, err := s.eng.RetryJob(r.Context(), *p.Operator, p.Account.ID, p.Job.ID, r.PostFormValue("key"))
	s.finish(w, r, p, err, jobPath(p.Account.ID, p.Job.ID)+"?done=retry", jobRetryConfirmation)
}
