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

// checkRun is the run of one check over one merchant account (verifyCheck.run), or a step of one.
type checkRun func(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error

// judgeFacts is the step of a check that streams one kind of fact of the account (stream: a
// method of store.Q) and adds a violation of resource for each problem rule finds in a row (rule
// names the row's resource ID and its problems).
func judgeFacts[F any](resource string, stream func(store.Q, context.Context, string, func(F) error) error, rule func(F) (string, []string)) checkRun {
	return func(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
		return stream(q, ctx, account.MerchantAccountID, func(f F) error {
			id, problems := rule(f)
			addAll(c, resource, id, problems)
			return nil
		})
	}
}

// inTurn is a check made of steps run one after the other; it stops at the first error.
func inTurn(steps ...checkRun) checkRun {
	return func(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
		for _, step := range steps {
			if err := step(ctx, q, account, c); err != nil {
				return err
			}
		}
		return nil
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
var verifyInvoicePayments = judgeFacts("invoice", store.Q.InvoicePaymentFacts, func(f remit.InvoicePaymentFacts) (string, []string) {
	return f.InvoiceID, remit.CheckInvoicePaymentFacts(f)
})

// verifyReceipts checks every payment against its receipt and refunds
// (remit.CheckPaymentReceiptFacts) and every receipt's payment (remit.CheckReceiptPaymentFacts).
var verifyReceipts = inTurn(
	judgeFacts("payment", store.Q.PaymentReceiptFacts, func(f remit.PaymentReceiptFacts) (string, []string) {
		return f.PaymentID, remit.CheckPaymentReceiptFacts(f)
	}),
	judgeFacts("payment_receipt", store.Q.ReceiptPaymentFacts, func(f remit.ReceiptPaymentFacts) (string, []string) {
		return f.ReceiptID, remit.CheckReceiptPaymentFacts(f)
	}),
)

// verifyCreditNotes checks every credit note (remit.CheckCreditNoteFacts) and every invoice's
// credited figures (remit.CheckInvoiceCreditFacts).
var verifyCreditNotes = inTurn(
	judgeFacts("credit_note", store.Q.CreditNoteFacts, func(f remit.CreditNoteFacts) (string, []string) {
		return f.CreditNoteID, remit.CheckCreditNoteFacts(f)
	}),
	judgeFacts("invoice", store.Q.InvoiceCreditFacts, func(f remit.InvoiceCreditFacts) (string, []string) {
		return f.InvoiceID, remit.CheckInvoiceCreditFacts(f)
	}),
)

// verifyTaxReversals checks every invoice's tax and what reversed it (remit.CheckInvoiceTaxFacts)
// and every reversal tax transaction (remit.CheckTaxReversalFacts).
var verifyTaxReversals = inTurn(
	judgeFacts("invoice", store.Q.InvoiceTaxFacts, func(f remit.InvoiceTaxFacts) (string, []string) {
		return f.InvoiceID, remit.CheckInvoiceTaxFacts(f)
	}),
	judgeFacts("tax_transaction", store.Q.TaxReversalFacts, func(f remit.TaxReversalFacts) (string, []string) {
		return f.TaxTransactionID, remit.CheckTaxReversalFacts(f)
	}),
)

// verifySettlements checks every settlement (remit.CheckSettlementFacts), every payment's
// settlement (remit.CheckSettledPaymentFacts) and each currency's refunds
// (remit.CheckSettlementRefundFacts).
var verifySettlements = inTurn(
	judgeFacts("settlement", store.Q.SettlementFacts, func(f remit.SettlementFacts) (string, []string) {
		return f.SettlementID, remit.CheckSettlementFacts(f)
	}),
	judgeFacts("payment", store.Q.SettledPaymentFacts, func(f remit.SettledPaymentFacts) (string, []string) {
		return f.PaymentID, remit.CheckSettledPaymentFacts(f)
	}),
	func(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
		refunds, err := q.SettlementRefundFacts(ctx, account.MerchantAccountID)
		for _, f := range refunds {
			addAll(c, "settlements", f.Currency, remit.CheckSettlementRefundFacts(f))
		}
		return err
	},
)

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
	return judgeInvoiceNumbers(ctx, q, account, c)
}

// judgeInvoiceNumbers is verifyDocumentNumbers' step on every invoice's number
// (remit.CheckInvoiceNumberFacts).
var judgeInvoiceNumbers = judgeFacts("invoice", store.Q.InvoiceNumberFacts, func(f remit.InvoiceNumberFacts) (string, []string) {
	return f.InvoiceID, remit.CheckInvoiceNumberFacts(f)
})

// verifyProcessorCharges checks every payment against the sandbox processor's charges
// (remit.CheckProcessorPaymentFacts) and every sandbox refund against its record
// (remit.CheckProcessorRefundFacts). The sandbox processor's records name no merchant account:
// a succeeded charge for no payment of any account is reported for every sandbox account
// (remit.CheckUnclaimedChargeFacts), as it may be any one's.
var verifyProcessorCharges = inTurn(
	judgeFacts("payment", store.Q.ProcessorPaymentFacts, func(f remit.ProcessorPaymentFacts) (string, []string) {
		return f.PaymentID, remit.CheckProcessorPaymentFacts(f)
	}),
	judgeFacts("refund", store.Q.ProcessorRefundFacts, func(f remit.ProcessorRefundFacts) (string, []string) {
		return f.RefundID, remit.CheckProcessorRefundFacts(f)
	}),
	func(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
		if account.Environment != remit.Sandbox {
			return nil
		}
		return q.UnclaimedCharges(ctx, func(f remit.ProcessorChargeFacts) error {
			addAll(c, "processor_charge", f.Reference, remit.CheckUnclaimedChargeFacts(f))
			return nil
		})
	},
)

// verifyInvoiceLines checks that every invoice's lines as kept in its row (what an invoice read
// answers) are its stored lines (remit.CheckInvoiceLinesFacts).
var verifyInvoiceLines = judgeFacts("invoice", store.Q.InvoiceLinesFacts, func(f remit.InvoiceLinesFacts) (string, []string) {
	return f.InvoiceID, remit.CheckInvoiceLinesFacts(f)
})

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
