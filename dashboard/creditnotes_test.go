package dashboard_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An admin issues a credit note on a paid invoice from its form: an amount that is not one is shown
// next to the field, one the engine refuses (more than the invoice) in the engine's words; a good one
// is issued once for a form sent twice, and the API has it. A viewer is refused.
func TestCreditNoteFromTheDashboard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := openInvoice(t, e)
		e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true})
		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		path := "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id
		wantStatus(t, admin.get(path), 200, `href="`+path+`/credit-notes"`)
		form := admin.get(path + "/credit-notes")
		wantStatus(t, form, 200, `name="amount"`, "/v1/credit-notes?", `<option value="credit" selected>`)
		send := func(p page, amount string) page {
			return admin.post(path+"/credit-notes", url.Values{"csrf": {csrfOf(t, p)}, "key": {regexpValue(t, p.body, "key")},
				"amount": {amount}, "kind": {"credit"}, "reason": {"product_unsatisfactory"}, "description": {"Late delivery"}})
		}
		stale := admin.post(path+"/credit-notes", url.Values{"csrf": {csrfOf(t, form)}, "key": {"not-from-the-page"}, "amount": {"1"},
			"kind": {"credit"}, "reason": {"other"}})
		wantStatus(t, stale, 422, `role="alert">This form is out of date`)
		bad := send(form, "ten dollars")
		wantStatus(t, bad, 422, `id="amount-error"`, "Type the amount in USD with at most 2 decimals")
		// The API's text rule: no bidirectional override in the description (docs/security.md).
		spoof := admin.post(path+"/credit-notes", url.Values{"csrf": {csrfOf(t, bad)}, "key": {regexpValue(t, bad.body, "key")},
			"amount": {"1"}, "kind": {"credit"}, "reason": {"other"}, "description": {"Refund \u202efdp.exe"}})
		wantStatus(t, spoof, 422, `id="description-error"`, "may not contain control characters", `value="Refund fdp.exe"`)
		if strings.ContainsRune(spoof.body, '\u202e') {
			t.Error("the refused form shows the override again")
		}
		bad = spoof
		tooMuch := send(bad, "30.00") // the engine's rule: its status (409) and its words
		wantStatus(t, tooMuch, 409, `role="alert"`, "only 2500 is left to credit", `value="30.00"`)
		good := url.Values{"csrf": {csrfOf(t, tooMuch)}, "key": {regexpValue(t, tooMuch.body, "key")}, "amount": {"10"}, "kind": {"credit"},
			"reason": {"product_unsatisfactory"}}
		done := admin.post(path+"/credit-notes", good)
		if done.status != 303 || !strings.HasPrefix(done.header.Get("Location"), path+"?credited=CN-") {
			t.Fatalf("issued: %d %s\n%s", done.status, done.header.Get("Location"), done.body[strings.Index(done.body, "<main>"):])
		}
		again := admin.post(path+"/credit-notes", good) // the same form: the remembered answer
		if again.header.Get("Location") != done.header.Get("Location") {
			t.Fatalf("the same form again: %s, first %s", again.header.Get("Location"), done.header.Get("Location"))
		}
		wantStatus(t, admin.get(done.header.Get("Location")), 200, "is issued.", "product_unsatisfactory", "$10.00",
			"RCPT-", "succeeded") // the invoice's page: its credit note, its receipt, its payment
		inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if inv["creditedTotal"] != float64(1000) {
			t.Fatalf("the API's creditedTotal %v, want 1000 (once)", inv["creditedTotal"])
		}
		wantStatus(t, admin.get(path+"?credited=Your+account+is+locked"), 200)
		if strings.Contains(admin.get(path+"?credited=Your+account+is+locked").body, "locked") {
			t.Error("the page shows a message from its URL")
		}

		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		wantStatus(t, viewer.get(path+"/credit-notes"), 403, "Viewers cannot act")
	})
}
