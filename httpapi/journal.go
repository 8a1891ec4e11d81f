package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
)

// The general ledger's routes (docs/ledger.md).

// listLedgerEntries handles GET /v1/ledger/entries.
func (s *Server) listLedgerEntries(ctx context.Context, r *Request) (any, error) {
	return s.eng.Journal.ListJournalEntries(ctx, r.Merchant, remit.JournalQuery{Account: r.Query("account"), ListQuery: remit.ListQueryOf(r.Query)})
}

// getLedgerBalances handles GET /v1/ledger/balances.
func (s *Server) getLedgerBalances(ctx context.Context, r *Request) (any, error) {
	return s.eng.Journal.GetLedgerBalances(ctx, r.Merchant, r.Query("asOf"))
}

// getRevenueReport handles GET /v1/reports/revenue.
func (s *Server) getRevenueReport(ctx context.Context, r *Request) (any, error) {
	return s.eng.Journal.GetRevenueReport(ctx, r.Merchant, r.Query("month"))
}
