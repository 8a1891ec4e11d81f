package app

import (
	"context"
	"fmt"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The money checks of Verification (docs/verification.md), one function per check: each streams
// facts from the store (store/verify_money.go) and judges every row with a rule of package remit
// (verification_*.go, one file per family), adding a violation per problem of a record that breaks it.

// addAll adds a violation of resource id for each problem.
func addAll(c *remit.VerificationCheck, resource, id string, problems []string) {
	for _, p := range problems {
		c.Add(remit.Violation{Resource: resource, ID: id, Detail: p})
	}
}

// verifyBalances checks every ledger entry (remit.CheckLedgerEntryFacts) and every customer's
// balance per currency (remit.CheckBalanceFacts), summed as the entries stream by customer.
func verifyBalances(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	customer := ""
	var currencies []string // the current customer's, in the order first seen
	sums := map[string]*remit.BalanceFacts{}
	flush := func() {
		for _, cur := range currencies {
			addAll(c, "customer", customer, remit.CheckBalanceFacts(*sums[cur]))
		}
		currencies, sums = currencies[:0], map[string]*remit.BalanceFacts{}
	}
	err := q.LedgerEntryFacts(ctx, account.MerchantAccountID, func(f remit.LedgerEntryFacts) error {
		if f.CustomerID != customer {
			flush()
			customer = f.CustomerID
		}
		addAll(c, "balance_entry", f.EntryID, remit.CheckLedgerEntryFacts(f))
		b := sums[f.Currency]
		if b == nil {
			b = &remit.BalanceFacts{CustomerID: f.CustomerID, Currency: f.Currency}
			sums[f.Currency] = b
			currencies = append(currencies, f.Currency)
		}
		b.EntriesTotal += f.Amount
		if remit.IsLot(f.Type) && f.Remaining != nil {
			b.LotsRemaining += *f.Remaining
		}
		return nil
	})
	flush()
	return err
}

// verifyInvoicePayments checks every invoice's figures, amount paid, refunded total, prepaid
// applied, amount remaining and status (remit.CheckInvoicePaymentFacts).
func verifyInvoicePayments(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return q.InvoicePaymentFacts(ctx, account.MerchantAccountID, func(f remit.InvoicePaymentFacts) error {
		addAll(c, "invoice", f.InvoiceID, remit.CheckInvoicePaymentFacts(f))
		return nil
	})
}

// verifyReceipts checks every payment against its receipt and refunds
// (remit.CheckPaymentReceiptFacts) and every receipt's payment (remit.CheckReceiptPaymentFacts).
func verifyReceipts(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	err := q.PaymentReceiptFacts(ctx, account.MerchantAccountID, func(f remit.PaymentReceiptFacts) error {
		addAll(c, "payment", f.PaymentID, remit.CheckPaymentReceiptFacts(f))
		return nil
	})
	if err != nil {
		return err
	}
	return q.ReceiptPaymentFacts(ctx, account.MerchantAccountID, func(f remit.ReceiptPaymentFacts) error {
		addAll(c, "payment_receipt", f.ReceiptID, remit.CheckReceiptPaymentFacts(f))
		return nil
	})
}

// verifyCreditNotes checks every credit note (remit.CheckCreditNoteFacts) and every invoice's
// credited figures (remit.CheckInvoiceCreditFacts).
func verifyCreditNotes(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	err := q.CreditNoteFacts(ctx, account.MerchantAccountID, func(f remit.CreditNoteFacts) error {
		addAll(c, "credit_note", f.CreditNoteID, remit.CheckCreditNoteFacts(f))
		return nil
	})
	if err != nil {
		return err
	}
	return q.InvoiceCreditFacts(ctx, account.MerchantAccountID, func(f remit.InvoiceCreditFacts) error {
		addAll(c, "invoice", f.InvoiceID, remit.CheckInvoiceCreditFacts(f))
		return nil
	})
}

// verifyTaxReversals checks every invoice's tax and what reversed it (remit.CheckInvoiceTaxFacts)
// and every reversal tax transaction (remit.CheckTaxReversalFacts).
func verifyTaxReversals(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	err := q.InvoiceTaxFacts(ctx, account.MerchantAccountID, func(f remit.InvoiceTaxFacts) error {
		addAll(c, "invoice", f.InvoiceID, remit.CheckInvoiceTaxFacts(f))
		return nil
	})
	if err != nil {
		return err
	}
	return q.TaxReversalFacts(ctx, account.MerchantAccountID, func(f remit.TaxReversalFacts) error {
		addAll(c, "tax_transaction", f.TaxTransactionID, remit.CheckTaxReversalFacts(f))
		return nil
	})
}

// verifySettlements checks every settlement (remit.CheckSettlementFacts), every payment's
// settlement (remit.CheckSettledPaymentFacts) and each currency's refunds
// (remit.CheckSettlementRefundFacts).
func verifySettlements(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	err := q.SettlementFacts(ctx, account.MerchantAccountID, func(f remit.SettlementFacts) error {
		addAll(c, "settlement", f.SettlementID, remit.CheckSettlementFacts(f))
		return nil
	})
	if err != nil {
		return err
	}
	err = q.SettledPaymentFacts(ctx, account.MerchantAccountID, func(f remit.SettledPaymentFacts) error {
		addAll(c, "payment", f.PaymentID, remit.CheckSettledPaymentFacts(f))
		return nil
	})
	if err != nil {
		return err
	}
	refunds, err := q.SettlementRefundFacts(ctx, account.MerchantAccountID)
	for _, f := range refunds {
		addAll(c, "settlements", f.Currency, remit.CheckSettlementRefundFacts(f))
	}
	return err
}

// verifyDocumentNumbers checks that each kind of numbered document uses exactly the numbers 1 to
// its counter, once each (remit.DocumentNumbering), and that an invoice has a number exactly when
// it was finalized (remit.CheckInvoiceNumberFacts).
func verifyDocumentNumbers(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	for _, d := range remit.NumberedDocuments {
		counter, documents, err := q.DocumentCounter(ctx, account.MerchantAccountID, d.Counter)
		if err != nil {
			return err
		}
		nb := remit.NewDocumentNumbering(d.Prefix, counter, documents)
		err = q.DocumentNumbers(ctx, account.MerchantAccountID, d.Counter, func(id, number string) error {
			if p := nb.Add(number); p != "" {
				c.Add(remit.Violation{Resource: d.Resource, ID: id, Detail: p})
			}
			return nil
		})
		if err != nil {
			return err
		}
		nb.Gaps(func(from, to, unused int64) {
			id, detail := nb.Format(from), fmt.Sprintf("is carried by no %s, though the counter stands at %d", d.Noun, counter)
			if to > from {
				id = nb.Format(from) + " to " + nb.Format(to)
				detail = fmt.Sprintf("%d of these numbers are carried by no %s, though the counter stands at %d", unused, d.Noun, counter)
			}
			c.Add(remit.Violation{Resource: d.Resource + "_number", ID: id, Detail: detail})
		})
	}
	return q.InvoiceNumberFacts(ctx, account.MerchantAccountID, func(f remit.InvoiceNumberFacts) error {
		addAll(c, "invoice", f.InvoiceID, remit.CheckInvoiceNumberFacts(f))
		return nil
	})
}

// verifyProcessorCharges checks every payment against the sandbox processor's charges
// (remit.CheckProcessorPaymentFacts) and every sandbox refund against its record
// (remit.CheckProcessorRefundFacts). The sandbox processor's records name no merchant account:
// a succeeded charge for no payment of any account is reported for every sandbox account
// (remit.CheckUnclaimedChargeFacts), as it may be any one's.
func verifyProcessorCharges(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	err := q.ProcessorPaymentFacts(ctx, account.MerchantAccountID, func(f remit.ProcessorPaymentFacts) error {
		addAll(c, "payment", f.PaymentID, remit.CheckProcessorPaymentFacts(f))
		return nil
	})
	if err != nil {
		return err
	}
	err = q.ProcessorRefundFacts(ctx, account.MerchantAccountID, func(f remit.ProcessorRefundFacts) error {
		addAll(c, "refund", f.RefundID, remit.CheckProcessorRefundFacts(f))
		return nil
	})
	if err != nil || account.Environment != remit.Sandbox {
		return err
	}
	return q.UnclaimedCharges(ctx, func(f remit.ProcessorChargeFacts) error {
		addAll(c, "processor_charge", f.Reference, remit.CheckUnclaimedChargeFacts(f))
		return nil
	})
}

// verifyInvoiceLines checks that every invoice's lines as kept in its row (what an invoice read
// answers) are its stored lines (remit.CheckInvoiceLinesFacts).
func verifyInvoiceLines(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return q.InvoiceLinesFacts(ctx, account.MerchantAccountID, func(f remit.InvoiceLinesFacts) error {
		addAll(c, "invoice", f.InvoiceID, remit.CheckInvoiceLinesFacts(f))
		return nil
	})
}

// verifyDueWork names the work that bills or collects and is late on the account's clock: live
// subscriptions not renewed, drafts not finalized (remit.CheckSubscriptionDue, CheckDraftDue, each
// past remit.DueWorkGrace) and jobs failed for good (remit.CheckFailedJob).
func (vs *Verification) verifyDueWork(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	m, err := q.GetMerchantAccount(ctx, account.MerchantAccountID, store.Unlocked)
	if err != nil {
		return err
	}
	now := vs.Now(m)
	cutoff := now.Add(-remit.DueWorkGrace)
	err = q.OverdueSubscriptions(ctx, m.ID, cutoff, func(f remit.SubscriptionDueFacts) error {
		f.Now = now
		addAll(c, "subscription", f.SubscriptionID, remit.CheckSubscriptionDue(f))
		return nil
	})
	if err != nil {
		return err
	}
	err = q.OverdueDrafts(ctx, m.ID, cutoff, func(f remit.DraftDueFacts) error {
		f.Now = now
		addAll(c, "invoice", f.InvoiceID, remit.CheckDraftDue(f))
		return nil
	})
	if err != nil {
		return err
	}
	return q.FailedJobs(ctx, m.ID, func(j remit.Job) error {
		addAll(c, "job", j.ID, remit.CheckFailedJob(j))
		return nil
	})
}

// verifyGeneralLedger checks that every journal entry balances and that the journal's receivable,
// customer credit and deferred revenue agree with the money state (remit.CheckGeneralLedgerFacts).
func verifyGeneralLedger(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	ids, err := q.UnbalancedJournalEntries(ctx, account.MerchantAccountID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		c.Add(remit.Violation{Resource: "journal_entry", ID: id, Detail: remit.UnbalancedEntry})
	}
	facts, err := q.GeneralLedgerFacts(ctx, account.MerchantAccountID)
	if err != nil {
		return err
	}
	for _, f := range facts {
		addAll(c, "merchant_account", account.MerchantAccountID, remit.CheckGeneralLedgerFacts(f))
	}
	return nil
}
