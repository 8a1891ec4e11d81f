package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/tax"
	"github.com/remit-billing/remit/wire"
)

// The seed: one organization with one approved sandbox merchant account (remit bootstrap), three
// prices, then — through the store directly, in multi-row INSERTs inside large transactions —
// customers with an address and a billing account (every other one charged automatically with a
// default pm_card_visa, the rest send_invoice), invoices with two lines and their tax transaction
// (30% draft, 10% open with a hosted payment link, 60% paid with payment intent, payment and
// receipt: by card for charged customers, with the sandbox processor's record of the charge and
// the day's settlement — open today, closed, or paid out — out of band for the others), and a
// prepaid balance ledger per customer (grants; applications of whole grants to the customer's
// paid invoices, reflected in those invoices' figures; expiries of older grants; a few grants
// still available). Figures come from the engine's own arithmetic (remit.ComputeInvoiceFigures), numbers
// are gap-free and the counters continue after them, so the server's writes (finalization,
// grants, settlement jobs) carry on from the seeded state. Beside the rows it writes the outbox
// events of its money movements, chained and dispatched (seed_events.go), so `remit ledger
// backfill` posts their journal; the state then passes every check of `remit verify`,
// general_ledger included (seed_test.go; docs/ledger.md "The backfill on the harness's full seed").

// Sizes are the seed's sizes.
type Sizes struct {
	Customers int `json:"customers"`
	Invoices  int `json:"invoices"`
	Entries   int `json:"ledgerEntries"`
}

// Fixture is what the scenarios need from the seed.
type Fixture struct {
	APIKey     string
	MerchantID string
	Customers  []string
	Invoices   []string // every invoice
	Drafts     []string // the draft invoices, for finalization
	// ChargeDrafts are the drafts of charge_automatically customers with a default card: their
	// finalization charges it.
	ChargeDrafts []string
	Counts       map[string]int
}

const (
	priceBasic = "price_load_basic" // fixed_recurring, 20.00 a month
	priceSetup = "price_load_setup" // fixed_one_time, 50.00
	priceAPI   = "price_load_api"   // usage_metered on meter api_calls
	meterID    = "api_calls"
	grantUnit  = 1000 // every seeded grant is 10.00
)

// bulk buffers rows of one table and writes them as multi-row INSERTs.
type bulk struct {
	s       *seeder
	table   string
	cols    []string
	perStmt int
	args    []any
	rows    int
}

type seeder struct {
	ctx     context.Context
	db      *sql.DB
	tx      *sql.Tx
	pending int // rows written in the open transaction
	total   int
	counts  map[string]int
	sqlite  bool
}

// seedOwn runs a bulk seed of its own (the billing day's, the price migration's) on the store at
// dbURL, opened for it: fill adds the rows, then the store is settled and closed.
func seedOwn(ctx context.Context, dbURL string, fill func(s *seeder) error) error {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	s := &seeder{ctx: ctx, db: db.SQL(), counts: map[string]int{}, sqlite: db.Dialect() == store.SQLite}
	if err := fill(s); err != nil {
		return err
	}
	return s.settle()
}

// basicPlanItems are the items of a subscription of the seed's basic plan, as JSON.
func basicPlanItems() string {
	return jsonText([]remit.SubscriptionItem{{PriceID: priceBasic, PriceType: remit.PriceFixedRecurring, UnitAmount: 2000, Description: "Basic plan"}})
}

// flushEvery writes the tables' buffered rows every 500 rows of a seed of n and after its last
// (i: the row just added).
func (s *seeder) flushEvery(tables []*bulk, i, n int) error {
	if i%500 == 499 || i == n-1 {
		_, err := s.flushAll(tables, 100000, i == n-1)
		return err
	}
	return nil
}

// settle leaves a seeded store as a measurement wants it: PostgreSQL's statistics taken of the new
// rows (ANALYZE), SQLite's write-ahead log folded into the database file.
func (s *seeder) settle() error {
	stmt := "ANALYZE"
	if s.sqlite {
		stmt = "PRAGMA wal_checkpoint(TRUNCATE)"
	}
	_, err := s.db.ExecContext(s.ctx, stmt)
	return err
}

// subscriptionColumns are the columns the seeds of subscriptions write.
var subscriptionColumns = []string{"merchant_account_id", "id", "status", "customer_id", "billing_account_id", "currency", "items",
	"billing_interval", "billing_interval_count", "cycle_anchor", "cycle_periods", "current_period_start", "current_period_end",
	"coupon_ids", "metadata", "created_at", "updated_at", "pending_prorations"}

func (s *seeder) table(name string, cols ...string) *bulk {
	per := 30000 / len(cols) // well under both dialects' parameter limits
	if per > 500 {
		per = 500
	}
	return &bulk{s: s, table: name, cols: cols, perStmt: per}
}

func (b *bulk) add(vals ...any) error {
	if len(vals) != len(b.cols) {
		return fmt.Errorf("%s: %d values for %d columns", b.table, len(vals), len(b.cols))
	}
	b.args = append(b.args, vals...)
	b.rows++
	return nil
}

// flush writes the buffered rows, perStmt rows to a statement.
func (b *bulk) flush() error {
	cols := len(b.cols)
	for done := 0; done < b.rows; {
		n := min(b.perStmt, b.rows-done)
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + b.table + " (" + strings.Join(b.cols, ", ") + ") VALUES ")
		p := 1
		for r := 0; r < n; r++ {
			if r > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('(')
			for c := 0; c < cols; c++ {
				if c > 0 {
					sb.WriteString(", ")
				}
				if b.s.sqlite {
					sb.WriteByte('?') // SQLite resolves $N names by a linear search per parameter
				} else {
					sb.WriteString("$" + strconv.Itoa(p))
				}
				p++
			}
			sb.WriteByte(')')
		}
		if err := b.s.begin(); err != nil {
			return err
		}
		if _, err := b.s.tx.ExecContext(b.s.ctx, sb.String(), b.args[done*cols:(done+n)*cols]...); err != nil {
			return fmt.Errorf("insert into %s: %w", b.table, err)
		}
		done += n
	}
	b.s.counts[b.table] += b.rows
	b.s.pending += b.rows
	b.s.total += b.rows
	b.args, b.rows = b.args[:0], 0
	return nil
}

func (s *seeder) begin() error {
	if s.tx != nil {
		return nil
	}
	tx, err := s.db.BeginTx(s.ctx, nil)
	s.tx = tx
	return err
}

func (s *seeder) commit() error {
	if s.tx == nil {
		return nil
	}
	err := s.tx.Commit()
	s.tx, s.pending = nil, 0
	return err
}

// flushAll writes the tables' buffered rows, in order (parents before the rows that reference
// them), and commits once the open transaction holds commitAt rows or more, or when last.
func (s *seeder) flushAll(tables []*bulk, commitAt int, last bool) (committed bool, err error) {
	for _, t := range tables {
		if err := t.flush(); err != nil {
			return false, err
		}
	}
	if s.pending < commitAt && !last {
		return false, nil
	}
	return true, s.commit()
}

// spread returns n counts that add up to total, as even as possible.
func spread(total, n, i int) int {
	q := total / n
	if i < total%n {
		q++
	}
	return q
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// seed creates the store's data and returns the fixture. log receives progress lines.
func seed(ctx context.Context, dbURL, publicURL string, sz Sizes, log io.Writer) (*Fixture, error) {
	cfg := wire.Defaults()
	cfg.DatabaseURL, cfg.PublicURL = dbURL, publicURL
	r, err := wire.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	boot, err := r.App.Merchants.Bootstrap(ctx, "Remit load test", false)
	if err != nil {
		return nil, err
	}
	mid := boot.MerchantAccounts["sandbox"]
	m, err := r.DB.Read(ctx).GetMerchantAccount(ctx, mid, store.Unlocked)
	if err != nil {
		return nil, err
	}
	i64 := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	for _, p := range []remit.Price{
		{PriceID: priceBasic, ProductID: "prod_load", Name: "Basic plan", PriceType: remit.PriceFixedRecurring, Currency: "USD",
			BillingInterval: str("month"), UnitAmount: i64(2000)},
		{PriceID: priceSetup, ProductID: "prod_load", Name: "Setup", PriceType: remit.PriceFixedOneTime, Currency: "USD", UnitAmount: i64(5000)},
		{PriceID: priceAPI, ProductID: "prod_load", Name: "API calls", PriceType: remit.PriceUsageMetered, Currency: "USD",
			BillingInterval: str("month"), UnitAmount: i64(1), MeterID: str(meterID)},
	} {
		if _, err := r.App.Catalog.CreatePrice(ctx, m, p); err != nil {
			return nil, fmt.Errorf("price %s: %w", p.PriceID, err)
		}
	}

	s := &seeder{ctx: ctx, db: r.DB.SQL(), counts: map[string]int{}, sqlite: r.DB.Dialect() == store.SQLite}
	fx := &Fixture{APIKey: boot.APIKey, MerchantID: mid, Counts: s.counts}
	now := time.Now().UTC().Truncate(time.Microsecond)
	start := now.Add(-360 * 24 * time.Hour)
	us := remit.Micros
	region := "CA"
	addr := remit.Address{Line1: "1 Market St", City: "San Francisco", Region: &region, PostalCode: "94105", Country: "US"}
	addrJSON := jsonText(addr)
	rates := tax.Default().Lookup("US", "CA")
	entropy := ulid.Monotonic(rand.Reader, 0)
	var seqClock time.Time
	nextSeq := func(at time.Time) string { // grows with every entry, like the engine's
		if at.Before(seqClock) {
			at = seqClock
		}
		seqClock = at
		return ulid.MustNew(ulid.Timestamp(at), entropy).String()
	}

	customers := s.table("customers", "merchant_account_id", "id", "external_id", "name", "email", "address", "tax_exempt", "metadata", "created_at")
	accounts := s.table("billing_accounts", "merchant_account_id", "id", "customer_id", "currency", "collection_method", "tax_address",
		"default_payment_method_id", "metadata", "created_at", "updated_at")
	methods := s.table("payment_methods", "merchant_account_id", "id", "customer_id", "billing_account_id", "type", "brand", "last4",
		"test_card", "created_at")
	invoices := s.table("invoices", "merchant_account_id", "id", "number", "customer_id", "billing_account_id", "currency", "status",
		"collection_method", "coupon_ids", "subtotal", "discount_total", "prepaid_applied", "tax_total", "total", "amount_due",
		"amount_paid", "amount_remaining", "tax_transaction_id", "payment_url", "finalized_at", "paid_at", "metadata", "created_at", "updated_at",
		"latest_payment_id", "attempt_count")
	lines := s.table("invoice_lines", "merchant_account_id", "invoice_id", "id", "position", "line_type", "price_id", "price_type",
		"description", "quantity", "unit_amount", "amount", "prepaid_applied", "tax_amount", "taxes")
	taxes := s.table("tax_transactions", "merchant_account_id", "id", "status", "type", "source_document_id", "customer_id", "currency",
		"lines", "total_tax", "committed_at", "created_at", "updated_at")
	tokens := s.table("hosted_tokens", "token_hash", "kind", "resource_id", "merchant_account_id", "expires_at", "created_at")
	intents := s.table("payment_intents", "merchant_account_id", "id", "invoice_id", "customer_id", "amount", "currency", "status",
		"created_at", "updated_at")
	payments := s.table("payments", "merchant_account_id", "id", "payment_intent_id", "invoice_id", "customer_id", "billing_account_id",
		"attempt", "amount", "currency", "status", "method", "payment_method_id", "brand", "last4", "source", "fee_amount",
		"processor_reference", "created_at", "processor", "idempotency_ref", "payment_method_token", "settlement_id", "updated_at")
	charges := s.table("sandbox_charges", "idempotency_ref", "reference", "amount", "currency", "payment_method", "status", "fee",
		"created_at", "updated_at")
	receipts := s.table("payment_receipts", "merchant_account_id", "id", "number", "invoice_id", "invoice_number", "customer_id",
		"customer_external_id", "billing_account_id", "payment_id", "payment_intent_id", "amount", "currency", "status", "method",
		"brand", "last4", "created_at", "updated_at")
	entries := s.table("balance_entries", "merchant_account_id", "customer_id", "id", "seq", "type", "currency", "amount", "remaining",
		"source_entry_id", "invoice_id", "description", "effective_at", "expires_at", "created_at")
	chain, err := newSeedChain(s, r.DB, m)
	if err != nil {
		return nil, err
	}
	tables := []*bulk{customers, accounts, methods, invoices, lines, taxes, tokens, intents, payments, receipts, entries, charges, chain.events}
	days := &settlementDays{byDay: map[int64]*seedSettlement{}}

	invNumber, rcptNumber := 0, 0
	began := time.Now()
	for c := 0; c < sz.Customers; c++ {
		// Each customer's history runs from its creation to now, in order.
		span := now.Sub(start) - time.Duration(c)*time.Second
		at := start.Add(time.Duration(c) * time.Second)
		nInv, nEnt := spread(sz.Invoices, sz.Customers, c), spread(sz.Entries, sz.Customers, c)
		events := nInv + nEnt + 1
		step := (span / time.Duration(events+1)).Truncate(time.Microsecond) // times as the store keeps them
		tick := func() time.Time { at = at.Add(step); return at }

		cid, ba := remit.NewID("cus"), remit.NewID("ba")
		ext := fmt.Sprintf("ext-%07d", c)
		charge := c%2 == 0
		created := tick()
		if err := customers.add(mid, cid, ext, fmt.Sprintf("Customer %d", c), fmt.Sprintf("customer%d@example.com", c), addrJSON,
			false, "{}", us(created)); err != nil {
			return nil, err
		}
		fx.Customers = append(fx.Customers, cid)
		method, collection, pm := any(nil), remit.SendInvoice, ""
		if charge {
			pm, collection = remit.NewID("pm"), remit.ChargeAutomatically
			method = pm
		}
		if err := accounts.add(mid, ba, cid, "USD", collection, nil, method, "{}", us(created), us(created)); err != nil {
			return nil, err
		}
		if charge {
			if err := methods.add(mid, pm, cid, ba, "card", "visa", "4242", "pm_card_visa", us(created)); err != nil {
				return nil, err
			}
		}

		// The ledger's shape for this customer: apps whole-grant applications over its paid
		// invoices, expired grants with their expiry entry, and open grants still available,
		// adding up to nEnt entries (2·apps + 2·expired + open).
		nPaid := 0
		for j := 0; j < nInv; j++ {
			if (c*7+j)%10 >= 4 {
				nPaid++
			}
		}
		perInvoice := 5
		for perInvoice > 0 && 2*perInvoice*nPaid > nEnt {
			perInvoice--
		}
		apps := perInvoice * nPaid
		rest := nEnt - 2*apps
		open := rest
		if rest >= 4 {
			open = 4 + rest%2
		}
		expired := (rest - open) / 2
		type grant struct {
			id      string
			at      time.Time
			expires *time.Time
			left    int64
		}
		addGrant := func(g grant) error {
			var exp any
			if g.expires != nil {
				exp = us(*g.expires)
			}
			return entries.add(mid, cid, g.id, nextSeq(g.at), remit.EntryGrant, "USD", grantUnit, g.left, nil, nil, "Prepaid credit",
				us(g.at), exp, us(g.at))
		}
		// Grants that expired, each with its expiry entry right after it expired.
		for k := 0; k < expired; k++ {
			g := grant{id: remit.NewID("ble"), at: tick()} // left 0: all of it expired
			exp := g.at.Add(step / 2).Truncate(time.Microsecond)
			g.expires = &exp
			if err := addGrant(g); err != nil {
				return nil, err
			}
			src, xid := g.id, remit.NewID("ble")
			if err := entries.add(mid, cid, xid, nextSeq(exp), remit.EntryExpiry, "USD", -grantUnit, nil, src, nil,
				nil, us(exp), nil, us(exp)); err != nil {
				return nil, err
			}
			if err := chain.emit(remit.EventCustomerBalanceExpired, xid, exp,
				balanceDebit(mid, cid, xid, remit.EntryExpiry, -grantUnit, src, nil, exp)); err != nil {
				return nil, err
			}
		}

		for j := 0; j < nInv; j++ {
			created := tick()
			id, txn := remit.NewID("inv"), remit.NewID("txn")
			fx.Invoices = append(fx.Invoices, id)
			kind := (c*7 + j) % 10 // 0-2 draft, 3 open, else paid
			status := remit.InvoicePaid
			switch {
			case kind < 3:
				status = remit.InvoiceDraft
				fx.Drafts = append(fx.Drafts, id)
				if charge {
					fx.ChargeDrafts = append(fx.ChargeDrafts, id)
				}
			case kind == 3:
				status = remit.InvoiceOpen
			}
			qty := int64(1 + (c+j)%3)
			priced := []remit.PricedLine{
				{LineType: remit.LineRecurring, PriceID: priceBasic, Amount: 2000 * qty},
				{LineType: remit.LineOneTime, PriceID: priceSetup, Amount: 5000},
			}
			// A paid invoice took perInvoice whole grants at finalization (each grant lands on one
			// line: line amounts are multiples of the grant).
			var spend []remit.SpendableGrant
			var bought []grant
			if status == remit.InvoicePaid {
				for k := 0; k < perInvoice; k++ {
					g := grant{id: remit.NewID("ble"), at: created.Add(-time.Duration(perInvoice-k) * time.Millisecond), left: grantUnit}
					bought = append(bought, g)
					spend = append(spend, remit.SpendableGrant{EntryID: g.id, Remaining: grantUnit})
				}
			}
			fig := remit.ComputeInvoiceFigures(remit.InvoiceFiguresInput{Lines: priced, Grants: spend}, tax.Calculator(rates, false))
			for _, g := range bought {
				for _, ap := range fig.Applications {
					if ap.EntryID == g.id {
						g.left -= ap.Amount
					}
				}
				if err := addGrant(g); err != nil {
					return nil, err
				}
			}
			lineIDs := []string{remit.NewID("il"), remit.NewID("il")}
			var txLines []remit.TaxTransactionLine
			var invLines []remit.InvoiceLine // for invoice.finalized
			for i, lf := range fig.Lines {
				var lt []remit.LineTax
				for _, t := range lf.Taxes {
					lt = append(lt, remit.LineTax{Jurisdiction: t.Jurisdiction, Rate: float64(t.RatePPM) / 1e6, RatePPM: t.RatePPM,
						TaxableAmount: t.TaxableAmount, TaxAmount: t.TaxAmount})
					txLines = append(txLines, remit.TaxTransactionLine{LineID: lineIDs[i], TaxableAmount: t.TaxableAmount,
						TaxAmount: t.TaxAmount, Rate: float64(t.RatePPM) / 1e6, RatePPM: t.RatePPM, Jurisdiction: t.Jurisdiction})
				}
				desc, ptype, q := "Basic plan", remit.PriceFixedRecurring, qty
				if i == 1 {
					desc, ptype, q = "Setup", remit.PriceFixedOneTime, 1
				}
				if err := lines.add(mid, id, lineIDs[i], i, priced[i].LineType, priced[i].PriceID, ptype, desc, q, priced[i].Amount/q,
					lf.Amount, lf.PrepaidApplied, lf.TaxAmount, jsonText(lt)); err != nil {
					return nil, err
				}
				invLines = append(invLines, seededLine(lineIDs[i], desc, ptype, priced[i], q, lf, lt))
			}
			var number, payURL *string
			var finalized, paidAt any
			paid, remaining := int64(0), fig.Total
			taxStatus, committed := remit.TaxQuoted, any(nil)
			if status != remit.InvoiceDraft {
				invNumber++
				n := remit.DocumentNumber(remit.InvoiceNumbers, int64(invNumber))
				number, finalized, taxStatus, committed = &n, us(created), remit.TaxCommitted, us(created)
			}
			if status == remit.InvoiceOpen {
				token := "hpt_" + app.NewSecret()
				u := fmt.Sprintf("%s/customer-portal/invoices/%s/pay?token=%s", publicURL, id, token)
				payURL = &u
				if err := tokens.add(app.HashSecret(token), remit.HostedInvoice, id, mid, us(created.AddDate(1, 0, 0)), us(created)); err != nil {
					return nil, err
				}
			}
			fin := finalizedInvoice(remit.Invoice{InvoiceID: id, Number: number, CustomerID: cid, BillingAccountID: ba,
				CollectionMethod: collection, Lines: invLines, TaxTransactionID: &txn, PaymentURL: payURL, MerchantAccountID: mid,
				CreatedAt: created}, fig)
			if status == remit.InvoiceOpen {
				if err := chain.emit(remit.EventInvoiceFinalized, id, created, fin); err != nil {
					return nil, err
				}
			}
			updated, latest, attempts := created, any(nil), 0
			if status == remit.InvoicePaid {
				paidTime := created.Add(time.Millisecond)
				paid, remaining, paidAt, updated = fig.Total, 0, us(paidTime), paidTime
				for _, ap := range fig.Applications { // taken at finalization, before invoice.finalized
					src, inv, aid := ap.EntryID, id, remit.NewID("ble")
					if err := entries.add(mid, cid, aid, nextSeq(created), remit.EntryApplication, "USD", -ap.Amount, nil,
						src, inv, nil, us(created), nil, us(created)); err != nil {
						return nil, err
					}
					if err := chain.emit(remit.EventCustomerBalanceApplied, aid, created,
						balanceDebit(mid, cid, aid, remit.EntryApplication, -ap.Amount, src, &inv, created)); err != nil {
						return nil, err
					}
				}
				if err := chain.emit(remit.EventInvoiceFinalized, id, created, fin); err != nil {
					return nil, err
				}
				pi, pay, rcpt := remit.NewID("pi"), remit.NewID("pay"), remit.NewID("rcpt")
				if err := intents.add(mid, pi, id, cid, fig.Total, "USD", remit.IntentSucceeded, us(paidTime), us(paidTime)); err != nil {
					return nil, err
				}
				// Out of band: no processor, no fee, no settlement. A card: the sandbox processor's own
				// record of the charge (idempotency reference: the payment's ID) and the day's settlement.
				meth, brand, last4, fee, ref := remit.MethodOutOfBand, any(nil), any(nil), int64(0), any(nil)
				proc, idem, token, stl := remit.ProcessorOutOfBand, any(nil), any(nil), any(nil)
				var pmRef any
				if charge {
					meth, brand, last4, fee, ref, pmRef = remit.MethodCard, "visa", "4242", remit.SandboxFee(fig.Total), "sbch_"+pay, pm
					proc, idem, token, stl = remit.ProcessorSandbox, pay, "pm_card_visa", days.add(paidTime, fig.Total, fee)
					if err := charges.add(pay, ref, fig.Total, "USD", "pm_card_visa", processor.Succeeded, fee, us(paidTime),
						us(paidTime)); err != nil {
						return nil, err
					}
					attempts = 1
				}
				latest = pay
				if err := payments.add(mid, pay, pi, id, cid, ba, 1, fig.Total, "USD", remit.PaymentSucceeded, meth, pmRef, brand, last4,
					remit.SourceFinalize, fee, ref, us(paidTime), proc, idem, token, stl, us(paidTime)); err != nil {
					return nil, err
				}
				if err := chain.emit(remit.EventPaymentSucceeded, pay, paidTime, succeededPayment(remit.Payment{PaymentID: pay,
					PaymentIntentID: pi, InvoiceID: id, CustomerID: cid, BillingAccountID: ba, Amount: fig.Total, Method: meth,
					FeeAmount: fee, Processor: proc, MerchantAccountID: mid, CreatedAt: paidTime}, pmRef, stl, ref)); err != nil {
					return nil, err
				}
				rcptNumber++
				if err := receipts.add(mid, rcpt, remit.DocumentNumber(remit.ReceiptNumbers, int64(rcptNumber)), id, *number, cid, ext, ba, pay, pi, fig.Total,
					"USD", remit.ReceiptSucceeded, meth, brand, last4, us(paidTime), us(paidTime)); err != nil {
					return nil, err
				}
			}
			if err := taxes.add(mid, txn, taxStatus, remit.TaxSale, id, cid, "USD", jsonText(txLines), fig.TaxTotal, committed,
				us(created), us(updated)); err != nil {
				return nil, err
			}
			if err := invoices.add(mid, id, nullable(number), cid, ba, "USD", status, collection, "[]", fig.Subtotal, fig.DiscountTotal,
				fig.PrepaidApplied, fig.TaxTotal, fig.Total, fig.Total, paid, remaining, txn, nullable(payURL), finalized, paidAt, "{}",
				us(created), us(updated), latest, attempts); err != nil {
				return nil, err
			}
		}
		// Grants bought lately and not spent yet: the customer's available balance.
		for k := 0; k < open; k++ {
			if err := addGrant(grant{id: remit.NewID("ble"), at: tick(), left: grantUnit}); err != nil {
				return nil, err
			}
		}
		if c > 0 && c%1000 == 0 {
			fmt.Fprintf(log, "  seeded %d/%d customers (%d rows, %s)\n", c, sz.Customers, s.total, time.Since(began).Round(time.Second))
		}
		// Every table in order, parents before the rows that reference them; a transaction
		// holds about 200,000 rows.
		if c%50 == 49 || c == sz.Customers-1 {
			committed, err := s.flushAll(tables, 200000, c == sz.Customers-1)
			if err != nil {
				return nil, err
			}
			// PostgreSQL plans each foreign-key check once per connection, from the
			// statistics of the moment: planned while the tables were small, it scans
			// them, and the seed slows down quadratically. ANALYZE after every large
			// transaction keeps the checks on their indexes.
			if committed && !s.sqlite {
				if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := days.write(s, chain, m, mid, now); err != nil {
		return nil, err
	}
	if err := finishSeed(s, r.DB, mid, invNumber, rcptNumber, log); err != nil {
		return nil, err
	}
	return fx, nil
}

// finishSeed ends the seed once its rows are written: the numbering counters continue after the
// seeded numbers, the invoices' lines docs are kept, and the store's statistics or WAL are left
// as the server expects them.
func finishSeed(s *seeder, dbh *store.DB, mid string, invNumber, rcptNumber int, log io.Writer) error {
	// The counters continue after the seeded numbers.
	for name, v := range map[string]int{"invoice": invNumber, "receipt": rcptNumber} {
		if v == 0 {
			continue
		}
		if _, err := s.db.ExecContext(s.ctx, `INSERT INTO counters (scope, name, value) VALUES ($1, $2, $3)
			ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value`, mid, name, v); err != nil {
			return err
		}
	}
	// The store keeps each invoice's lines in the invoice's row too (lines_doc, store/invoice_lines.go).
	// The seed wrote invoice_lines around the store, so it keeps the docs as migration 28 does for
	// older invoices: a seeded invoice then reads as one the server wrote.
	filling := time.Now()
	var docs int
	if err := dbh.Tx(s.ctx, func(ctx context.Context, tx *store.Tx) (err error) {
		docs, err = tx.FillInvoiceLinesDocs(ctx)
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(log, "  kept the lines doc of %d invoices in %s\n", docs, time.Since(filling).Round(time.Millisecond))
	// PostgreSQL: the statistics autovacuum would gather soon anyway. SQLite: none, as Remit
	// leaves its store (it never runs ANALYZE; see docs/performance.md on sqlite_stat4).
	if dbh.Dialect() == store.Postgres {
		if _, err := s.db.ExecContext(s.ctx, "ANALYZE"); err != nil {
			return err
		}
	} else if _, err := s.db.ExecContext(s.ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	return nil
}

// seedSettlement is one UTC day's settlement of the seeded card payments.
type seedSettlement struct {
	id                string
	day, first        time.Time // its UTC day; its first payment, when the engine creates it
	gross, fee, count int64
}

// settlementDays gathers the seeded card payments into the settlement of their UTC day, as the
// engine's payments do (app.Payments.settle): a few hundred rows for a year, whatever the seed's
// size.
type settlementDays struct {
	byDay map[int64]*seedSettlement
}

// add counts a card payment of amount and fee made at `at` and returns its settlement's ID.
func (d *settlementDays) add(at time.Time, amount, fee int64) string {
	day := remit.SettlementDay(at)
	st := d.byDay[day.Unix()]
	if st == nil {
		st = &seedSettlement{id: remit.NewID("stl"), day: day, first: at}
		d.byDay[day.Unix()] = st
	}
	st.gross, st.fee, st.count = st.gross+amount, st.fee+fee, st.count+1
	return st.id
}

// Job kinds of the engine's settlements (app/settlements.go).
const (
	jobSettlementClose  = "settlement.close"
	jobSettlementPayout = "settlement.payout"
)

// write stores the settlements as the engine leaves them at now: a day not over yet is open with
// its close job; a day over less than the payout delay ago is closed with its payout job; an
// older one is paid out (its net, gross − fees: the seed refunds nothing).
func (d *settlementDays) write(s *seeder, chain *seedChain, m remit.MerchantAccount, mid string, now time.Time) error {
	us := remit.Micros
	settlements := s.table("settlements", "merchant_account_id", "id", "currency", "status", "period_start", "period_end",
		"gross_amount", "fee_amount", "payment_count", "closed_at", "paid_at", "payout_id", "created_at", "updated_at")
	payouts := s.table("payouts", "merchant_account_id", "id", "settlement_id", "amount", "currency", "status", "bank_account_last4",
		"arrival_date", "created_at")
	jobs := s.table("jobs", "id", "merchant_account_id", "kind", "due_at", "payload", "created_at")
	profile, err := remit.NewPayoutProfile(m)
	if err != nil {
		return err
	}
	var last4 any
	var bankLast4 *string // the payout's, in its event
	if profile.BankAccount != nil {
		last4, bankLast4 = profile.BankAccount.Last4, &profile.BankAccount.Last4
	}
	const day = 24 * time.Hour
	for _, st := range d.byDay {
		end := st.day.Add(day)
		payoutAt := end.Add(remit.PayoutDelayDays * day)
		status, closed, paid, payout := remit.SettlementOpen, any(nil), any(nil), any(nil)
		job, due := jobSettlementClose, end
		switch {
		case !end.After(now) && !payoutAt.After(now) && profile.PayoutsEnabled:
			po := remit.NewID("po")
			status, closed, paid, payout, job = remit.SettlementPaid, us(end), us(payoutAt), po, ""
			if err := payouts.add(mid, po, st.id, st.gross-st.fee, "USD", "paid", last4, us(payoutAt), us(payoutAt)); err != nil {
				return err
			}
			if err := chain.emit(remit.EventPayoutCreated, po, payoutAt, remit.Payout{Object: "payout", PayoutID: po, SettlementID: st.id,
				Amount: st.gross - st.fee, Currency: "USD", Status: "paid", BankAccountLast4: bankLast4,
				ArrivalDate: payoutAt, MerchantAccountID: mid, CreatedAt: payoutAt}); err != nil {
				return err
			}
		case !end.After(now):
			status, closed, job, due = remit.SettlementClosed, us(end), jobSettlementPayout, payoutAt
		}
		updated := us(now)
		switch status {
		case remit.SettlementClosed:
			updated = us(end)
		case remit.SettlementPaid:
			updated = us(payoutAt)
		}
		if err := settlements.add(mid, st.id, "USD", status, us(st.day), us(end), st.gross, st.fee, st.count, closed, paid, payout,
			us(st.first), updated); err != nil {
			return err
		}
		if job != "" {
			if err := jobs.add(remit.NewID("job"), mid, job, us(due), jsonText(map[string]string{"settlementId": st.id}), us(now)); err != nil {
				return err
			}
		}
	}
	_, err = s.flushAll([]*bulk{settlements, payouts, jobs, chain.events}, 0, true)
	return err
}
