package app

import (
	"context"
	"sync"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Verification runs the money checks (docs/verification.md) over one consistent snapshot of the
// store: the event chain and every money invariant, each a function that reads the store in pages
// (store/verify.go) and judges what it read with a rule of package remit. Verifying never writes;
// only the periodic run (RunVerification) emits verification.failed for an account with
// violations.
type Verification struct {
	*core

	mu   sync.Mutex
	last map[string]int // the last periodic run's violations per check, for remit_verify_violations
}

// verifyCheck is one check over one merchant account.
type verifyCheck struct {
	name string
	run  checkRun
}

// checks lists the checks in the order of remit.VerificationChecks.
func (vs *Verification) checks() []verifyCheck {
	return []verifyCheck{
		{remit.CheckEventChain, verifyChain},
		{remit.CheckBalances, verifyBalances},
		{remit.CheckInvoicePayments, verifyInvoicePayments},
		{remit.CheckReceipts, verifyReceipts},
		{remit.CheckCreditNotes, verifyCreditNotes},
		{remit.CheckTaxReversals, verifyTaxReversals},
		{remit.CheckSettlements, verifySettlements},
		{remit.CheckDocumentNumbers, verifyDocumentNumbers},
		{remit.CheckProcessorCharges, verifyProcessorCharges},
		{remit.CheckInvoiceLines, verifyInvoiceLines},
		{remit.CheckDueWork, vs.verifyDueWork},
		{remit.CheckGeneralLedger, verifyGeneralLedger},
	}
}

// Verify runs every check for one merchant account (GET /v1/verification).
func (vs *Verification) Verify(ctx context.Context, scope remit.Scope) (remit.Verification, error) {
	var out remit.Verification
	err := vs.DB.Snapshot(ctx, func(ctx context.Context, q store.Q) error {
		var err error
		out, err = vs.verifyAccount(ctx, q, scope)
		return err
	})
	return out, err
}

// VerifyAll runs every check for every merchant account (or only merchantID when it is not ""),
// in one snapshot, calling fn with each account's result as it is ready (`remit verify`).
func (vs *Verification) VerifyAll(ctx context.Context, merchantID string, fn func(remit.Verification) error) error {
	return vs.DB.Snapshot(ctx, func(ctx context.Context, q store.Q) error {
		return vs.eachAccount(ctx, q, merchantID, fn)
	})
}

func (vs *Verification) eachAccount(ctx context.Context, q store.Q, merchantID string, fn func(remit.Verification) error) error {
	accounts, err := q.VerifiedAccounts(ctx, merchantID)
	if err != nil {
		return err
	}
	if merchantID != "" && len(accounts) == 0 {
		return remit.NotFound("merchant_account", merchantID, "")
	}
	for _, a := range accounts {
		v, err := vs.verifyAccount(ctx, q, a)
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

func (vs *Verification) verifyAccount(ctx context.Context, q store.Q, account remit.Scope) (remit.Verification, error) {
	v := remit.Verification{Object: "verification", MerchantAccountID: account.MerchantAccountID, CheckedAt: vs.Clock.Now().UTC()}
	for _, ch := range vs.checks() {
		c := remit.VerificationCheck{Name: ch.name, OK: true, Violations: []remit.Violation{}}
		if err := ch.run(ctx, q, account, &c); err != nil {
			return v, err
		}
		v.Checks = append(v.Checks, c)
	}
	v.Finish()
	return v, nil
}

// verifyChain walks the account's chain in sequence order and recomputes every hash
// (remit.ChainLink).
func verifyChain(ctx context.Context, q store.Q, account remit.Scope, c *remit.VerificationCheck) error {
	want, prev := int64(1), ""
	return q.ChainEvents(ctx, account.MerchantAccountID, func(e remit.Event) error {
		if detail := remit.ChainLink(want, prev, e); detail != "" {
			c.Add(remit.Violation{Resource: "event", ID: e.ID, Detail: detail})
		}
		want, prev = e.Sequence+1, e.Hash
		return nil
	})
}

// Violations is the last periodic run's violation count per check, summed over the merchant
// accounts (remit_verify_violations); empty before the first run.
func (vs *Verification) Violations() map[string]int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	out := make(map[string]int, len(vs.last))
	for k, n := range vs.last {
		out[k] = n
	}
	return out
}

// RunVerification runs every check of every merchant account once per interval, the first time
// one interval after it starts, until ctx ends (`remit serve`, hourly). On PostgreSQL one process
// at a time runs a round (the others skip it). An account with violations gets a
// verification.failed event.
func (vs *Verification) RunVerification(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := vs.VerifyRound(ctx); err != nil && ctx.Err() == nil {
			vs.Log.Error("verification", "error", err)
		}
	}
}

// VerifyRound is one periodic run over every merchant account. On PostgreSQL a process that
// finds another one running it skips the round. An account with violations gets
// verification.failed, written in a transaction of its own (the snapshot stays read-only).
func (vs *Verification) VerifyRound(ctx context.Context) error {
	counts := map[string]int{}
	ran := false
	err := vs.DB.Snapshot(ctx, func(ctx context.Context, q store.Q) error {
		ok, err := q.VerifyLock(ctx)
		if err != nil || !ok {
			return err
		}
		ran = true
		return vs.eachAccount(ctx, q, "", func(v remit.Verification) error {
			for _, c := range v.Checks {
				counts[c.Name] += c.ViolationCount
			}
			if v.OK {
				return nil
			}
			return vs.emitFailed(ctx, v)
		})
	})
	if err != nil || !ran {
		return err
	}
	vs.mu.Lock()
	vs.last = counts
	vs.mu.Unlock()
	return nil
}

// emitFailed records verification.failed for the account, with the verification as its object.
func (vs *Verification) emitFailed(ctx context.Context, v remit.Verification) error {
	vs.Log.Warn("verification failed", "merchantAccountId", v.MerchantAccountID)
	return vs.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		m, err := tx.GetMerchantAccount(ctx, v.MerchantAccountID, store.Unlocked)
		if err != nil {
			return err
		}
		scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
		return vs.Emit(ctx, tx, scope, vs.Now(m), remit.EventVerificationFailed, v.MerchantAccountID, v)
	})
}
