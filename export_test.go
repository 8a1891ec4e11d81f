package remit_test

import (
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

func TestDecimalAmount(t *testing.T) {
	for _, c := range []struct {
		amount   int64
		currency string
		want     string
	}{
		{0, "USD", "0.00"},
		{5, "USD", "0.05"},
		{99, "EUR", "0.99"},
		{100, "USD", "1.00"},
		{123456, "GBP", "1234.56"},
		{-5, "USD", "-0.05"},
		{-123456, "USD", "-1234.56"},
		{0, "JPY", "0"},
		{500, "JPY", "500"},
		{-500, "JPY", "-500"},
		{1234, "BHD", "1.234"}, // not on the rails: ISO 4217's three digits
		{1234, "CLF", "0.1234"},
		{1234, "XXQ", "12.34"}, // no such currency: two
		{math.MaxInt64, "USD", "92233720368547758.07"},
		{math.MinInt64, "USD", "-92233720368547758.08"},
		{math.MinInt64, "JPY", "-9223372036854775808"},
	} {
		if got := remit.DecimalAmount(c.amount, c.currency); got != c.want {
			t.Errorf("DecimalAmount(%d, %s) = %q, want %q", c.amount, c.currency, got, c.want)
		}
	}
}

// FuzzDecimalAmount holds DecimalAmount to the exact value: read back as a rational number, the
// decimal is the amount divided by 10^digits.
func FuzzDecimalAmount(f *testing.F) {
	for _, seed := range []int64{0, 1, -1, 99, 100, -101, math.MaxInt64, math.MinInt64} {
		f.Add(seed, uint8(0))
	}
	codes := []string{"USD", "JPY", "BHD", "EUR"}
	f.Fuzz(func(t *testing.T, amount int64, which uint8) {
		code := codes[int(which)%len(codes)]
		s := remit.DecimalAmount(amount, code)
		got, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("DecimalAmount(%d, %s) = %q: not a decimal", amount, code, s)
		}
		digits := remit.MinorDigits(code)
		want := new(big.Rat).SetFrac(big.NewInt(amount), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil))
		if got.Cmp(want) != 0 {
			t.Fatalf("DecimalAmount(%d, %s) = %q, want %s", amount, code, s, want.FloatString(digits))
		}
		if _, frac, _ := strings.Cut(s, "."); len(frac) != digits {
			t.Fatalf("DecimalAmount(%d, %s) = %q: want %d fraction digits", amount, code, s, digits)
		}
	})
}

func TestPlanExport(t *testing.T) {
	q := func(dataset string, kv ...string) remit.ExportQuery {
		params := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			params[kv[i]] = append(params[kv[i]], kv[i+1])
		}
		return remit.ExportQuery{Dataset: dataset, Params: params}
	}
	t.Run("filters", func(t *testing.T) {
		f, err := remit.PlanExport(q("invoices", "customerId", "cus_1", "billingAccountId", "ba_1", "subscriptionId", "sub_1",
			"status", "paid", "number", "INV-000001", "createdFrom", "2026-01-01T00:00:00Z", "createdTo", "2026-02-01T00:00:00Z"))
		if err != nil {
			t.Fatal(err)
		}
		want := remit.ExportFilter{CustomerID: "cus_1", BillingAccountID: "ba_1", SubscriptionID: "sub_1", Status: "paid", Number: "INV-000001",
			From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
		if !f.From.Equal(want.From) || !f.To.Equal(want.To) {
			t.Fatalf("range %v %v", f.From, f.To)
		}
		f.From, f.To, want.From, want.To = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if f != want {
			t.Fatalf("filter %+v, want %+v", f, want)
		}
		for dataset, kv := range map[string][]string{
			"invoice-lines":   {"invoiceId", "inv_1", "customerId", "c", "billingAccountId", "b", "subscriptionId", "s", "status", "open"},
			"payments":        {"invoiceId", "inv_1", "customerId", "c", "status", "failed"},
			"refunds":         {"paymentId", "pay_1", "invoiceId", "inv_1", "creditNoteId", "cn_1", "status", "pending"},
			"credit-notes":    {"invoiceId", "inv_1", "customerId", "c"},
			"balance-entries": {"customerId", "c", "type", "grant", "currency", "EUR"},
			"usage-daily":     {"customerId", "c", "meterId", "m", "createdFrom", "2026-01-01T00:00:00Z", "createdTo", "2026-01-02T00:00:00+00:00"},
		} {
			if _, err := remit.PlanExport(q(dataset, kv...)); err != nil {
				t.Errorf("%s %v: %v", dataset, kv, err)
			}
		}
	})
	t.Run("unknown dataset", func(t *testing.T) {
		_, err := remit.PlanExport(q("ledger"))
		if remit.ErrorCode(err) != remit.ENotFound {
			t.Fatalf("ledger: %v, want not_found", err)
		}
	})
	problems := func(t *testing.T, x remit.ExportQuery, want ...string) {
		t.Helper()
		_, err := remit.PlanExport(x)
		e, ok := err.(*remit.Error)
		if !ok || e.Code != remit.EInvalid {
			t.Fatalf("%+v: %v, want validation_failure", x, err)
		}
		var got []string
		for _, f := range e.Fields {
			if f.Location != remit.InQuery || f.Message == "" {
				t.Errorf("%+v: %+v", x, f)
			}
			got = append(got, f.Field+":"+f.Reason)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: problems %v, want %v", x, got, want)
		}
	}
	t.Run("every problem at once", func(t *testing.T) {
		problems(t, q("invoices", "meterId", "m", "status", "succeeded", "customerId", "a", "customerId", "b", "createdFrom", "yesterday"),
			"meterId:unknown_parameter", "status:invalid_enum", "customerId:repeated", "createdFrom:invalid_format")
		problems(t, q("payments", "status", "paid", "createdFrom", "2026-02-01T00:00:00Z", "createdTo", "2026-01-01T00:00:00Z"),
			"status:invalid_enum", "createdTo:before_start")
		problems(t, q("balance-entries", "currency", "usd", "type", "refund"), "currency:invalid_currency", "type:invalid_enum")
		problems(t, q("balance-entries", "currency", "XAU"), "currency:currency_not_supported")
		problems(t, q("usage-daily", "createdFrom", "2026-01-01T12:00:00Z", "createdTo", "2026-01-03T00:00:00.000001Z"),
			"createdFrom:not_whole_day", "createdTo:not_whole_day")
		problems(t, q("usage-daily", "createdFrom", "2026-01-01T00:00:00+01:00"), "createdFrom:not_whole_day")
		problems(t, q("credit-notes", "status", "issued"), "status:unknown_parameter")
	})
	t.Run("an empty value is no filter", func(t *testing.T) {
		f, err := remit.PlanExport(q("payments", "status", "", "customerId", ""))
		if err != nil || f != (remit.ExportFilter{}) {
			t.Fatalf("%+v %v", f, err)
		}
	})
	t.Run("every dataset has its filters and columns", func(t *testing.T) {
		for _, d := range remit.ExportDatasets {
			if len(remit.ExportFilterNames(d)) == 0 || len(remit.ExportColumnNames(d)) == 0 {
				t.Errorf("%s: filters %v, columns %v", d, remit.ExportFilterNames(d), remit.ExportColumnNames(d))
			}
		}
	})
}

func TestExportColumns(t *testing.T) {
	at := time.Date(2026, 1, 15, 9, 30, 0, 123456000, time.UTC)
	num := "INV-000007"
	rec := remit.InvoiceRecord{CustomerName: "Acme, Inc.", Invoice: remit.Invoice{InvoiceID: "inv_1", Number: &num, Status: remit.InvoicePaid,
		CustomerID: "cus_1", BillingAccountID: "ba_1", CollectionMethod: "send_invoice", Currency: "JPY", Subtotal: 1500, Total: 1650,
		TaxTotal: 150, AmountDue: 1650, AmountPaid: 1650, PaidAt: &at, CreatedAt: at.Add(-time.Hour)}, Metadata: `{"a":"1","b":"2"}`}
	row := remit.InvoiceColumns.Row(nil, &rec)
	names := remit.InvoiceColumns.Names()
	if len(row) != len(names) {
		t.Fatalf("%d values for %d columns", len(row), len(names))
	}
	got := map[string]string{}
	for i, n := range names {
		got[n] = row[i]
	}
	for col, want := range map[string]string{
		"invoice_id": "inv_1", "number": "INV-000007", "status": "paid", "customer_name": "Acme, Inc.", "subscription_id": "",
		"total": "1650", "total_decimal": "1650", "tax_total_decimal": "150", "paid_at": "2026-01-15T09:30:00.123456Z",
		"voided_at": "", "created_at": "2026-01-15T08:30:00.123456Z", "metadata": `{"a":"1","b":"2"}`,
	} {
		if got[col] != want {
			t.Errorf("%s = %q, want %q", col, got[col], want)
		}
	}
	// Money columns come in pairs, each amount followed by its decimal.
	for _, d := range remit.ExportDatasets {
		cols := remit.ExportColumnNames(d)
		for i, c := range cols {
			if base, ok := strings.CutSuffix(c, "_decimal"); ok && (i == 0 || cols[i-1] != base) {
				t.Errorf("%s: %s does not follow %s", d, c, base)
			}
		}
		if !slices.Contains(cols, "customer_id") && d != remit.ExportJournalEntries { // the general-journal format has its own columns
			t.Errorf("%s has no customer_id column", d)
		}
	}
	rem := int64(-250)
	entry := remit.BalanceEntryRecord{Entry: remit.BalanceEntry{EntryID: "e", Currency: "USD", Amount: -250, Remaining: &rem}}
	erow := remit.BalanceEntryColumns.Row(nil, &entry)
	if i := slices.Index(remit.BalanceEntryColumns.Names(), "remaining_decimal"); erow[i] != "-2.50" || erow[i-2] != "-2.50" {
		t.Errorf("balance entry row %v", erow)
	}
	entry.Entry.Remaining = nil
	erow = remit.BalanceEntryColumns.Row(erow, &entry)
	if i := slices.Index(remit.BalanceEntryColumns.Names(), "remaining"); erow[i] != "" || erow[i+1] != "" {
		t.Errorf("absent remaining: %q %q", erow[i], erow[i+1])
	}
}

func TestUsageDays(t *testing.T) {
	hour := func(day, h int) time.Time { return time.Date(2026, 3, day, h, 0, 0, 0, time.UTC) }
	i64 := func(v int64) *int64 { return &v }
	str := func(s string) *string { return &s }
	latest := func(ts, seq, q int64) *remit.UsageLatest { return &remit.UsageLatest{TS: ts, Seq: seq, Quantity: q} }
	for _, c := range []struct {
		agg   string
		hours []remit.UsageHour
		want  []int64 // quantity per day
	}{
		{remit.AggSum, []remit.UsageHour{{HourStart: hour(1, 0), Quantity: 5, Events: 2}, {HourStart: hour(1, 23), Quantity: 7, Events: 1},
			{HourStart: hour(2, 0), Quantity: 1, Events: 1}}, []int64{12, 1}},
		{remit.AggCount, []remit.UsageHour{{HourStart: hour(1, 0), Events: 2}, {HourStart: hour(1, 5), Events: 3}}, []int64{5}},
		{remit.AggMax, []remit.UsageHour{{HourStart: hour(1, 0), Events: 1, Max: i64(4)}, {HourStart: hour(1, 1), Events: 1, Max: i64(9)},
			{HourStart: hour(1, 2), Events: 1, Max: i64(3)}}, []int64{9}},
		{remit.AggLatest, []remit.UsageHour{{HourStart: hour(1, 0), Events: 1, Latest: latest(10, 5, 40)},
			{HourStart: hour(1, 1), Events: 2, Latest: latest(20, 1, 41)}, {HourStart: hour(1, 1), Events: 1, Latest: latest(20, 3, 42)},
			{HourStart: hour(1, 2), Events: 1, Latest: latest(15, 9, 43)}}, []int64{42}},
		{remit.AggUniqueCount, []remit.UsageHour{{HourStart: hour(1, 0), Events: 3}, {HourStart: hour(1, 0), Value: str("a")},
			{HourStart: hour(1, 0), Value: str("b")}, {HourStart: hour(1, 7), Value: str("a")}, {HourStart: hour(1, 7), Events: 1},
			{HourStart: hour(2, 7), Value: str("a")}, {HourStart: hour(2, 7), Events: 1}}, []int64{2, 1}},
	} {
		var d remit.UsageDays
		var got []remit.UsageDay
		for _, h := range c.hours {
			h.CustomerID, h.MeterID, h.Aggregation = "cus", "m", c.agg
			if day, ok := d.Add(h); ok {
				got = append(got, day)
			}
		}
		if day, ok := d.Last(); ok {
			got = append(got, day)
		}
		if _, ok := d.Last(); ok {
			t.Errorf("%s: Last twice", c.agg)
		}
		var q []int64
		for _, day := range got {
			q = append(q, day.Quantity)
		}
		if !slices.Equal(q, c.want) {
			t.Errorf("%s: days %v, want %v (%+v)", c.agg, q, c.want, got)
		}
		if got[0].Day != hour(1, 0) || got[0].Aggregation != c.agg {
			t.Errorf("%s: first day %+v", c.agg, got[0])
		}
	}
	// Another customer or meter begins another row, even on the same day.
	var d remit.UsageDays
	var rows []string
	for _, h := range []remit.UsageHour{{CustomerID: "a", MeterID: "m", HourStart: hour(1, 0), Quantity: 1, Events: 1},
		{CustomerID: "a", MeterID: "n", HourStart: hour(1, 0), Quantity: 2, Events: 1},
		{CustomerID: "b", MeterID: "n", HourStart: hour(1, 0), Quantity: 3, Events: 1}} {
		h.Aggregation = remit.AggSum
		if day, ok := d.Add(h); ok {
			rows = append(rows, day.CustomerID+day.MeterID)
		}
	}
	if day, ok := d.Last(); ok {
		rows = append(rows, day.CustomerID+day.MeterID)
	}
	if !slices.Equal(rows, []string{"am", "an", "bn"}) {
		t.Errorf("rows %v", rows)
	}
	row := remit.UsageDayColumns.Row(nil, &remit.UsageDay{Day: hour(1, 0), CustomerID: "a", MeterID: "m", Aggregation: "sum", Quantity: 3, Events: 2})
	if strings.Join(row, "|") != "2026-03-01|a||m|sum|3|2" {
		t.Errorf("usage day row %v", row)
	}
}
