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
	if err := seedPrices(ctx, r.App.Catalog, m); err != nil {
		return nil, err
	}
	h, err := newHistory(ctx, r.DB, m, publicURL)
	if err != nil {
		return nil, err
	}
	h.fx.APIKey = boot.APIKey
	began := time.Now()
	for c := 0; c < sz.Customers; c++ {
		if err := h.customer(c, sz); err != nil {
			return nil, err
		}
		if c > 0 && c%1000 == 0 {
			fmt.Fprintf(log, "  seeded %d/%d customers (%d rows, %s)\n", c, sz.Customers, h.s.total, time.Since(began).Round(time.Second))
		}
		if c%50 == 49 || c == sz.Customers-1 {
			if err := h.flush(c == sz.Customers-1); err != nil {
				return nil, err
			}
		}
	}
	if err := h.days.write(h.s, h.chain, m, mid, h.now); err != nil {
		return nil, err
	}
	if err := finishSeed(h.s, r.DB, mid, h.invNumber, h.rcptNumber, log); err != nil {
		return nil, err
	}
	return h.fx, nil
}

// seedPrices creates the seed's three prices through the engine.
func seedPrices(ctx context.Context, catalog *app.Catalog, m remit.MerchantAccount) error {
	i64 := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	for _, p := range []remit.Price{
		{PriceID: priceBasic, ProductID: "prod_load", Name: "Basic plan", PriceType: remit.PriceFixedRecurring, Currency: "USD",
			BillingInterval: str("month"), UnitAmount: i64(2000)},
		{PriceID: priceSetup, ProductID: "prod_load", Name: "Setup", PriceType: remit.PriceFixedOneTime, Currency: "USD", UnitAmount: i64(5000)},
		{PriceID: priceAPI, ProductID: "prod_load", Name: "API calls", PriceType: remit.PriceUsageMetered, Currency: "USD",
			BillingInterval: str("month"), UnitAmount: i64(1), MeterID: str(meterID)},
	} {
		if _, err := catalog.CreatePrice(ctx, m, p); err != nil {
			return fmt.Errorf("price %s: %w", p.PriceID, err)
		}
	}
	return nil
}

// history is the full seed while it writes: the tables it buffers, the event chain, the
// settlement days and the document numbers so far.
type history struct {
	s                     *seeder
	fx                    *Fixture
	mid, publicURL        string
	now, start            time.Time
	addrJSON              string
	rates                 []tax.Component
	entropy               io.Reader
	seqClock              time.Time
	chain                 *seedChain
	days                  *settlementDays
	invNumber, rcptNumber int

	customers, accounts, methods, invoices, lines, taxes, tokens *bulk
	intents, payments, charges, receipts, entries                *bulk
}

// newHistory opens the seed's tables on the store and continues the merchant account's chain.
func newHistory(ctx context.Context, dbh *store.DB, m remit.MerchantAccount, publicURL string) (*history, error) {
	s := &seeder{ctx: ctx, db: dbh.SQL(), counts: map[string]int{}, sqlite: dbh.Dialect() == store.SQLite}
	now := time.Now().UTC().Truncate(time.Microsecond)
	region := "CA"
	h := &history{s: s, fx: &Fixture{MerchantID: m.ID, Counts: s.counts}, mid: m.ID, publicURL: publicURL,
		now: now, start: now.Add(-360 * 24 * time.Hour),
		addrJSON: jsonText(remit.Address{Line1: "1 Market St", City: "San Francisco", Region: &region, PostalCode: "94105", Country: "US"}),
		rates:    tax.Default().Lookup("US", "CA"), entropy: ulid.Monotonic(rand.Reader, 0),
		days: &settlementDays{byDay: map[int64]*seedSettlement{}}}
	h.customers = s.table("customers", "merchant_account_id", "id", "external_id", "name", "email", "address", "tax_exempt", "metadata", "created_at")
	h.accounts = s.table("billing_accounts", "merchant_account_id", "id", "customer_id", "currency", "collection_method", "tax_address",
		"default_payment_method_id", "metadata", "created_at", "updated_at")
	h.methods = s.table("payment_methods", "merchant_account_id", "id", "customer_id", "billing_account_id", "type", "brand", "last4",
		"test_card", "created_at")
	h.invoices = s.table("invoices", "merchant_account_id", "id", "number", "customer_id", "billing_account_id", "currency", "status",
		"collection_method", "coupon_ids", "subtotal", "discount_total", "prepaid_applied", "tax_total", "total", "amount_due",
		"amount_paid", "amount_remaining", "tax_transaction_id", "payment_url", "finalized_at", "paid_at", "metadata", "created_at", "updated_at",
		"latest_payment_id", "attempt_count")
	h.lines = s.table("invoice_lines", "merchant_account_id", "invoice_id", "id", "position", "line_type", "price_id", "price_type",
		"description", "quantity", "unit_amount", "amount", "prepaid_applied", "tax_amount", "taxes")
	h.taxes = s.table("tax_transactions", "merchant_account_id", "id", "status", "type", "source_document_id", "customer_id", "currency",
		"lines", "total_tax", "committed_at", "created_at", "updated_at")
	h.tokens = s.table("hosted_tokens", "token_hash", "kind", "resource_id", "merchant_account_id", "expires_at", "created_at")
	h.intents = s.table("payment_intents", "merchant_account_id", "id", "invoice_id", "customer_id", "amount", "currency", "status",
		"created_at", "updated_at")
	h.payments = s.table("payments", "merchant_account_id", "id", "payment_intent_id", "invoice_id", "customer_id", "billing_account_id",
		"attempt", "amount", "currency", "status", "method", "payment_method_id", "brand", "last4", "source", "fee_amount",
		"processor_reference", "created_at", "processor", "idempotency_ref", "payment_method_token", "settlement_id", "updated_at")
	h.charges = s.table("sandbox_charges", "idempotency_ref", "reference", "amount", "currency", "payment_method", "status", "fee",
		"created_at", "updated_at")
	h.receipts = s.table("payment_receipts", "merchant_account_id", "id", "number", "invoice_id", "invoice_number", "customer_id",
		"customer_external_id", "billing_account_id", "payment_id", "payment_intent_id", "amount", "currency", "status", "method",
		"brand", "last4", "created_at", "updated_at")
	h.entries = s.table("balance_entries", "merchant_account_id", "customer_id", "id", "seq", "type", "currency", "amount", "remaining",
		"source_entry_id", "invoice_id", "description", "effective_at", "expires_at", "created_at")
	var err error
	h.chain, err = newSeedChain(s, dbh, m)
	return h, err
}

// nextSeq is a balance entry's seq: it grows with every entry, like the engine's.
func (h *history) nextSeq(at time.Time) string {
	if at.Before(h.seqClock) {
		at = h.seqClock
	}
	h.seqClock = at
	return ulid.MustNew(ulid.Timestamp(at), h.entropy).String()
}

// flush writes every table in order, parents before the rows that reference them; a transaction
// holds about 200,000 rows.
func (h *history) flush(last bool) error {
	committed, err := h.s.flushAll([]*bulk{h.customers, h.accounts, h.methods, h.invoices, h.lines, h.taxes, h.tokens, h.intents,
		h.payments, h.receipts, h.entries, h.charges, h.chain.events}, 200000, last)
	if err != nil || !committed || h.s.sqlite {
		return err
	}
	// PostgreSQL plans each foreign-key check once per connection, from the statistics of the
	// moment: planned while the tables were small, it scans them, and the seed slows down
	// quadratically. ANALYZE after every large transaction keeps the checks on their indexes.
	_, err = h.s.db.ExecContext(h.s.ctx, "ANALYZE")
	return err
}

// seededCustomer is one customer while its history is written: its IDs, how it pays, and its
// clock, which steps through its history from its creation to now.
type seededCustomer struct {
	cid, ba, ext, pm string
	charge           bool
	collection       string
	at               time.Time
	step             time.Duration
	perInvoice       int // whole grants each paid invoice takes
}

// tick moves the customer's clock one step and returns it.
func (c *seededCustomer) tick() time.Time {
	c.at = c.at.Add(c.step)
	return c.at
}

// seedGrant is a grant of grantUnit the seed writes, with what is left of it.
type seedGrant struct {
	id      string
	at      time.Time
	expires *time.Time
	left    int64
}

// ledgerShape is a customer's ledger: perInvoice whole-grant applications on each of its nPaid
// paid invoices, expired grants with their expiry entry, and open grants still available, adding
// up to nEnt entries (2·perInvoice·nPaid + 2·expired + open).
func ledgerShape(nPaid, nEnt int) (perInvoice, expired, open int) {
	perInvoice = 5
	for perInvoice > 0 && 2*perInvoice*nPaid > nEnt {
		perInvoice--
	}
	rest := nEnt - 2*perInvoice*nPaid
	open = rest
	if rest >= 4 {
		open = 4 + rest%2
	}
	return perInvoice, (rest - open) / 2, open
}

// invoiceKind is the kind of a customer's j-th invoice: 0-2 draft, 3 open, else paid.
func invoiceKind(c, j int) int { return (c*7 + j) % 10 }

// customer writes customer c's history: the customer, its billing account and card, its expired
// grants, its invoices and its open grants.
func (h *history) customer(c int, sz Sizes) error {
	span := h.now.Sub(h.start) - time.Duration(c)*time.Second
	nInv, nEnt := spread(sz.Invoices, sz.Customers, c), spread(sz.Entries, sz.Customers, c)
	cu := &seededCustomer{cid: remit.NewID("cus"), ba: remit.NewID("ba"), ext: fmt.Sprintf("ext-%07d", c), charge: c%2 == 0,
		collection: remit.SendInvoice, at: h.start.Add(time.Duration(c) * time.Second),
		step: (span / time.Duration(nInv+nEnt+2)).Truncate(time.Microsecond)} // times as the store keeps them
	if err := h.account(c, cu); err != nil {
		return err
	}
	nPaid := 0
	for j := 0; j < nInv; j++ {
		if invoiceKind(c, j) >= 4 {
			nPaid++
		}
	}
	perInvoice, expired, open := ledgerShape(nPaid, nEnt)
	cu.perInvoice = perInvoice
	for k := 0; k < expired; k++ {
		if err := h.expiredGrant(cu); err != nil {
			return err
		}
	}
	for j := 0; j < nInv; j++ {
		if err := h.invoice(cu, invoiceKind(c, j), int64(1+(c+j)%3)); err != nil {
			return err
		}
	}
	// Grants bought lately and not spent yet: the customer's available balance.
	for k := 0; k < open; k++ {
		if err := h.grant(cu, seedGrant{id: remit.NewID("ble"), at: cu.tick(), left: grantUnit}); err != nil {
			return err
		}
	}
	return nil
}

// account writes the customer, its billing account and, for a charged one, its default card.
func (h *history) account(c int, cu *seededCustomer) error {
	created := cu.tick()
	us := remit.Micros
	if err := h.customers.add(h.mid, cu.cid, cu.ext, fmt.Sprintf("Customer %d", c), fmt.Sprintf("customer%d@example.com", c), h.addrJSON,
		false, "{}", us(created)); err != nil {
		return err
	}
	h.fx.Customers = append(h.fx.Customers, cu.cid)
	var method any
	if cu.charge {
		cu.pm, cu.collection = remit.NewID("pm"), remit.ChargeAutomatically
		method = cu.pm
	}
	if err := h.accounts.add(h.mid, cu.ba, cu.cid, "USD", cu.collection, nil, method, "{}", us(created), us(created)); err != nil {
		return err
	}
	if !cu.charge {
		return nil
	}
	return h.methods.add(h.mid, cu.pm, cu.cid, cu.ba, "card", "visa", "4242", "pm_card_visa", us(created))
}

// grant writes a grant entry.
func (h *history) grant(cu *seededCustomer, g seedGrant) error {
	var exp any
	if g.expires != nil {
		exp = remit.Micros(*g.expires)
	}
	return h.entries.add(h.mid, cu.cid, g.id, h.nextSeq(g.at), remit.EntryGrant, "USD", grantUnit, g.left, nil, nil, "Prepaid credit",
		remit.Micros(g.at), exp, remit.Micros(g.at))
}

// expiredGrant writes a grant that expired, all of it, with its expiry entry and event right
// after it expired.
func (h *history) expiredGrant(cu *seededCustomer) error {
	g := seedGrant{id: remit.NewID("ble"), at: cu.tick()}
	exp := g.at.Add(cu.step / 2).Truncate(time.Microsecond)
	g.expires = &exp
	if err := h.grant(cu, g); err != nil {
		return err
	}
	src, xid := g.id, remit.NewID("ble")
	if err := h.entries.add(h.mid, cu.cid, xid, h.nextSeq(exp), remit.EntryExpiry, "USD", -grantUnit, nil, src, nil,
		nil, remit.Micros(exp), nil, remit.Micros(exp)); err != nil {
		return err
	}
	return h.chain.emit(remit.EventCustomerBalanceExpired, xid, exp,
		balanceDebit(h.mid, cu.cid, xid, remit.EntryExpiry, -grantUnit, src, nil, exp))
}

// seededInvoice is one invoice while the seed writes it.
type seededInvoice struct {
	id, txn     string
	status      remit.InvoiceStatus
	created     time.Time
	fig         remit.InvoiceFigures
	number      *string
	fin         remit.Invoice // as invoice.finalized carries it
	txLines     []remit.TaxTransactionLine
	paidAt      time.Time
	latest      any // the paying payment's ID
	attempts    int
	prepaidFrom []seedGrant
}

// invoice writes one invoice of the customer, of kind (invoiceKind) and recurring quantity qty:
// its lines, its tax transaction, its hosted token when open, and when paid the grants it took
// and its payment.
func (h *history) invoice(cu *seededCustomer, kind int, qty int64) error {
	iv := &seededInvoice{id: remit.NewID("inv"), txn: remit.NewID("txn"), status: remit.InvoicePaid, created: cu.tick()}
	h.fx.Invoices = append(h.fx.Invoices, iv.id)
	switch {
	case kind < 3:
		iv.status = remit.InvoiceDraft
		h.fx.Drafts = append(h.fx.Drafts, iv.id)
		if cu.charge {
			h.fx.ChargeDrafts = append(h.fx.ChargeDrafts, iv.id)
		}
	case kind == 3:
		iv.status = remit.InvoiceOpen
	}
	priced := []remit.PricedLine{
		{LineType: remit.LineRecurring, PriceID: priceBasic, Amount: 2000 * qty},
		{LineType: remit.LineOneTime, PriceID: priceSetup, Amount: 5000},
	}
	if err := h.figures(cu, iv, priced); err != nil {
		return err
	}
	invLines, err := h.invoiceLines(iv, priced, qty)
	if err != nil {
		return err
	}
	var payURL *string
	if iv.status != remit.InvoiceDraft {
		h.invNumber++
		n := remit.DocumentNumber(remit.InvoiceNumbers, int64(h.invNumber))
		iv.number = &n
	}
	if iv.status == remit.InvoiceOpen {
		if payURL, err = h.hostedToken(iv); err != nil {
			return err
		}
	}
	iv.fin = finalizedInvoice(remit.Invoice{InvoiceID: iv.id, Number: iv.number, CustomerID: cu.cid, BillingAccountID: cu.ba,
		CollectionMethod: cu.collection, Lines: invLines, TaxTransactionID: &iv.txn, PaymentURL: payURL, MerchantAccountID: h.mid,
		CreatedAt: iv.created}, iv.fig)
	switch iv.status {
	case remit.InvoiceOpen:
		err = h.chain.emit(remit.EventInvoiceFinalized, iv.id, iv.created, iv.fin)
	case remit.InvoicePaid:
		err = h.pay(cu, iv)
	}
	if err != nil {
		return err
	}
	return h.invoiceRows(cu, iv, payURL)
}

// figures prices the invoice with the engine's arithmetic. A paid invoice took perInvoice whole
// grants at finalization (each grant lands on one line: line amounts are multiples of the grant);
// those grants are written with what the invoice left of them.
func (h *history) figures(cu *seededCustomer, iv *seededInvoice, priced []remit.PricedLine) error {
	var spend []remit.SpendableGrant
	if iv.status == remit.InvoicePaid {
		for k := 0; k < cu.perInvoice; k++ {
			g := seedGrant{id: remit.NewID("ble"), at: iv.created.Add(-time.Duration(cu.perInvoice-k) * time.Millisecond), left: grantUnit}
			iv.prepaidFrom = append(iv.prepaidFrom, g)
			spend = append(spend, remit.SpendableGrant{EntryID: g.id, Remaining: grantUnit})
		}
	}
	iv.fig = remit.ComputeInvoiceFigures(remit.InvoiceFiguresInput{Lines: priced, Grants: spend}, tax.Calculator(h.rates, false))
	for _, g := range iv.prepaidFrom {
		for _, ap := range iv.fig.Applications {
			if ap.EntryID == g.id {
				g.left -= ap.Amount
			}
		}
		if err := h.grant(cu, g); err != nil {
			return err
		}
	}
	return nil
}

// invoiceLines writes the invoice's two lines and gathers their tax transaction lines; it returns
// the lines as invoice.finalized carries them.
func (h *history) invoiceLines(iv *seededInvoice, priced []remit.PricedLine, qty int64) ([]remit.InvoiceLine, error) {
	lineIDs := []string{remit.NewID("il"), remit.NewID("il")}
	var invLines []remit.InvoiceLine
	for i, lf := range iv.fig.Lines {
		var lt []remit.LineTax
		for _, t := range lf.Taxes {
			lt = append(lt, remit.LineTax{Jurisdiction: t.Jurisdiction, Rate: float64(t.RatePPM) / 1e6, RatePPM: t.RatePPM,
				TaxableAmount: t.TaxableAmount, TaxAmount: t.TaxAmount})
			iv.txLines = append(iv.txLines, remit.TaxTransactionLine{LineID: lineIDs[i], TaxableAmount: t.TaxableAmount,
				TaxAmount: t.TaxAmount, Rate: float64(t.RatePPM) / 1e6, RatePPM: t.RatePPM, Jurisdiction: t.Jurisdiction})
		}
		desc, ptype, q := "Basic plan", remit.PriceFixedRecurring, qty
		if i == 1 {
			desc, ptype, q = "Setup", remit.PriceFixedOneTime, 1
		}
		if err := h.lines.add(h.mid, iv.id, lineIDs[i], i, priced[i].LineType, priced[i].PriceID, ptype, desc, q, priced[i].Amount/q,
			lf.Amount, lf.PrepaidApplied, lf.TaxAmount, jsonText(lt)); err != nil {
			return nil, err
		}
		invLines = append(invLines, seededLine(lineIDs[i], desc, ptype, priced[i], q, lf, lt))
	}
	return invLines, nil
}

// hostedToken writes an open invoice's hosted payment token and returns its payment link.
func (h *history) hostedToken(iv *seededInvoice) (*string, error) {
	token := "hpt_" + app.NewSecret()
	u := fmt.Sprintf("%s/customer-portal/invoices/%s/pay?token=%s", h.publicURL, iv.id, token)
	err := h.tokens.add(app.HashSecret(token), remit.HostedInvoice, iv.id, h.mid, remit.Micros(iv.created.AddDate(1, 0, 0)),
		remit.Micros(iv.created))
	return &u, err
}

// pay writes what paying the invoice made: the grants' applications taken at finalization (before
// invoice.finalized), the payment intent, the payment (a card's with the sandbox processor's
// record of the charge and the day's settlement; out of band with no processor, fee or settlement
// otherwise) and its receipt, with their events.
func (h *history) pay(cu *seededCustomer, iv *seededInvoice) error {
	us, id, created := remit.Micros, iv.id, iv.created
	iv.paidAt = created.Add(time.Millisecond)
	for _, ap := range iv.fig.Applications {
		src, inv, aid := ap.EntryID, id, remit.NewID("ble")
		if err := h.entries.add(h.mid, cu.cid, aid, h.nextSeq(created), remit.EntryApplication, "USD", -ap.Amount, nil,
			src, inv, nil, us(created), nil, us(created)); err != nil {
			return err
		}
		if err := h.chain.emit(remit.EventCustomerBalanceApplied, aid, created,
			balanceDebit(h.mid, cu.cid, aid, remit.EntryApplication, -ap.Amount, src, &inv, created)); err != nil {
			return err
		}
	}
	if err := h.chain.emit(remit.EventInvoiceFinalized, id, created, iv.fin); err != nil {
		return err
	}
	pi, pay, total, paidAt := remit.NewID("pi"), remit.NewID("pay"), iv.fig.Total, iv.paidAt
	if err := h.intents.add(h.mid, pi, id, cu.cid, total, "USD", remit.IntentSucceeded, us(paidAt), us(paidAt)); err != nil {
		return err
	}
	meth, brand, last4, fee, ref := remit.MethodOutOfBand, any(nil), any(nil), int64(0), any(nil)
	proc, idem, token, stl, pmRef := remit.ProcessorOutOfBand, any(nil), any(nil), any(nil), any(nil)
	if cu.charge {
		meth, brand, last4, fee, ref, pmRef = remit.MethodCard, "visa", "4242", remit.SandboxFee(total), "sbch_"+pay, cu.pm
		proc, idem, token, stl = remit.ProcessorSandbox, pay, "pm_card_visa", h.days.add(paidAt, total, fee)
		if err := h.charges.add(pay, ref, total, "USD", "pm_card_visa", processor.Succeeded, fee, us(paidAt), us(paidAt)); err != nil {
			return err
		}
		iv.attempts = 1
	}
	iv.latest = pay
	if err := h.payments.add(h.mid, pay, pi, id, cu.cid, cu.ba, 1, total, "USD", remit.PaymentSucceeded, meth, pmRef, brand, last4,
		remit.SourceFinalize, fee, ref, us(paidAt), proc, idem, token, stl, us(paidAt)); err != nil {
		return err
	}
	if err := h.chain.emit(remit.EventPaymentSucceeded, pay, paidAt, succeededPayment(remit.Payment{PaymentID: pay,
		PaymentIntentID: pi, InvoiceID: id, CustomerID: cu.cid, BillingAccountID: cu.ba, Amount: total, Method: meth,
		FeeAmount: fee, Processor: proc, MerchantAccountID: h.mid, CreatedAt: paidAt}, pmRef, stl, ref)); err != nil {
		return err
	}
	h.rcptNumber++
	return h.receipts.add(h.mid, remit.NewID("rcpt"), remit.DocumentNumber(remit.ReceiptNumbers, int64(h.rcptNumber)), id, *iv.number,
		cu.cid, cu.ext, cu.ba, pay, pi, total, "USD", remit.ReceiptSucceeded, meth, brand, last4, us(paidAt), us(paidAt))
}

// invoiceRows writes the invoice's tax transaction (quoted for a draft, committed once finalized)
// and the invoice's own row.
func (h *history) invoiceRows(cu *seededCustomer, iv *seededInvoice, payURL *string) error {
	us, fig := remit.Micros, iv.fig
	taxStatus, committed, finalized, paidAt := remit.TaxQuoted, any(nil), any(nil), any(nil)
	paid, remaining, updated := int64(0), fig.Total, iv.created
	if iv.status != remit.InvoiceDraft {
		taxStatus, committed, finalized = remit.TaxCommitted, us(iv.created), us(iv.created)
	}
	if iv.status == remit.InvoicePaid {
		paid, remaining, paidAt, updated = fig.Total, 0, us(iv.paidAt), iv.paidAt
	}
	if err := h.taxes.add(h.mid, iv.txn, taxStatus, remit.TaxSale, iv.id, cu.cid, "USD", jsonText(iv.txLines), fig.TaxTotal, committed,
		us(iv.created), us(updated)); err != nil {
		return err
	}
	return h.invoices.add(h.mid, iv.id, nullable(iv.number), cu.cid, cu.ba, "USD", iv.status, cu.collection, "[]", fig.Subtotal,
		fig.DiscountTotal, fig.PrepaidApplied, fig.TaxTotal, fig.Total, fig.Total, paid, remaining, iv.txn, nullable(payURL), finalized,
		paidAt, "{}", us(iv.created), us(updated), iv.latest, iv.attempts)
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
