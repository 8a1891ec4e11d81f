package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// exportFixture is the records the exports tests read: two customers, each with a billing
// account, paid invoices with a credit note each (a refund, and for x a credit to the balance),
// y's open invoice and its subscription's invoice, a grant, and usage of a sum and a unique_count
// meter over two UTC days. Names and descriptions carry commas, quotes and line breaks.
type exportFixture struct {
	invoices       map[string]string // by role: paidX, paidY, openY, subY
	subscriptionID string
	creditNotes    []string
	day0           time.Time // the first UTC day with usage
}

const (
	nameX = `Acme, "West" Ltd`
	descX = "Seats, \"annual\"\r\nsecond line\rthird"
	// cnDesc is each credit note's description.
	cnDesc = "Returned, \"damaged\"\nsee ticket"
)

func newExportFixture(t *testing.T, e *testkit.Env, opts ...testkit.Opt) exportFixture {
	t.Helper()
	must := func(status int, method, path string, body any) map[string]any {
		t.Helper()
		return e.Must(status, method, path, body, opts...).Data()
	}
	must(200, "POST", "/v1/prices", map[string]any{"priceId": "seat", "productId": "seat", "name": "Seat", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1250})
	must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "plan", "name": "Plan", "priceType": "fixed_recurring", "currency": "USD",
		"billingInterval": "month", "unitAmount": 4000})
	for id, name := range map[string]string{"cus-x": nameX, "cus-y": "Yellow Corp"} {
		must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": name})
		must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD"})
	}
	f := exportFixture{invoices: map[string]string{}}
	invoice := func(customer, desc string, qty int, md map[string]any) string {
		return must(201, "POST", "/v1/invoices", map[string]any{"customerId": customer, "billingAccountId": "ba-" + customer, "currency": "USD",
			"metadata": md, "lines": []any{map[string]any{"priceId": "seat", "quantity": qty, "description": desc}}})["invoiceId"].(string)
	}
	paid := func(id string) []any {
		inv := must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
		must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true})
		return inv["lines"].([]any)
	}
	f.invoices["paidX"] = invoice("cus-x", descX, 2, map[string]any{"erp": "A,1"})
	linesX := paid(f.invoices["paidX"])
	f.invoices["paidY"] = invoice("cus-y", "Seats", 1, map[string]any{})
	linesY := paid(f.invoices["paidY"])
	f.invoices["openY"] = invoice("cus-y", "Seats", 3, map[string]any{})
	must(200, "POST", "/v1/invoices/"+f.invoices["openY"]+"/finalize", map[string]any{})
	line := func(lines []any) string { return lines[0].(map[string]any)["invoiceLineId"].(string) }
	cn := func(invoiceID, lineID string, buckets ...string) {
		var ls []any
		for _, b := range buckets {
			ls = append(ls, map[string]any{"invoiceLineId": lineID, "bucket": b, "amount": 100, "description": "Goodwill, \"sorry\"\nline 2"})
		}
		f.creditNotes = append(f.creditNotes, must(200, "POST", "/v1/credit-notes",
			map[string]any{"invoiceId": invoiceID, "reason": "order_change", "lines": ls, "description": cnDesc})["creditNoteId"].(string))
	}
	cn(f.invoices["paidX"], line(linesX), "refund", "credit")
	cn(f.invoices["paidY"], line(linesY), "refund")
	q := must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "cus-y", "billingAccountId": "ba-cus-y",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "plan", "quantity": 1}}})
	f.subscriptionID = must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{})["subscriptionId"].(string)
	must(201, "POST", "/v1/customers/cus-y/balance/grant", map[string]any{"entryId": "grant-y", "currency": "USD", "amount": 5000,
		"description": "Promo,\r\nQ1"})
	must(201, "POST", "/v1/customers/cus-y/balance/grant", map[string]any{"entryId": "grant-y-eur", "currency": "EUR", "amount": 700})
	must(201, "POST", "/v1/meters", map[string]any{"meterId": "api-calls", "aggregation": "sum"})
	must(201, "POST", "/v1/meters", map[string]any{"meterId": "users", "aggregation": "unique_count", "uniqueProperty": "user"})
	now := time.Now() // production has no test clock: real time
	if r := e.Do("GET", "/v1/test-helpers/clock", nil, opts...); r.Status == 200 {
		var err error
		if now, err = time.Parse(time.RFC3339Nano, r.Data()["now"].(string)); err != nil {
			t.Fatal(err)
		}
	}
	f.day0 = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
	n := 0
	usage := func(customer, meter string, hours, qty int, user string) {
		n++
		body := map[string]any{"eventId": fmt.Sprintf("ev-%d", n), "customerId": customer, "meterId": meter, "quantity": qty,
			"timestamp": f.day0.Add(time.Duration(hours) * time.Hour).Add(17 * time.Minute).Format(time.RFC3339)}
		if user != "" {
			body["properties"] = map[string]any{"user": user}
		}
		must(201, "POST", "/v1/usage-events", body)
	}
	usage("cus-x", "api-calls", 1, 3, "")
	usage("cus-x", "api-calls", 2, 4, "")
	usage("cus-x", "api-calls", 25, 5, "")
	usage("cus-x", "users", 1, 1, "u1")
	usage("cus-x", "users", 2, 1, "u2")
	usage("cus-x", "users", 3, 1, "u1")
	usage("cus-x", "users", 26, 1, "u3")
	usage("cus-y", "api-calls", 5, 10, "")
	return f
}

// export gets an export and reads it back as CSV: its header and its rows, each by column.
func export(t *testing.T, e *testkit.Env, path string, opts ...testkit.Opt) ([]string, []map[string]string) {
	t.Helper()
	r := e.Must(200, "GET", path, nil, opts...)
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Fatalf("%s: Content-Type %q", path, ct)
	}
	if r.Header.Get("Request-Id") == "" || r.Header.Get("RateLimit-Remaining") == "" || r.Header.Get("Content-Length") != "" {
		t.Fatalf("%s: headers %v", path, r.Header)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment; filename=") {
		t.Fatalf("%s: Content-Disposition %q", path, r.Header.Get("Content-Disposition"))
	}
	rd := csv.NewReader(bytes.NewReader(r.Body))
	all, err := rd.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, r.Body)
	}
	// RFC 4180: every record ends with CRLF, and so does every line break inside a value.
	if bytes.Count(r.Body, []byte("\n")) != bytes.Count(r.Body, []byte("\r\n")) || !bytes.HasSuffix(r.Body, []byte("\r\n")) {
		t.Fatalf("%s: a line does not end with CRLF:\n%q", path, r.Body)
	}
	var rows []map[string]string
	for _, rec := range all[1:] {
		m := map[string]string{}
		for i, c := range all[0] {
			m[c] = rec[i]
		}
		rows = append(rows, m)
	}
	return all[0], rows
}

// exportsDoc is docs/exports.md: each dataset's header is the first line of one of its csv blocks.
func documentedHeaders(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("../docs/exports.md")
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]bool{}
	for _, block := range strings.Split(string(doc), "```csv\n")[1:] {
		first, _, _ := strings.Cut(block, "\n")
		headers[first] = true
	}
	return headers
}

// camel is the API's name of an export's column (customer_id: customerId).
func camel(col string) string {
	parts := strings.Split(col, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// usdDecimal writes cents as dollars, independently of the code under test.
func usdDecimal(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// sameAsAPI checks an exported row value by value against the API's object of the same record:
// each column is the field of the same name (camelCase), a _decimal column the amount before it in
// dollars, except the columns given in want, which must hold what want says.
func sameAsAPI(t *testing.T, what string, row map[string]string, header []string, obj map[string]any, want map[string]string) {
	t.Helper()
	for i, col := range header {
		got := row[col]
		if w, ok := want[col]; ok {
			if got != w {
				t.Errorf("%s: %s = %q, want %q", what, col, got, w)
			}
			continue
		}
		if base, ok := strings.CutSuffix(col, "_decimal"); ok && header[i-1] == base {
			if n, err := strconv.ParseInt(row[base], 10, 64); err != nil || got != usdDecimal(n) {
				t.Errorf("%s: %s = %q for %s = %q", what, col, got, base, row[base])
			}
			continue
		}
		v, ok := obj[camel(col)]
		if !ok {
			t.Errorf("%s: column %s is not a field of the API's object (give it in want)", what, col)
			continue
		}
		var api string
		switch x := v.(type) {
		case nil:
		case string:
			api = x
		case float64:
			api = strconv.FormatInt(int64(x), 10)
		case map[string]any:
			b, _ := json.Marshal(x)
			api = string(b)
		default:
			t.Errorf("%s: %s: the API's %T", what, col, v)
		}
		if got != api {
			t.Errorf("%s: %s = %q, the API says %q", what, col, got, api)
		}
	}
}

func byColumn(rows []map[string]string, col, v string) []map[string]string {
	var out []map[string]string
	for _, r := range rows {
		if r[col] == v {
			out = append(out, r)
		}
	}
	return out
}

func TestExportDatasets(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		f := newExportFixture(t, e)
		documented := documentedHeaders(t)
		get := func(path string) map[string]any { return e.Must(200, "GET", path, nil).Data() }
		headers := map[string][]string{}
		rows := map[string][]map[string]string{}
		for _, ds := range []string{"invoices", "invoice-lines", "payments", "refunds", "credit-notes", "balance-entries", "usage-daily"} {
			headers[ds], rows[ds] = export(t, e, "/v1/exports/"+ds+".csv")
			if !documented[strings.Join(headers[ds], ",")] {
				t.Errorf("%s: header %s is not documented in docs/exports.md", ds, strings.Join(headers[ds], ","))
			}
		}

		t.Run("invoices", func(t *testing.T) {
			if len(rows["invoices"]) != 4 {
				t.Fatalf("%d invoices", len(rows["invoices"]))
			}
			id := f.invoices["paidX"]
			rs := byColumn(rows["invoices"], "invoice_id", id)
			if len(rs) != 1 {
				t.Fatalf("invoice %s: %d rows", id, len(rs))
			}
			sameAsAPI(t, "invoice", rs[0], headers["invoices"], get("/v1/invoices/"+id), map[string]string{"customer_name": nameX,
				"subtotal": "2500", "subtotal_decimal": "25.00", "status": "paid", "metadata": `{"erp":"A,1"}`})
			// Oldest first.
			var created []string
			for _, r := range rows["invoices"] {
				created = append(created, r["created_at"])
			}
			if !slices.IsSorted(created) || rows["invoices"][0]["invoice_id"] != id {
				t.Errorf("invoices not oldest first: %v", created)
			}
		})
		t.Run("invoice-lines", func(t *testing.T) {
			inv := get("/v1/invoices/" + f.invoices["paidX"])
			line := inv["lines"].([]any)[0].(map[string]any)
			rs := byColumn(rows["invoice-lines"], "invoice_line_id", line["invoiceLineId"].(string))
			if len(rs) != 1 || len(rows["invoice-lines"]) != 4 {
				t.Fatalf("%d rows of the line, %d lines", len(rs), len(rows["invoice-lines"]))
			}
			sameAsAPI(t, "invoice line", rs[0], headers["invoice-lines"], line, map[string]string{
				"invoice_id": f.invoices["paidX"], "invoice_number": inv["number"].(string), "invoice_status": "paid", "line_number": "1",
				"customer_id": "cus-x", "customer_name": nameX, "billing_account_id": "ba-cus-x", "subscription_id": "", "currency": "USD",
				"invoice_created_at": inv["createdAt"].(string),
				"description":        "Seats, \"annual\"\nsecond line\nthird", // every line break is one, written CRLF
				"unit_amount":        "1250", "amount": "2500", "credited_amount": "200"})
		})
		t.Run("payments", func(t *testing.T) {
			if len(rows["payments"]) != 2 {
				t.Fatalf("%d payments", len(rows["payments"]))
			}
			r := byColumn(rows["payments"], "invoice_id", f.invoices["paidX"])[0]
			p := get("/v1/payments/" + r["payment_id"])
			sameAsAPI(t, "payment", r, headers["payments"], p, map[string]string{"customer_name": nameX, "payment_method_id": "",
				"brand": "", "last4": "", "amount": "2500", "amount_refunded": "100", "method": "out_of_band", "status": "succeeded"})
			// A payment received out of band was last updated when it was recorded (it once said 0001-01-01).
			if r["updated_at"] < r["created_at"] {
				t.Errorf("payment updated_at %s before created_at %s", r["updated_at"], r["created_at"])
			}
		})
		t.Run("refunds", func(t *testing.T) {
			if len(rows["refunds"]) != 2 {
				t.Fatalf("%d refunds", len(rows["refunds"]))
			}
			cn := get("/v1/credit-notes/" + f.creditNotes[0])
			r := byColumn(rows["refunds"], "credit_note_id", f.creditNotes[0])[0]
			if r["refund_id"] != cn["refundIds"].([]any)[0] {
				t.Errorf("refund %s, the credit note says %v", r["refund_id"], cn["refundIds"])
			}
			pay := byColumn(rows["payments"], "invoice_id", f.invoices["paidX"])[0]
			for col, want := range map[string]string{"payment_id": pay["payment_id"], "invoice_id": f.invoices["paidX"], "customer_id": "cus-x",
				"customer_name": nameX, "status": "succeeded", "currency": "USD", "amount": "100", "amount_decimal": "1.00", "processor": "",
				"failure_code": "", "failure_message": ""} {
				if r[col] != want {
					t.Errorf("refund: %s = %q, want %q", col, r[col], want)
				}
			}
			if _, err := time.Parse(time.RFC3339Nano, r["created_at"]); err != nil || !strings.HasSuffix(r["created_at"], "Z") {
				t.Errorf("refund created_at %q", r["created_at"])
			}
		})
		t.Run("credit-notes", func(t *testing.T) {
			r := byColumn(rows["credit-notes"], "credit_note_id", f.creditNotes[0])
			if len(r) != 1 || len(rows["credit-notes"]) != 2 {
				t.Fatalf("%d rows of the note, %d notes", len(r), len(rows["credit-notes"]))
			}
			sameAsAPI(t, "credit note", r[0], headers["credit-notes"], get("/v1/credit-notes/"+f.creditNotes[0]),
				map[string]string{"customer_name": nameX, "total": "200", "refund_amount": "100", "credit_amount": "100"})
		})
		t.Run("balance-entries", func(t *testing.T) {
			var entries []any
			for _, cus := range []string{"cus-x", "cus-y"} {
				entries = append(entries, e.Must(200, "GET", "/v1/customers/"+cus+"/balance/entries?limit=100", nil).Data()["items"].([]any)...)
			}
			if len(rows["balance-entries"]) != len(entries) || len(entries) != 3 {
				t.Fatalf("%d exported entries, the API lists %d", len(rows["balance-entries"]), len(entries))
			}
			for _, it := range entries {
				obj := it.(map[string]any)
				r := byColumn(rows["balance-entries"], "entry_id", obj["entryId"].(string))
				if len(r) != 1 {
					t.Fatalf("entry %s: %d rows", obj["entryId"], len(r))
				}
				want := map[string]string{"customer_name": map[string]string{"cus-x": nameX, "cus-y": "Yellow Corp"}[obj["customerId"].(string)]}
				if obj["currency"] == "EUR" {
					want["amount_decimal"], want["remaining_decimal"] = "7.00", "7.00"
				}
				if obj["entryId"] == "grant-y" {
					want["description"] = "Promo,\nQ1"
				}
				sameAsAPI(t, "balance entry", r[0], headers["balance-entries"], obj, want)
			}
		})
		t.Run("usage-daily", func(t *testing.T) {
			var got []string
			for _, r := range rows["usage-daily"] {
				got = append(got, strings.Join([]string{r["date"], r["customer_id"], r["customer_name"], r["meter_id"], r["aggregation"],
					r["quantity"], r["event_count"]}, "|"))
			}
			d0, d1 := f.day0.Format(time.DateOnly), f.day0.AddDate(0, 0, 1).Format(time.DateOnly)
			want := []string{
				d0 + "|cus-x|" + nameX + "|api-calls|sum|7|2",
				d1 + "|cus-x|" + nameX + "|api-calls|sum|5|1",
				d0 + "|cus-x|" + nameX + "|users|unique_count|2|3",
				d1 + "|cus-x|" + nameX + "|users|unique_count|1|1",
				d0 + "|cus-y|Yellow Corp|api-calls|sum|10|1",
			}
			if !slices.Equal(got, want) {
				t.Errorf("usage-daily:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The range bounds the usage's timestamp, whole days: [day 1, …) and […, day 1).
			day1 := url.QueryEscape(f.day0.AddDate(0, 0, 1).Format(time.RFC3339))
			for query, days := range map[string]string{"createdFrom=" + day1: d1, "createdTo=" + day1: d0} {
				_, rs := export(t, e, "/v1/exports/usage-daily.csv?"+query)
				if len(rs) == 0 {
					t.Errorf("usage-daily?%s: no rows", query)
				}
				for _, r := range rs {
					if r["date"] != days {
						t.Errorf("usage-daily?%s: a row of %s", query, r["date"])
					}
				}
			}
		})
	})
}

func TestExportFilters(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		f := newExportFixture(t, e)
		column := func(ds, filter string) string {
			if ds == "invoice-lines" && filter == "status" {
				return "invoice_status"
			}
			return map[string]string{"customerId": "customer_id", "billingAccountId": "billing_account_id", "subscriptionId": "subscription_id",
				"invoiceId": "invoice_id", "paymentId": "payment_id", "creditNoteId": "credit_note_id", "meterId": "meter_id", "status": "status",
				"number": "number", "type": "type", "currency": "currency"}[filter]
		}
		for ds, filters := range map[string][]string{
			"invoices":        {"customerId", "billingAccountId", "subscriptionId", "status", "number"},
			"invoice-lines":   {"invoiceId", "customerId", "billingAccountId", "subscriptionId", "status"},
			"payments":        {"invoiceId", "customerId", "status"},
			"refunds":         {"paymentId", "invoiceId", "creditNoteId", "status"},
			"credit-notes":    {"invoiceId", "customerId"},
			"balance-entries": {"customerId", "type", "currency"},
			"usage-daily":     {"customerId", "meterId"},
		} {
			_, all := export(t, e, "/v1/exports/"+ds+".csv")
			for _, filter := range filters {
				col := column(ds, filter)
				// Each value the column takes selects exactly the rows that have it, in the same order.
				values := map[string]bool{}
				for _, r := range all {
					if r[col] != "" {
						values[r[col]] = true
					}
				}
				if len(values) == 0 {
					t.Fatalf("%s: no row has a %s to filter by", ds, col)
				}
				narrowed := false
				for v := range values {
					_, got := export(t, e, "/v1/exports/"+ds+".csv?"+filter+"="+url.QueryEscape(v))
					want := byColumn(all, col, v)
					if len(got) != len(want) || (len(got) > 0 && !slices.EqualFunc(got, want, func(a, b map[string]string) bool { return fmt.Sprint(a) == fmt.Sprint(b) })) {
						t.Errorf("%s?%s=%s: %d rows, want %d", ds, filter, v, len(got), len(want))
					}
					narrowed = narrowed || len(got) < len(all)
				}
				if !narrowed && !(ds == "refunds" && filter == "status") && !(ds == "payments" && filter == "status") {
					t.Errorf("%s: no value of %s narrows the export (the fixture should have two)", ds, filter)
				}
			}
		}
		// A value no record has exports the header alone.
		h, rows := export(t, e, "/v1/exports/payments.csv?status=failed")
		if len(rows) != 0 || len(h) == 0 {
			t.Errorf("status=failed: %d rows", len(rows))
		}
		_ = f
	})
}

func TestExportCreatedRange(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c", "name": "C"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba", "customerId": "c", "currency": "USD"})
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "p", "productId": "p", "name": "P", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100})
		var ids, created []string
		for i := 0; i < 3; i++ {
			inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c", "billingAccountId": "ba", "currency": "USD",
				"lines": []any{map[string]any{"priceId": "p"}}}).Data()
			ids, created = append(ids, inv["invoiceId"].(string)), append(created, inv["createdAt"].(string))
			e.AdvanceClock(3600)
		}
		micro := func(at string, n int) string {
			ts, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				t.Fatal(err)
			}
			return ts.Add(time.Duration(n) * time.Microsecond).Format(time.RFC3339Nano)
		}
		exported := func(query string) []string {
			_, rows := export(t, e, "/v1/exports/invoices.csv?"+query)
			var out []string
			for _, r := range rows {
				out = append(out, r["invoice_id"])
			}
			return out
		}
		q := func(kv ...string) string {
			v := url.Values{}
			for i := 0; i < len(kv); i += 2 {
				v.Set(kv[i], kv[i+1])
			}
			return v.Encode()
		}
		for _, c := range []struct {
			query string
			want  []string
		}{
			{q("createdFrom", created[1]), ids[1:]}, // the bound is in the range
			{q("createdTo", created[1]), ids[:1]},   // and that one is not
			{q("createdFrom", created[1], "createdTo", created[2]), ids[1:2]},
			{q("createdFrom", created[2], "createdTo", micro(created[2], 1)), ids[2:]}, // one microsecond holds it
			{q("createdFrom", micro(created[2], 1)), nil},                              // and after it, nothing
		} {
			if got := exported(c.query); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.query, got, c.want)
			}
		}
		wantFields(t, e.Do("GET", "/v1/exports/invoices.csv?"+q("createdFrom", created[2], "createdTo", created[1]), nil), "query:createdTo:before_start")
	})
}

func TestExportRefusals(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		// Before the first byte, every refusal is the JSON envelope.
		r := e.Do("GET", "/v1/exports/ledger.csv", nil)
		if r.Status != 404 || r.ErrorCode() != "not_found" || r.ErrorDetails()["field"] != "dataset" {
			t.Errorf("ledger: %d %s", r.Status, r.Body)
		}
		for _, path := range []string{"/v1/exports/invoices", "/v1/exports/invoices.json", "/v1/exports/.csv"} {
			if r := e.Do("GET", path, nil); r.Status != 404 || r.ErrorCode() != "not_found" {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		wantFields(t, e.Do("GET", "/v1/exports/invoices.csv?status=pending&meterId=m&customerId=a&customerId=b&createdFrom=yesterday", nil),
			"query:status:invalid_enum", "query:meterId:unknown_parameter", "query:customerId:repeated", "query:createdFrom:invalid_format")
		wantFields(t, e.Do("GET", "/v1/exports/payments.csv?status=bogus", nil), "query:status:invalid_enum")
		wantFields(t, e.Do("GET", "/v1/exports/credit-notes.csv?limit=10", nil), "query:limit:unknown_parameter")
		wantFields(t, e.Do("GET", "/v1/exports/usage-daily.csv?createdFrom=2026-01-01T06:00:00Z", nil), "query:createdFrom:not_whole_day")
		wantFields(t, e.Do("GET", "/v1/exports/balance-entries.csv?currency=XYZ", nil), "query:currency:invalid_currency")
		if r := e.Do("GET", "/v1/exports/invoices.csv", nil, testkit.APIKey("")); r.Status != 401 {
			t.Errorf("no key: %d", r.Status)
		}
		other := e.NewTenant("Other", false)
		if r := e.Do("GET", "/v1/exports/invoices.csv", nil, testkit.Scope("sandbox", other.Sandbox)); r.Status != 403 {
			t.Errorf("another organization's account: %d", r.Status)
		}
		if r := e.Do("POST", "/v1/exports/invoices.csv", nil); r.Status != 405 || r.Header.Get("Allow") != "GET" {
			t.Errorf("POST: %d %v", r.Status, r.Header.Get("Allow"))
		}
	})
}

// TestExportIsolation: an export holds the merchant account's records only, whatever its filters
// name: another account of the same organization and another organization, with records of the
// same IDs and names, never show.
func TestExportIsolation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		other := e.NewTenant("Other", false)
		newExportFixture(t, e, testkit.As(other))
		newExportFixture(t, e, testkit.Production())
		for _, ds := range []string{"invoices", "invoice-lines", "payments", "refunds", "credit-notes", "balance-entries", "usage-daily"} {
			filter := "?customerId=cus-x"
			if ds == "refunds" {
				filter = "?status=succeeded"
			}
			for _, query := range []string{"", filter} {
				if _, rows := export(t, e, "/v1/exports/"+ds+".csv"+query); len(rows) != 0 {
					t.Errorf("%s%s: %d rows of other accounts", ds, query, len(rows))
				}
			}
			_, theirs := export(t, e, "/v1/exports/"+ds+".csv", testkit.As(other))
			if len(theirs) == 0 {
				t.Errorf("%s: the other organization's export is empty", ds)
			}
		}
	})
}
