package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// --- payment intents ---

const intentColumns = `id, invoice_id, customer_id, amount, currency, status, last_payment_error, created_at, updated_at`

func scanIntent(row interface{ Scan(...any) error }) (pi remit.PaymentIntent, err error) {
	var lastErr sql.NullString
	var created, updated int64
	err = row.Scan(&pi.PaymentIntentID, &pi.InvoiceID, &pi.CustomerID, &pi.Amount, &pi.Currency, &pi.Status, &lastErr, &created, &updated)
	if err != nil {
		return pi, err
	}
	pi.Object, pi.LastPaymentError = "payment_intent", jsonOf[remit.PaymentError](lastErr)
	pi.CreatedAt, pi.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	return pi, nil
}

// GetInvoicePaymentIntent returns the payment intent of an invoice; ok is false when it has none.
func (q Q) GetInvoicePaymentIntent(ctx context.Context, merchantAccountID, invoiceID string) (pi remit.PaymentIntent, ok bool, err error) {
	pi, err = scanIntent(q.QueryRow(ctx, `SELECT `+intentColumns+` FROM payment_intents WHERE merchant_account_id = $1 AND invoice_id = $2`,
		merchantAccountID, invoiceID))
	if ok, err = foundOr(err, "store.GetInvoicePaymentIntent"); ok {
		pi.MerchantAccountID = merchantAccountID
	}
	return pi, ok, err
}

// UpsertPaymentIntent inserts a payment intent or rewrites its amount, status and last error.
func (q Q) UpsertPaymentIntent(ctx context.Context, pi remit.PaymentIntent) error {
	_, err := q.exec(ctx, `INSERT INTO payment_intents (merchant_account_id, `+intentColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (merchant_account_id, id) DO UPDATE SET amount = excluded.amount, status = excluded.status,
		last_payment_error = excluded.last_payment_error, updated_at = excluded.updated_at`,
		pi.MerchantAccountID, pi.PaymentIntentID, pi.InvoiceID, pi.CustomerID, pi.Amount, pi.Currency, pi.Status,
		jsonText(pi.LastPaymentError), remit.Micros(pi.CreatedAt), remit.Micros(pi.UpdatedAt))
	return wrapErr(err, "store.UpsertPaymentIntent")
}

// --- payments ---

const paymentColumns = `id, payment_intent_id, invoice_id, customer_id, billing_account_id, attempt, amount, currency, status,
	method, payment_method_id, brand, last4, source, failure_code, failure_message, fee_amount, amount_refunded, settlement_id,
	processor_reference, created_at, processor, idempotency_ref, payment_method_token, next_action_url, updated_at, reconcile_after`

// paymentTable is the payments table's reads.
var paymentTable = accountTable[remit.Payment]{from: "payments", columns: paymentColumns, kind: "payment",
	scan: owning(scanPayment, func(p *remit.Payment) *string { return &p.MerchantAccountID })}

func scanPayment(row interface{ Scan(...any) error }) (p remit.Payment, err error) {
	var pmID, brand, last4, fcode, fmsg, stl, ref, idem, token, next sql.NullString
	var created, updated int64
	var reconcile sql.NullInt64
	err = row.Scan(&p.PaymentID, &p.PaymentIntentID, &p.InvoiceID, &p.CustomerID, &p.BillingAccountID, &p.Attempt, &p.Amount,
		&p.Currency, &p.Status, &p.Method, &pmID, &brand, &last4, &p.Source, &fcode, &fmsg, &p.FeeAmount, &p.AmountRefunded,
		&stl, &ref, &created, &p.Processor, &idem, &token, &next, &updated, &reconcile)
	if err != nil {
		return p, err
	}
	p.Object = "payment"
	p.IdempotencyRef, p.MethodToken, p.UpdatedAt = idem.String, token.String, remit.FromMicros(updated)
	if reconcile.Valid {
		t := remit.FromMicros(reconcile.Int64)
		p.ReconcileAfter = &t
	}
	if next.Valid {
		p.NextAction = &remit.NextAction{Type: "redirect_to_url", URL: next.String}
	}
	if pmID.Valid {
		p.PaymentMethod = &remit.PaymentMethodSummary{PaymentMethodID: pmID.String, Brand: brand.String, Last4: last4.String}
	}
	p.FailureCode, p.FailureMessage, p.SettlementID, p.ProcessorReference = textPtr(fcode), textPtr(fmsg), textPtr(stl), textPtr(ref)
	p.CreatedAt = remit.FromMicros(created)
	return p, nil
}

// LastPaymentAttempt returns the highest attempt number recorded for the invoice (0 when none).
func (q Q) LastPaymentAttempt(ctx context.Context, merchantAccountID, invoiceID string) (int64, error) {
	var n sql.NullInt64
	err := q.QueryRow(ctx, `SELECT MAX(attempt) FROM payments WHERE merchant_account_id = $1 AND invoice_id = $2`,
		merchantAccountID, invoiceID).Scan(&n)
	return n.Int64, wrapErr(err, "store.LastPaymentAttempt")
}

// InsertPayment records a payment attempt. A second attempt with the same number, or a second
// successful payment of one invoice, is a conflict (the invoice was paid meanwhile).
func (q Q) InsertPayment(ctx context.Context, p remit.Payment) error {
	var pmID, brand, last4 any
	if p.PaymentMethod != nil {
		pmID, brand, last4 = p.PaymentMethod.PaymentMethodID, p.PaymentMethod.Brand, p.PaymentMethod.Last4
	}
	_, err := q.exec(ctx, `INSERT INTO payments (merchant_account_id, `+paymentColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23, $24, $25, $26, $27, $28)`,
		p.MerchantAccountID, p.PaymentID, p.PaymentIntentID, p.InvoiceID, p.CustomerID, p.BillingAccountID, p.Attempt, p.Amount,
		p.Currency, p.Status, p.Method, pmID, brand, last4, p.Source, optText(p.FailureCode), optText(p.FailureMessage),
		p.FeeAmount, p.AmountRefunded, optText(p.SettlementID), optText(p.ProcessorReference), remit.Micros(p.CreatedAt),
		p.Processor, nullIfEmpty(p.IdempotencyRef), nullIfEmpty(p.MethodToken), nextActionURL(p), remit.Micros(p.UpdatedAt),
		optMicros(p.ReconcileAfter))
	if IsUniqueViolation(err) {
		return duplicate("attempt") // another request took this attempt number of the invoice, or has one open
	}
	return wrapErr(err, "store.InsertPayment")
}

// UpdatePaymentOutcome records what became of an attempt: its status, failure, fee, processor
// reference, next action and settlement. It reports false when the attempt was no longer in
// state from (another process recorded it first).
func (q Q) UpdatePaymentOutcome(ctx context.Context, p remit.Payment, from remit.PaymentStatus) (bool, error) {
	n, err := q.exec(ctx, `UPDATE payments SET status = $3, failure_code = $4, failure_message = $5, fee_amount = $6,
		processor_reference = $7, next_action_url = $8, settlement_id = $9, updated_at = $10, reconcile_after = $12
		WHERE merchant_account_id = $1 AND id = $2 AND status = $11`,
		p.MerchantAccountID, p.PaymentID, p.Status, optText(p.FailureCode), optText(p.FailureMessage), p.FeeAmount,
		optText(p.ProcessorReference), nextActionURL(p), optText(p.SettlementID), remit.Micros(p.UpdatedAt), from,
		optMicros(p.ReconcileAfter))
	if IsUniqueViolation(err) {
		return false, duplicate("status") // a second success of one invoice
	}
	return n == 1, wrapErr(err, "store.UpdatePaymentOutcome")
}

// ClaimOpenPayments takes up to limit attempts, of every merchant account, left processing whose
// reconcile_after (real time) is before now, the longest waiting first, and moves their
// reconcile_after to lease: the reconciler's work, leased so that another reconciler (another
// server on the same PostgreSQL) does not ask the processor about them at the same time. On
// PostgreSQL rows another transaction holds are skipped.
func (q Q) ClaimOpenPayments(ctx context.Context, now, lease time.Time, limit int) ([]remit.Payment, error) {
	query := `SELECT merchant_account_id, ` + paymentColumns + ` FROM payments WHERE status = 'processing' AND reconcile_after < $1
		ORDER BY reconcile_after LIMIT $2`
	if q.d == Postgres {
		query += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := q.Query(ctx, query, remit.Micros(now), limit)
	if err != nil {
		return nil, wrapErr(err, "store.ClaimOpenPayments")
	}
	var out []remit.Payment
	for rows.Next() {
		var mid string
		p, err := scanPayment(prefixed{rows, &mid})
		if err != nil {
			rows.Close()
			return nil, wrapErr(err, "store.ClaimOpenPayments")
		}
		p.MerchantAccountID = mid
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrapErr(err, "store.ClaimOpenPayments")
	}
	for _, p := range out {
		if _, err := q.exec(ctx, `UPDATE payments SET reconcile_after = $3 WHERE merchant_account_id = $1 AND id = $2`,
			p.MerchantAccountID, p.PaymentID, remit.Micros(lease)); err != nil {
			return nil, wrapErr(err, "store.ClaimOpenPayments")
		}
	}
	return out, nil
}

// prefixed scans one leading column into first, then the rest as the wrapped row would.
type prefixed struct {
	rows  interface{ Scan(...any) error }
	first *string
}

func (p prefixed) Scan(dest ...any) error { return p.rows.Scan(append([]any{p.first}, dest...)...) }

func nextActionURL(p remit.Payment) any {
	if p.NextAction == nil {
		return nil
	}
	return p.NextAction.URL
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SetPaymentSettlement records the settlement a payment landed in.
func (q Q) SetPaymentSettlement(ctx context.Context, merchantAccountID, paymentID, settlementID string) error {
	_, err := q.exec(ctx, `UPDATE payments SET settlement_id = $3 WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, paymentID, settlementID)
	return wrapErr(err, "store.SetPaymentSettlement")
}

// GetPayment returns a payment or not_found. Locked, the row is locked (PostgreSQL).
func (q Q) GetPayment(ctx context.Context, merchantAccountID, paymentID string, read Read) (remit.Payment, error) {
	return paymentTable.get(ctx, q, "store.GetPayment", merchantAccountID, paymentID, read)
}

// ListInvoicePayments returns an invoice's payment attempts, first attempt first.
func (q Q) ListInvoicePayments(ctx context.Context, merchantAccountID, invoiceID string) ([]remit.Payment, error) {
	return paymentTable.all(ctx, q, "store.ListInvoicePayments", merchantAccountID,
		paymentTable.selectAll()+` AND invoice_id = $2 ORDER BY attempt`, merchantAccountID, invoiceID)
}

// AddPaymentRefund adds amount (negative: a failed refund taken back) to a payment's refunded
// total. It reports false (and changes nothing) when that would refund more than was paid, or less
// than nothing.
func (q Q) AddPaymentRefund(ctx context.Context, merchantAccountID, paymentID string, amount int64) (bool, error) {
	n, err := q.exec(ctx, `UPDATE payments SET amount_refunded = amount_refunded + $3
		WHERE merchant_account_id = $1 AND id = $2 AND amount_refunded + $3 <= amount AND amount_refunded + $3 >= 0`, merchantAccountID, paymentID, amount)
	return n == 1, wrapErr(err, "store.AddPaymentRefund")
}

// --- receipts ---

const receiptColumns = `id, number, invoice_id, invoice_number, customer_id, customer_external_id, billing_account_id, payment_id,
	payment_intent_id, amount, amount_refunded, currency, status, method, brand, last4, created_at, updated_at`

// receiptTable is the payment_receipts table's reads.
var receiptTable = accountTable[remit.PaymentReceipt]{from: "payment_receipts", columns: receiptColumns, kind: "payment receipt",
	scan: owning(scanReceipt, func(r *remit.PaymentReceipt) *string { return &r.MerchantAccountID })}

func scanReceipt(row interface{ Scan(...any) error }) (r remit.PaymentReceipt, err error) {
	var invNumber, ext, brand, last4 sql.NullString
	var created, updated int64
	err = row.Scan(&r.ReceiptID, &r.ReceiptNumber, &r.InvoiceID, &invNumber, &r.CustomerID, &ext, &r.BillingAccountID, &r.PaymentID,
		&r.PaymentIntentID, &r.Amount, &r.AmountRefunded, &r.Currency, &r.Status, &r.PaymentMethod.Type, &brand, &last4, &created, &updated)
	if err != nil {
		return r, err
	}
	r.Object, r.InvoiceNumber, r.CustomerExternalID = "payment_receipt", textPtr(invNumber), textPtr(ext)
	r.PaymentMethod.Brand, r.PaymentMethod.Last4 = textPtr(brand), textPtr(last4)
	r.CreatedAt, r.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	return r, nil
}

// InsertReceipt stores a receipt.
func (q Q) InsertReceipt(ctx context.Context, r remit.PaymentReceipt) error {
	_, err := q.exec(ctx, `INSERT INTO payment_receipts (merchant_account_id, `+receiptColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		r.MerchantAccountID, r.ReceiptID, r.ReceiptNumber, r.InvoiceID, optText(r.InvoiceNumber), r.CustomerID,
		optText(r.CustomerExternalID), r.BillingAccountID, r.PaymentID, r.PaymentIntentID, r.Amount, r.AmountRefunded, r.Currency,
		r.Status, r.PaymentMethod.Type, optText(r.PaymentMethod.Brand), optText(r.PaymentMethod.Last4),
		remit.Micros(r.CreatedAt), remit.Micros(r.UpdatedAt))
	return wrapErr(err, "store.InsertReceipt")
}

// GetReceipt returns a receipt or not_found.
func (q Q) GetReceipt(ctx context.Context, merchantAccountID, receiptID string) (remit.PaymentReceipt, error) {
	return receiptTable.get(ctx, q, "store.GetReceipt", merchantAccountID, receiptID, Unlocked)
}

// GetPaymentReceipt returns the receipt of a payment or not_found; locked, the row is locked.
func (q Q) GetPaymentReceipt(ctx context.Context, merchantAccountID, paymentID string, read Read) (remit.PaymentReceipt, error) {
	return receiptTable.getWhere(ctx, q, "store.GetPaymentReceipt", merchantAccountID, `payment_id = $2`, paymentID, read)
}

// UpdateReceiptRefund writes a receipt's refunded amount and status.
func (q Q) UpdateReceiptRefund(ctx context.Context, r remit.PaymentReceipt) error {
	_, err := q.exec(ctx, `UPDATE payment_receipts SET amount_refunded = $3, status = $4, updated_at = $5
		WHERE merchant_account_id = $1 AND id = $2`, r.MerchantAccountID, r.ReceiptID, r.AmountRefunded, r.Status, remit.Micros(r.UpdatedAt))
	return wrapErr(err, "store.UpdateReceiptRefund")
}

// ReceiptFilter filters the receipt list; empty fields do not filter.
type ReceiptFilter struct {
	CustomerID         string
	CustomerExternalID string
	BillingAccountID   string
	InvoiceID          string
	PaymentID          string
	PaymentIntentID    string
	Status             string
	// CreatedFrom and CreatedTo bound the creation time, [from, to) in Unix microseconds; 0: no bound.
	CreatedFrom, CreatedTo int64
	Offset                 int64
	Limit                  int
}

// ListReceipts returns up to f.Limit+1 receipts newest first after skipping f.Offset (the extra one
// tells the caller there is a next page).
func (q Q) ListReceipts(ctx context.Context, merchantAccountID string, f ReceiptFilter) ([]remit.PaymentReceipt, error) {
	query, args := equalFilters(receiptTable.selectAll(), []any{merchantAccountID},
		colValue{"customer_id", f.CustomerID}, colValue{"customer_external_id", f.CustomerExternalID}, colValue{"billing_account_id", f.BillingAccountID},
		colValue{"invoice_id", f.InvoiceID}, colValue{"payment_id", f.PaymentID}, colValue{"payment_intent_id", f.PaymentIntentID}, colValue{"status", f.Status})
	query, args = pageRange(query, args, ListPage{CreatedFrom: f.CreatedFrom, CreatedTo: f.CreatedTo})
	args = append(args, f.Limit+1, f.Offset)
	query += ` ORDER BY created_at DESC, id DESC LIMIT $` + itoa(len(args)-1) + ` OFFSET $` + itoa(len(args))
	return receiptTable.all(ctx, q, "store.ListReceipts", merchantAccountID, query, args...)
}

// --- settlements ---

const settlementColumns = `id, currency, status, period_start, period_end, gross_amount, refund_amount, fee_amount, payment_count,
	refund_count, closed_at, paid_at, payout_id, created_at, updated_at`

// settlementTable is the settlements table's reads.
var settlementTable = accountTable[remit.Settlement]{from: "settlements", columns: settlementColumns, kind: "settlement",
	scan: owning(scanSettlement, func(s *remit.Settlement) *string { return &s.MerchantAccountID })}

func scanSettlement(row interface{ Scan(...any) error }) (s remit.Settlement, err error) {
	var start, end, created, updated int64
	var closed, paid sql.NullInt64
	var payout sql.NullString
	err = row.Scan(&s.SettlementID, &s.Currency, &s.Status, &start, &end, &s.GrossAmount, &s.RefundAmount, &s.FeeAmount,
		&s.PaymentCount, &s.RefundCount, &closed, &paid, &payout, &created, &updated)
	if err != nil {
		return s, err
	}
	s.Object = "settlement"
	s.PeriodStart, s.PeriodEnd = remit.FromMicros(start), remit.FromMicros(end)
	s.NetAmount = s.GrossAmount - s.RefundAmount - s.FeeAmount
	s.ClosedAt, s.PaidAt, s.PayoutID = timePtr(closed), timePtr(paid), textPtr(payout)
	s.CreatedAt, s.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	return s, nil
}

// GetDaySettlement returns the settlement of the merchant account for currency and the day starting
// at periodStart, locked (PostgreSQL); ok is false when there is none.
func (q Q) GetDaySettlement(ctx context.Context, merchantAccountID, currency string, periodStart time.Time) (s remit.Settlement, ok bool, err error) {
	s, err = scanSettlement(q.QueryRow(ctx, `SELECT `+settlementColumns+` FROM settlements
		WHERE merchant_account_id = $1 AND currency = $2 AND period_start = $3`+q.ForUpdate(),
		merchantAccountID, currency, remit.Micros(periodStart)))
	if ok, err = foundOr(err, "store.GetDaySettlement"); ok {
		s.MerchantAccountID = merchantAccountID
	}
	return s, ok, err
}

// InsertSettlement creates a settlement unless its day already has one; it reports whether it did.
func (q Q) InsertSettlement(ctx context.Context, s remit.Settlement) (bool, error) {
	n, err := q.exec(ctx, `INSERT INTO settlements (merchant_account_id, `+settlementColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (merchant_account_id, currency, period_start) DO NOTHING`,
		s.MerchantAccountID, s.SettlementID, s.Currency, s.Status, remit.Micros(s.PeriodStart), remit.Micros(s.PeriodEnd),
		s.GrossAmount, s.RefundAmount, s.FeeAmount, s.PaymentCount, s.RefundCount, optMicros(s.ClosedAt), optMicros(s.PaidAt),
		optText(s.PayoutID), remit.Micros(s.CreatedAt), remit.Micros(s.UpdatedAt))
	return n == 1, wrapErr(err, "store.InsertSettlement")
}

// UpdateSettlement writes a settlement's figures and state.
func (q Q) UpdateSettlement(ctx context.Context, s remit.Settlement) error {
	_, err := q.exec(ctx, `UPDATE settlements SET status = $3, gross_amount = $4, refund_amount = $5, fee_amount = $6,
		payment_count = $7, refund_count = $8, closed_at = $9, paid_at = $10, payout_id = $11, updated_at = $12
		WHERE merchant_account_id = $1 AND id = $2`,
		s.MerchantAccountID, s.SettlementID, s.Status, s.GrossAmount, s.RefundAmount, s.FeeAmount, s.PaymentCount, s.RefundCount,
		optMicros(s.ClosedAt), optMicros(s.PaidAt), optText(s.PayoutID), remit.Micros(s.UpdatedAt))
	return wrapErr(err, "store.UpdateSettlement")
}

// GetSettlement returns a settlement or not_found; locked, the row is locked (PostgreSQL).
func (q Q) GetSettlement(ctx context.Context, merchantAccountID, settlementID string, read Read) (remit.Settlement, error) {
	return settlementTable.get(ctx, q, "store.GetSettlement", merchantAccountID, settlementID, read)
}

// SettlementFilter filters and pages the settlement list (Limit 0: every row).
type SettlementFilter struct {
	Status string // "" for all
	ListPage
}

// ListSettlements returns settlements newest first after the keyset position: up to f.Limit+1 of
// them (the extra one tells the caller there is a next page), or all of them when f.Limit is 0.
// With the (merchant_account_id[, status], created_at, id) indexes a page costs the same at any
// depth.
func (q Q) ListSettlements(ctx context.Context, merchantAccountID string, f SettlementFilter) ([]remit.Settlement, error) {
	return settlementTable.list(ctx, q, "store.ListSettlements", merchantAccountID, f.ListPage, Eq{"status", f.Status})
}

// --- payouts ---

// InsertPayout stores a payout.
func (q Q) InsertPayout(ctx context.Context, p remit.Payout) error {
	_, err := q.exec(ctx, `INSERT INTO payouts (merchant_account_id, id, settlement_id, amount, currency, status, bank_account_last4,
		arrival_date, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		p.MerchantAccountID, p.PayoutID, p.SettlementID, p.Amount, p.Currency, p.Status, optText(p.BankAccountLast4),
		remit.Micros(p.ArrivalDate), remit.Micros(p.CreatedAt))
	return wrapErr(err, "store.InsertPayout")
}

// GetPayout returns a payout or not_found.
func (q Q) GetPayout(ctx context.Context, merchantAccountID, payoutID string) (p remit.Payout, err error) {
	var last4 sql.NullString
	var arrival, created int64
	err = q.QueryRow(ctx, `SELECT id, settlement_id, amount, currency, status, bank_account_last4, arrival_date, created_at
		FROM payouts WHERE merchant_account_id = $1 AND id = $2`, merchantAccountID, payoutID).
		Scan(&p.PayoutID, &p.SettlementID, &p.Amount, &p.Currency, &p.Status, &last4, &arrival, &created)
	if err = notFoundOr(err, "payout", payoutID, "store.GetPayout"); err != nil {
		return p, err
	}
	p.Object, p.MerchantAccountID, p.BankAccountLast4 = "payout", merchantAccountID, textPtr(last4)
	p.ArrivalDate, p.CreatedAt = remit.FromMicros(arrival), remit.FromMicros(created)
	return p, nil
}

// PaymentFilter selects payments for the payments list.
type PaymentFilter struct {
	InvoiceID, CustomerID, Status string
	ListPage
}

// ListPayments returns the merchant account's payments newest first, filtered, one more than
// Limit (to tell whether there is a next page).
func (q Q) ListPayments(ctx context.Context, merchantAccountID string, f PaymentFilter) ([]remit.Payment, error) {
	return paymentTable.list(ctx, q, "store.ListPayments", merchantAccountID, f.ListPage,
		Eq{"invoice_id", f.InvoiceID}, Eq{"customer_id", f.CustomerID}, Eq{"status", f.Status})
}

// FindPayment returns the payment with this ID in whichever merchant account has it (a processor's
// webhook names the attempt by its ID alone), and whether there is one.
func (q Q) FindPayment(ctx context.Context, paymentID string) (remit.Payment, bool, error) {
	var mid string
	p, err := scanPayment(prefixed{q.QueryRow(ctx, `SELECT merchant_account_id, `+paymentColumns+` FROM payments WHERE id = $1`, paymentID), &mid})
	p.MerchantAccountID = mid
	ok, err := foundOr(err, "store.FindPayment")
	return p, ok, err
}

// AnyOpenPaymentDue reports whether an attempt left processing is due for the reconciler.
func (q Q) AnyOpenPaymentDue(ctx context.Context, now time.Time) (bool, error) {
	return q.exists(ctx, "store.AnyOpenPaymentDue", `SELECT 1 FROM payments WHERE status = 'processing' AND reconcile_after < $1 LIMIT 1`, remit.Micros(now))
}

// AnyPendingRefundDue reports whether a refund left pending is due for the reconciler.
func (q Q) AnyPendingRefundDue(ctx context.Context, now time.Time) (bool, error) {
	return q.exists(ctx, "store.AnyPendingRefundDue", `SELECT 1 FROM refunds WHERE status = 'pending' AND reconcile_after < $1 LIMIT 1`, remit.Micros(now))
}

// exists reports whether query finds a row.
func (q Q) exists(ctx context.Context, op, query string, args ...any) (bool, error) {
	var one int
	return foundOr(q.QueryRow(ctx, query, args...).Scan(&one), op)
}
