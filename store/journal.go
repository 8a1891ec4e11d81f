package store

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// The general ledger's tables (migration 00038, docs/ledger.md): journal entries, their lines
// and the revenue schedules.

// InsertJournalEntry stores an entry and its lines. A movement posts once: when its source
// (type, id, currency) already has an entry, nothing is written and posted is false.
func (q Q) InsertJournalEntry(ctx context.Context, e remit.JournalEntry) (posted bool, err error) {
	n, err := q.exec(ctx, `INSERT INTO journal_entries (merchant_account_id, id, currency, posted_at, source_type, source_id, invoice_id, description)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (merchant_account_id, source_type, source_id, currency) DO NOTHING`,
		e.MerchantAccountID, e.EntryID, e.Currency, remit.Micros(e.PostedAt), e.Source.Type, e.Source.ID, nullIfEmpty(e.InvoiceID), e.Description)
	if err != nil || n == 0 {
		return false, wrapErr(err, "store.InsertJournalEntry")
	}
	for i, l := range e.Lines {
		if _, err := q.exec(ctx, `INSERT INTO journal_lines (merchant_account_id, entry_id, line_no, account, currency, posted_at, debit, credit, price_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, e.MerchantAccountID, e.EntryID, i, l.Account, e.Currency, remit.Micros(e.PostedAt),
			l.Debit, l.Credit, l.PriceID); err != nil {
			return false, wrapErr(err, "store.InsertJournalEntry")
		}
	}
	return true, nil
}

const journalColumns = `id, currency, posted_at, source_type, source_id, COALESCE(invoice_id, ''), description`

// journalTable is the journal_entries table's reads (its rows e, for a list's filter of their lines).
var journalTable = accountTable[remit.JournalEntry]{from: "journal_entries e", columns: journalColumns, kind: "journal entry", scan: scanJournalEntry}

func scanJournalEntry(row interface{ Scan(...any) error }, merchantAccountID string) (remit.JournalEntry, error) {
	e := remit.JournalEntry{Object: "journal_entry", MerchantAccountID: merchantAccountID}
	var at int64
	err := row.Scan(&e.EntryID, &e.Currency, &at, &e.Source.Type, &e.Source.ID, &e.InvoiceID, &e.Description)
	e.PostedAt = remit.FromMicros(at)
	return e, err
}

// JournalFilter narrows a list of journal entries: entries with a line on Account (empty: all).
type JournalFilter struct {
	Account string
	ListPage
}

// ListJournalEntries lists a merchant account's entries newest first (posted_at, id), with their
// lines.
func (q Q) ListJournalEntries(ctx context.Context, merchantAccountID string, f JournalFilter) ([]remit.JournalEntry, error) {
	base, args := journalTable.selectAll(), []any{merchantAccountID}
	if f.Account != "" {
		args = append(args, f.Account)
		base += ` AND EXISTS (SELECT 1 FROM journal_lines l WHERE l.merchant_account_id = e.merchant_account_id AND l.entry_id = e.id AND l.account = $2)`
	}
	f.TimeColumn = "posted_at"
	out, err := journalTable.listFrom(ctx, q, "store.ListJournalEntries", merchantAccountID, base, args, f.ListPage)
	if err != nil {
		return nil, err
	}
	return out, q.journalLines(ctx, merchantAccountID, out)
}

// GetJournalEntry returns one entry with its lines, or not_found.
func (q Q) GetJournalEntry(ctx context.Context, merchantAccountID, entryID string) (remit.JournalEntry, error) {
	e, err := journalTable.get(ctx, q, "store.GetJournalEntry", merchantAccountID, entryID, Unlocked)
	if err != nil {
		return e, err
	}
	one := []remit.JournalEntry{e}
	err = q.journalLines(ctx, merchantAccountID, one)
	return one[0], err
}

// journalLines fills the lines of entries, in their order, with one query.
func (q Q) journalLines(ctx context.Context, merchantAccountID string, entries []remit.JournalEntry) error {
	at := make(map[string]int, len(entries))
	ids := make([]string, len(entries))
	for i, e := range entries {
		at[e.EntryID] = i
		ids[i] = e.EntryID
		entries[i].Lines = []remit.Posting{}
	}
	type line struct {
		entry   string
		posting remit.Posting
	}
	return eachAmong(ctx, q, "store.journalLines", merchantAccountID, ids, func(in string) string {
		return `SELECT entry_id, account, debit, credit FROM journal_lines WHERE merchant_account_id = $1
		AND entry_id IN (` + in + `) ORDER BY entry_id, line_no`
	}, func(row scanner) (l line, err error) {
		return l, row.Scan(&l.entry, &l.posting.Account, &l.posting.Debit, &l.posting.Credit)
	}, func(l line) {
		i := at[l.entry]
		entries[i].Lines = append(entries[i].Lines, l.posting)
	})
}

// AccountTotal is one account's debits and credits in one currency.
type AccountTotal struct {
	Account, Currency string
	Debit, Credit     int64
}

// JournalTotals sums every account's lines per currency posted before `before` (0: all), sorted by
// currency and account.
func (q Q) JournalTotals(ctx context.Context, merchantAccountID string, before int64) ([]AccountTotal, error) {
	query, args := `SELECT account, currency, SUM(debit), SUM(credit) FROM journal_lines WHERE merchant_account_id = $1`, []any{merchantAccountID}
	if before != 0 {
		args = append(args, before)
		query += ` AND posted_at < $2`
	}
	query += ` GROUP BY currency, account ORDER BY currency, account`
	return queryAll(ctx, q, "store.JournalTotals", func(row interface{ Scan(...any) error }) (AccountTotal, error) {
		var t AccountTotal
		err := row.Scan(&t.Account, &t.Currency, &t.Debit, &t.Credit)
		return t, err
	}, nil, query, args...)
}

// InvoiceAccountBalance is the debits less the credits on account of the entries that name the
// invoice.
func (q Q) InvoiceAccountBalance(ctx context.Context, merchantAccountID, invoiceID, account string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT COALESCE(SUM(l.debit - l.credit), 0) FROM journal_entries e JOIN journal_lines l
		ON l.merchant_account_id = e.merchant_account_id AND l.entry_id = e.id
		WHERE e.merchant_account_id = $1 AND e.invoice_id = $2 AND l.account = $3`, merchantAccountID, invoiceID, account).Scan(&n)
	return n, wrapErr(err, "store.InvoiceAccountBalance")
}

// UnbalancedJournalEntries returns the IDs of a merchant account's entries whose debits and
// credits differ, or that have a negative or two-sided line.
func (q Q) UnbalancedJournalEntries(ctx context.Context, merchantAccountID string) ([]string, error) {
	return queryStrings(ctx, q, "store.UnbalancedJournalEntries", `SELECT entry_id FROM journal_lines WHERE merchant_account_id = $1 GROUP BY entry_id
		HAVING SUM(debit) <> SUM(credit) OR MIN(debit) < 0 OR MIN(credit) < 0 OR MAX(CASE WHEN debit > 0 AND credit > 0 THEN 1 ELSE 0 END) = 1
		ORDER BY entry_id`, merchantAccountID)
}

// --- revenue schedules ---

const scheduleColumns = `invoice_line_id, invoice_id, price_id, currency, period_start, period_end, amount, deferred, recognized_through`

func scanSchedule(row interface{ Scan(...any) error }) (remit.RevenueSchedule, error) {
	var s remit.RevenueSchedule
	var start, end, through int64
	err := row.Scan(&s.InvoiceLineID, &s.InvoiceID, &s.PriceID, &s.Currency, &start, &end, &s.Amount, &s.Deferred, &through)
	s.PeriodStart, s.PeriodEnd, s.RecognizedThrough = remit.FromMicros(start), remit.FromMicros(end), remit.FromMicros(through)
	return s, err
}

// UpsertRevenueSchedule stores a line's schedule as it now is.
func (q Q) UpsertRevenueSchedule(ctx context.Context, merchantAccountID string, s remit.RevenueSchedule) error {
	_, err := q.exec(ctx, `INSERT INTO revenue_schedules (merchant_account_id, `+scheduleColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (merchant_account_id, invoice_line_id) DO UPDATE SET amount = excluded.amount, deferred = excluded.deferred,
		recognized_through = excluded.recognized_through`,
		merchantAccountID, s.InvoiceLineID, s.InvoiceID, s.PriceID, s.Currency, remit.Micros(s.PeriodStart), remit.Micros(s.PeriodEnd),
		s.Amount, s.Deferred, remit.Micros(s.RecognizedThrough))
	return wrapErr(err, "store.UpsertRevenueSchedule")
}

// InvoiceRevenueSchedules returns an invoice's schedules, by line, locked (PostgreSQL): the caller
// changes them (a credit note, a void) while the recognition job may.
func (q Q) InvoiceRevenueSchedules(ctx context.Context, merchantAccountID, invoiceID string) ([]remit.RevenueSchedule, error) {
	return queryAll(ctx, q, "store.InvoiceRevenueSchedules", scanSchedule, nil, `SELECT `+scheduleColumns+` FROM revenue_schedules
		WHERE merchant_account_id = $1 AND invoice_id = $2 ORDER BY invoice_line_id`+q.ForUpdate(), merchantAccountID, invoiceID)
}

// DueRevenueSchedules returns the schedules with revenue still deferred whose recognition is
// behind `before`, locked (PostgreSQL), in line order (the order every locker takes them in).
func (q Q) DueRevenueSchedules(ctx context.Context, merchantAccountID string, before time.Time) ([]remit.RevenueSchedule, error) {
	return queryAll(ctx, q, "store.DueRevenueSchedules", scanSchedule, nil, `SELECT `+scheduleColumns+` FROM revenue_schedules
		WHERE merchant_account_id = $1 AND recognized_through < $2 AND deferred > 0 ORDER BY invoice_line_id`+q.ForUpdate(),
		merchantAccountID, remit.Micros(before))
}

// DeferredRevenueTotals sums the revenue still deferred per currency.
func (q Q) DeferredRevenueTotals(ctx context.Context, merchantAccountID string) (map[string]int64, error) {
	rows, err := queryAll(ctx, q, "store.DeferredRevenueTotals", func(row interface{ Scan(...any) error }) (AccountTotal, error) {
		var t AccountTotal
		return t, row.Scan(&t.Currency, &t.Credit)
	}, nil, `SELECT currency, SUM(deferred) FROM revenue_schedules WHERE merchant_account_id = $1 GROUP BY currency`, merchantAccountID)
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Currency] = r.Credit
	}
	return out, err
}

// ExportJournalLines reads the journal-entries export: every line of the merchant account's
// entries posted in the range, oldest entry first, each entry's lines in order; account keeps the
// lines on that account, currency the entries in it.
func (q Q) ExportJournalLines(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.JournalLineRecord) error) error {
	base := `SELECT e.id, e.posted_at, e.currency, e.description, e.source_type, e.source_id, l.account, l.debit, l.credit
		FROM journal_entries e JOIN journal_lines l ON l.merchant_account_id = e.merchant_account_id AND l.entry_id = e.id
		WHERE e.merchant_account_id = $1`
	query, args := exportQuery(base, []any{merchantAccountID}, f, "e.posted_at", "e.posted_at, e.id, l.line_no",
		Eq{"l.account", f.Account}, Eq{"e.currency", f.Currency})
	return eachRow(ctx, q, "store.ExportJournalLines", func(r scanner) (rec remit.JournalLineRecord, err error) {
		var at int64
		err = r.Scan(&rec.EntryID, &at, &rec.Currency, &rec.Description, &rec.Source.Type, &rec.Source.ID, &rec.Line.Account,
			&rec.Line.Debit, &rec.Line.Credit)
		rec.PostedAt = remit.FromMicros(at)
		return rec, err
	}, fn, query, args...)
}

// GeneralLedgerFacts reads, per currency, the journal's receivable, customer credit and deferred
// revenue beside the money state's figures for them (remit.CheckGeneralLedgerFacts), sorted by
// currency.
func (q Q) GeneralLedgerFacts(ctx context.Context, merchantAccountID string) ([]remit.GeneralLedgerFacts, error) {
	by := map[string]*remit.GeneralLedgerFacts{}
	at := func(c string) *remit.GeneralLedgerFacts {
		if by[c] == nil {
			by[c] = &remit.GeneralLedgerFacts{Currency: c}
		}
		return by[c]
	}
	totals, err := q.JournalTotals(ctx, merchantAccountID, 0)
	if err != nil {
		return nil, err
	}
	for _, t := range totals {
		switch t.Account {
		case remit.AccountReceivable:
			at(t.Currency).Receivable = t.Debit - t.Credit
		case remit.AccountCustomerCredit:
			at(t.Currency).CustomerCredit = t.Credit - t.Debit
		case remit.AccountDeferredRevenue:
			at(t.Currency).DeferredRevenue = t.Credit - t.Debit
		}
	}
	sums := []struct {
		query string
		field func(*remit.GeneralLedgerFacts) *int64
	}{
		{`SELECT currency, COALESCE(SUM(amount_remaining), 0) FROM invoices WHERE merchant_account_id = $1 AND status = 'open' GROUP BY currency`,
			func(f *remit.GeneralLedgerFacts) *int64 { return &f.OpenRemaining }},
		{`SELECT currency, COALESCE(SUM(remaining), 0) FROM balance_entries WHERE merchant_account_id = $1 AND type IN ('credit_note', 'top_up') GROUP BY currency`,
			func(f *remit.GeneralLedgerFacts) *int64 { return &f.PaidCredit }},
		{`SELECT i.currency, COALESCE(SUM(l.amount - l.discount_amount), 0) FROM invoice_lines l JOIN invoices i
			ON i.merchant_account_id = l.merchant_account_id AND i.id = l.invoice_id
			WHERE l.merchant_account_id = $1 AND i.status IN ('open', 'uncollectible') AND l.price_type IN ('credit_grant', 'credit_top_up')
			GROUP BY i.currency`, func(f *remit.GeneralLedgerFacts) *int64 { return &f.UnpaidTopUps }},
		{`SELECT currency, COALESCE(SUM(deferred), 0) FROM revenue_schedules WHERE merchant_account_id = $1 GROUP BY currency`,
			func(f *remit.GeneralLedgerFacts) *int64 { return &f.Unrecognized }},
	}
	for _, s := range sums {
		rows, err := queryAll(ctx, q, "store.GeneralLedgerFacts", func(row interface{ Scan(...any) error }) (AccountTotal, error) {
			var t AccountTotal
			return t, row.Scan(&t.Currency, &t.Debit)
		}, nil, s.query, merchantAccountID)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			*s.field(at(r.Currency)) = r.Debit
		}
	}
	out := make([]remit.GeneralLedgerFacts, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b remit.GeneralLedgerFacts) int { return strings.Compare(a.Currency, b.Currency) })
	return out, nil
}

// PostedEvent is an event of a money movement as the backfill replays it. Sequence is its place in
// the chain (0: unchained).
type PostedEvent struct {
	ID, Type, ObjectID string
	Data               []byte
	CreatedAt          time.Time
	Sequence           int64
}

// EventCursor is where a page of EventsOfTypes starts: after the event it names in the replay's
// order (the zero cursor: from the first). After gives the cursor past an event.
type EventCursor struct {
	CreatedAt int64 // microseconds
	Sequence  int64
	ID        string
}

// After is the cursor of the page that follows e.
func (e PostedEvent) After() EventCursor {
	return EventCursor{CreatedAt: remit.Micros(e.CreatedAt), Sequence: e.Sequence, ID: e.ID}
}

// EventsOfTypes returns a page of at most limit of a merchant account's events of the given types
// in the order they happened (creation, then chain sequence, then ID), those after the cursor, for
// the backfill's replay: it pages through the outbox (docs/ledger.md "Backfill") rather than
// holding it in memory. The page walks the account's events in time order (events_merchant) and
// filters their types: comparing the type as an expression (concatenated with the empty string)
// keeps SQLite off events_type, where it took the IN list and then sorted every matching event
// for each page (on the harness's full seed, over a second a page and an hour or more in all).
func (q Q) EventsOfTypes(ctx context.Context, merchantAccountID string, types []string, after EventCursor, limit int) ([]PostedEvent, error) {
	if after == (EventCursor{}) {
		after.CreatedAt = -1 << 63
	}
	args := []any{merchantAccountID, after.CreatedAt, after.Sequence, after.ID}
	marks := make([]string, len(types))
	for i, t := range types {
		args = append(args, t)
		marks[i] = "$" + itoa(len(args))
	}
	return queryAll(ctx, q, "store.EventsOfTypes", func(row interface{ Scan(...any) error }) (PostedEvent, error) {
		var e PostedEvent
		var data string
		var at int64
		err := row.Scan(&e.ID, &e.Type, &e.ObjectID, &data, &at, &e.Sequence)
		e.Data, e.CreatedAt = []byte(data), remit.FromMicros(at)
		return e, err
	}, nil, `SELECT id, type, object_id, data, created_at, COALESCE(sequence, 0) FROM events
		WHERE merchant_account_id = $1 AND type || '' IN (`+strings.Join(marks, ", ")+`) AND created_at >= $2
		AND (created_at > $2 OR COALESCE(sequence, 0) > $3 OR (COALESCE(sequence, 0) = $3 AND id > $4))
		ORDER BY created_at, COALESCE(sequence, 0), id LIMIT `+itoa(limit), args...)
}

// JournalSourcePosted reports whether a movement (source type and ID) has an entry already.
func (q Q) JournalSourcePosted(ctx context.Context, merchantAccountID, sourceType, sourceID string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM journal_entries WHERE merchant_account_id = $1 AND source_type = $2 AND source_id = $3`,
		merchantAccountID, sourceType, sourceID).Scan(&n)
	return n > 0, wrapErr(err, "store.JournalSourcePosted")
}

// PriceTotal is one price's lines on one account in one currency, summed.
type PriceTotal struct {
	PriceID, Account, Currency string
	Debit, Credit              int64
}

// RevenueTotals sums the revenue and deferred revenue lines per price and currency posted in
// [from, to) (from 0: from the start).
func (q Q) RevenueTotals(ctx context.Context, merchantAccountID string, from, to int64) ([]PriceTotal, error) {
	return queryAll(ctx, q, "store.RevenueTotals", func(row interface{ Scan(...any) error }) (PriceTotal, error) {
		var t PriceTotal
		return t, row.Scan(&t.PriceID, &t.Account, &t.Currency, &t.Debit, &t.Credit)
	}, nil, `SELECT price_id, account, currency, SUM(debit), SUM(credit) FROM journal_lines
		WHERE merchant_account_id = $1 AND account IN ('revenue', 'deferred_revenue') AND posted_at >= $2 AND posted_at < $3
		GROUP BY currency, price_id, account ORDER BY currency, price_id, account`, merchantAccountID, from, to)
}
