// Command quickstart is Remit's walk-through in Go, through the generated client (package client):
// a price, a customer, a billing account with a test card, a quote accepted into an invoice that
// is finalized and paid at once, its receipt, a credit note refunding part of it, and the events
// that followed. It needs nothing but Go (examples/quickstart.sh does the same with curl and jq).
//
//	go run ./cmd/remit serve                                   # terminal 1
//	go run ./cmd/remit bootstrap --organization Acme --json > acme.json
//	go run ./examples/quickstart -bootstrap acme.json          # terminal 2
//
// Any unexpected answer stops it with the API's error (code, message, request ID) and exit 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/remit-billing/remit/client"
)

func main() {
	remitURL := flag.String("remit", envOr("REMIT_URL", "http://127.0.0.1:8080"), "Remit's base URL (REMIT_URL)")
	bootstrap := flag.String("bootstrap", "", "file with the output of `remit bootstrap --json`")
	key := flag.String("key", os.Getenv("REMIT_API_KEY"), "API key (REMIT_API_KEY), instead of -bootstrap")
	merchant := flag.String("merchant", os.Getenv("REMIT_MERCHANT_ACCOUNT_ID"), "sandbox merchant account (REMIT_MERCHANT_ACCOUNT_ID), instead of -bootstrap")
	flag.Parse()
	if *bootstrap != "" {
		b, err := client.ReadBootstrap(*bootstrap)
		if err != nil {
			fail(fmt.Errorf("-bootstrap %w", err))
		}
		*key, *merchant = b.APIKey, b.MerchantAccounts["sandbox"]
	}
	if *key == "" || *merchant == "" {
		fail(errors.New("give -bootstrap acme.json (from `go run ./cmd/remit bootstrap --organization Acme --json > acme.json`), or -key and -merchant"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *remitURL, *key, *merchant); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, remitURL, key, merchant string) error {
	// Every call authenticates with the key and acts in the sandbox merchant account; every
	// write gets an Idempotency-Key of its own; errors come back as *client.Error.
	c, err := client.New(remitURL, client.WithAPIKey(key), client.WithScope(client.Sandbox, merchant))
	if err != nil {
		return err
	}
	run := time.Now().UTC().Format("20060102150405.000")
	priceID, cusID, baID, err := setUp(ctx, c, run)
	if err != nil {
		return err
	}
	inv, err := invoiceFromQuote(ctx, c, priceID, cusID, baID)
	if err != nil {
		return err
	}
	if err := receiptAndCreditNote(ctx, c, inv); err != nil {
		return err
	}
	if err := events(ctx, c); err != nil {
		return err
	}
	step("Done: invoice " + *inv.InvoiceId + " paid and partly refunded.")
	return nil
}

// setUp creates a price, a customer, a billing account that charges automatically and its card
// (steps 1 to 4).
func setUp(ctx context.Context, c *client.ClientWithResponses, run string) (priceID, cusID, baID string, err error) {
	step("1. A price: a one-time onboarding package, USD 250.00")
	price, err := c.CreatePriceWithResponse(ctx, nil, client.PriceCreateRequest{
		PriceId: "price_onboarding_" + run, ProductId: "prod_onboarding", Name: "Onboarding package",
		PriceType: client.FixedOneTime, Currency: "USD", UnitAmount: client.Ptr[int64](25000),
	})
	if err != nil {
		return "", "", "", err
	}
	priceID = *price.JSON200.Data.PriceId
	say("price %s: %d USD minor units", priceID, *price.JSON200.Data.UnitAmount)

	step("2. A customer in New York")
	cus, err := c.CreateCustomerWithResponse(ctx, nil, client.CustomerCreateRequest{
		Name: "Acme Corp", Email: client.Ptr("billing@acme.example"),
		Address: &client.CustomerAddress{Line1: "500 5th Ave", City: "New York", Region: client.Ptr("NY"), PostalCode: "10110", Country: "US"},
	})
	if err != nil {
		return "", "", "", err
	}
	cusID = *cus.JSON201.Data.CustomerId
	say("customer %s", cusID)

	step("3. A billing account that charges automatically")
	method := client.ChargeAutomatically
	ba, err := c.CreateBillingAccountWithResponse(ctx, nil, client.BillingAccountCreateRequest{CustomerId: cusID, Currency: "USD", CollectionMethod: &method})
	if err != nil {
		return "", "", "", err
	}
	baID = *ba.JSON201.Data.BillingAccountId
	say("billing account %s", baID)

	step("4. A payment method: a setup session completed with the test card pm_card_visa")
	card := client.Card
	ss, err := c.CreatePaymentMethodSetupSessionWithResponse(ctx, cusID, nil, client.PaymentMethodSetupRequest{BillingAccountId: &baID, MethodType: &card, SetAsDefault: client.Ptr(true)})
	if err != nil {
		return "", "", "", err
	}
	// The hosted page calls PUT {url}&paymentMethod=...: its token authorizes it, not the API key.
	var done struct {
		Data struct {
			Status        string `json:"status"`
			PaymentMethod struct{ Brand, Last4 string }
		} `json:"data"`
	}
	if err := put(ctx, *ss.JSON201.Data.Url+"&paymentMethod=pm_card_visa", &done); err != nil {
		return "", "", "", err
	}
	say("session %s %s: %s ending %s, the billing account's default", *ss.JSON201.Data.SessionId, done.Data.Status, done.Data.PaymentMethod.Brand, done.Data.PaymentMethod.Last4)

	return priceID, cusID, baID, nil
}

// invoiceFromQuote quotes two packages, accepts the quote and finalizes its invoice (steps 5, 6).
func invoiceFromQuote(ctx context.Context, c *client.ClientWithResponses, priceID, cusID, baID string) (*client.Invoice, error) {
	step("5. A quote for two packages, accepted: a draft invoice")
	q, err := c.CreateQuoteWithResponse(ctx, nil, client.QuoteCreateRequest{
		OrderType: client.OneOff, CustomerId: cusID, BillingAccountId: baID, Currency: "USD",
		Lines: []client.QuoteLineInput{{PriceId: priceID, Quantity: client.Ptr[int64](2)}},
	})
	if err != nil {
		return nil, err
	}
	acc, err := c.AcceptQuoteWithResponse(ctx, *q.JSON201.Data.QuoteId, nil, client.EmptyRequest{})
	if err != nil {
		return nil, err
	}
	invID := *acc.JSON200.Data.InvoiceId
	say("quote %s accepted: invoice %s", *q.JSON201.Data.QuoteId, invID)

	step("6. Refresh, then finalize: the card is charged at once")
	ref, err := c.RefreshInvoiceWithResponse(ctx, invID, nil, client.EmptyRequest{})
	if err != nil {
		return nil, err
	}
	r := ref.JSON200.Data
	say("draft: subtotal %d + tax %d = %d", *r.Subtotal, *r.TaxTotal, *r.Total)
	fin, err := c.FinalizeInvoiceWithResponse(ctx, invID, nil, client.InvoiceFinalizeRequest{FinalizedByRef: client.Ptr("quickstart-go")})
	if err != nil {
		return nil, err
	}
	inv := fin.JSON200.Data
	say("invoice %s %s: total %d, paid %d", *inv.Number, *inv.Status, *inv.Total, *inv.AmountPaid)
	if *inv.Status != "paid" {
		return nil, fmt.Errorf("invoice %s is %s after finalize, want paid", invID, *inv.Status)
	}

	return &inv, nil
}

// receiptAndCreditNote reads the invoice's receipt and refunds one package (steps 7, 8).
func receiptAndCreditNote(ctx context.Context, c *client.ClientWithResponses, inv *client.Invoice) error {
	invID := *inv.InvoiceId
	step("7. The receipt")
	rc, err := c.ListPaymentReceiptsWithResponse(ctx, &client.ListPaymentReceiptsParams{InvoiceId: &invID})
	if err != nil {
		return err
	}
	items := *rc.JSON200.Data.Items
	if len(items) != 1 {
		return fmt.Errorf("%d receipts for invoice %s, want 1", len(items), invID)
	}
	r := items[0]
	say("receipt %s: %d %s, %s", *r.ReceiptNumber, *r.Amount, *r.Currency, *r.Status)

	step("8. A credit note refunding one package and its tax")
	line := (*inv.Lines)[0]
	refund := client.CreditNoteCreateLineBucketRefund
	cn, err := c.CreateCreditNoteWithResponse(ctx, nil, client.CreditNoteCreateRequest{
		InvoiceId: invID, Reason: client.OrderChange,
		Lines: []client.CreditNoteCreateLine{{InvoiceLineId: line.InvoiceLineId, Bucket: &refund, Description: "One package fewer", Amount: 26000}},
	})
	if err != nil {
		return err
	}
	say("credit note %s: refunded %d", *cn.JSON200.Data.Number, *cn.JSON200.Data.RefundAmount)

	return nil
}

// events lists the events that followed (step 9).
func events(ctx context.Context, c *client.ClientWithResponses) error {
	step("9. The events that followed")
	evs, err := c.ListEventsWithResponse(ctx, &client.ListEventsParams{Limit: client.Ptr[client.Limit](100)})
	if err != nil {
		return err
	}
	var types []string
	for _, ev := range slices.Backward(*evs.JSON200.Data.Items) {
		types = append(types, *ev.Type)
	}
	for _, t := range types {
		say("%s", t)
	}
	for _, want := range []string{"invoice.paid", "payment_receipt.created", "credit_note.created", "refund.created"} {
		if !slices.Contains(types, want) {
			return fmt.Errorf("no %s event", want)
		}
	}
	return nil
}

// put calls a hosted-page URL (the customer portal) and decodes its answer.
func put(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %s: %s", url, res.Status, body)
	}
	return json.Unmarshal(body, out)
}

func step(s string)               { fmt.Printf("\n== %s\n", s) }
func say(format string, a ...any) { fmt.Printf("   "+format+"\n", a...) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "FAILED:", err)
	os.Exit(1)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
