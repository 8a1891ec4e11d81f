package remit

import (
	"strings"
	"testing"
)

// Every status table, row by row: the states each action may be taken from, and the refusal's
// shape (409, currentState, invalid_state, the states that allow it).
func TestStatusTables(t *testing.T) {
	invoice := func(action string, allowed ...InvoiceStatus) func(t *testing.T) {
		return func(t *testing.T) {
			for _, s := range []InvoiceStatus{InvoiceDraft, InvoiceOpen, InvoicePaid, InvoiceVoid, InvoiceUncollectible} {
				want := false
				for _, a := range allowed {
					want = want || a == s
				}
				if got := s.Allows(action); got != want {
					t.Errorf("invoice %s, %s: allowed %v, want %v", s, action, got, want)
				}
			}
		}
	}
	t.Run("invoice refresh", invoice(ActionRefresh, InvoiceDraft))
	t.Run("invoice revise", invoice(ActionRevise, InvoiceDraft))
	t.Run("invoice finalize", invoice(ActionFinalize, InvoiceDraft))
	t.Run("invoice void", invoice(ActionVoid, InvoiceOpen))
	t.Run("invoice pay", invoice(ActionPay, InvoiceOpen, InvoiceUncollectible))
	t.Run("invoice dunning", invoice(ActionDun, InvoiceOpen))
	t.Run("invoice credit", invoice(ActionCredit, InvoiceOpen, InvoicePaid))
	t.Run("invoice settle", invoice(ActionSettle, InvoiceOpen))
	t.Run("invoice offset", invoice(ActionOffset, InvoiceOpen))
	t.Run("invoice update", invoice(ActionUpdate, InvoiceDraft))
	t.Run("an unknown action is never allowed", invoice("teleported"))

	type row struct {
		name    string
		allowed bool
	}
	expect := func(want bool, rows []row) {
		for _, c := range rows {
			if c.allowed != want {
				t.Errorf("%s: allowed %v, want %v", c.name, c.allowed, want)
			}
		}
	}
	expect(true, []row{
		{"quote draft accept", QuoteDraft.allowsIn(QuoteStates, ActionAccept)},
		{"quote draft cancel", QuoteDraft.allowsIn(QuoteStates, ActionCancel)},
		{"endpoint disabled enable", EndpointStates.Allows(EndpointDisabled, ActionEnable)},
		{"payment method attached detach", PaymentMethodAttached.Allows(ActionDetach)},
		{"payment method attached charge", PaymentMethodAttached.Allows(ActionCharge)},
		{"payment method attached default", PaymentMethodAttached.Allows(ActionDefault)},
		{"tax quoted commit", TaxQuoted.Allows(ActionCommit)},
		{"price migration running migrate", PriceMigrationRunning.Allows(ActionMigrate)},
		{"threshold active archive", ThresholdStates.Allows(ThresholdActive, ActionArchive)},
		{"endpoint enabled disable", EndpointStates.Allows(EndpointEnabled, ActionDisable)},
		{"endpoint enabled send", EndpointStates.Allows(EndpointEnabled, ActionSend)},
		{"subscription paused resume", SubscriptionPaused.Allows(ActionResume)},
		{"subscription active pause", SubscriptionActive.Allows(ActionPause)},
		{"subscription trialing change", SubscriptionTrialing.Allows(ActionChange)},
		{"subscription paused cancel", SubscriptionPaused.Allows(ActionCancel)},
		{"job failed retry", JobFailed.Allows(ActionRetry)},
		{"price active named", PriceStates.Allows(Price{Active: true}.Status(), ActionName)},
		{"coupon active listed", CouponStates.Allows(Coupon{Active: true}.Status(), ActionList)},
		{"merchant draft submit", MerchantStates.Allows(MerchantDraft, ActionSubmit)},
		{"merchant update_requested submit", MerchantStates.Allows(MerchantUpdateRequested, ActionSubmit)},
		{"merchant in_review decide", MerchantStates.Allows(MerchantInReview, ActionDecide)},
		{"settlement open book", SettlementOpen.Allows(ActionBook)},
		{"settlement open close", SettlementOpen.Allows(ActionClose)},
		{"settlement closed pay out", SettlementClosed.Allows(ActionPayOut)},
		{"refund pending resolve", RefundStates.Allows(RefundPending, ActionResolve)},
		{"payment succeeded refundable", PaymentSucceeded.Refundable()},
	})
	expect(false, []row{
		{"quote accepted accept", QuoteAccepted.allowsIn(QuoteStates, ActionAccept)},
		{"quote canceled accept", QuoteCanceled.allowsIn(QuoteStates, ActionAccept)},
		{"quote accepted cancel", QuoteAccepted.allowsIn(QuoteStates, ActionCancel)},
		{"quote canceled cancel", QuoteCanceled.allowsIn(QuoteStates, ActionCancel)},
		{"endpoint enabled enable", EndpointStates.Allows(EndpointEnabled, ActionEnable)},
		{"payment method detached detach", PaymentMethodDetached.Allows(ActionDetach)},
		{"payment method detached charge", PaymentMethodDetached.Allows(ActionCharge)},
		{"payment method detached default", PaymentMethodDetached.Allows(ActionDefault)},
		{"tax committed commit", TaxCommitted.Allows(ActionCommit)},
		{"price migration completed migrate", PriceMigrationCompleted.Allows(ActionMigrate)},
		{"price migration failed migrate", PriceMigrationFailed.Allows(ActionMigrate)},
		{"threshold archived archive", ThresholdStates.Allows(ThresholdArchived, ActionArchive)},
		{"endpoint disabled disable", EndpointStates.Allows(EndpointDisabled, ActionDisable)},
		{"endpoint disabled send", EndpointStates.Allows(EndpointDisabled, ActionSend)},
		{"subscription canceled cancel", SubscriptionCanceled.Allows(ActionCancel)},
		{"subscription paused change", SubscriptionPaused.Allows(ActionChange)},
		{"subscription paused pause", SubscriptionPaused.Allows(ActionPause)},
		{"job pending retry", JobPending.Allows(ActionRetry)},
		{"job done retry", JobDone.Allows(ActionRetry)},
		{"price archived named", PriceStates.Allows(Price{}.Status(), ActionName)},
		{"coupon archived listed", CouponStates.Allows(Coupon{}.Status(), ActionList)},
		{"merchant in_review submit", MerchantStates.Allows(MerchantInReview, ActionSubmit)},
		{"merchant approved submit", MerchantStates.Allows(MerchantApproved, ActionSubmit)},
		{"merchant rejected submit", MerchantStates.Allows(MerchantRejected, ActionSubmit)},
		{"merchant draft decide", MerchantStates.Allows(MerchantDraft, ActionDecide)},
		{"merchant approved decide", MerchantStates.Allows(MerchantApproved, ActionDecide)},
		{"merchant update_requested decide", MerchantStates.Allows(MerchantUpdateRequested, ActionDecide)},
		{"settlement closed book", SettlementClosed.Allows(ActionBook)},
		{"settlement paid book", SettlementPaid.Allows(ActionBook)},
		{"settlement closed close", SettlementClosed.Allows(ActionClose)},
		{"settlement open pay out", SettlementOpen.Allows(ActionPayOut)},
		{"settlement paid pay out", SettlementPaid.Allows(ActionPayOut)},
		{"refund succeeded resolve", RefundStates.Allows(RefundSucceeded, ActionResolve)},
		{"refund failed resolve", RefundStates.Allows(RefundFailed, ActionResolve)},
		{"payment failed refundable", PaymentFailed.Refundable()},
		{"payment processing refundable", PaymentProcessing.Refundable()},
		{"payment requires_action refundable", PaymentRequiresAction.Refundable()},
		{"payment canceled refundable", PaymentCanceled.Refundable()},
	})
}

func (s QuoteStatus) allowsIn(t StatusTable[QuoteStatus], action string) bool {
	return t.Allows(s, action)
}

func TestStatusTableRefusal(t *testing.T) {
	if err := InvoiceStates.Check("inv_1", InvoiceDraft, ActionFinalize); err != nil {
		t.Fatalf("a draft may be finalized: %v", err)
	}
	err := InvoiceStates.Check("inv_1", InvoicePaid, ActionVoid)
	e, ok := err.(*Error)
	if !ok || e.Code != EConflict || e.Details["currentState"] != "paid" || e.Details["reason"] != "invalid_state" {
		t.Fatalf("refusal %#v", err)
	}
	for _, part := range []string{"invoice 'inv_1' is paid", "voided only when open", "credited with a credit note instead"} {
		if !strings.Contains(e.Message, part) {
			t.Errorf("message %q lacks %q", e.Message, part)
		}
	}
	e = QuoteStates.Check("qt_1", QuoteAccepted, ActionAccept).(*Error)
	if !strings.Contains(e.Message, "accepted only when draft") || !strings.Contains(e.Message, "A quote is accepted once") {
		t.Errorf("quote refusal %q", e.Message)
	}
	e = InvoiceStates.Check("inv_2", InvoiceVoid, ActionPay).(*Error)
	if !strings.Contains(e.Message, "paid only when open or uncollectible") {
		t.Errorf("pay refusal %q", e.Message)
	}
}
