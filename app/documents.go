package app

import (
	"context"
	"net/url"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/locale"
	"github.com/remit-billing/remit/store"
)

// Documents (issue 13): invoice, credit-note and receipt PDFs and the hosted invoice page. This
// file gathers the facts a document shows into the models of package document, which renders
// them; nothing here computes a figure. A finalized invoice's document reads the invoice row and
// its lines as stored at finalization, so it changes only when a payment or a credit note changes
// them. The parties (the merchant's display name, business address and contacts, the customer and
// its address) are those the invoice was finalized for (stored with it at finalization, or when
// an update of the customer or merchant account was about to change them); a draft's are read as
// they are now (docs/documents.md "Parties"). The billing account's tax address never changes. Every
// document is in its customer's language (preferredLocale): the model's Locale, and the country
// names of the addresses gathered here.

// InvoiceDocument gathers what an invoice's PDF shows.
//
// Errors: not_found.
func (ds *Documents) InvoiceDocument(ctx context.Context, m remit.MerchantAccount, invoiceID string) (document.Invoice, error) {
	return ds.invoiceDocument(ctx, ds.DB.Read(ctx), m, invoiceID)
}

func (ds *Documents) invoiceDocument(ctx context.Context, q store.Q, m remit.MerchantAccount, invoiceID string) (document.Invoice, error) {
	var d document.Invoice
	inv, notes, err := invoiceWithCreditNotes(ctx, q, m, invoiceID)
	if err != nil {
		return d, err
	}
	ps, err := documentParties(ctx, q, m, inv)
	if err != nil {
		return d, err
	}
	d = document.Invoice{Locale: ps.locale, Merchant: ps.merchant, BillTo: ps.billTo, CustomerAddress: ps.custAddr, Invoice: inv, CreditNotes: notes}
	for _, id := range inv.CouponIDs {
		name := id
		if c, err := q.GetCoupon(ctx, m.ID, id); err == nil && c.Name != "" {
			name = c.Name
		} else if err != nil && remit.ErrorCode(err) != remit.ENotFound {
			return d, err
		}
		d.Coupons = append(d.Coupons, name)
	}
	if inv.Status.Payable() && inv.PaymentURL != nil {
		d.HostedURL = HostedInvoiceURL(*inv.PaymentURL)
	}
	return d, nil
}

// invoiceWithCreditNotes reads an invoice and its credit notes so that they agree: a credit note
// committed between the two reads is caught by comparing the notes' totals with the invoice's
// creditedTotal, and the pair is read again.
func invoiceWithCreditNotes(ctx context.Context, q store.Q, m remit.MerchantAccount, invoiceID string) (remit.Invoice, []remit.CreditNote, error) {
	for attempt := 0; ; attempt++ {
		inv, err := q.GetInvoice(ctx, m.ID, invoiceID, store.Unlocked)
		if err != nil {
			return inv, nil, err
		}
		notes, err := q.ListInvoiceCreditNotes(ctx, m.ID, invoiceID)
		if err != nil {
			return inv, nil, err
		}
		var sum int64
		for i := range notes {
			sum += notes[i].Total
		}
		if sum == inv.CreditedTotal || attempt == 2 {
			return inv, notes, nil
		}
	}
}

// HostedInvoiceURL is the hosted invoice page of an invoice's paymentUrl: the same token, without
// the trailing /pay.
func HostedInvoiceURL(paymentURL string) string {
	u, err := url.Parse(paymentURL)
	if err != nil {
		return ""
	}
	u.Path = strings.TrimSuffix(u.Path, "/pay")
	u.RawPath = ""
	return u.String()
}

// CreditNoteDocument gathers what a credit note's PDF shows: the note, the invoice it credits
// (number and line descriptions) and its reversal tax transaction (the jurisdictions).
//
// Errors: not_found.
func (ds *Documents) CreditNoteDocument(ctx context.Context, m remit.MerchantAccount, creditNoteID string) (document.CreditNote, error) {
	q := ds.DB.Read(ctx)
	var d document.CreditNote
	c, err := q.GetCreditNote(ctx, m.ID, creditNoteID)
	if err != nil {
		return d, err
	}
	inv, ps, err := invoiceParties(ctx, q, m, c.InvoiceID)
	if err != nil {
		return d, err
	}
	d = document.CreditNote{Locale: ps.locale, Merchant: ps.merchant, BillTo: ps.billTo, CreditNote: c, Invoice: inv}
	if c.TaxTransactionID != nil {
		t, err := q.GetTaxTransaction(ctx, m.ID, *c.TaxTransactionID, store.Unlocked)
		if err != nil {
			return d, err
		}
		d.Taxes = t.Lines
	}
	return d, nil
}

// ReceiptDocument gathers what a payment receipt's PDF shows: the receipt and the invoice it paid.
//
// Errors: not_found.
func (ds *Documents) ReceiptDocument(ctx context.Context, m remit.MerchantAccount, receiptID string) (document.Receipt, error) {
	q := ds.DB.Read(ctx)
	var d document.Receipt
	facts, invoiceID, err := receiptFactsForPDF(ctx, q, m, receiptID)
	if err != nil {
		return d, err
	}
	inv, ps, err := invoiceParties(ctx, q, m, invoiceID)
	if err != nil {
		return d, err
	}
	return document.Receipt{Locale: ps.locale, Merchant: ps.merchant, BillTo: ps.billTo, Receipt: facts, Invoice: inv}, nil
}

// invoiceParties reads the invoice a credit note or receipt refers to, with the parties its
// document shows: the merchant account and whom the invoice was billed to.
func invoiceParties(ctx context.Context, q store.Q, m remit.MerchantAccount, invoiceID string) (remit.Invoice, docParties, error) {
	inv, err := q.GetInvoice(ctx, m.ID, invoiceID, store.Unlocked)
	if err != nil {
		return inv, docParties{}, err
	}
	ps, err := documentParties(ctx, q, m, inv)
	return inv, ps, err
}

// docParties are a document's parties and its language.
type docParties struct {
	locale   string // the customer's preferredLocale: the document's language ("" is English)
	merchant document.Merchant
	billTo   document.Party
	custAddr []string // the customer's own address, when the billing address is another
}

// documentParties gathers the parties of a document of invoice inv in its customer's language: the
// merchant (seller) and whom the invoice is billed to, as the invoice keeps them (finalized), else
// as they are now.
func documentParties(ctx context.Context, q store.Q, m remit.MerchantAccount, inv remit.Invoice) (docParties, error) {
	cust, merch, err := q.GetInvoiceParties(ctx, m.ID, inv.InvoiceID)
	if err != nil {
		return docParties{}, err
	}
	if cust == nil {
		c, err := q.GetCustomer(ctx, m.ID, inv.CustomerID)
		if err != nil {
			return docParties{}, err
		}
		party := c.Party()
		cust = &party
	}
	if merch == nil {
		party, err := merchantPartyNow(m)
		if err != nil {
			return docParties{}, err
		}
		merch = &party
	}
	tr := locale.For(cust.PreferredLocale)
	ps := docParties{locale: cust.PreferredLocale, merchant: merchantParty(*merch, tr)}
	if ps.billTo, ps.custAddr, err = billToParty(ctx, q, m, *cust, inv.BillingAccountID, tr); err != nil {
		return docParties{}, err
	}
	return ps, nil
}

// merchantPartyNow is the merchant account as its documents name it now.
func merchantPartyNow(m remit.MerchantAccount) (remit.MerchantParty, error) {
	prof, err := merchantProfile(m)
	if err != nil {
		return remit.MerchantParty{}, err
	}
	return remit.MerchantPartyOf(m, prof), nil
}

// HostedInvoicePage authorizes the hosted token for the invoice and gathers its page: the invoice's
// document, whether it can be paid now (open with an amount remaining) and the billing account's
// default payment method. The caller adds the page's action URLs.
//
// Errors: forbidden (a token of another resource), not_found.
func (ds *Documents) HostedInvoicePage(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (document.HostedPage, error) {
	if err := AuthorizeHostedToken(tok, remit.HostedInvoice, invoiceID); err != nil {
		return document.HostedPage{}, err
	}
	q := ds.DB.Read(ctx)
	d, err := ds.invoiceDocument(ctx, q, m, invoiceID)
	if err != nil {
		return document.HostedPage{}, err
	}
	h := document.HostedPage{Invoice: d, Payable: d.Invoice.Status.Payable() && d.Invoice.AmountRemaining > 0}
	ba, err := q.GetBillingAccount(ctx, m.ID, d.Invoice.BillingAccountID, store.Unlocked)
	if err != nil {
		return h, err
	}
	if pm := ba.DefaultPaymentMethod; pm != nil {
		h.PaymentMethod = CardLabel(pm.Brand, pm.Last4)
	}
	return h, nil
}

// HostedInvoicePDF authorizes the hosted token for the invoice and gathers its PDF.
//
// Errors: forbidden (a token of another resource), not_found.
func (ds *Documents) HostedInvoicePDF(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, invoiceID string) (document.Invoice, error) {
	if err := AuthorizeHostedToken(tok, remit.HostedInvoice, invoiceID); err != nil {
		return document.Invoice{}, err
	}
	return ds.invoiceDocument(ctx, ds.DB.Read(ctx), m, invoiceID)
}

// CardLabel names a card for people: "Visa •••• 4242" (remit.CardLabel).
func CardLabel(brand, last4 string) string { return remit.CardLabel(brand, last4) }

// merchantParty is the seller on a document: the display name, then the business address (its
// country named in the document's language) and the contacts.
func merchantParty(mp remit.MerchantParty, tr *locale.Tr) document.Merchant {
	p := document.Merchant{Party: document.Party{Name: mp.DisplayName}, Country: mp.Country}
	if a := mp.BusinessAddress; a != nil {
		p.Lines = document.AddressLines(tr, a.Line1, a.Line2, a.City, a.Region, a.PostalCode, a.Country)
	}
	p.Lines = append(p.Lines, mp.Contacts...)
	return p
}

// billToParty is the buyer: the customer's name and email and the billing address (the billing
// account's tax address, else the customer's address). When the billing address is not the
// customer's own address, that address is returned too. Countries are named in tr's language.
func billToParty(ctx context.Context, q store.Q, m remit.MerchantAccount, cust remit.CustomerParty, billingAccountID string, tr *locale.Tr) (document.Party, []string, error) {
	ba, err := q.GetBillingAccount(ctx, m.ID, billingAccountID, store.Unlocked)
	if err != nil {
		return document.Party{}, nil, err
	}
	p := document.Party{Name: cust.Name}
	if cust.Email != nil && *cust.Email != "" {
		p.Lines = append(p.Lines, *cust.Email)
	}
	addr := ba.TaxAddress
	if addr == nil {
		addr = cust.Address
	}
	if addr != nil {
		p.Lines = append(p.Lines, addressLines(tr, *addr)...)
	}
	var own []string
	if ba.TaxAddress != nil && cust.Address != nil {
		own = addressLines(tr, *cust.Address)
		if strings.Join(own, "\n") == strings.Join(addressLines(tr, *ba.TaxAddress), "\n") {
			own = nil
		}
	}
	return p, own, nil
}

func addressLines(tr *locale.Tr, a remit.Address) []string {
	return document.AddressLines(tr, a.Line1, a.Line2, a.City, a.Region, a.PostalCode, a.Country)
}

// receiptFactsForPDF reads a payment receipt's figures and the invoice it paid, for its PDF.
//
// Errors: not_found.
func receiptFactsForPDF(ctx context.Context, q store.Q, m remit.MerchantAccount, receiptID string) (document.ReceiptFacts, string, error) {
	r, err := q.GetReceipt(ctx, m.ID, receiptID)
	if err != nil {
		return document.ReceiptFacts{}, "", err
	}
	method, outOfBand := "", r.PaymentMethod.Type == remit.MethodOutOfBand // the receipt says "Paid outside Remit"
	if !outOfBand {
		brand, last4 := "", ""
		if r.PaymentMethod.Brand != nil {
			brand = *r.PaymentMethod.Brand
		}
		if r.PaymentMethod.Last4 != nil {
			last4 = *r.PaymentMethod.Last4
		}
		method = CardLabel(brand, last4)
	}
	return document.ReceiptFacts{ReceiptID: r.ReceiptID, ReceiptNumber: r.ReceiptNumber, PaymentID: r.PaymentID, Amount: r.Amount,
		AmountRefunded: r.AmountRefunded, Currency: r.Currency, Status: r.Status, PaidAt: r.CreatedAt, PaymentMethod: method, OutOfBand: outOfBand}, r.InvoiceID, nil
}
