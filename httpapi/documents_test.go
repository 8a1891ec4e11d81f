package httpapi_test

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden PNGs of the documents under testdata/documents/")

// documentMerchant creates the merchant account the documents are issued by (a display name and a
// business address, through the API) and makes it the env's default sandbox account.
func documentMerchant(t *testing.T, e *testkit.Env) string {
	t.Helper()
	d := e.Must(200, "POST", "/v1/merchant-accounts", map[string]any{
		"environment": "sandbox", "displayName": "Northwind Outfitters", "legalEntityType": "corporation", "country": "US",
		"merchantMode": "direct", "defaultCurrency": "USD", "email": "billing@northwind.example", "businessPhone": "+1 415 555 0100",
		"businessAddress": map[string]any{"line1": "500 Market St", "line2": "Suite 200", "city": "San Francisco", "region": "CA",
			"postalCode": "94105", "country": "US"},
	}).Data()
	id := d["merchantAccountId"].(string)
	e.Tenant.Sandbox = id
	return id
}

// usd formats minor units the way the documents must print them (an oracle written by hand here,
// independent of the library the documents use).
func usd(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	whole := fmt.Sprint(n / 100)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s$%s.%02d", sign, whole, n%100)
}

// getPDF fetches a PDF route and checks that the answer is a PDF.
func getPDF(t *testing.T, e *testkit.Env, path string, opts ...testkit.Opt) []byte {
	t.Helper()
	r := e.Must(200, "GET", path, nil, opts...)
	if ct := r.Header.Get("Content-Type"); ct != "application/pdf" || !bytes.HasPrefix(r.Body, []byte("%PDF-")) {
		t.Fatalf("GET %s: Content-Type %q, body starts %q", path, ct, r.Body[:min(len(r.Body), 16)])
	}
	if r.Header.Get("Request-Id") == "" || !strings.HasPrefix(r.Header.Get("Content-Disposition"), "inline; filename=") {
		t.Fatalf("GET %s: headers %v", path, r.Header)
	}
	return r.Body
}

// needTool returns whether a command-line tool is installed: CI must have it (.ci/run installs
// it), elsewhere the test is skipped without it.
func needTool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatalf("%s is required in CI (Debian package %s; .ci/run installs it)", name, pkg)
		}
		t.Skipf("%s is not installed (apt-get install -y %s)", name, pkg)
	}
}

var spaces = regexp.MustCompile(`[ \t\x{a0}]+`)

// pdfText extracts a PDF's text with pdftotext (poppler-utils) in layout mode, each line's runs of
// white space collapsed to one space, so a table row reads "Seats 10 $12.34 $123.40 ...".
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	return pdfTextMode(t, pdf, "-layout")
}

// pdfTextMode is pdfText in another pdftotext mode: -raw reads text in the order it was drawn (a
// rotated watermark comes out whole).
func pdfTextMode(t *testing.T, pdf []byte, mode string) string {
	t.Helper()
	needTool(t, "pdftotext", "poppler-utils")
	cmd := exec.Command("pdftotext", mode, "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(spaces.ReplaceAllString(l, " ")); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func wantText(t *testing.T, what, text string, want ...string) {
	t.Helper()
	var missing []string
	for _, w := range want {
		if !strings.Contains(text, w) {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%s lacks %q; its text:\n%s", what, missing, text)
	}
}

// golden renders page one of a PDF with pdftoppm and compares it with testdata/documents/NAME.png:
// loosely (same size, similar amount of ink), because dates and IDs differ from run to run and the
// golden is there for review: layout changes show up in the diff of the PNG. -update rewrites it.
func golden(t *testing.T, e *testkit.Env, name string, pdf []byte) {
	t.Helper()
	if e.Store != testkit.SQLite {
		return // once per run is enough
	}
	needTool(t, "pdftoppm", "poppler-utils")
	dir := t.TempDir()
	in := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile", in, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "page.png"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "documents", name+".png")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test ./httpapi -run Documents -update and review the PNG)", path, err)
	}
	gi, wi := decodePNG(t, got), decodePNG(t, want)
	if gi.Bounds() != wi.Bounds() {
		t.Fatalf("page one of %s is %v, the golden %v: the page size changed (review and -update)", name, gi.Bounds(), wi.Bounds())
	}
	if g, w := ink(gi), ink(wi); math.Abs(g-w) > 0.25*w {
		t.Fatalf("page one of %s has %.3f ink, the golden %.3f: the layout changed (review and -update)", name, g, w)
	}
}

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png: %v", err)
	}
	return img
}

// ink is the share of pixels that are not (nearly) white.
func ink(img image.Image) float64 {
	b := img.Bounds()
	var dark int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0xF000 {
				dark++
			}
		}
	}
	return float64(dark) / float64(b.Dx()*b.Dy())
}

// invoiceDocCase builds the acceptance case: the hand-checked invoice of invoices_test.go (plan,
// 10 seats, setup; coupons 10% and 5.00; a 30.00 grant on the seats; a customer in British
// Columbia, GST + PST), issued by a merchant with a business address. It returns the draft's ID
// and its lines' IDs.
func invoiceDocCase(t *testing.T, e *testkit.Env) (string, []string) {
	t.Helper()
	documentMerchant(t, e)
	billingFixture(t, e)
	customerAt(t, e, "bc", "CA", "BC", false)
	e.Must(201, "POST", "/v1/customers/bc/balance/grant", map[string]any{"currency": "USD", "amount": 3000, "targets": map[string]any{"priceIds": []string{"seats"}}})
	inv := e.Must(201, "POST", "/v1/invoices", draftBody("bc", "ten", "five")).Data()
	var lines []string
	for _, l := range inv["lines"].([]any) {
		lines = append(lines, l.(map[string]any)["invoiceLineId"].(string))
	}
	return inv["invoiceId"].(string), lines
}

var (
	merchantText = []string{"Northwind Outfitters", "500 Market St", "Suite 200", "San Francisco, CA 94105", "United States",
		"billing@northwind.example", "+1 415 555 0100"}
	customerText = []string{"BILL TO", "Customer bc", "1 Main St", "City, BC V5K 0A1", "Canada"}
	// The finalized lines, each as its table row and its tax by jurisdiction (docs/invoices-and-tax.md).
	finalLines = []string{
		"Pro plan 1 $50.00 $50.00 $6.26 $0.00 $5.25 $48.99", "GST 5% $2.19 · PST 7% $3.06",
		"Seats 10 $12.34 $123.40 $15.45 $30.00 $9.36 $87.31", "GST 5% $3.90 · PST 7% $5.46",
		"Setup 1 $25.00 $25.00 $3.13 $0.00 $2.62 $24.49", "GST 5% $1.09 · PST 7% $1.53",
	}
	finalTotals = []string{"Subtotal $198.40", "Discount (10% off, 5.00 off) -$24.84", "Prepaid balance applied -$30.00",
		"GST 5% (CA) $7.18", "PST 7% (CA-BC) $10.05", "Total $160.79"}
)

func TestDocumentsInvoiceAndCreditNotePDF(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id, lines := invoiceDocCase(t, e)

		// The draft: DRAFT watermark, no number, no prepaid balance yet (taxed on 4374/10795/2187).
		draftPDF := getPDF(t, e, "/v1/invoices/"+id+"/pdf")
		wantText(t, "the draft's PDF (as drawn)", pdfTextMode(t, draftPDF, "-raw"), "DRAFT")
		draft := pdfText(t, draftPDF)
		wantText(t, "the draft's PDF", draft, "Invoice number Draft", "Status Draft", "Seats 10 $12.34 $123.40 $15.45 $0.00 $12.96 $120.91",
			"GST 5% (CA) $8.68", "PST 7% (CA-BC) $12.15", "Total $194.39", "Amount due $194.39")

		// Finalized: number, dates, every line and total, the merchant and the customer.
		fin := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
		if fin["number"] != "INV-000001" || num(fin["total"]) != 16079 {
			t.Fatalf("finalized: %v %v", fin["number"], fin["total"])
		}
		first := getPDF(t, e, "/v1/invoices/"+id+"/pdf")
		text := pdfText(t, first)
		wantText(t, "the invoice's PDF", text, append(append(append(append([]string{"Invoice", "Invoice number INV-000001", "Date of issue", "Status Open",
			"AMOUNT DUE", "$160.79", "Amount remaining $160.79", "Pay online"}, merchantText...), customerText...), finalLines...), finalTotals...)...)
		if strings.Contains(pdfTextMode(t, first, "-raw"), "DRAFT") {
			t.Fatal("a finalized invoice's PDF carries the DRAFT watermark")
		}

		// Nothing but payments and credits changes a finalized invoice's PDF: not time, not a new
		// grant, not another invoice of the customer.
		e.AdvanceClock(86400)
		e.Must(201, "POST", "/v1/customers/bc/balance/grant", map[string]any{"currency": "USD", "amount": 5000})
		e.Must(201, "POST", "/v1/invoices", draftBody("bc"))
		if again := getPDF(t, e, "/v1/invoices/"+id+"/pdf"); !bytes.Equal(again, first) {
			t.Fatal("the finalized invoice's PDF changed although its figures did not")
		}

		// A partial credit note: 20.00 of the seats offset against the invoice, 10.00 of the whole
		// invoice credited to the customer's balance.
		off, credit := cnLine(lines[1], "offset", 2000), cnLine("", "credit", 1000)
		off["description"], credit["description"] = "Two unused seats", "Goodwill credit"
		cnBody := creditNote(id, off, credit)
		cnBody["creditNoteId"] = "cn-goodwill"
		cn := e.Must(200, "POST", "/v1/credit-notes", cnBody).Data()
		if cn["number"] != "CN-000001" || num(cn["total"]) != 3000 {
			t.Fatalf("credit note: %v", cn)
		}
		cnLines := cn["lines"].([]any)
		offTax, creditTax := num(cnLines[0].(map[string]any)["taxAmount"]), num(cnLines[1].(map[string]any)["taxAmount"])

		after := getPDF(t, e, "/v1/invoices/"+id+"/pdf")
		if bytes.Equal(after, first) {
			t.Fatal("the credit note does not show on the invoice's PDF")
		}
		text = pdfText(t, after)
		wantText(t, "the credited invoice's PDF", text, append(append(finalLines, finalTotals...),
			"Offset by credit notes -$20.00", "Amount remaining $140.79", "Credited to customer balance $10.00", "Total credited $30.00",
			"Credit notes", "CN-000001", "Offset $20.00 · Credited to balance $10.00 "+usd(num(cn["taxTotal"]))+" $30.00")...)
		golden(t, e, "invoice", after)

		// The credit note's own PDF: its number, the invoice, each line and each total, the tax it
		// gives back by jurisdiction (from its reversal tax transaction).
		cnText := pdfText(t, getPDF(t, e, "/v1/credit-notes/cn-goodwill/pdf"))
		byJur := map[string]int64{}
		txn := e.Must(200, "GET", "/v1/tax-transactions/"+cn["taxTransactionId"].(string), nil).Data()
		for _, l := range txn["lines"].([]any) {
			m := l.(map[string]any)
			byJur[m["jurisdiction"].(string)] -= num(m["taxAmount"])
		}
		if byJur["CA"] == 0 || byJur["CA-BC"] == 0 || byJur["CA"]+byJur["CA-BC"] != num(cn["taxTotal"]) {
			t.Fatalf("reversal by jurisdiction %v, tax total %v", byJur, cn["taxTotal"])
		}
		wantText(t, "the credit note's PDF", cnText, append(append([]string{"Credit note", "Credit note number CN-000001", "Invoice INV-000001",
			"Reason Order change", "TOTAL CREDITED", "Credits invoice INV-000001",
			"Two unused seats Offset against invoice " + usd(offTax) + " $20.00", "Applies to: Seats",
			"Goodwill credit Credited to balance " + usd(creditTax) + " $10.00", "Applies to the whole invoice:",
			"Offset against invoice INV-000001 $20.00", "Credited to customer balance $10.00",
			"Includes GST 5% (CA) " + usd(byJur["CA"]), "Includes PST 7% (CA-BC) " + usd(byJur["CA-BC"]),
			"Tax included " + usd(num(cn["taxTotal"])), "Total $30.00"}, merchantText...), customerText...)...)
		golden(t, e, "credit_note", getPDF(t, e, "/v1/credit-notes/cn-goodwill/pdf"))

		// Scoped like every /v1 route: another merchant account's documents are 404, no key is 401.
		other := e.NewTenant("Other", false)
		for _, p := range []string{"/v1/invoices/" + id + "/pdf", "/v1/credit-notes/cn-goodwill/pdf"} {
			if r := e.Must(404, "GET", p, nil, testkit.As(other)); r.ErrorCode() != "not_found" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%s as another tenant: %s", p, r.Body)
			}
			e.Must(401, "GET", p, nil, testkit.APIKey(""))
		}
		e.Must(404, "GET", "/v1/invoices/inv_missing/pdf", nil)
		e.Must(404, "GET", "/v1/credit-notes/cn_missing/pdf", nil)
	})
}

// defaultCard attaches pm_card_visa to the customer's billing account as its default method,
// through a setup session completed in the customer portal.
func defaultCard(t *testing.T, e *testkit.Env, customerID, billingAccountID string) {
	t.Helper()
	s := e.Must(201, "POST", "/v1/customers/"+customerID+"/payment-method-setup", map[string]any{"billingAccountId": billingAccountID, "setAsDefault": true}).Data()
	u, err := url.Parse(s["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	e.Must(200, "PUT", u.RequestURI()+"&paymentMethod=pm_card_visa", nil, testkit.APIKey(""))
}

func TestDocumentsReceiptPDF(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		if r := e.Must(404, "GET", "/v1/payment-receipts/rcpt_any/pdf", nil); r.ErrorCode() != "not_found" {
			t.Fatalf("an unknown receipt's PDF: %s", r.Body)
		}
		id, lines := invoiceDocCase(t, e)
		defaultCard(t, e, "bc", "ba-bc")
		// charge_automatically with a default card: finalization collects at once.
		fin := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
		if fin["status"] != "paid" {
			t.Fatalf("finalize with a default card: %v", fin["status"])
		}
		rec := e.Must(200, "GET", "/v1/payment-receipts?invoiceId="+id, nil).Data()["items"].([]any)
		if len(rec) != 1 {
			t.Fatalf("receipts of the invoice: %v", rec)
		}
		receipt := rec[0].(map[string]any)
		want := append(append([]string{"Receipt", "Receipt number " + receipt["receiptNumber"].(string),
			"Invoice INV-000001", "Date paid", "Visa •••• 4242", "AMOUNT PAID", "Pro plan 1 $50.00 $48.99", "Seats 10 $12.34 $87.31",
			"Setup 1 $25.00 $24.49", "Subtotal $198.40", "Discount -$24.84", "Prepaid balance applied -$30.00", "GST 5% (CA) $7.18",
			"PST 7% (CA-BC) $10.05", "Invoice total $160.79", "Amount paid $160.79"}, merchantText...), customerText...)
		// A partial credit note refunds 20.00 of the seats: the receipt shows the refund. (Where
		// refunds through the processor are not offered, 501, the note credits the balance instead
		// and the receipt shows no refund.)
		refunded := true
		if r := e.Do("POST", "/v1/credit-notes", creditNote(id, cnLine(lines[1], "refund", 2000))); r.Status == 501 {
			refunded = false
			t.Logf("refunds are not offered (%s); crediting the balance instead", r.ErrorCode())
			e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine(lines[1], "credit", 2000)))
		} else if r.Status != 200 {
			t.Fatalf("refund credit note: %d %s", r.Status, r.Body)
		}
		text := pdfText(t, getPDF(t, e, "/v1/payment-receipts/"+receipt["receiptId"].(string)+"/pdf"))
		if refunded {
			want = append(want, "Refunded -$20.00", "Net paid $140.79")
		} else if strings.Contains(text, "Refunded") {
			t.Fatalf("a receipt without refunds shows one:\n%s", text)
		}
		wantText(t, "the receipt's PDF", text, want...)
		golden(t, e, "receipt", getPDF(t, e, "/v1/payment-receipts/"+receipt["receiptId"].(string)+"/pdf"))
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/payment-receipts/"+receipt["receiptId"].(string)+"/pdf", nil, testkit.As(other))
	})
}
