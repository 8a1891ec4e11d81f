package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/remit-billing/remit"
)

// SandboxCharge is the sandbox processor's own record of a charge: what an external processor
// keeps on its side (processor.Sandbox). It is written in a transaction of its own, never in
// Remit's, as a real processor's records would be.
type SandboxCharge struct {
	IdempotencyRef string
	Reference      string
	Amount         int64
	Currency       string
	PaymentMethod  string
	Status         string
	FailureCode    string
	Fee            int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// SandboxCharges is the sandbox processor's ledger, in the store but outside Remit's transactions.
type SandboxCharges struct{ db *DB }

// SandboxCharges returns the sandbox processor's ledger.
func (db *DB) SandboxCharges() SandboxCharges { return SandboxCharges{db} }

// Record stores c unless a charge with its idempotency reference exists, and returns the stored
// one (the first, on a repeated or racing charge), in a transaction of its own.
func (s SandboxCharges) Record(ctx context.Context, c SandboxCharge) (SandboxCharge, error) {
	ctx = withoutTx(ctx)
	var out SandboxCharge
	err := s.db.Tx(ctx, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.exec(ctx, `INSERT INTO sandbox_charges (idempotency_ref, reference, amount, currency, payment_method,
			status, failure_code, fee, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (idempotency_ref) DO NOTHING`, c.IdempotencyRef, c.Reference, c.Amount, c.Currency, c.PaymentMethod,
			c.Status, nullIfEmpty(c.FailureCode), c.Fee, remit.Micros(c.CreatedAt), remit.Micros(c.UpdatedAt)); err != nil {
			return wrapErr(err, "store.SandboxCharges.Record")
		}
		var found bool
		var err error
		out, found, err = getSandboxCharge(ctx, tx.Q, c.IdempotencyRef)
		if err == nil && !found {
			err = errors.New("store.SandboxCharges.Record: the charge vanished")
		}
		return err
	})
	return out, err
}

// Get returns the charge made for an idempotency reference, if any.
func (s SandboxCharges) Get(ctx context.Context, idempotencyRef string) (SandboxCharge, bool, error) {
	return getSandboxCharge(ctx, s.db.Read(withoutTx(ctx)), idempotencyRef)
}

// Settle moves a requires_action charge to its outcome (the customer's authentication), in a
// transaction of its own. It reports false when the charge is not awaiting action.
func (s SandboxCharges) Settle(ctx context.Context, idempotencyRef, status, failureCode string, fee int64, at time.Time) (bool, error) {
	var n int64
	err := s.db.Tx(withoutTx(ctx), func(ctx context.Context, tx *Tx) error {
		var err error
		n, err = tx.exec(ctx, `UPDATE sandbox_charges SET status = $2, failure_code = $3, fee = $4, updated_at = $5
			WHERE idempotency_ref = $1 AND status = 'requires_action'`, idempotencyRef, status, nullIfEmpty(failureCode), fee, remit.Micros(at))
		return wrapErr(err, "store.SandboxCharges.Settle")
	})
	return n == 1, err
}

// List returns every sandbox charge, oldest first (for checks of Remit's payments against them).
func (s SandboxCharges) List(ctx context.Context) ([]SandboxCharge, error) {
	return queryAll(ctx, s.db.Read(withoutTx(ctx)), "store.SandboxCharges.List", scanSandboxCharge, nil,
		`SELECT `+sandboxColumns+` FROM sandbox_charges ORDER BY created_at, idempotency_ref`)
}

const sandboxColumns = `idempotency_ref, reference, amount, currency, payment_method, status, failure_code, fee, created_at, updated_at`

func getSandboxCharge(ctx context.Context, q Q, ref string) (SandboxCharge, bool, error) {
	c, err := scanSandboxCharge(q.QueryRow(ctx, `SELECT `+sandboxColumns+` FROM sandbox_charges WHERE idempotency_ref = $1`, ref))
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	return c, err == nil, wrapErr(err, "store.SandboxCharges.Get")
}

func scanSandboxCharge(row interface{ Scan(...any) error }) (SandboxCharge, error) {
	var c SandboxCharge
	var code sql.NullString
	var created, updated int64
	err := row.Scan(&c.IdempotencyRef, &c.Reference, &c.Amount, &c.Currency, &c.PaymentMethod, &c.Status, &code, &c.Fee, &created, &updated)
	c.FailureCode, c.CreatedAt, c.UpdatedAt = code.String, remit.FromMicros(created), remit.FromMicros(updated)
	return c, err
}

// SandboxRefund is the sandbox processor's own record of a refund.
type SandboxRefund struct {
	IdempotencyRef  string
	Reference       string
	ChargeReference string
	Amount          int64
	Currency        string
	CreatedAt       time.Time
}

// RecordRefund stores r unless a refund with its idempotency reference exists, and returns the
// stored one, in a transaction of its own (so a refund sent again is the same refund).
func (s SandboxCharges) RecordRefund(ctx context.Context, r SandboxRefund) (SandboxRefund, error) {
	var out SandboxRefund
	err := s.db.Tx(withoutTx(ctx), func(ctx context.Context, tx *Tx) error {
		if _, err := tx.exec(ctx, `INSERT INTO sandbox_refunds (idempotency_ref, reference, charge_reference, amount, currency, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idempotency_ref) DO NOTHING`, r.IdempotencyRef, r.Reference, r.ChargeReference,
			r.Amount, r.Currency, remit.Micros(r.CreatedAt)); err != nil {
			return wrapErr(err, "store.SandboxCharges.RecordRefund")
		}
		var created int64
		err := tx.QueryRow(ctx, `SELECT `+sandboxRefundColumns+` FROM sandbox_refunds WHERE idempotency_ref = $1`, r.IdempotencyRef).
			Scan(&out.IdempotencyRef, &out.Reference, &out.ChargeReference, &out.Amount, &out.Currency, &created)
		out.CreatedAt = remit.FromMicros(created)
		return wrapErr(err, "store.SandboxCharges.RecordRefund")
	})
	return out, err
}

// ListRefunds returns every sandbox refund, oldest first.
func (s SandboxCharges) ListRefunds(ctx context.Context) ([]SandboxRefund, error) {
	return queryAll(ctx, s.db.Read(withoutTx(ctx)), "store.SandboxCharges.ListRefunds", func(row interface{ Scan(...any) error }) (SandboxRefund, error) {
		var r SandboxRefund
		var created int64
		err := row.Scan(&r.IdempotencyRef, &r.Reference, &r.ChargeReference, &r.Amount, &r.Currency, &created)
		r.CreatedAt = remit.FromMicros(created)
		return r, err
	}, nil, `SELECT `+sandboxRefundColumns+` FROM sandbox_refunds ORDER BY created_at, idempotency_ref`)
}

const sandboxRefundColumns = `idempotency_ref, reference, charge_reference, amount, currency, created_at`
