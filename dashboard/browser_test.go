package dashboard_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// In headless Chromium: an admin signs in, reads the invoices by customer name with what each was
// paid, credited and still asks, a paid and half-refunded invoice's figures, the charts' axes, finds
// the invoice from the overview, voids it after the confirmation and sees it void; a viewer sees
// the invoice without the action and is refused the confirmation page. Screenshots of every page go to ./artifacts/ (ignored by git; CI keeps
// them). Every page is checked with axe-core (testkit.AxeCheck).
func TestDashboardInBrowser(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := openInvoice(t, e)
		refunded := paidHalfRefunded(t, e)
		subscribe(t, e)
		jobID := renewalJob(t, e)
		for _, o := range []struct {
			email string
			role  remit.OperatorRole
		}{{"admin@example.com", remit.OperatorAdmin}, {"viewer@example.com", remit.OperatorViewer}} {
			signedInAs(t, e, o.email, o.role) // sets the password (the session of that client is not used)
		}
		b := testkit.StartBrowser(t)
		shot := func(name string) {
			b.Screenshot(filepath.Join("..", "artifacts", "dashboard-"+name+"-"+string(e.Store)+".png"))
			testkit.AxeCheck(t, b, name)
		}
		signIn := func(email string) {
			b.Open(e.Server.URL + "/dashboard")
			if h := b.Find("h1").Text(); h != "Sign in" {
				t.Fatalf("signed out, /dashboard shows %q", h)
			}
			b.Find("#email").Type(email)
			b.Find("#password").Type("a long enough password")
			b.Find("form.card button[type=submit]").Click()
			b.WaitText("main h1", 10*time.Second, "Acme Test")
		}

		_, link, err := e.App.Operators.CreateOperator(context.Background(), e.Tenant.OrganizationID, "new@example.com", remit.OperatorViewer)
		if err != nil {
			t.Fatal(err)
		}
		b.Open(link)
		b.WaitText("main h1", 10*time.Second, "Set your password")
		shot("set-password")

		signIn("admin@example.com")
		shot("overview")
		if h := b.Find("main h1").Text(); h != "Acme Test" {
			t.Fatalf("overview heading %q", h)
		}
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices")
		b.WaitText("main", 10*time.Second, id)
		// The customers by name, and what each invoice was paid, credited and still asks.
		if row := b.Find("tbody tr:has(a[href$='/invoices/" + refunded + "'])").Text(); !strings.Contains(row, "Acme Widgets Ltd c-acme paid $520.00 $520.00 $260.00 $0.00") {
			t.Fatalf("the refunded invoice's row reads %q", row)
		}
		shot("invoices")
		b.Find("a[href$='/invoices/" + refunded + "']").Click()
		b.WaitText("main", 10*time.Second, "Total credited")
		for _, want := range []string{"Still due\n$0.00", "Amount paid -$520.00", "Refunded $260.00", "Total credited $260.00"} {
			if main := b.Find("main").Text(); !strings.Contains(main, want) || strings.Contains(main, "Amount due") {
				t.Fatalf("the paid, half-refunded invoice's page lacks %q or says an amount is due:\n%s", want, main)
			}
		}
		shot("invoice-refunded")
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox)
		b.WaitText("main", 10*time.Second, "Revenue, last 30 days")
		// The charts' axes: values from $0.00 up, and days, as text a person reads on the page.
		if axes := b.Find("#chart-revenue-title").Text(); !strings.Contains(axes, "$520.00 in all") {
			t.Fatalf("the revenue chart's title %q", axes)
		}
		if labels := b.Find("svg.chart").Text(); !strings.Contains(labels, "$0.00") || !strings.Contains(labels, "$600.00") {
			t.Fatalf("the revenue chart's labels read %q", labels)
		}
		shot("account")
		for _, list := range []string{"payments", "receipts", "settlements", "subscriptions", "emails", "usage"} {
			b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/" + list)
			b.WaitText("main h1", 10*time.Second, "Payments", "Receipts", "Settlements", "Subscriptions", "E-mails", "Usage")
			shot(list)
		}
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/customers")
		b.Find("#q").Type("c1")
		b.Find("form[role=search] button").Click()
		b.WaitText("tbody", 10*time.Second, "C1")
		shot("customers")
		b.Find("tbody a").Click()
		b.WaitText("main h1", 10*time.Second, "C1")
		shot("customer")
		b.Find("a[href*='/subscriptions/']").Click()
		b.WaitText("main h1", 10*time.Second, "Subscription")
		shot("subscription")
		b.Find("a.button[href$='/pause']").Click()
		b.WaitText("main h1", 10*time.Second, "Pause")
		shot("subscription-pause")
		b.Find("main form button[type=submit]").Click()
		b.WaitText("[role=status]", 10*time.Second, "The subscription is paused.")
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/events")
		b.WaitText("main", 10*time.Second, "invoice.finalized")
		shot("events")
		b.Find("tbody a").Click()
		b.WaitText("main", 10*time.Second, "Deliveries")
		shot("event")
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/clock")
		b.Find("#seconds").Type("3600")
		b.Find("form.card button[type=submit]").Click()
		b.WaitText("[role=status]", 10*time.Second, "The clock moved forward")
		shot("clock")
		b.Open(e.Server.URL + "/dashboard")
		b.Find("#invoice-" + e.Tenant.Sandbox).Type(id)
		b.Find("#invoice-" + e.Tenant.Sandbox + " ~ button").Click()
		b.WaitText("main", 10*time.Second, "Still due")
		shot("invoice")
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id + "/credit-notes")
		b.WaitText("main h1", 10*time.Second, "Issue a credit note")
		shot("credit-note")
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id)
		b.Find("a.button").Click()
		b.WaitText("main", 10*time.Second, "It cannot be undone")
		if code := b.Find("pre code").Text(); !strings.Contains(code, "/v1/invoices/"+id+"/void") {
			t.Fatalf("the confirmation's API request: %s", code)
		}
		shot("void-confirm")
		b.Find("main form button[type=submit]").Click()
		b.WaitText("[role=status]", 10*time.Second, "The invoice is void.")
		shot("invoice-void")
		if st := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()["status"]; st != "void" {
			t.Fatalf("after the dashboard's void the API says %v", st)
		}
		// Last, since it moves the clock a month and a day: the renewal fails for good, is listed
		// and announced, and the admin retries it.
		failForGood(t, e, jobID)
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox)
		b.Find("main a[href$='/jobs?status=failed']").Click()
		b.WaitText("main", 10*time.Second, jobID)
		shot("jobs")
		b.Find("tbody a").Click()
		b.WaitText("main h1", 10*time.Second, "Job "+jobID)
		shot("job")
		b.Find("a.button[href$='/retry']").Click()
		b.WaitText("main h1", 10*time.Second, "Retry job")
		shot("job-retry")
		b.Find("main form button[type=submit]").Click()
		b.WaitText("[role=status]", 10*time.Second, "The job is pending again")
		b.Find("form.signout button").Click()
		b.WaitText("main h1", 10*time.Second, "Sign in")
		shot("sign-in")

		signIn("viewer@example.com")
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id)
		b.WaitText("main", 10*time.Second, "Still due")
		if _, ok := b.TryFind("a.button"); ok {
			t.Fatal("a viewer is offered the void")
		}
		b.Open(e.Server.URL + "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id + "/void")
		b.WaitText("main", 10*time.Second, "Viewers cannot act")
		shot("viewer-refused")
	})
}
