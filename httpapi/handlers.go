package httpapi

import (
	"context"
	"fmt"
	"maps"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// registration is one row of the handler registry: the area an operation belongs to (the engine's
// service of the same name, Engine), its operationId and its handler.
type registration struct {
	area    string
	id      string
	handler HandlerFunc
}

// registry lists every operation of the contract with its area and handler. A handler is a method
// of Server named after its operationId, in its area's file (invoicing.go, ...), or a generic
// handler (byPath) for an operation on one resource.
func (s *Server) registry() []registration {
	return []registration{
		{"testClocks", "getTestClock", s.getTestClock},
		{"testClocks", "advanceTestClock", decoded(s.advanceTestClock)},
		{"jobs", "listJobs", s.listJobs},
		{"jobs", "getJob", byPath("jobId", s.eng.Jobs.GetJob)},
		{"jobs", "retryJob", byPath("jobId", s.eng.Jobs.RetryJob)},
		{"merchants", "createMerchantAccount", decoded(s.createMerchantAccount)},
		{"merchants", "listMerchantAccounts", s.listMerchantAccounts},
		{"merchants", "submitMerchantOnboarding", decoded(s.submitMerchantOnboarding)},
		{"merchants", "getPayoutProfile", s.getPayoutProfile},
		{"merchants", "claimOrganization", s.claimOrganization},
		{"catalog", "createPrice", withBody(priceInput, s.eng.Catalog.CreatePrice)},
		{"catalog", "getPrice", byPath("priceId", s.eng.Catalog.GetPrice)},
		{"catalog", "listPrices", s.listPrices},
		{"catalog", "createCoupon", withBody(couponInput, s.eng.Catalog.CreateCoupon)},
		{"catalog", "getCoupon", byPath("couponId", s.eng.Catalog.GetCoupon)},
		{"catalog", "listCoupons", s.listCoupons},
		{"catalog", "createProduct", withBody(productInput, s.eng.Catalog.CreateProduct)},
		{"catalog", "getProduct", byPath("productId", s.eng.Catalog.GetProduct)},
		{"catalog", "listProducts", s.listProducts},
		{"catalog", "updateProduct", patched("productId", s.eng.Catalog.UpdateProduct)},
		{"catalog", "attachProductFeature", decoded(s.attachProductFeature)},
		{"catalog", "detachProductFeature", s.detachProductFeature},
		{"catalog", "createFeature", withBody(featureInput, s.eng.Catalog.CreateFeature)},
		{"catalog", "getFeature", byPath("featureKey", s.eng.Catalog.GetFeature)},
		{"catalog", "listFeatures", s.listFeatures},
		{"catalog", "listCustomerEntitlements", byPath("customerId", s.eng.Catalog.ListCustomerEntitlements)},
		{"catalog", "getCustomerEntitlement", s.getCustomerEntitlement},
		{"catalog", "createCustomer", withBody(customerInput, s.eng.Catalog.CreateCustomer)},
		{"catalog", "getCustomer", byPath("customerId", s.eng.Catalog.GetCustomer)},
		{"catalog", "listCustomers", s.listCustomers},
		{"catalog", "listCustomerPaymentMethods", s.listCustomerPaymentMethods},
		{"catalog", "createBillingAccount", withBody(billingAccountInput, s.eng.Catalog.CreateBillingAccount)},
		{"catalog", "getBillingAccount", byPath("billingAccountId", s.eng.Catalog.GetBillingAccount)},
		{"catalog", "listBillingAccounts", s.listBillingAccounts},
		{"catalog", "createPaymentMethodSetupSession", pathAndBody("customerId", setupSessionInput, s.eng.Catalog.CreateSetupSession)},
		{"catalog", "detachPaymentMethod", byPath("paymentMethodId", s.eng.Catalog.DetachPaymentMethod)},
		{"ledger", "getCustomerBalance", byPath("customerId", s.eng.Ledger.GetCustomerBalance)},
		{"ledger", "listCustomerBalanceEntries", s.listCustomerBalanceEntries},
		{"ledger", "grantCustomerBalance", decoded(s.grantCustomerBalance)},
		{"ledger", "expireCustomerBalance", decoded(s.expireCustomerBalance)},
		{"portal", "customerPortalPut", s.customerPortalPut},
		{"portal", "customerPortalGet", s.portalGet},
		{"quotes", "createQuote", withBody(quoteInput, s.eng.Quotes.CreateQuote)},
		{"quotes", "getQuote", byPath("quoteId", s.eng.Quotes.GetQuote)},
		{"quotes", "listQuotes", s.listQuotes},
		{"quotes", "acceptQuote", byPath("quoteId", s.eng.Quotes.AcceptQuote)},
		{"quotes", "cancelQuote", byPath("quoteId", s.eng.Quotes.CancelQuote)},
		{"quotes", "getSubscription", byPath("subscriptionId", s.eng.Quotes.GetSubscription)},
		{"quotes", "listSubscriptions", s.listSubscriptions},
		{"quotes", "cancelSubscription", pathAndBody("subscriptionId", cancelInput, s.eng.Quotes.CancelSubscription)},
		{"quotes", "pauseSubscription", byPath("subscriptionId", s.eng.Quotes.PauseSubscription)},
		{"quotes", "resumeSubscription", byPath("subscriptionId", s.eng.Quotes.ResumeSubscription)},
		{"quotes", "changeSubscription", pathAndBody("subscriptionId", changeInput, s.eng.Quotes.ChangeSubscription)},
		{"quotes", "deleteSubscriptionPendingChange", byPath("subscriptionId", s.eng.Quotes.DeleteSubscriptionPendingChange)},
		{"quotes", "previewSubscriptionChange", pathAndBody("subscriptionId", changeInput, s.eng.Quotes.PreviewChange)},
		{"quotes", "getUpcomingInvoice", s.getUpcomingInvoice},
		{"quotes", "createPriceMigration", withBody(priceMigrationInput, s.eng.Quotes.CreatePriceMigration)},
		{"quotes", "getPriceMigration", byPath("migrationId", s.eng.Quotes.GetPriceMigration)},
		{"quotes", "listPriceMigrations", s.listPriceMigrations},
		{"invoicing", "createInvoice", withBody(invoiceInput, s.eng.Invoicing.CreateInvoice)},
		{"invoicing", "getInvoice", byPath("invoiceId", s.eng.Invoicing.GetInvoice)},
		{"invoicing", "listInvoices", s.listInvoices},
		{"invoicing", "refreshInvoice", byPath("invoiceId", s.eng.Invoicing.RefreshInvoice)},
		{"invoicing", "finalizeInvoice", decoded(s.finalizeInvoice)},
		{"invoicing", "voidInvoice", byPath("invoiceId", s.eng.Invoicing.VoidInvoice)},
		{"invoicing", "listTaxTransactions", s.listTaxTransactions},
		{"invoicing", "getTaxTransaction", byPath("taxTransactionId", s.eng.Invoicing.GetTaxTransaction)},
		{"invoicing", "finalizeTaxTransaction", byPath("taxTransactionId", s.eng.Invoicing.CommitTaxTransaction)},
		{"payments", "payInvoice", decoded(s.payInvoice)},
		{"payments", "listPaymentReceipts", s.listPaymentReceipts},
		{"payments", "getPayment", byPath("paymentId", s.eng.Payments.GetPayment)},
		{"payments", "listPayments", s.listPayments},
		{"payments", "receiveStripeWebhook", s.receiveStripeWebhook},
		{"payments", "getPaymentReceipt", byPath("receiptId", s.eng.Payments.GetPaymentReceipt)},
		{"payments", "listSettlements", s.listSettlements},
		{"emails", "listEmails", s.listEmails},
		{"emails", "getEmail", byPath("emailId", s.eng.Emails.GetEmail)},
		{"verification", "getVerification", s.getVerification},
		{"creditNotes", "createCreditNote", decoded(s.createCreditNote)},
		{"creditNotes", "getCreditNote", byPath("creditNoteId", s.eng.CreditNotes.GetCreditNote)},
		{"creditNotes", "listCreditNotes", s.listCreditNotes},
		{"journal", "listLedgerEntries", s.listLedgerEntries},
		{"journal", "getLedgerEntry", byPath("entryId", s.eng.Journal.GetJournalEntry)},
		{"journal", "getLedgerBalances", s.getLedgerBalances},
		{"journal", "getRevenueReport", s.getRevenueReport},
		{"usage", "createUsageEvent", withBody(usageEventInput, s.eng.Usage.CreateUsageEvent)},
		{"usage", "createUsageEventBatch", s.createUsageEventBatch},
		{"usage", "getUsageEvent", byPath("eventId", s.eng.Usage.GetUsageEvent)},
		{"usage", "listUsageEvents", s.listUsageEvents},
		{"usage", "voidUsageEvent", byPath("eventId", s.eng.Usage.VoidUsageEvent)},
		{"usage", "createMeter", withBody(meterInput, s.eng.Usage.CreateMeter)},
		{"usage", "getMeter", byPath("meterId", s.eng.Usage.GetMeter)},
		{"usage", "listMeters", s.listMeters},
		{"usage", "createUsageThreshold", decoded(s.createUsageThreshold)},
		{"usage", "getUsageThreshold", byPath("thresholdId", s.eng.Usage.GetUsageThreshold)},
		{"usage", "listUsageThresholds", s.listUsageThresholds},
		{"usage", "archiveUsageThreshold", byPath("thresholdId", s.eng.Usage.ArchiveUsageThreshold)},
		{"webhooks", "createWebhookEndpoint", decoded(s.createWebhookEndpoint)},
		{"webhooks", "listWebhookEndpoints", s.listWebhookEndpoints},
		{"webhooks", "getWebhookEndpoint", s.getWebhookEndpoint},
		{"webhooks", "disableWebhookEndpoint", s.disableWebhookEndpoint},
		{"webhooks", "enableWebhookEndpoint", s.enableWebhookEndpoint},
		{"webhooks", "rotateWebhookEndpointSecret", decoded(s.rotateWebhookEndpointSecret)},
		{"webhooks", "listEvents", s.listEvents},
		{"webhooks", "getEvent", s.getEvent},
		{"webhooks", "listEventDeliveries", s.listEventDeliveries},
		{"webhooks", "resendEvent", decoded(s.resendEvent)},
		{"documents", "getInvoicePdf", s.getInvoicePdf},
		{"documents", "getCreditNotePdf", s.getCreditNotePdf},
		{"documents", "getPaymentReceiptPdf", s.getPaymentReceiptPdf},
		{"catalog", "updatePrice", patched("priceId", s.eng.Catalog.UpdatePrice)},
		{"catalog", "updateCoupon", patched("couponId", s.eng.Catalog.UpdateCoupon)},
		{"catalog", "updateCustomer", patched("customerId", s.eng.Catalog.UpdateCustomer)},
		{"catalog", "updateBillingAccount", patched("billingAccountId", s.eng.Catalog.UpdateBillingAccount)},
		{"invoicing", "updateInvoice", patched("invoiceId", s.eng.Invoicing.UpdateInvoice)},
		{"webhooks", "updateWebhookEndpoint", s.updateWebhookEndpoint},
		{"merchants", "updateMerchantAccount", s.updateMerchantAccount},
		{"exports", "exportDataset", s.exportDataset},
		{"portal", "createCustomerPortalSession", s.createCustomerPortalSession},
		{"portal", "getCustomerPortalConfiguration", s.getCustomerPortalConfiguration},
		{"portal", "putCustomerPortalConfiguration", s.putCustomerPortalConfiguration},
	}
}

// handlers returns every operation's handler by operationId. An operation of the contract without
// one answers 501; an operationId registered twice is a startup error.
func (s *Server) handlers() (map[string]HandlerFunc, error) {
	all := map[string]HandlerFunc{}
	for _, r := range s.registry() {
		if _, dup := all[r.id]; dup {
			return nil, fmt.Errorf("operation %q is registered twice (the second time by the %s area)", r.id, r.area)
		}
		all[r.id] = r.handler
	}
	return all, nil
}

// preparers returns the prepare steps of the write operations that have one, by operationId: work
// run before the operation's transaction (see PrepareFunc).
func (s *Server) preparers() map[string]PrepareFunc {
	all := s.webhookPreparers()
	maps.Copy(all, s.catalogPreparers())
	maps.Copy(all, s.invoicingPreparers())
	return all
}

// bodyChecks returns the body rules of the operations that have them, by operationId (see
// BodyCheck).
func (s *Server) bodyChecks() map[string]BodyCheck {
	return map[string]BodyCheck{
		"createPrice":    bodyCheck(priceInput, func(p remit.Price, probs *remit.Problems) { remit.CheckPrice(&p, probs) }),
		"createMeter":    bodyCheck(meterInput, func(m remit.Meter, probs *remit.Problems) { remit.CheckMeter(m, probs) }),
		"createCoupon":   bodyCheck(couponInput, func(c remit.Coupon, probs *remit.Problems) { remit.CheckCoupon(&c, probs) }),
		"createProduct":  bodyCheck(productInput, func(p remit.Product, probs *remit.Problems) { remit.CheckProduct(&p, probs) }),
		"createFeature":  bodyCheck(featureInput, remit.CheckFeature),
		"createCustomer": bodyCheck(customerInput, func(c remit.Customer, probs *remit.Problems) { remit.CheckCustomer(&c, probs) }),
		"createBillingAccount": bodyCheck(billingAccountInput, func(b remit.BillingAccount, probs *remit.Problems) {
			remit.CheckBillingAccount(&b, probs)
		}),
		"createInvoice":             bodyCheck(invoiceInput, remit.CheckInvoiceRequest),
		"createQuote":               bodyCheck(quoteInput, remit.CheckQuoteRequest),
		"cancelSubscription":        bodyCheck(cancelInput, remit.CheckCancel),
		"changeSubscription":        bodyCheck(changeInput, remit.CheckChange),
		"previewSubscriptionChange": bodyCheck(changeInput, remit.CheckChange),
		"createPriceMigration":      bodyCheck(priceMigrationInput, remit.CheckPriceMigrationRequest),
		"createCustomerPortalSession": func(r *Request) []remit.FieldError {
			var p remit.Problems
			remit.CheckPortalSession(portalSessionInput(r), &p)
			return p.Fields()
		},
		"putCustomerPortalConfiguration": func(r *Request) []remit.FieldError {
			var p remit.Problems
			remit.CheckPortalConfiguration(portalConfiguration(r), &p)
			return p.Fields()
		},
		"createWebhookEndpoint": func(r *Request) []remit.FieldError {
			var body api.WebhookEndpointCreateRequest
			r.DecodeLenient(&body)
			var p remit.Problems
			remit.CheckWebhookEndpoint(webhookEndpointInput(body), r.Scope.Environment, &p)
			return p.Fields()
		},
		"submitMerchantOnboarding": func(r *Request) []remit.FieldError {
			var body api.OnboardingSubmitRequest
			r.DecodeLenient(&body)
			var p remit.Problems
			remit.CheckOnboardingSubmission(submissionInput(r, body), r.Scope.Environment, &p)
			return p.Fields()
		},
		"createPaymentMethodSetupSession": bodyCheck(setupSessionInput, remit.CheckSetupSession),
		"advanceTestClock": bodyCheck(func(b api.ClockAdvanceRequest) api.ClockAdvanceRequest { return b },
			func(b api.ClockAdvanceRequest, probs *remit.Problems) {
				remit.CheckClockAdvance(b.To, b.Seconds, probs)
			}),
		"createMerchantAccount": func(r *Request) []remit.FieldError {
			var body api.MerchantAccountCreateRequest
			r.DecodeLenient(&body)
			return s.eng.Merchants.MerchantAccountProblems(r.Scope, r.Merchant, merchantInput(body)).Fields()
		},
		"updatePrice":           patchCheck(remit.PricePatch, nil),
		"updateCoupon":          patchCheck(remit.CouponPatch, nil),
		"updateProduct":         patchCheck(remit.ProductPatch, nil),
		"updateCustomer":        patchCheck(remit.CustomerPatch, nil),
		"updateBillingAccount":  patchCheck(remit.BillingAccountPatch, nil),
		"updateInvoice":         patchCheck(remit.InvoicePatch, nil),
		"updateMerchantAccount": patchCheck(remit.MerchantAccountPatch, nil),
		"updateWebhookEndpoint": patchCheck(remit.WebhookEndpointPatch, func(r *Request) remit.WebhookEndpoint {
			return remit.WebhookEndpoint{Environment: r.Scope.Environment}
		}),
		// Not a body: the export's query, whose filters the engine checks (the same rule), beside
		// what the contract finds in it.
		"exportDataset": func(r *Request) []remit.FieldError {
			_, err := remit.PlanExport(exportQuery(r))
			if e, ok := err.(*remit.Error); ok && e.Code == remit.EInvalid {
				return e.Fields
			}
			return nil
		},
	}
}

// patchCheck builds an update's BodyCheck: the resource's update rule on the merge patch alone,
// applied to seed (nil: the zero resource), as the engine applies it to the stored resource.
func patchCheck[T any](rule remit.PatchRule[T], seed func(r *Request) T) BodyCheck {
	return func(r *Request) []remit.FieldError {
		patch, err := remit.ParsePatch(r.Body)
		if err != nil {
			return nil // the body is no object: the pipeline answers it
		}
		var v T
		if seed != nil {
			v = seed(r)
		}
		return rule.Problems(patch, v)
	}
}

// bodyCheck builds an operation's BodyCheck from the mapping of its decoded body to the engine's
// input (the handler's own) and the domain rule the engine applies to that input.
func bodyCheck[B, In any](input func(B) In, rule func(In, *remit.Problems)) BodyCheck {
	return func(r *Request) []remit.FieldError {
		var body B
		r.DecodeLenient(&body)
		var p remit.Problems
		rule(input(body), &p)
		return p.Fields()
	}
}

// decoded adapts a handler that takes the operation's decoded body, a request type generated from
// the contract (package api).
func decoded[B any](f func(ctx context.Context, r *Request, body B) (any, error)) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		var body B
		if err := r.Decode(&body); err != nil {
			return nil, err
		}
		return f(ctx, r, body)
	}
}

// patched is the handler of an update (PATCH) of one resource of the acting merchant account, named
// by the path parameter param: the body is a JSON merge patch, which the engine applies.
func patched[T any](param string, do func(ctx context.Context, m remit.MerchantAccount, id string, patch remit.Patch) (T, error)) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		patch, err := remit.ParsePatch(r.Body)
		if err != nil {
			return nil, err
		}
		return do(ctx, r.Merchant, r.Path(param), patch)
	}
}

// withBody is the handler of an operation of the acting merchant account with a body: the decoded
// body (B, a request type generated from the contract) is mapped to the engine's input by in.
func withBody[B, In, T any](in func(B) In, do func(ctx context.Context, m remit.MerchantAccount, v In) (T, error)) HandlerFunc {
	return decoded(func(ctx context.Context, r *Request, body B) (any, error) {
		return do(ctx, r.Merchant, in(body))
	})
}

// pathAndBody is withBody for an operation on one resource, named by the path parameter param.
func pathAndBody[B, In, T any](param string, in func(B) In, do func(ctx context.Context, m remit.MerchantAccount, id string, v In) (T, error)) HandlerFunc {
	return decoded(func(ctx context.Context, r *Request, body B) (any, error) {
		return do(ctx, r.Merchant, r.Path(param), in(body))
	})
}

// byPath is the handler of an operation on one resource of the acting merchant account, named by
// the path parameter param: a read, or an action without a body.
func byPath[T any](param string, do func(ctx context.Context, m remit.MerchantAccount, id string) (T, error)) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		return do(ctx, r.Merchant, r.Path(param))
	}
}
