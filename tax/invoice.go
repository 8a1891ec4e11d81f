package tax

import "github.com/remit-billing/remit"

// Calculator is the tax of an invoice's lines at a place: the components owed there (comps), or
// nothing owed for an exempt customer (each component still listed, at rate 0). The invoice
// arithmetic (remit.ComputeInvoiceFigures) calls it on what is taxable of each line, after
// discounts and prepaid balance.
func Calculator(comps []Component, exempt bool) remit.TaxFunc {
	return func(taxable []int64) []remit.TaxOnLine { return Compute(taxable, comps, exempt) }
}
