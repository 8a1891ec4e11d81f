package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Settlements and payouts (docs/payments.md). Each processed
// payment and each refund lands in the merchant account's open settlement for its currency and UTC
// day on the merchant clock. A job due at the day's end closes it (settlement.closed); a job due
// two days later pays it out (payout.created, settlement.paid). A payment or refund that arrives
// for a day whose settlement already closed (a request racing the cutoff) lands in the next day's
// settlement: a closed settlement never changes.

const (
	jobSettlementClose  = remit.JobSettlementClose
	jobSettlementPayout = remit.JobSettlementPayout
	settlementDay       = 24 * time.Hour
)

type settlementJob struct {
	SettlementID string `json:"settlementId"`
}

// registerJobs installs the payments area's job kinds: a settlement's close and its payout.
func (ps *Payments) registerJobs() {
	ps.RegisterJob(jobSettlementClose, ps.runSettlementClose)
	ps.RegisterJob(jobSettlementPayout, ps.runSettlementPayout)
	ps.RegisterJob(jobDunningRetry, ps.runDunningRetry)
}

// settle applies change to the open settlement of m for currency and the day of at, creating it
// (and scheduling its close) when the day has none yet. Call it in the transaction of the payment
// or refund.
func (ps *Payments) settle(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, currency string, at time.Time, change func(*remit.Settlement)) (remit.Settlement, error) {
	at = micro(at)
	day := remit.SettlementDay(at)
	for range 400 { // at most a year of closed days ahead: a bug, never a real case
		s, ok, err := tx.GetDaySettlement(ctx, m.ID, currency, day)
		if err != nil {
			return s, err
		}
		if ok && !s.Status.Allows(remit.ActionBook) {
			day = day.Add(settlementDay) // the day closed meanwhile: the next day's settlement takes it
			continue
		}
		if !ok {
			s = remit.Settlement{Object: "settlement", SettlementID: remit.NewID("stl"), Currency: currency, Status: remit.SettlementOpen,
				PeriodStart: day, PeriodEnd: day.Add(settlementDay), MerchantAccountID: m.ID, CreatedAt: at, UpdatedAt: at}
			inserted, err := tx.InsertSettlement(ctx, s)
			if err != nil {
				return s, err
			}
			if !inserted {
				continue // created by a concurrent request: read (and lock) it
			}
			if err := ps.Schedule(ctx, tx, scopeOf(m), jobSettlementClose, s.PeriodEnd, settlementJob{SettlementID: s.SettlementID}); err != nil {
				return s, err
			}
		}
		change(&s)
		s.UpdatedAt = at
		s.NetAmount = s.GrossAmount - s.RefundAmount - s.FeeAmount
		return s, tx.UpdateSettlement(ctx, s)
	}
	return remit.Settlement{}, remit.Internal(fmt.Errorf("app.settle: no open settlement for %s within 400 days of %s", currency, day))
}

// RecordSettlementRefund adds a refund of amount (minor units of currency, > 0) made at `at` on the
// merchant clock to the open settlement of its day, in the caller's transaction. The credit-notes
// area calls it for every refund that went through the processor (not for out-of-band payments,
// which were never settled: see remit.Payment.Settled). The fee of the refunded payment is kept.
func (ps *Payments) RecordSettlementRefund(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, currency string, amount int64, at time.Time) (remit.Settlement, error) {
	if amount == 0 {
		return remit.Settlement{}, remit.Internal(fmt.Errorf("app.RecordSettlementRefund: amount is 0"))
	}
	return ps.settle(ctx, tx, m, currency, at, func(s *remit.Settlement) {
		s.RefundAmount += amount
		if amount > 0 {
			s.RefundCount++
		} else {
			s.RefundCount-- // a failed refund taken back (refunds.go)
		}
	})
}

// runSettlementClose closes an open settlement at the end of its day and schedules its payout.
func (ps *Payments) runSettlementClose(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	var p settlementJob
	if err := json.Unmarshal(job.Payload, &p); err != nil {
		return err
	}
	s, err := tx.GetSettlement(ctx, scope.MerchantAccountID, p.SettlementID, store.Locked)
	if err != nil || !s.Status.Allows(remit.ActionClose) {
		return err
	}
	at = micro(at)
	s.Status, s.ClosedAt, s.UpdatedAt = remit.SettlementClosed, &at, at
	if err := tx.UpdateSettlement(ctx, s); err != nil {
		return err
	}
	if err := ps.Emit(ctx, tx, scope, at, remit.EventSettlementClosed, s.SettlementID, s); err != nil {
		return err
	}
	return ps.Schedule(ctx, tx, scope, jobSettlementPayout, at.Add(remit.PayoutDelayDays*settlementDay), p)
}

// runSettlementPayout pays a closed settlement out two days after it closed: a payout of its net
// amount to the merchant's bank account. A merchant account whose payouts are not enabled (not
// approved) keeps the settlement closed and is tried again a day later.
func (ps *Payments) runSettlementPayout(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	var p settlementJob
	if err := json.Unmarshal(job.Payload, &p); err != nil {
		return err
	}
	m, err := tx.GetMerchantAccount(ctx, scope.MerchantAccountID, store.Unlocked)
	if err != nil {
		return err
	}
	s, err := tx.GetSettlement(ctx, m.ID, p.SettlementID, store.Locked)
	if err != nil || !s.Status.Allows(remit.ActionPayOut) {
		return err
	}
	at = micro(at)
	profile, err := remit.NewPayoutProfile(m)
	if err != nil {
		return remit.Internal(err)
	}
	if !profile.PayoutsEnabled {
		ps.Log.WarnContext(ctx, "payout postponed: the merchant account's payouts are not enabled", "merchantAccountId", m.ID, "settlementId", s.SettlementID)
		return ps.Schedule(ctx, tx, scopeOf(m), jobSettlementPayout, at.Add(settlementDay), p)
	}
	po := remit.Payout{Object: "payout", PayoutID: remit.NewID("po"), SettlementID: s.SettlementID, Amount: s.NetAmount,
		Currency: s.Currency, Status: "paid", ArrivalDate: at, Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: at}
	if profile.BankAccount != nil {
		last4 := profile.BankAccount.Last4
		po.BankAccountLast4 = &last4
	}
	if err := tx.InsertPayout(ctx, po); err != nil {
		return err
	}
	s.Status, s.PaidAt, s.PayoutID, s.UpdatedAt = remit.SettlementPaid, &at, &po.PayoutID, at
	if err := tx.UpdateSettlement(ctx, s); err != nil {
		return err
	}
	if err := ps.Emit(ctx, tx, scope, at, remit.EventPayoutCreated, po.PayoutID, po); err != nil {
		return err
	}
	return ps.Emit(ctx, tx, scope, at, remit.EventSettlementPaid, s.SettlementID, s)
}

// ListSettlements lists the settlements of the merchant account named in the path (the acting
// account, another account of its organization and environment, or a linked sub-merchant), newest
// first, filtered by scope (open, closed, paid or all, the default) and creation range. Paged by
// keyset: limit 1–100 (default 20) and the opaque cursor; when both limit and cursor are omitted
// every settlement comes back in one list with nextCursor null. A cursor is bound to the target
// account and the scope.
//
// Errors: not_found (target not visible), validation_failure (scope, limit, cursor, createdFrom,
// createdTo; every problem).
func (ps *Payments) ListSettlements(ctx context.Context, scope remit.Scope, targetID string, in remit.SettlementQuery) (remit.List[remit.Settlement], error) {
	var out remit.List[remit.Settlement]
	target, err := targetMerchant(ctx, ps.DB.Read(ctx), scope, targetID, false)
	if err != nil {
		return out, err
	}
	scopeFilter := in.Scope
	if scopeFilter == "" {
		scopeFilter = "all"
	}
	tscope := scopeOf(target)
	list := "settlements:" + scopeFilter
	page, lp, err := ps.pageOf(ctx, tscope, list, in.ListQuery, func(p *remit.Problems) {
		enumProblem(p, "scope", scopeFilter, remit.SettlementScopes)
	})
	if err != nil {
		return out, err
	}
	f := store.SettlementFilter{ListPage: lp}
	if scopeFilter != "all" {
		f.Status = scopeFilter
	}
	if in.Limit == "" && in.Cursor == "" {
		f.Limit = 0 // the whole list in one page
	}
	items, err := ps.DB.Read(ctx).ListSettlements(ctx, target.ID, f)
	if err != nil {
		return out, err
	}
	page.Limit = f.Limit // 0: the unpaginated form
	return finishPage(ctx, ps.core, tscope, list, page, items)
}
