package remit_test

import (
	"testing"

	"github.com/remit-billing/remit"
)

func TestStampEnvironment(t *testing.T) {
	sb := remit.Sandbox
	inv := remit.Invoice{InvoiceID: "inv_1", Lines: []remit.InvoiceLine{{InvoiceLineID: "il_1"}}}
	got := remit.StampEnvironment(inv, sb).(remit.Invoice)
	if got.Environment != sb || inv.Environment != "" {
		t.Fatalf("a resource by value: stamped %q, the original %q", got.Environment, inv.Environment)
	}
	p := &remit.Payment{PaymentID: "pay_1"}
	remit.StampEnvironment(p, sb)
	if p.Environment != sb {
		t.Fatalf("a resource by pointer: %q", p.Environment)
	}
	l := remit.NewList([]remit.Customer{{CustomerID: "a"}, {CustomerID: "b", Environment: remit.Production}}, nil)
	stamped := remit.StampEnvironment(l, sb).(remit.List[remit.Customer])
	if stamped.Items[0].Environment != sb || stamped.Items[1].Environment != remit.Production {
		t.Fatalf("a list: %+v (a set environment is kept)", stamped.Items)
	}
	type answer struct {
		Invoice  remit.Invoice
		Credit   *remit.CreditNote
		Payments remit.List[remit.Payment]
	}
	ov := answer{Invoice: remit.Invoice{InvoiceID: "inv_2"}, Credit: &remit.CreditNote{}, Payments: remit.NewList([]remit.Payment{{PaymentID: "pay_2"}}, nil)}
	ovs := remit.StampEnvironment(ov, sb).(answer)
	if ovs.Invoice.Environment != sb || ovs.Credit.Environment != sb || ovs.Payments.Items[0].Environment != sb {
		t.Fatalf("one level down: %q %q %q", ovs.Invoice.Environment, ovs.Credit.Environment, ovs.Payments.Items[0].Environment)
	}
	for _, v := range []any{nil, "text", 42, map[string]any{"a": 1}} {
		if got := remit.StampEnvironment(v, sb); got == nil && v != nil {
			t.Fatalf("%v became nil", v)
		}
	}
	if got := remit.StampEnvironment(inv, "").(remit.Invoice); got.Environment != "" {
		t.Fatal("an empty environment stamped")
	}
}
