package dashboard_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// openInvoice creates an open send_invoice invoice of 25.00 USD through the API.
func openInvoice(t *testing.T, e *testkit.Env) string {
	t.Helper()
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 2500})
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "C1"})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c1", "customerId": "c1", "currency": "USD", "collectionMethod": "send_invoice"})
	id := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
		"lines": []any{map[string]any{"priceId": "item"}}}).Data()["invoiceId"].(string)
	e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
	return id
}

// signedInAs creates an operator of the tenant's organization with role and signs it in.
func signedInAs(t *testing.T, e *testkit.Env, email string, role remit.OperatorRole) *browser {
	t.Helper()
	return signedInTo(t, e, e.Tenant.OrganizationID, email, role)
}

// signedInTo creates an operator of the organization with role and signs it in.
func signedInTo(t *testing.T, e *testkit.Env, organizationID, email string, role remit.OperatorRole) *browser {
	t.Helper()
	ctx := context.Background()
	_, link, err := e.App.Operators.CreateOperator(ctx, organizationID, email, role)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Operators.SetOperatorPassword(ctx, link[strings.Index(link, "token=")+len("token="):], "a long enough password", "a long enough password"); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, e)
	wantRedirect(t, b.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, b.get("/dashboard/sign-in"))},
		"email": {email}, "password": {"a long enough password"}}), "/dashboard")
	return b
}

// An admin finds an invoice from the overview, opens it, confirms the void (the page shows the
// API request that does the same) and sees it void; the API agrees and emitted invoice.voided.
// Sending the same form again voids nothing twice; a viewer sees the invoice but may not void it.
func TestVoidInvoiceFromTheDashboard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := openInvoice(t, e)
		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		path := "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id
		wantRedirect(t, admin.get("/dashboard/invoices?account="+e.Tenant.Sandbox+"&invoice="+id), path)
		inv := admin.get(path)
		wantStatus(t, inv, 200, id, "open", "$25.00", "Void this invoice", `href="`+path+`/pdf"`, "/customer-portal/invoices/"+id+"?token=")
		pdf := admin.get(path + "/pdf")
		if pdf.status != 200 || pdf.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(pdf.body, "%PDF-") ||
			!strings.Contains(pdf.header.Get("Content-Disposition"), "INV-") {
			t.Fatalf("the invoice's PDF: %d %s %s", pdf.status, pdf.header.Get("Content-Type"), pdf.header.Get("Content-Disposition"))
		}

		confirm := admin.get(path + "/void")
		wantStatus(t, confirm, 200, "It cannot be undone", "/v1/invoices/"+id+"/void?environment=sandbox&amp;merchantAccountId="+e.Tenant.Sandbox, "Idempotency-Key: ")
		// A key the confirmation page did not give (none, or 10,000 characters): refused in words, nothing voided.
		for _, bad := range []string{"", strings.Repeat("x", 10_000)} {
			wantStatus(t, admin.post(path+"/void", url.Values{"csrf": {csrfOf(t, confirm)}, "key": {bad}}), 422, "This form is out of date")
		}
		if got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()["status"]; got != "open" {
			t.Fatalf("after refused forms: %v", got)
		}
		key := regexpValue(t, confirm.body, "key")
		form := url.Values{"csrf": {csrfOf(t, confirm)}, "key": {key}}
		wantRedirect(t, admin.post(path+"/void", form), path+"?done=void")
		wantStatus(t, admin.get(path+"?done=void"), 200, "The invoice is void.", "void")
		if got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()["status"]; got != "void" {
			t.Fatalf("API status after the dashboard's void: %v", got)
		}
		events := e.Must(200, "GET", "/v1/events?type=invoice.voided", nil).Data()["items"].([]any)
		if len(events) != 1 {
			t.Fatalf("invoice.voided events: %d", len(events))
		}
		// The same form again: the remembered answer, nothing voided twice.
		wantRedirect(t, admin.post(path+"/void", form), path+"?done=void")
		// A new form: the rule's own conflict, in words.
		again := admin.get(path + "/void")
		wantStatus(t, admin.post(path+"/void", url.Values{"csrf": {csrfOf(t, again)}, "key": {regexpValue(t, again.body, "key")}}), 409, "void")
		if n := len(e.Must(200, "GET", "/v1/events?type=invoice.voided", nil).Data()["items"].([]any)); n != 1 {
			t.Fatalf("invoice.voided events after the repeats: %d", n)
		}

		// Mark paid outside Remit, on a second invoice.
		id2 := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "item"}}}).Data()["invoiceId"].(string)
		e.Must(200, "POST", "/v1/invoices/"+id2+"/finalize", map[string]any{})
		path2 := "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id2
		wantStatus(t, admin.get(path2), 200, "Mark paid outside Remit")
		paid := admin.get(path2 + "/pay-out-of-band")
		wantStatus(t, paid, 200, "outside Remit", "/v1/invoices/"+id2+"/pay?", `-d '{&#34;outOfBand&#34;: true}'`)
		wantRedirect(t, admin.post(path2+"/pay-out-of-band", url.Values{"csrf": {csrfOf(t, paid)}, "key": {regexpValue(t, paid.body, "key")}}),
			path2+"?done=pay-out-of-band")
		if got := e.Must(200, "GET", "/v1/invoices/"+id2, nil).Data()["status"]; got != "paid" {
			t.Fatalf("API status after marking paid: %v", got)
		}
		wantStatus(t, admin.get(path+"/refund-everything"), 404)

		// A viewer reads, may not act; another organization's operator finds nothing.
		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		wantStatus(t, viewer.get(path), 200, id)
		if strings.Contains(viewer.get(path).body, "Void this invoice") {
			t.Error("a viewer is offered the void")
		}
		wantStatus(t, viewer.get(path+"/void"), 403, "Viewers cannot act")
		wantStatus(t, viewer.post(path+"/void", url.Values{"csrf": {csrfOf(t, viewer.get(path))}, "key": {"k"}}), 403, "Viewers cannot act")
		wantStatus(t, viewer.get("/dashboard/accounts/"+e.Tenant.Sandbox+"/invoices/inv_nope"), 404)

		// Another organization's admin, on every page of the first one's account: 404, and none
		// of its names or IDs.
		other := signedInTo(t, e, e.NewTenant("Globex Other", false).OrganizationID, "admin@globex.example", remit.OperatorAdmin)
		home := other.get("/dashboard")
		pages := []string{path, path + "/void", path2 + "/pay-out-of-band", "/dashboard/accounts/" + e.Tenant.Sandbox + "/clock",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices", "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices?status=paid",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/events", "/dashboard/accounts/" + e.Tenant.Sandbox + "/events/" + firstEvent(t, e),
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/customers", "/dashboard/accounts/" + e.Tenant.Sandbox + "/customers/c1",
			"/dashboard/accounts/" + e.Tenant.Sandbox, "/dashboard/accounts/" + e.Tenant.Sandbox + "/payments",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/subscriptions", "/dashboard/accounts/" + e.Tenant.Sandbox + "/emails", path + "/pdf",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/receipts", "/dashboard/accounts/" + e.Tenant.Sandbox + "/settlements",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/usage?customer=c1&meter=api", path2 + "/credit-notes",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/decide/approve", "/dashboard/accounts/" + e.Tenant.Sandbox + "/subscriptions/sub_any",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/subscriptions/sub_any/pause", "/dashboard/accounts/" + e.Tenant.Sandbox + "/jobs",
			"/dashboard/accounts/" + e.Tenant.Sandbox + "/jobs/job_any", "/dashboard/accounts/" + e.Tenant.Sandbox + "/jobs/job_any/retry", "/dashboard"}
		for _, p := range pages[:len(pages)-1] {
			got := other.get(p)
			wantStatus(t, got, 404)
			for _, leak := range []string{"Acme Test", id, id2, "INV-0000", "$25.00"} {
				if strings.Contains(got.body, leak) {
					t.Errorf("%s as another organization shows %q", p, leak)
				}
			}
		}
		wantStatus(t, other.post(path+"/void", url.Values{"csrf": {csrfOf(t, home)}, "key": {"k"}}), 404)

		// Signed out, every page sends to the sign-in page and shows nothing.
		nobody := newBrowser(t, e)
		for _, p := range pages {
			got := nobody.get(p)
			wantRedirect(t, got, "/dashboard/sign-in")
			if strings.Contains(got.body, id) || strings.Contains(got.body, "Acme") {
				t.Errorf("signed out, %s shows data", p)
			}
		}
		if got := e.Must(200, "GET", "/v1/invoices/"+id2, nil).Data()["status"]; got != "paid" {
			t.Fatalf("after another organization's attempt: %v", got)
		}
	})
}

func regexpValue(t *testing.T, body, name string) string {
	t.Helper()
	marker := `name="` + name + `" value="`
	i := strings.Index(body, marker)
	if i < 0 {
		t.Fatalf("no %s field in:\n%s", name, body)
	}
	rest := body[i+len(marker):]
	return rest[:strings.Index(rest, `"`)]
}

// firstEvent is the ID of the newest event of the tenant's sandbox account.
func firstEvent(t *testing.T, e *testkit.Env) string {
	t.Helper()
	return e.Must(200, "GET", "/v1/events?limit=1", nil).Data()["items"].([]any)[0].(map[string]any)["eventId"].(string)
}
