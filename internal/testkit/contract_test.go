package testkit

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the failures the checker reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// The strict check's failure names the operation, the status, and every undeclared field at its
// JSON path with its schema: inside an object, an array, and the member of a discriminated union
// (an event's object) and on a prefix-routed path whose tail holds slashes. Declared fields, the
// maps that take any key and nulls where the schema allows them pass.
func TestContractCheckNamesUndeclaredFields(t *testing.T) {
	c := checker(t)
	invoice := `{"object": "invoice", "invoiceId": "inv_1", "metadata": {"any": "key"}, "lines": [
		{"object": "invoice_line", "invoiceLineId": "il_1", "taxes": null, "bogus": 1}, {"object": "invoice_line", "bogus": 2}]}`
	for _, tc := range []struct {
		name, method, path, body string
		want                     []string // each in one failure; none when empty
	}{
		{"declared", "GET", "/v1/test-helpers/clock", `{"data": {"object": "test_clock", "merchantAccountId": "ma_1",
			"environment": "sandbox", "now": "2025-06-01T12:00:00Z", "createdAt": "2025-06-01T12:00:00Z"}, "requestId": "req_1"}`, nil},
		{"top level", "GET", "/v1/test-helpers/clock", `{"data": {"object": "test_clock", "extra": true}, "requestId": "req_1"}`,
			[]string{"getTestClock (GET /v1/test-helpers/clock) answered 200 with 1 field(s) that api/openapi.yaml does not declare",
				"\n  data.extra (in schema TestClock)\n"}},
		{"in an array, named once", "GET", "/v1/invoices/inv_1", `{"data": ` + invoice + `, "requestId": "req_1"}`,
			[]string{"getInvoice (GET /v1/invoices/{invoiceId}) answered 200 with 1 field(s)", "\n  data.lines[0].bogus (in schema InvoiceLine)\n"}},
		{"in an event's object", "GET", "/v1/events/evt_1", `{"data": {"object": "event", "eventId": "evt_1", "type": "invoice.paid",
			"data": {"object": ` + invoice + `}}, "requestId": "req_1"}`,
			[]string{"getEvent (GET /v1/events/{eventId}) answered 200 with 1 field(s)", "\n  data.data.object.lines[0].bogus (in schema InvoiceLine)\n"}},
		{"in an error's details", "GET", "/v1/invoices/inv_1", `{"error": {"code": "not_found", "message": "No such invoice.",
			"requestId": "req_1", "details": {"resource": "invoice", "hint": "x"}}}`,
			[]string{"getInvoice (GET /v1/invoices/{invoiceId}) answered 404 with 1 field(s)", "\n  error.details.hint (in schema ErrorDetails)\n"}},
		{"on a prefix-routed path", "PUT", "/customer-portal/invoices/inv_1/pay?token=t", `{"data": ` + invoice + `, "requestId": "req_1"}`,
			[]string{"customerPortalPut (PUT /customer-portal/{tail}) answered 200 with 1 field(s)", "\n  data.lines[0].bogus (in schema InvoiceLine)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			status := http.StatusOK
			if strings.Contains(tc.body, `"error"`) {
				status = http.StatusNotFound
			}
			res := &Response{Status: status, Header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_1"},
				"Cache-Control": {"no-store"}, "X-Content-Type-Options": {"nosniff"}}, Body: []byte(tc.body)}
			r := &recorder{TB: t}
			c.check(r, req, res)
			if len(tc.want) == 0 {
				if len(r.errs) > 0 {
					t.Fatalf("want no failure, got:\n%s", strings.Join(r.errs, "\n"))
				}
				return
			}
			if len(r.errs) != 1 {
				t.Fatalf("want one failure, got %d:\n%s", len(r.errs), strings.Join(r.errs, "\n"))
			}
			for _, w := range tc.want {
				if !strings.Contains(r.errs[0], w) {
					t.Errorf("the failure does not say %q:\n%s", w, r.errs[0])
				}
			}
		})
	}
}
