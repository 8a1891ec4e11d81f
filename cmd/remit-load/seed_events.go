package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The seed's events (docs/ledger.md "The backfill on the harness's full seed"): beside its rows
// the seed writes the outbox events of its money movements, the ones `remit ledger backfill`
// replays (app.Journal.postings): invoice.finalized for each invoice it finalized,
// customer_balance.applied for each application of a grant, customer_balance.expired for each
// expiry, payment.succeeded for each payment and payout.created for each payout. Each is written as
// the engine's Emit writes it: data {"object": <the resource as the movement left it>}, stamped with
// the environment, the system actor, its place in the merchant account's chain (sequence and
// remit.ChainHash, continuing the chain the bootstrap's events began) and already dispatched, so
// the webhook worker does not send a year of history. The chain follows the order the seed writes
// (customer by customer), not the events' times; the backfill replays them by time.

// seedChain writes the seeded events of one merchant account, chained.
type seedChain struct {
	events *bulk
	mid    string
	env    remit.Environment
	seq    int64
	prev   string
}

// newSeedChain continues the merchant account's chain from its last link. The events the engine
// wrote before the seed (bootstrap, prices) are chained first: on PostgreSQL a background pass
// chains them after their commits.
func newSeedChain(s *seeder, dbh *store.DB, m remit.MerchantAccount) (*seedChain, error) {
	if err := dbh.ChainPending(s.ctx, m.ID, true); err != nil {
		return nil, err
	}
	c := &seedChain{mid: m.ID, env: m.Environment, events: s.table("events", "id", "merchant_account_id", "environment", "type",
		"object_id", "data", "created_at", "sequence", "hash", "actor", "dispatched_at")}
	err := s.db.QueryRowContext(s.ctx, `SELECT sequence, hash FROM events WHERE merchant_account_id = $1 AND sequence IS NOT NULL
		ORDER BY sequence DESC LIMIT 1`, m.ID).Scan(&c.seq, &c.prev)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return c, err
}

// emit writes one event of type typ about objectID at `at`, obj being the resource after the change.
func (c *seedChain) emit(typ remit.EventType, objectID string, at time.Time, obj any) error {
	data, err := json.Marshal(map[string]any{"object": remit.StampEnvironment(obj, c.env)})
	if err != nil {
		return err
	}
	actor := remit.SystemActor
	at = remit.FromMicros(remit.Micros(at))
	ev := remit.Event{ID: remit.NewID("evt"), Object: "event", Type: string(typ), MerchantAccountID: c.mid, Environment: c.env,
		CreatedAt: at, Data: data, Actor: &actor, Sequence: c.seq + 1}
	if ev.Hash, err = remit.ChainHash(c.prev, ev); err != nil {
		return err
	}
	c.seq, c.prev = ev.Sequence, ev.Hash
	us := remit.Micros(at)
	return c.events.add(ev.ID, c.mid, string(c.env), ev.Type, objectID, string(data), us, ev.Sequence, ev.Hash,
		remit.ActorColumn(ev.Actor), us)
}

// balanceDebit is an application or expiry entry taken from grant lot, as its event carries it.
func balanceDebit(mid, cid, id, typ string, amount int64, lot string, invoiceID *string, at time.Time) remit.BalanceEntry {
	at = remit.FromMicros(remit.Micros(at))
	return remit.BalanceEntry{Object: "balance_entry", EntryID: id, CustomerID: cid, Type: typ, Currency: "USD", Amount: amount,
		SourceEntryID: &lot, InvoiceID: invoiceID, EffectiveAt: at, Category: remit.GrantPromotional, Metadata: map[string]string{},
		MerchantAccountID: mid, CreatedAt: at}
}

// finalizedInvoice is a seeded invoice as its finalization left it (open, nothing paid yet),
// the object of its invoice.finalized.
func finalizedInvoice(inv remit.Invoice, fig remit.InvoiceFigures) remit.Invoice {
	inv.Object, inv.Currency, inv.Status, inv.CouponIDs = "invoice", "USD", remit.InvoiceOpen, []string{}
	inv.Subtotal, inv.DiscountTotal, inv.PrepaidApplied, inv.TaxTotal = fig.Subtotal, fig.DiscountTotal, fig.PrepaidApplied, fig.TaxTotal
	inv.Total, inv.AmountDue, inv.AmountRemaining = fig.Total, fig.Total, fig.Total
	inv.Metadata, inv.DunningStatus = map[string]string{}, remit.DunningNone
	inv.UpdatedAt = inv.CreatedAt
	inv.FinalizedAt = &inv.CreatedAt
	return inv
}

// seededLine is an invoice line as the seed writes it, for the events.
func seededLine(id, desc, ptype string, priced remit.PricedLine, qty int64, lf remit.LineFigures, taxes []remit.LineTax) remit.InvoiceLine {
	if taxes == nil {
		taxes = []remit.LineTax{}
	}
	return remit.InvoiceLine{Object: "invoice_line", InvoiceLineID: id, LineType: priced.LineType, PriceID: priced.PriceID,
		PriceType: ptype, Description: desc, Quantity: qty, UnitAmount: priced.Amount / qty, Amount: lf.Amount,
		PrepaidApplied: lf.PrepaidApplied, TaxAmount: lf.TaxAmount, Taxes: taxes}
}

// succeededPayment is a seeded payment as its payment.succeeded carries it: p with the fields
// every seeded payment shares, and for a card its method, settlement and processor reference
// (pm, settlement and ref: nil for a payment out of band).
func succeededPayment(p remit.Payment, pm, settlement, ref any) remit.Payment {
	p.Object, p.Attempt, p.Currency, p.Status, p.Source = "payment", 1, "USD", remit.PaymentSucceeded, remit.SourceFinalize
	p.UpdatedAt = p.CreatedAt
	if id, ok := pm.(string); ok {
		p.PaymentMethod = &remit.PaymentMethodSummary{PaymentMethodID: id, Brand: "visa", Last4: "4242"}
	}
	if id, ok := settlement.(string); ok {
		p.SettlementID = &id
	}
	if r, ok := ref.(string); ok {
		p.ProcessorReference = &r
	}
	return p
}
