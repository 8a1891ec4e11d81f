package remit_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

// TestCheckDetach: a payment method is detached once, and never while it is the default of a
// charge_automatically billing account with open invoices left to collect.
func TestCheckDetach(t *testing.T) {
	attached := remit.PaymentMethod{PaymentMethodID: "pm_1", Status: remit.PaymentMethodAttached}
	detached := attached
	detached.Status = remit.PaymentMethodDetached
	auto := func(id string, open ...string) remit.DefaultUse {
		return remit.DefaultUse{BillingAccount: remit.BillingAccount{BillingAccountID: id, CollectionMethod: remit.ChargeAutomatically}, OpenInvoiceIDs: open}
	}
	manual := remit.DefaultUse{BillingAccount: remit.BillingAccount{BillingAccountID: "ba_send", CollectionMethod: remit.SendInvoice},
		OpenInvoiceIDs: []string{"inv_sent"}}
	many := make([]string, 120)
	for i := range many {
		many[i] = fmt.Sprintf("inv_%03d", i)
	}
	for _, c := range []struct {
		name     string
		pm       remit.PaymentMethod
		uses     []remit.DefaultUse
		reason   string // "" = allowed
		state    string
		accounts []string
		invoices int
	}{
		{name: "nobody's default", pm: attached},
		{name: "the default of an automatic account with nothing open", pm: attached, uses: []remit.DefaultUse{auto("ba_1")}},
		{name: "the default of a send_invoice account with open invoices", pm: attached, uses: []remit.DefaultUse{manual}},
		{name: "already detached", pm: detached, reason: "invalid_state", state: "detached"},
		{name: "would strand open invoices", pm: attached, uses: []remit.DefaultUse{manual, auto("ba_1", "inv_1", "inv_2"), auto("ba_2")},
			reason: "default_payment_method_in_use", accounts: []string{"ba_1"}, invoices: 2},
		{name: "two accounts, the list capped", pm: attached, uses: []remit.DefaultUse{auto("ba_1", many[:60]...), auto("ba_2", many[60:]...)},
			reason: "default_payment_method_in_use", accounts: []string{"ba_1", "ba_2"}, invoices: 120},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := remit.CheckDetach(c.pm, c.uses)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *remit.Error
			if !errorAs(err, &e) || e.Code != remit.EConflict || e.Details["reason"] != c.reason {
				t.Fatalf("got %v, want 409 %s", err, c.reason)
			}
			if c.state != "" && e.Details["currentState"] != c.state {
				t.Fatalf("currentState %v", e.Details["currentState"])
			}
			if c.accounts == nil {
				return
			}
			ids, _ := e.Details["invoiceIds"].([]string)
			if !slices.Equal(e.Details["billingAccountIds"].([]string), c.accounts) || e.Details["openInvoices"] != c.invoices ||
				len(ids) != min(c.invoices, 100) {
				t.Fatalf("details %v", e.Details)
			}
			for _, id := range c.accounts {
				if !strings.Contains(e.Message, "'"+id+"'") {
					t.Fatalf("message %q does not name %s", e.Message, id)
				}
			}
		})
	}
}

// TestSecretOverlap: a rotation keeps the old secret 24 hours unless told, 0 to 7 days, and the
// old secret signs strictly before its expiry.
func TestSecretOverlap(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		in      *int64
		want    time.Duration
		problem bool
	}{
		{nil, 24 * time.Hour, false}, {n(0), 0, false}, {n(3600), time.Hour, false}, {n(604800), 7 * 24 * time.Hour, false},
		{n(604801), 0, true}, {n(-1), 0, true},
	} {
		var p remit.Problems
		got := remit.SecretOverlap(c.in, &p)
		if got != c.want || (p.Len() > 0) != c.problem {
			t.Errorf("SecretOverlap(%v) = %v, %d problems", c.in, got, p.Len())
		}
		if c.problem && p.Fields()[0].Field != "expireCurrentAfter" {
			t.Errorf("problem on %v", p.Fields())
		}
	}
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ep := remit.WebhookEndpoint{PreviousSecretExpiresAt: &at}
	if !ep.PreviousSecretSigns(at.Add(-time.Microsecond)) || ep.PreviousSecretSigns(at) || ep.PreviousSecretSigns(at.Add(time.Hour)) {
		t.Error("the previous secret signs until, and not at, its expiry")
	}
	if (remit.WebhookEndpoint{}).PreviousSecretSigns(at) {
		t.Error("an endpoint never rotated has no previous secret")
	}
}
