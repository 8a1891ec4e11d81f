package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// openBCInvoice finalizes the hand-checked invoice without prepaid balance. Its lines bill
// (amount − discount + tax): plan 5000−626+525 = 4899, seats 12340−1545+1296 = 12091,
// setup 2500−313+262 = 2449; total 19439, tax 2083 (GST 219/540/109, PST 306/756/153).
func openBCInvoice(t *testing.T, e *testkit.Env) (string, []string) {
	t.Helper()
	billingFixture(t, e)
	customerAt(t, e, "bc", "CA", "BC", false)
	id := e.Must(201, "POST", "/v1/invoices", draftBody("bc", "ten", "five")).Data()["invoiceId"].(string)
	inv := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
	if num(inv["total"]) != 19439 || num(inv["taxTotal"]) != 2083 {
		t.Fatalf("fixture invoice: %v", figures(inv, "total", "taxTotal"))
	}
	var lines []string
	for _, l := range inv["lines"].([]any) {
		lines = append(lines, l.(map[string]any)["invoiceLineId"].(string))
	}
	return id, lines
}

func creditNote(invoiceID string, lines ...map[string]any) map[string]any {
	ls := make([]any, len(lines))
	for i, l := range lines {
		ls[i] = l
	}
	return map[string]any{"invoiceId": invoiceID, "reason": "order_change", "lines": ls}
}

func cnLine(invoiceLineID, bucket string, amount int64) map[string]any {
	l := map[string]any{"description": "credit", "amount": amount}
	if invoiceLineID != "" {
		l["invoiceLineId"] = invoiceLineID
	}
	if bucket != "" {
		l["bucket"] = bucket
	}
	return l
}

func TestCreditNoteValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, lines := openBCInvoice(t, e)
		wantFields(t, e.Do("POST", "/v1/credit-notes", map[string]any{"invoiceId": id, "reason": "because", "lines": []any{}, "creditAmount": -1}),
			"body:reason:invalid_enum", "body:lines:invalid_count", "body:creditAmount:out_of_range")
		wantFields(t, e.Do("POST", "/v1/credit-notes", creditNote(id, map[string]any{"description": "x", "amount": 0, "bucket": "cash"})),
			"body:lines[0].amount:out_of_range", "body:lines[0].bucket:invalid_enum")
		b := creditNote(id, cnLine(lines[0], "offset", 100), cnLine("", "credit", 50))
		b["offsetAmount"], b["creditAmount"] = 99, 50
		wantFields(t, e.Do("POST", "/v1/credit-notes", b), "body:offsetAmount:bucket_total_mismatch")
		e.Must(404, "POST", "/v1/credit-notes", creditNote("inv_missing", cnLine("", "offset", 1)))
		r := e.Must(404, "POST", "/v1/credit-notes", creditNote(id, cnLine("il_other", "offset", 1)))
		if r.ErrorDetails()["field"] != "lines[0].invoiceLineId" {
			t.Fatalf("field: %s", r.Body)
		}
		// A draft cannot be credited.
		draft := e.Must(201, "POST", "/v1/invoices", draftBody("bc")).Data()["invoiceId"].(string)
		r = e.Must(409, "POST", "/v1/credit-notes", creditNote(draft, cnLine("", "offset", 1)))
		if r.ErrorDetails()["currentState"] != "draft" {
			t.Fatalf("draft: %s", r.Body)
		}
		// Refunds never exceed what was paid (nothing, here).
		r = e.Must(409, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 1)))
		if r.ErrorDetails()["reason"] != "refund_exceeds_paid" || num(r.ErrorDetails()["remaining"]) != 0 {
			t.Fatalf("refund limit: %s", r.Body)
		}
		// A duplicate caller-chosen ID.
		b = creditNote(id, cnLine("", "offset", 10))
		b["creditNoteId"] = "cn-1"
		e.Must(200, "POST", "/v1/credit-notes", b)
		e.Must(409, "POST", "/v1/credit-notes", b)
	})
}

func TestCreditNoteBucketsAndTax(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, lines := openBCInvoice(t, e)
		// Half of the plan line (4899 → 2449) as an offset plus 2450 as balance credit, on one note:
		// GST round(219 × 2449/4899) = 109, PST round(306 × 2449/4899) = 153 → 262; then the
		// cumulative full credit reverses the rest exactly: 110 + 153 = 263.
		b := creditNote(id, cnLine(lines[0], "offset", 2449), cnLine(lines[0], "credit", 2450))
		cn := e.Must(200, "POST", "/v1/credit-notes", b).Data()
		if cn["number"] != "CN-000001" || cn["status"] != "issued" || num(cn["total"]) != 4899 || num(cn["taxTotal"]) != 525 ||
			num(cn["offsetAmount"]) != 2449 || num(cn["creditAmount"]) != 2450 {
			t.Fatalf("credit note: %v", cn)
		}
		cl := cn["lines"].([]any)
		if num(cl[0].(map[string]any)["taxAmount"]) != 262 || num(cl[1].(map[string]any)["taxAmount"]) != 263 {
			t.Fatalf("line tax shares: %v", cl)
		}
		inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if got := figures(inv, "amountRemaining", "creditedTotal", "offsetTotal"); got != "amountRemaining=16990 creditedTotal=4899 offsetTotal=2449 " {
			t.Fatalf("invoice after credit: %s", got)
		}
		bal, _ := newCatalogKit(t, e).balance("bc")
		if bal["USD"]["available"] != 2450 {
			t.Fatalf("credit bucket balance: %v", bal)
		}
		// The plan line is fully credited: another cent is refused with what is left (0).
		r := e.Must(409, "POST", "/v1/credit-notes", creditNote(id, cnLine(lines[0], "offset", 1)))
		if r.ErrorDetails()["reason"] != "line_amount_exceeds_remaining" || num(r.ErrorDetails()["remaining"]) != 0 {
			t.Fatalf("line limit: %s", r.Body)
		}
		// Credit the rest in two invoice-level offsets (spread over the remaining lines).
		e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "offset", 10000)))
		rest := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		left := num(rest["total"]) - num(rest["creditedTotal"]) // 19439 − 4899 − 10000 = 4540
		if left != 4540 {
			t.Fatalf("left %d", left)
		}
		e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "offset", left)))
		inv = e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		// The credit bucket gave 24.50 of balance but did not lower what is due: 24.50 remains.
		if inv["status"] != "open" || num(inv["amountRemaining"]) != 2450 || num(inv["creditedTotal"]) != 19439 {
			t.Fatalf("fully credited invoice: %v %s", inv["status"], figures(inv, "amountRemaining", "creditedTotal"))
		}
		r = e.Must(409, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "credit", 1)))
		if r.ErrorDetails()["reason"] != "total_exceeds_invoice" {
			t.Fatalf("nothing left: %s", r.Body)
		}
		// The reversals add up to exactly the invoice's tax, per jurisdiction.
		var reversed int64
		perJurisdiction := map[string]int64{}
		for _, it := range e.Must(200, "GET", "/v1/tax-transactions?status=committed&limit=100", nil).Data()["items"].([]any) {
			txn := it.(map[string]any)
			if txn["type"] != "reversal" {
				continue
			}
			reversed += num(txn["totalTax"])
			for _, l := range txn["lines"].([]any) {
				lm := l.(map[string]any)
				perJurisdiction[lm["jurisdiction"].(string)] += num(lm["taxAmount"])
			}
		}
		if reversed != -2083 || perJurisdiction["CA"] != -(219+540+109) || perJurisdiction["CA-BC"] != -(306+756+153) {
			t.Fatalf("reversed %d %v, want -2083 (GST -868, PST -1215)", reversed, perJurisdiction)
		}
		for _, l := range inv["lines"].([]any) {
			lm := l.(map[string]any)
			if num(lm["creditedTaxAmount"]) != num(lm["taxAmount"]) {
				t.Fatalf("line %v: credited tax %d of %d", lm["invoiceLineId"], num(lm["creditedTaxAmount"]), num(lm["taxAmount"]))
			}
		}
		got := e.Must(200, "GET", "/v1/credit-notes/"+cn["creditNoteId"].(string), nil).Data()
		if got["number"] != "CN-000001" {
			t.Fatalf("get: %v", got)
		}
	})
}

// Ten concurrent credit notes of 3,000 against an invoice of 19,439: the accepted ones never
// exceed it (six fit), and the numbers stay gap-free.
func TestConcurrentCreditNotesNeverExceedInvoice(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, _ := openBCInvoice(t, e)
		var wg sync.WaitGroup
		statuses := make([]int, 10)
		numbers := make([]string, 10)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do("POST", "/v1/credit-notes", creditNote(id, cnLine("", "credit", 3000)))
				statuses[i] = r.Status
				if r.Status == 200 {
					numbers[i], _ = r.Data()["number"].(string)
				}
			}()
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			if s == 200 {
				ok++
			} else if s != 409 {
				t.Fatalf("statuses %v", statuses)
			}
		}
		inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if ok != 6 || num(inv["creditedTotal"]) != 18000 {
			t.Fatalf("%d accepted, credited %d; want 6 and 18000 (%v)", ok, num(inv["creditedTotal"]), statuses)
		}
		got := map[string]bool{}
		for _, n := range numbers {
			got[n] = n != ""
		}
		for i := 1; i <= 6; i++ {
			if !got[fmt.Sprintf("CN-%06d", i)] {
				t.Fatalf("numbers %v are not CN-000001..6", numbers)
			}
		}
	})
}

// The refund bucket returns money through the processor against the invoice's payments: the
// receipt shows amountRefunded and its status, the day's settlement a refund; refunds never exceed
// what was paid; mixed buckets on a paid invoice.
func TestCreditNoteRefunds(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "charge_automatically")
		k.attach("c1", "pm_card_visa")
		inv := k.invoice("c1", 10000)
		if inv["status"] != "paid" || num(inv["amountPaid"]) != 10000 {
			t.Fatalf("collected at finalize: %v", inv)
		}
		id := inv["invoiceId"].(string)
		line := inv["lines"].([]any)[0].(map[string]any)["invoiceLineId"].(string)

		// 30.00 refunded, 20.00 credited to the balance, on one note.
		cn := e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine(line, "refund", 3000), cnLine(line, "credit", 2000))).Data()
		if num(cn["refundAmount"]) != 3000 || num(cn["creditAmount"]) != 2000 || len(cn["refundIds"].([]any)) != 1 {
			t.Fatalf("credit note: %v", cn)
		}
		rc := k.receipts("invoiceId=" + id)
		if len(rc) != 1 || num(rc[0]["amountRefunded"]) != 3000 || rc[0]["status"] != "partially_refunded" {
			t.Fatalf("receipt after a partial refund: %v", rc)
		}
		stl := e.Must(200, "GET", "/v1/merchant-accounts/"+e.Tenant.Sandbox+"/settlements", nil).Data()["items"].([]any)
		if len(stl) != 1 || num(stl[0].(map[string]any)["refundAmount"]) != 3000 || num(stl[0].(map[string]any)["refundCount"]) != 1 {
			t.Fatalf("settlement after the refund: %v", stl)
		}
		// 100.00 paid, 30.00 refunded: a refund of 70.01 is refused, 70.00 is accepted.
		r := e.Must(409, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 7001)))
		if r.ErrorDetails()["reason"] != "refund_exceeds_paid" && r.ErrorDetails()["reason"] != "total_exceeds_invoice" {
			t.Fatalf("over-refund: %s", r.Body)
		}
		// Only 50.00 is left to credit in all (100 − 30 − 20): refund it all.
		e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 5000)))
		rc = k.receipts("invoiceId=" + id)
		if num(rc[0]["amountRefunded"]) != 8000 || rc[0]["status"] != "partially_refunded" {
			t.Fatalf("receipt: %v", rc[0])
		}
		got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if got["status"] != "paid" || num(got["refundedTotal"]) != 8000 || num(got["creditedTotal"]) != 10000 {
			t.Fatalf("invoice: %v", figures(got, "refundedTotal", "creditedTotal"))
		}
		// Each refund was committed pending, sent to the processor after, and recorded succeeded;
		// the sandbox processor holds one refund per Remit refund.
		first := cn["refundIds"].([]any)[0].(string)
		types := newCatalogKit(t, e).eventTypes(e.Tenant.Sandbox, first)
		if !slices.Equal(types, []string{"refund.created", "refund.succeeded"}) {
			t.Fatalf("refund events %v", types)
		}
		refunds, err := e.Remit.DB.SandboxCharges().ListRefunds(context.Background())
		if err != nil || len(refunds) != 2 || refunds[0].IdempotencyRef != first || refunds[0].Amount != 3000 || refunds[1].Amount != 5000 {
			t.Fatalf("sandbox refunds %+v, %v", refunds, err)
		}
	})
}
