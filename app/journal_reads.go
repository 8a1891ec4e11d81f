package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// ListJournalEntries lists the merchant account's journal entries, newest first (GET
// /v1/ledger/entries); createdFrom and createdTo bound postedAt.
//
// Errors: invalid (limit, cursor, the range, an account not of the chart).
func (j *Journal) ListJournalEntries(ctx context.Context, m remit.MerchantAccount, in remit.JournalQuery) (remit.List[remit.JournalEntry], error) {
	check := func(p *remit.Problems) {
		if _, ok := remit.LookupAccount(in.Account); in.Account != "" && !ok {
			p.Add(remit.InQuery, "account", "invalid_enum", "account is not an account of the chart (docs/ledger.md).")
		}
	}
	return listPage(ctx, j.core, scopeOf(m), "ledger_entries", in.ListQuery, check, func(page store.ListPage) ([]remit.JournalEntry, error) {
		return j.DB.Read(ctx).ListJournalEntries(ctx, m.ID, store.JournalFilter{Account: in.Account, ListPage: page})
	})
}

// GetJournalEntry returns one journal entry.
//
// Errors: not_found.
func (j *Journal) GetJournalEntry(ctx context.Context, m remit.MerchantAccount, entryID string) (remit.JournalEntry, error) {
	return j.DB.Read(ctx).GetJournalEntry(ctx, m.ID, entryID)
}

// GetLedgerBalances returns every account's balance per currency as of asOf (RFC 3339; empty:
// now on the merchant clock), counting the entries posted at or before it.
//
// Errors: invalid (asOf).
func (j *Journal) GetLedgerBalances(ctx context.Context, m remit.MerchantAccount, asOf string) (remit.LedgerBalances, error) {
	at := micro(j.Now(m))
	if asOf != "" {
		t, err := time.Parse(time.RFC3339Nano, asOf)
		if err != nil {
			var p remit.Problems
			p.Add(remit.InQuery, "asOf", "invalid_format", "asOf must be an RFC 3339 date-time.")
			return remit.LedgerBalances{}, p.Err()
		}
		at = micro(t)
	}
	totals, err := j.DB.Read(ctx).JournalTotals(ctx, m.ID, remit.Micros(at)+1)
	if err != nil {
		return remit.LedgerBalances{}, err
	}
	return remit.LedgerBalances{Object: "ledger_balances", AsOf: at, Balances: balancesOf(totals), Environment: m.Environment,
		MerchantAccountID: m.ID}, nil
}

// balancesOf lays totals out as every account of the chart in each currency they name, by
// currency then in the chart's order.
func balancesOf(totals []store.AccountTotal) []remit.AccountBalance {
	by := map[string]map[string]store.AccountTotal{}
	var currencies []string
	for _, t := range totals {
		if by[t.Currency] == nil {
			by[t.Currency] = map[string]store.AccountTotal{}
			currencies = append(currencies, t.Currency)
		}
		by[t.Currency][t.Account] = t
	}
	out := []remit.AccountBalance{}
	for _, c := range currencies {
		for _, a := range remit.ChartOfAccounts {
			t := by[c][a.Name]
			out = append(out, remit.NewAccountBalance(a, c, t.Debit, t.Credit))
		}
	}
	return out
}

// GetRevenueReport answers a month's revenue per price (GET /v1/reports/revenue): recognized in
// the month (default: the merchant clock's), deferred at its start and at its end (UTC months).
//
// Errors: invalid (month is not YYYY-MM).
func (j *Journal) GetRevenueReport(ctx context.Context, m remit.MerchantAccount, month string) (remit.RevenueReport, error) {
	if month == "" {
		month = j.Now(m).UTC().Format("2006-01")
	}
	start, end, ok := remit.ParseMonth(month)
	if !ok {
		var p remit.Problems
		p.Add(remit.InQuery, "month", "invalid_format", "month must be a month as YYYY-MM (2026-01).")
		return remit.RevenueReport{}, p.Err()
	}
	q := j.DB.Read(ctx)
	before, err := q.RevenueTotals(ctx, m.ID, 0, remit.Micros(start))
	if err != nil {
		return remit.RevenueReport{}, err
	}
	during, err := q.RevenueTotals(ctx, m.ID, remit.Micros(start), remit.Micros(end))
	if err != nil {
		return remit.RevenueReport{}, err
	}
	type key struct{ currency, price string }
	lines := map[key]*remit.RevenueReportLine{}
	var order []key
	at := func(t store.PriceTotal) *remit.RevenueReportLine {
		k := key{t.Currency, t.PriceID}
		if lines[k] == nil {
			l := &remit.RevenueReportLine{Currency: t.Currency}
			if t.PriceID != "" {
				id := t.PriceID
				l.PriceID = &id
			}
			lines[k] = l
			order = append(order, k)
		}
		return lines[k]
	}
	for _, t := range before {
		if t.Account == remit.AccountDeferredRevenue {
			l := at(t)
			l.DeferredOpening += t.Credit - t.Debit
			l.DeferredClosing += t.Credit - t.Debit
		}
	}
	for _, t := range during {
		l := at(t)
		if t.Account == remit.AccountRevenue {
			l.Recognized += t.Credit - t.Debit
		} else {
			l.DeferredClosing += t.Credit - t.Debit
		}
	}
	slices.SortFunc(order, func(a, b key) int { return strings.Compare(a.currency+"\x00"+a.price, b.currency+"\x00"+b.price) })
	out := remit.RevenueReport{Object: "revenue_report", Month: month, PeriodStart: start, PeriodEnd: end, Lines: []remit.RevenueReportLine{},
		Environment: m.Environment, MerchantAccountID: m.ID}
	for _, k := range order {
		out.Lines = append(out.Lines, *lines[k])
	}
	return out, nil
}
