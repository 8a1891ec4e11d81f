package app

import (
	"context"
	"fmt"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Export prepares GET /v1/exports/{dataset}.csv (docs/exports.md): the query is checked here
// (remit.PlanExport: not_found for an unknown dataset, every problem of the filters in one
// validation_failure), before anything is read, so that a refused export answers its error before
// the first byte. The rows are read when the edge calls Rows: on one snapshot of the store, outside
// any write transaction (SQLite: a read connection beside the writer; PostgreSQL: REPEATABLE READ,
// READ ONLY), each record handed on as the query reads it. The end of ctx (the client went away)
// stops the query.
func (x *Exports) Export(ctx context.Context, m remit.MerchantAccount, q remit.ExportQuery) (remit.Export, error) {
	f, err := remit.PlanExport(q)
	if err != nil {
		return remit.Export{}, err
	}
	id := m.ID
	switch q.Dataset {
	case remit.ExportInvoices:
		return exportOf(x.core, q.Dataset, remit.InvoiceColumns, func(ctx context.Context, s store.Q, fn func(*remit.InvoiceRecord) error) error {
			return s.ExportInvoices(ctx, id, f, fn)
		}), nil
	case remit.ExportInvoiceLines:
		return exportOf(x.core, q.Dataset, remit.InvoiceLineColumns, func(ctx context.Context, s store.Q, fn func(*remit.InvoiceLineRecord) error) error {
			return s.ExportInvoiceLines(ctx, id, f, fn)
		}), nil
	case remit.ExportPayments:
		return exportOf(x.core, q.Dataset, remit.PaymentColumns, func(ctx context.Context, s store.Q, fn func(*remit.PaymentRecord) error) error {
			return s.ExportPayments(ctx, id, f, fn)
		}), nil
	case remit.ExportRefunds:
		return exportOf(x.core, q.Dataset, remit.RefundColumns, func(ctx context.Context, s store.Q, fn func(*remit.RefundRecord) error) error {
			return s.ExportRefunds(ctx, id, f, fn)
		}), nil
	case remit.ExportCreditNotes:
		return exportOf(x.core, q.Dataset, remit.CreditNoteColumns, func(ctx context.Context, s store.Q, fn func(*remit.CreditNoteRecord) error) error {
			return s.ExportCreditNotes(ctx, id, f, fn)
		}), nil
	case remit.ExportBalanceEntries:
		return exportOf(x.core, q.Dataset, remit.BalanceEntryColumns, func(ctx context.Context, s store.Q, fn func(*remit.BalanceEntryRecord) error) error {
			return s.ExportBalanceEntries(ctx, id, f, fn)
		}), nil
	case remit.ExportUsageDaily:
		return exportOf(x.core, q.Dataset, remit.UsageDayColumns, func(ctx context.Context, s store.Q, fn func(*remit.UsageDay) error) error {
			return usageDays(ctx, s, id, f, fn)
		}), nil
	case remit.ExportJournalEntries:
		return exportOf(x.core, q.Dataset, remit.JournalLineColumns, func(ctx context.Context, s store.Q, fn func(*remit.JournalLineRecord) error) error {
			return s.ExportJournalLines(ctx, id, f, fn)
		}), nil
	}
	return remit.Export{}, remit.Internal(fmt.Errorf("app.Export: no reader for dataset %q", q.Dataset))
}

// exportOf is an export of records of type T, each written by cols, read by each on a snapshot.
func exportOf[T any](co *core, dataset string, cols remit.ExportColumns[T], each func(context.Context, store.Q, func(*T) error) error) remit.Export {
	return remit.Export{Dataset: dataset, Columns: cols.Names(), Rows: func(ctx context.Context, row func([]string) error) error {
		values := make([]string, 0, len(cols))
		return co.DB.ExportSnapshot(ctx, func(ctx context.Context, s store.Q) error {
			return each(ctx, s, func(r *T) error {
				values = cols.Row(values, r)
				return row(values)
			})
		})
	}}
}

// usageDays folds the usage hours, read in order, into usage-daily's rows: each day is handed on
// as soon as the first hour of the next one is read.
func usageDays(ctx context.Context, s store.Q, merchantAccountID string, f remit.ExportFilter, fn func(*remit.UsageDay) error) error {
	var days remit.UsageDays
	err := s.ExportUsageHours(ctx, merchantAccountID, f, func(h *remit.UsageHour) error {
		if day, ok := days.Add(*h); ok {
			return fn(&day)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if day, ok := days.Last(); ok {
		return fn(&day)
	}
	return nil
}
