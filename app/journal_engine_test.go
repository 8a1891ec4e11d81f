package app_test

import (
	"context"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The general ledger through the engine: each money movement posts its balanced entry in its own
// transaction, and the accounts agree with the money state (docs/ledger.md).
func TestEngineJournal(t *testing.T) {
	runEngine(t, engineOptions{}, func(t *testing.T, e *engine) {
		e.customer("books", remit.ChargeAutomatically)
		e.attachCard("books", "pm_card_visa")
		e.grant("books", 500)
		paid := e.invoiceOf("books", 3000) // 500 of it from the grant, the rest charged
		if paid.Status != remit.InvoicePaid {
			t.Fatalf("paid: %s", brief(paid))
		}
		if _, err := e.refund(paid.InvoiceID, 1000); err != nil {
			t.Fatal(err)
		}
		e.customer("open", remit.SendInvoice)
		open := e.invoiceOf("open", 1200)
		voided := e.invoiceOf("open", 700)
		if _, err := e.void(voided.InvoiceID); err != nil {
			t.Fatal(err)
		}

		entries := journalOf(e)
		sources := map[string]int{}
		for _, je := range entries {
			if !je.Balanced() {
				t.Errorf("entry %s (%s) does not balance: %+v", je.EntryID, je.Source.Type, je.Lines)
			}
			sources[je.Source.Type]++
		}
		for src, n := range map[string]int{remit.SourceInvoiceFinalized: 3, remit.SourcePrepaidApplied: 1, remit.SourcePaymentSucceeded: 1,
			remit.SourceCreditNote: 1, remit.SourceInvoiceVoided: 1} {
			if sources[src] != n {
				t.Errorf("%d entries of %s, want %d (all: %v)", sources[src], src, n, sources)
			}
		}
		bal := balancesOf(e)
		if got, want := bal[remit.AccountReceivable], e.stored(open.InvoiceID).AmountRemaining; got != want {
			t.Errorf("receivable %d, open invoices' remaining %d", got, want)
		}
		if got := bal[remit.AccountCustomerCredit]; got != 0 {
			t.Errorf("customer credit %d with no paid balance", got)
		}
		if got, want := bal[remit.AccountRefunds], int64(1000); got != want {
			t.Errorf("refunds %d, want %d", got, want)
		}
		if got, want := bal[remit.AccountDiscounts], int64(500); got != want {
			t.Errorf("discounts (the free grant used) %d, want %d", got, want)
		}
	})
}

func journalOf(e *engine) []remit.JournalEntry {
	e.t.Helper()
	entries, err := e.read().ListJournalEntries(context.Background(), e.m.ID, store.JournalFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	return entries
}

// balancesOf is each account's balance (on its normal side) in USD.
func balancesOf(e *engine) map[string]int64 {
	e.t.Helper()
	totals, err := e.read().JournalTotals(context.Background(), e.m.ID, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, tot := range totals {
		a, _ := remit.LookupAccount(tot.Account)
		if a.DebitNormal() {
			out[tot.Account] = tot.Debit - tot.Credit
		} else {
			out[tot.Account] = tot.Credit - tot.Debit
		}
	}
	return out
}
