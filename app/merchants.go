package app

import (
	"context"

	"github.com/remit-billing/remit"
)

// DecideMerchant records an operator's underwriting decision (approve, reject, request-update) on
// a production merchant account that is in review, and returns its new status.
//
// Errors: not_found, conflict (not in review), validation_failure (unknown decision).
func (a *App) DecideMerchant(ctx context.Context, merchantAccountID, decision string) (string, error) {
	return "", remit.Errorf(remit.ENotImplemented, "Underwriting decisions arrive with the merchant accounts capability.")
}
