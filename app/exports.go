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
	if export, ok := exports[q.Dataset]; ok {
		return export(x.core, q.Dataset, m.ID, f), nil
	}
	return remit.Export{}, remit.Internal(fmt.Errorf("app.Export: no reader for dataset %q", q.Dataset))
}

// datasetExport is the export of one dataset: for a merchant account, its records that pass f.
type datasetExport func(co *core, dataset, merchantAccountID string, f remit.ExportFilter) remit.Export

// exports is each dataset's export (exportOf): its columns and the read of its records.
var exports = map[string]datasetExport{
	remit.ExportInvoices:       exportOf(remit.InvoiceColumns, store.Q.ExportInvoices),
	remit.ExportInvoiceLines:   exportOf(remit.InvoiceLineColumns, store.Q.ExportInvoiceLines),
	remit.ExportPayments:       exportOf(remit.PaymentColumns, store.Q.ExportPayments),
	remit.ExportRefunds:        exportOf(remit.RefundColumns, store.Q.ExportRefunds),
	remit.ExportCreditNotes:    exportOf(remit.CreditNoteColumns, store.Q.ExportCreditNotes),
	remit.ExportBalanceEntries: exportOf(remit.BalanceEntryColumns, store.Q.ExportBalanceEntries),
	remit.ExportUsageDaily:     exportOf(remit.UsageDayColumns, usageDays),
	remit.ExportJournalEntries: exportOf(remit.JournalLineColumns, store.Q.ExportJournalLines),
}

// exportOf is the export of a dataset of records of type T, each written by cols: the merchant
// account's records that pass f, which read (a store.Q method) hands on in order, on a snapshot.
func exportOf[T any](cols remit.ExportColumns[T], read func(store.Q, context.Context, string, remit.ExportFilter, func(*T) error) error) datasetExport {
	return func(co *core, dataset, merchantAccountID string, f remit.ExportFilter) remit.Export {
		return remit.Export{Dataset: dataset, Columns: cols.Names(), Rows: func(ctx context.Context, row func([]string) error) error {
			values := make([]string, 0, len(cols))
			return co.DB.ExportSnapshot(ctx, func(ctx context.Context, s store.Q) error {
				return read(s, ctx, merchantAccountID, f, func(r *T) error {
					values = cols.Row(values, r)
					return row(values)
				})
			})
		}}
	}
}

// usageDays folds the usage hours, read in order, into usage-daily's rows: each day is handed on
// as soon as the first hour of the next one is read. It takes its arguments as the store.Q methods
// of the other datasets do (exportOf's read).
func usageDays(s store.Q, ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.UsageDay) error) error {
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
