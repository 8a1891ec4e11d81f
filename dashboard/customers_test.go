package dashboard_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

var customerRow = regexp.MustCompile(`/customers/([A-Za-z0-9_-]+)"`)

// The customers list pages and searches (an ID, an e-mail address, the start of a name in any
// case, a LIKE wildcard taken literally); a customer's page links its invoices and shows its
// payments and subscriptions.
func TestCustomersListAndPage(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := openInvoice(t, e) // customer c1, "C1"
		e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true})
		for _, c := range []map[string]any{{"customerId": "c2", "name": "Zed Corp", "email": "ap@zed.example"}, {"customerId": "c3", "name": "zebra_50%"}} {
			e.Must(201, "POST", "/v1/customers", c)
		}
		admin := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		base := "/dashboard/accounts/" + e.Tenant.Sandbox + "/customers"
		wantStatus(t, admin.get("/dashboard"), 200, `href="`+base+`"`)

		list := func(query string) []string {
			t.Helper()
			p := admin.get(base + query)
			wantStatus(t, p, 200)
			var out []string
			for _, m := range customerRow.FindAllStringSubmatch(p.body, -1) {
				out = append(out, m[1])
			}
			return out
		}
		if got := list(""); strings.Join(got, ",") != "c3,c2,c1" {
			t.Fatalf("all, newest first: %v", got)
		}
		first := admin.get(base + "?limit=2")
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
		if next == nil {
			t.Fatalf("no next page:\n%s", first.body)
		}
		if got := customerRow.FindAllStringSubmatch(admin.get(html.UnescapeString(next[1])).body, -1); len(got) != 1 || got[0][1] != "c1" {
			t.Fatalf("second page: %v", got)
		}
		for q, want := range map[string]string{"?q=c2": "c2", "?q=ap%40zed.example": "c2", "?q=ZE": "c3,c2", "?q=zebra_5": "c3",
			"?q=zebra%25": "", "?q=z_b": "", "?q=nobody": ""} {
			if got := strings.Join(list(q), ","); got != want {
				t.Errorf("search %s: %q, want %q", q, got, want)
			}
		}
		wantStatus(t, admin.get(base+"?limit=500"), 422, "limit must be an integer from 1 to 100")

		// A card for c1, saved through its setup page as the customer would.
		session := e.Must(201, "POST", "/v1/customers/c1/payment-method-setup", map[string]any{"billingAccountId": "ba-c1", "setAsDefault": true}).Data()
		u, _ := url.Parse(session["url"].(string))
		req, _ := http.NewRequest(http.MethodPut, e.Server.URL+u.RequestURI()+"&paymentMethod=pm_card_visa", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("saving the card: %v %v", err, res)
		}
		res.Body.Close()
		e.Must(201, "POST", "/v1/customers/c2/balance/grant", map[string]any{"currency": "USD", "amount": 4200, "description": "Welcome credit"})
		c1 := admin.get(base + "/c1")
		wantStatus(t, c1, 200, "<h1>C1</h1>", "/invoices/"+id, "$25.00", "succeeded", "No subscription.", "No prepaid balance.", "visa ···· 4242", "<code>ba-c1</code>")
		wantStatus(t, admin.get(base+"/c2"), 200, "$42.00", "Welcome credit", "grant")
		wantStatus(t, admin.get(base+"/c_nope"), 404)
	})
}
