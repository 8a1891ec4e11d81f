package dashboard_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// paidHalfRefunded is a 520.00 USD invoice of "Acme Widgets Ltd" (c-acme), paid by card at
// finalization, then half refunded by a credit note; and a failed payment of "Bad Card Co"
// (c-bad). It answers the invoice's ID.
func paidHalfRefunded(t *testing.T, e *testkit.Env) string {
	t.Helper()
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "kit", "productId": "kit", "name": "Kit",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 52000})
	card := func(customer, name, token string) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": customer, "name": name})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + customer, "customerId": customer, "currency": "USD",
			"collectionMethod": "charge_automatically"})
		s := e.Must(201, "POST", "/v1/customers/"+customer+"/payment-method-setup", map[string]any{"billingAccountId": "ba-" + customer, "setAsDefault": true}).Data()
		u, _ := url.Parse(s["url"].(string))
		e.Must(200, "PUT", u.RequestURI()+"&paymentMethod="+token, nil, testkit.APIKey(""))
	}
	finalize := func(customer string) map[string]any {
		id := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": customer, "billingAccountId": "ba-" + customer, "currency": "USD",
			"lines": []any{map[string]any{"priceId": "kit"}}}).Data()["invoiceId"].(string)
		return e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
	}
	card("c-acme", "Acme Widgets Ltd", "pm_card_visa")
	inv := finalize("c-acme")
	if inv["status"] != "paid" {
		t.Fatalf("the card payment: %v", inv["status"])
	}
	id := inv["invoiceId"].(string)
	e.Must(200, "POST", "/v1/credit-notes", map[string]any{"invoiceId": id, "reason": "order_change",
		"lines": []any{map[string]any{"description": "Half the kit back", "amount": 26000, "bucket": "refund"}}})
	card("c-bad", "Bad Card Co", "pm_card_chargeDeclined")
	if st := finalize("c-bad")["status"]; st != "open" {
		t.Fatalf("the declined card: %v", st)
	}
	return id
}

var tags = regexp.MustCompile(`<[^>]+>`)

// text is a page's text without its tags, its white space folded.
func text(body string) string {
	return strings.Join(strings.Fields(tags.ReplaceAllString(body, " ")), " ")
}

// The invoice page of a paid, half-refunded invoice says what was paid, what remains, what was
// refunded and credited (the documents' totals block), not the total as "due"; the invoices
// list's columns say the same; the lists name customers, with their IDs beside.
func TestInvoiceFiguresAndCustomerNames(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := paidHalfRefunded(t, e)
		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		a := "/dashboard/accounts/" + e.Tenant.Sandbox

		page := admin.get(a + "/invoices/" + id)
		wantStatus(t, page, 200)
		got := text(page.body)
		for _, want := range []string{"Status paid", "Customer Acme Widgets Ltd c-acme", "Still due $0.00", "Total $520.00", "Amount paid -$520.00",
			"Amount remaining $0.00", "Refunded $260.00", "Total credited $260.00"} {
			if !strings.Contains(got, want) {
				t.Errorf("the invoice page lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "Amount due") {
			t.Errorf("the paid invoice's page says an amount is due:\n%s", got)
		}

		list := text(admin.get(a + "/invoices").body)
		for _, want := range []string{"Customer Status Total Paid Credited Still due", "Acme Widgets Ltd c-acme paid $520.00 $520.00 $260.00 $0.00",
			"Bad Card Co c-bad open $520.00 $0.00 – $520.00"} {
			if !strings.Contains(list, want) {
				t.Errorf("the invoices list lacks %q:\n%s", want, list)
			}
		}
		for path, want := range map[string]string{
			"/payments":                         "Acme Widgets Ltd c-acme succeeded",
			"/receipts":                         "Acme Widgets Ltd c-acme",
			"/emails":                           "Bad Card Co c-bad",
			"":                                  "Bad Card Co c-bad $520.00", // the account's home: its latest failed payments
			"/invoices/" + id:                   "Customer Acme Widgets Ltd",
			"/customers/c-acme":                 "paid $520.00 $520.00 $260.00 $0.00",
			"/invoices/" + id + "/credit-notes": "The invoice's total is $520.00: $520.00 paid, $260.00 credited so far, $0.00 still due.",
		} {
			if got := text(admin.get(a + path).body); !strings.Contains(got, want) {
				t.Errorf("%s lacks %q:\n%s", a+path, want, got)
			}
		}
		if p := admin.get(a + "/payments"); !strings.Contains(p.body, `href="`+a+`/customers/c-acme"`) {
			t.Errorf("the payments list does not link the customer:\n%s", p.body)
		}
	})
}
