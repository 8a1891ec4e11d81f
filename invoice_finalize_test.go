package remit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/tax"
)

// PlanFinalization decides every finalization: its figures, its state, paid at once or a hosted
// page and (charge_automatically) a collection, and the invoice's own events.
func TestPlanFinalization(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	auto := now.Add(time.Hour)
	ref := "po-7"
	draft := func(collection string, amounts ...int64) remit.FinalizationInput {
		inv := remit.Invoice{InvoiceID: "inv_1", Status: remit.InvoiceDraft, CollectionMethod: collection, Currency: "USD", AutoFinalizeAt: &auto}
		var lines []remit.PricedLine
		for i, a := range amounts {
			inv.Lines = append(inv.Lines, remit.InvoiceLine{InvoiceLineID: "il_" + string(rune('a'+i)), LineType: remit.LineOneTime, Amount: a})
			lines = append(lines, remit.PricedLine{LineType: remit.LineOneTime, PriceID: "p", Amount: a})
		}
		return remit.FinalizationInput{Draft: inv, Lines: lines, TaxOf: tax.Calculator(nil, false), Now: now, FinalizedByRef: &ref}
	}
	with := func(in remit.FinalizationInput, f func(*remit.FinalizationInput)) remit.FinalizationInput {
		f(&in)
		return in
	}
	nyTax := tax.Calculator(tax.Default().Lookup("US", "NY"), false) // the built-in table: 4 % (state)
	for _, c := range []struct {
		name                            string
		in                              remit.FinalizationInput
		status                          remit.InvoiceStatus
		total, remaining, prepaid       int64
		paidAtOnce, hostedPage, collect bool
		events                          []remit.EventType
		applications                    int
	}{
		{"send_invoice: open, a hosted page, nothing collected", draft(remit.SendInvoice, 10000), remit.InvoiceOpen, 10000, 10000, 0,
			false, true, false, []remit.EventType{remit.EventInvoiceFinalized}, 0},
		{"charge_automatically: collected now", draft(remit.ChargeAutomatically, 6000, 4000), remit.InvoiceOpen, 10000, 10000, 0,
			false, true, true, []remit.EventType{remit.EventInvoiceFinalized}, 0},
		{"with tax", with(draft(remit.ChargeAutomatically, 10000), func(in *remit.FinalizationInput) { in.TaxOf = nyTax }), remit.InvoiceOpen, 10400, 10400, 0,
			false, true, true, []remit.EventType{remit.EventInvoiceFinalized}, 0},
		{"prepaid balance pays all of it: paid at once, nothing collected", with(draft(remit.ChargeAutomatically, 6000, 4000), func(in *remit.FinalizationInput) {
			in.Grants = []remit.SpendableGrant{{EntryID: "g1", Remaining: 7000}, {EntryID: "g2", Remaining: 9000}}
		}), remit.InvoiceOpen, 0, 0, 10000, true, false, false, []remit.EventType{remit.EventInvoiceFinalized, remit.EventInvoicePaid}, 3},
		{"prepaid balance pays part: the rest collected", with(draft(remit.ChargeAutomatically, 10000), func(in *remit.FinalizationInput) {
			in.Grants = []remit.SpendableGrant{{EntryID: "g1", Remaining: 2500}}
		}), remit.InvoiceOpen, 7500, 7500, 2500, false, true, true, []remit.EventType{remit.EventInvoiceFinalized}, 1},
		{"a zero total is paid at once", draft(remit.SendInvoice, 0), remit.InvoiceOpen, 0, 0, 0,
			true, false, false, []remit.EventType{remit.EventInvoiceFinalized, remit.EventInvoicePaid}, 0},
		{"a coupon takes it to zero", with(draft(remit.ChargeAutomatically, 5000), func(in *remit.FinalizationInput) {
			in.Coupons = []remit.CouponTerms{{PercentOff: 100}}
		}), remit.InvoiceOpen, 0, 0, 0, true, false, false, []remit.EventType{remit.EventInvoiceFinalized, remit.EventInvoicePaid}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.in.Draft.Lines)
			plan, err := remit.PlanFinalization(c.in)
			if err != nil {
				t.Fatal(err)
			}
			inv := plan.Invoice
			if inv.Status != c.status || inv.Total != c.total || inv.AmountRemaining != c.remaining || inv.PrepaidApplied != c.prepaid {
				t.Errorf("invoice %s total %d remaining %d prepaid %d", inv.Status, inv.Total, inv.AmountRemaining, inv.PrepaidApplied)
			}
			if plan.PaidAtOnce != c.paidAtOnce || plan.HostedPage != c.hostedPage || plan.Collect != c.collect {
				t.Errorf("paid at once %v, hosted page %v, collect %v", plan.PaidAtOnce, plan.HostedPage, plan.Collect)
			}
			if !slices.Equal(plan.Events, c.events) || len(plan.Applications) != c.applications {
				t.Errorf("events %v, applications %v", plan.Events, plan.Applications)
			}
			if inv.FinalizedAt == nil || !inv.FinalizedAt.Equal(now) || inv.AutoFinalizeAt != nil || inv.FinalizedByRef != &ref || inv.AmountDue != inv.Total {
				t.Errorf("finalizedAt %v, autoFinalizeAt %v, ref %v, due %d", inv.FinalizedAt, inv.AutoFinalizeAt, inv.FinalizedByRef, inv.AmountDue)
			}
			if !slices.EqualFunc(before, c.in.Draft.Lines, func(a, b remit.InvoiceLine) bool {
				return a.PrepaidApplied == b.PrepaidApplied && a.TaxAmount == b.TaxAmount
			}) {
				t.Error("the plan changed the draft it was given")
			}
		})
	}
	for _, s := range []remit.InvoiceStatus{remit.InvoiceOpen, remit.InvoicePaid, remit.InvoiceVoid, remit.InvoiceUncollectible} {
		in := draft(remit.SendInvoice, 100)
		in.Draft.Status = s
		_, err := remit.PlanFinalization(in)
		if e, ok := err.(*remit.Error); !ok || e.Code != remit.EConflict || e.Details["currentState"] != string(s) {
			t.Errorf("finalizing a %s invoice: %v", s, err)
		}
	}
}
