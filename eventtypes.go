package remit

import "slices"

// EventType names a kind of event, "resource.verb". Emit takes one of the constants below, so a
// type outside the catalog does not compile; docs/events.md documents each one (a test keeps the
// two together).
type EventType string

// The event catalog. An area that emits a new type adds it here, to EventTypes and to
// docs/events.md.
const (
	EventMerchantAccountCreated   EventType = "merchant_account.created"
	EventMerchantAccountSubmitted EventType = "merchant_account.submitted"
	EventMerchantAccountApproved  EventType = "merchant_account.approved"

	EventMerchantAccountRejected        EventType = "merchant_account.rejected"
	EventMerchantAccountUpdateRequested EventType = "merchant_account.update_requested"
	EventMerchantAccountClaimed         EventType = "merchant_account.claimed"
	EventMerchantAccountUpdated         EventType = "merchant_account.updated"

	EventPriceCreated          EventType = "price.created"
	EventCouponCreated         EventType = "coupon.created"
	EventCustomerCreated       EventType = "customer.created"
	EventBillingAccountCreated EventType = "billing_account.created"
	EventBillingAccountUpdated EventType = "billing_account.updated"
	EventPriceUpdated          EventType = "price.updated"
	EventCouponUpdated         EventType = "coupon.updated"
	EventCustomerUpdated       EventType = "customer.updated"
	EventProductCreated        EventType = "product.created"
	EventProductUpdated        EventType = "product.updated"
	EventFeatureCreated        EventType = "feature.created"
	// EventCustomerPortalConfigurationUpdated: the customer portal's configuration was replaced
	// (docs/customer-portal.md).
	EventCustomerPortalConfigurationUpdated EventType = "customer_portal_configuration.updated"
	// EventCustomerEntitlementsChanged: the features a customer holds, or a metered feature's
	// access, changed (docs/entitlements.md).
	EventCustomerEntitlementsChanged EventType = "customer.entitlements_changed"

	EventCustomerBalanceGranted        EventType = "customer_balance.granted"
	EventCustomerBalanceGrantEffective EventType = "customer_balance.grant_effective"
	EventCustomerBalanceExpired        EventType = "customer_balance.expired"
	EventCustomerBalanceApplied        EventType = "customer_balance.applied"
	EventCustomerBalanceCredited       EventType = "customer_balance.credited"

	EventPaymentMethodSetupSessionCreated   EventType = "payment_method.setup_session.created"
	EventPaymentMethodSetupSessionCompleted EventType = "payment_method.setup_session.completed"
	EventPaymentMethodAttached              EventType = "payment_method.attached"
	EventPaymentMethodDetached              EventType = "payment_method.detached"

	EventQuoteCreated  EventType = "quote.created"
	EventQuoteAccepted EventType = "quote.accepted"
	EventQuoteCanceled EventType = "quote.canceled"

	EventSubscriptionCreated EventType = "subscription.created"
	EventSubscriptionUpdated EventType = "subscription.updated"
	EventSubscriptionRenewed EventType = "subscription.renewed"

	EventSubscriptionTrialEnding EventType = "subscription.trial_ending"
	EventSubscriptionPastDue     EventType = "subscription.past_due"
	EventSubscriptionPaused      EventType = "subscription.paused"
	EventSubscriptionResumed     EventType = "subscription.resumed"
	EventSubscriptionCanceled    EventType = "subscription.canceled"

	EventPriceMigrationCreated   EventType = "price_migration.created"
	EventPriceMigrationCompleted EventType = "price_migration.completed"

	EventInvoiceCreated       EventType = "invoice.created"
	EventInvoiceUpdated       EventType = "invoice.updated"
	EventInvoiceRefreshed     EventType = "invoice.refreshed"
	EventInvoiceFinalized     EventType = "invoice.finalized"
	EventInvoiceVoided        EventType = "invoice.voided"
	EventInvoicePaid          EventType = "invoice.paid"
	EventInvoicePaymentFailed EventType = "invoice.payment_failed"
	// EventInvoicePaymentActionRequired: the invoice's payment attempt waits for the customer.
	EventInvoicePaymentActionRequired EventType = "invoice.payment_action_required"
	// EventInvoiceMarkedUncollectible: dunning's schedule ran out and its final action marked the
	// invoice uncollectible.
	EventInvoiceMarkedUncollectible EventType = "invoice.marked_uncollectible"

	EventTaxTransactionCreated   EventType = "tax_transaction.created"
	EventTaxTransactionCommitted EventType = "tax_transaction.committed"
	EventTaxTransactionReversed  EventType = "tax_transaction.reversed"

	EventPaymentProcessing     EventType = "payment.processing"
	EventPaymentSucceeded      EventType = "payment.succeeded"
	EventPaymentFailed         EventType = "payment.failed"
	EventPaymentRequiresAction EventType = "payment.requires_action"
	EventPaymentReceiptCreated EventType = "payment_receipt.created"
	EventPaymentReceiptUpdated EventType = "payment_receipt.updated"

	EventSettlementClosed EventType = "settlement.closed"
	EventSettlementPaid   EventType = "settlement.paid"
	EventPayoutCreated    EventType = "payout.created"

	EventCreditNoteCreated EventType = "credit_note.created"
	EventRefundCreated     EventType = "refund.created"
	EventRefundSucceeded   EventType = "refund.succeeded"
	EventRefundFailed      EventType = "refund.failed"

	EventUsageThresholdCreated  EventType = "usage_threshold.created"
	EventUsageThresholdCrossed  EventType = "usage_threshold.crossed"
	EventUsageThresholdArchived EventType = "usage_threshold.archived"
	EventMeterCreated           EventType = "meter.created"
	EventMeterUpdated           EventType = "meter.updated"
	EventUsageEventVoided       EventType = "usage_event.voided"

	EventWebhookEndpointCreated  EventType = "webhook_endpoint.created"
	EventWebhookEndpointDisabled EventType = "webhook_endpoint.disabled"
	EventWebhookEndpointUpdated  EventType = "webhook_endpoint.updated"
	EventWebhookEndpointEnabled  EventType = "webhook_endpoint.enabled"
	// EventWebhookEndpointSecretRotated: the endpoint's signing secret was replaced; the object
	// never carries a secret.
	EventWebhookEndpointSecretRotated EventType = "webhook_endpoint.secret_rotated"

	EventVerificationFailed EventType = "verification.failed"

	EventJobFailed  EventType = "job.failed"
	EventJobRetried EventType = "job.retried"
)

// EventTypes is the catalog of event types Remit emits, in the order docs/events.md lists them. An
// endpoint may subscribe to these or to "*".
var EventTypes = []EventType{
	EventMerchantAccountCreated, EventMerchantAccountSubmitted, EventMerchantAccountApproved,
	EventMerchantAccountRejected, EventMerchantAccountUpdateRequested, EventMerchantAccountClaimed,
	EventMerchantAccountUpdated,
	EventPriceCreated, EventCouponCreated, EventCustomerCreated, EventBillingAccountCreated, EventBillingAccountUpdated,
	EventPriceUpdated, EventCouponUpdated, EventCustomerUpdated,
	EventProductCreated, EventProductUpdated, EventFeatureCreated, EventCustomerEntitlementsChanged, EventCustomerPortalConfigurationUpdated,
	EventCustomerBalanceGranted, EventCustomerBalanceGrantEffective, EventCustomerBalanceExpired, EventCustomerBalanceApplied, EventCustomerBalanceCredited,
	EventPaymentMethodSetupSessionCreated, EventPaymentMethodSetupSessionCompleted, EventPaymentMethodAttached, EventPaymentMethodDetached,
	EventQuoteCreated, EventQuoteAccepted, EventQuoteCanceled,
	EventSubscriptionCreated, EventSubscriptionUpdated, EventSubscriptionRenewed, EventSubscriptionTrialEnding,
	EventSubscriptionPastDue, EventSubscriptionPaused, EventSubscriptionResumed, EventSubscriptionCanceled,
	EventPriceMigrationCreated, EventPriceMigrationCompleted,
	EventInvoiceCreated, EventInvoiceUpdated, EventInvoiceRefreshed, EventInvoiceFinalized, EventInvoiceVoided, EventInvoicePaid, EventInvoicePaymentFailed,
	EventInvoicePaymentActionRequired, EventInvoiceMarkedUncollectible,
	EventTaxTransactionCreated, EventTaxTransactionCommitted, EventTaxTransactionReversed,
	EventPaymentProcessing, EventPaymentSucceeded, EventPaymentFailed, EventPaymentRequiresAction, EventPaymentReceiptCreated, EventPaymentReceiptUpdated,
	EventSettlementClosed, EventSettlementPaid, EventPayoutCreated,
	EventCreditNoteCreated, EventRefundCreated, EventRefundSucceeded, EventRefundFailed,
	EventUsageThresholdCreated, EventUsageThresholdCrossed, EventUsageThresholdArchived,
	EventMeterCreated, EventMeterUpdated, EventUsageEventVoided,
	EventWebhookEndpointCreated, EventWebhookEndpointDisabled, EventWebhookEndpointEnabled, EventWebhookEndpointSecretRotated,
	EventWebhookEndpointUpdated,
	EventVerificationFailed,
	EventJobFailed, EventJobRetried,
}

// KnownEventType reports whether typ is in the catalog.
func KnownEventType(typ string) bool { return slices.Contains(EventTypes, EventType(typ)) }
