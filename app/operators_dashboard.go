package app

import (
	"context"
	"encoding/json"
	"regexp"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/store"
)

// The dashboard's pages and actions (package dashboard, docs/dashboard.md): each reads or acts on a
// merchant account of the operator's organization (OperatorAccount) through the same engine calls
// as the API, and every action goes through the write entry point with the form's Idempotency-Key
// (operatorWrite). The operators themselves, their passwords and sessions are operators.go; the
// Jobs page is operators_jobs.go.

// OperatorAccount returns a merchant account of the operator's organization.
//
// Errors: not_found (no such account, or another organization's: the same answer).
func (op *Operators) OperatorAccount(ctx context.Context, o remit.Operator, merchantAccountID string) (remit.MerchantAccount, error) {
	m, err := op.DB.Read(ctx).GetMerchantAccount(ctx, merchantAccountID, store.Unlocked)
	if err == nil && m.OrganizationID != o.OrganizationID {
		err = remit.NotFound("merchant account", merchantAccountID, "")
	}
	return m, err
}

// inAccount is a dashboard read in a merchant account of the operator's organization: the account
// (OperatorAccount: not_found otherwise), then what read answers in it; it returns both.
func inAccount[T any](ctx context.Context, op *Operators, o remit.Operator, merchantAccountID string, read func(m remit.MerchantAccount) (T, error)) (remit.MerchantAccount, T, error) {
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	if err != nil {
		var zero T
		return m, zero, err
	}
	v, err := read(m)
	return m, v, err
}

// OperatorInvoice returns an invoice of a merchant account of the operator's organization.
//
// Errors: not_found.
func (op *Operators) OperatorInvoice(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID string) (remit.MerchantAccount, remit.Invoice, error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.Invoice, error) {
		return op.DB.Read(ctx).GetInvoice(ctx, m.ID, invoiceID, store.Unlocked)
	})
}

// InvoiceOverview gathers what belongs to an invoice: its payments (the newest 20), receipts (the
// first 20) and credit notes.
//
// Errors: not_found.
func (op *Operators) InvoiceOverview(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID string) (remit.InvoiceOverview, error) {
	var v remit.InvoiceOverview
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	if err != nil {
		return v, err
	}
	if v.Payments, err = op.payments.ListPayments(ctx, m, remit.PaymentQuery{InvoiceID: invoiceID}); err != nil {
		return v, err
	}
	if v.Receipts, err = op.payments.ListPaymentReceipts(ctx, m, remit.ReceiptQuery{InvoiceID: invoiceID}); err != nil {
		return v, err
	}
	v.CreditNotes, err = op.DB.Read(ctx).ListInvoiceCreditNotes(ctx, m.ID, invoiceID)
	return v, err
}

// errViewer is the answer to an action of a viewer.
var errViewer = remit.Errorf(remit.EForbidden, "Viewers cannot act; ask an admin of your organization.")

// adminAccount is the merchant account an operator acts in from the dashboard: a viewer is refused
// (errViewer) before anything is read; an admin's is OperatorAccount's.
func (op *Operators) adminAccount(ctx context.Context, o remit.Operator, merchantAccountID string) (remit.MerchantAccount, error) {
	if o.Role != remit.OperatorAdmin {
		return remit.MerchantAccount{}, errViewer
	}
	return op.OperatorAccount(ctx, o, merchantAccountID)
}

// InvoiceAction runs an action of the dashboard on an invoice, for an admin operator: the same
// engine call as the API's route (same rule, same event), through the same write entry point,
// under the form's Idempotency-Key, so that a form sent twice acts once. Actions: "void"
// (POST /v1/invoices/{id}/void) and "pay-out-of-band" (POST /v1/invoices/{id}/pay with outOfBand).
//
// Errors: forbidden (a viewer), not_found, conflict (the rule's refusal), validation_failure (an
// unknown action).
func (op *Operators) InvoiceAction(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID, action, key string) (remit.Invoice, error) {
	return namedAction(ctx, op, o, merchantAccountID, "POST /dashboard/invoices/"+invoiceID+"/", action, key, "The invoice actions are void and pay-out-of-band.",
		func(m remit.MerchantAccount) map[string]func(ctx context.Context) (remit.Invoice, error) {
			return map[string]func(ctx context.Context) (remit.Invoice, error){
				"void": func(ctx context.Context) (remit.Invoice, error) { return op.invoicing.VoidInvoice(ctx, m, invoiceID) },
				"pay-out-of-band": func(ctx context.Context) (remit.Invoice, error) {
					return op.payments.PayInvoice(ctx, m, invoiceID, true)
				},
			}
		})
}

// namedAction runs the dashboard action a form names on a resource, for an admin operator in a
// merchant account of its organization (adminAccount): actions are the resource's, by name, each
// the API's engine call for the account; it runs through operatorWrite under route (which ends
// where the action's name follows) and the form's key. An unknown name is invalid_enum, with
// unknown as its message.
func namedAction[T any](ctx context.Context, op *Operators, o remit.Operator, merchantAccountID, route, action, key, unknown string,
	actions func(m remit.MerchantAccount) map[string]func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	m, err := op.adminAccount(ctx, o, merchantAccountID)
	if err != nil {
		return zero, err
	}
	run, ok := actions(m)[action]
	if !ok {
		return zero, remit.Invalid(remit.FieldError{Field: "action", Location: remit.InPath, Reason: "invalid_enum", Message: unknown})
	}
	return operatorWrite(ctx, op.core, o, m, route+action, key, run)
}

// formKey is the shape of the Idempotency-Key a confirmation page gives its form.
var formKey = regexp.MustCompile(`^[0-9a-f]{64}$`)

// operatorWrite runs a dashboard action through core.Write under the form's key; the answer it
// remembers is the resource as JSON (a replay decodes it).
func operatorWrite[T any](ctx context.Context, co *core, o remit.Operator, m remit.MerchantAccount, route, key string, run func(ctx context.Context) (T, error)) (T, error) {
	var out T
	if !formKey.MatchString(key) { // the confirmation page's key (64 hex digits): nothing else reaches the write
		return out, remit.Invalid(remit.FieldError{Field: "key", Location: remit.InBody, Reason: "invalid_format",
			Message: "This form is out of date or was not sent from this dashboard: open the page again and resend it."})
	}
	scope := remit.Scope{OrganizationID: o.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
	ans, err := co.Write(ctx, remit.WriteRequest{Scope: scope, Key: key, Route: route, Body: []byte(`{"operator":"` + o.ID + `"}`)},
		func(ctx context.Context) (any, error) { return run(ctx) },
		func(data any, err error) remit.Answer {
			if err != nil {
				b, _ := json.Marshal(map[string]any{"code": remit.ErrorCode(err), "message": remit.ErrorMessage(err)})
				return remit.Answer{Status: 409, Body: b}
			}
			b, _ := json.Marshal(data)
			return remit.Answer{Status: 200, Body: b}
		})
	if err != nil {
		return out, err
	}
	if ans.Status != 200 {
		var e struct {
			Code    remit.Code `json:"code"`
			Message string     `json:"message"`
		}
		_ = json.Unmarshal(ans.Body, &e)
		return out, &remit.Error{Code: e.Code, Message: e.Message}
	}
	return out, json.Unmarshal(ans.Body, &out)
}

// AccountClock returns a merchant account of the operator's organization and its sandbox clock.
//
// Errors: not_found.
func (op *Operators) AccountClock(ctx context.Context, o remit.Operator, merchantAccountID string) (remit.MerchantAccount, remit.TestClock, error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.TestClock, error) {
		return op.clocks.GetClock(ctx, scopeOf(m))
	})
}

// AdvanceClock advances a sandbox merchant account's clock by seconds for an admin operator: the
// same engine call as POST /v1/test-helpers/clock/advance (same rules, and what falls due runs),
// under the form's Idempotency-Key.
//
// Errors: forbidden (a viewer, production), not_found, validation_failure (seconds).
func (op *Operators) AdvanceClock(ctx context.Context, o remit.Operator, merchantAccountID string, seconds int64, key string) (remit.TestClock, error) {
	m, err := op.adminAccount(ctx, o, merchantAccountID)
	if err != nil {
		return remit.TestClock{}, err
	}
	return operatorWrite(ctx, op.core, o, m, "POST /dashboard/clock/advance", key, func(ctx context.Context) (remit.TestClock, error) {
		return op.clocks.AdvanceClock(ctx, scopeOf(m), nil, &seconds)
	})
}

// ListInvoices lists a merchant account's invoices for the dashboard, newest first, with the API's
// paging (limit 1 to 100, default 20; the cursor of the page before), optionally of one customer
// and in one status.
//
// Errors: not_found (the account), validation_failure (limit, cursor, status).
func (op *Operators) ListInvoices(ctx context.Context, o remit.Operator, merchantAccountID, customerID, status, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Invoice], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Invoice], error) {
		list := "dashboard-invoices:" + customerID + ":" + status // a cursor serves the list it came from
		return listPage(ctx, op.core, scopeOf(m), list, remit.ListQuery{Limit: limit, Cursor: cursor},
			statusFilter(status, remit.InvoiceStatuses),
			func(page store.ListPage) ([]remit.Invoice, error) {
				return op.DB.Read(ctx).ListInvoices(ctx, m.ID, store.InvoiceFilter{CustomerID: customerID, Status: status, ListPage: page})
			})
	})
}

// AccountEvents lists a merchant account's events for the dashboard, as GET /v1/events does.
//
// Errors: not_found (the account), validation_failure (limit, cursor).
func (op *Operators) AccountEvents(ctx context.Context, o remit.Operator, merchantAccountID, typ, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Event], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Event], error) {
		return op.webhooks.ListEvents(ctx, scopeOf(m), remit.EventQuery{Type: typ, ListQuery: remit.ListQuery{Limit: limit, Cursor: cursor}})
	})
}

// AccountEvent returns an event and its latest deliveries (up to 100, newest first).
//
// Errors: not_found.
func (op *Operators) AccountEvent(ctx context.Context, o remit.Operator, merchantAccountID, eventID string) (remit.MerchantAccount, remit.Event, []remit.WebhookDelivery, error) {
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	if err != nil {
		return m, remit.Event{}, nil, err
	}
	ev, err := op.webhooks.GetEvent(ctx, scopeOf(m), eventID)
	if err != nil {
		return m, ev, nil, err
	}
	d, err := op.webhooks.ListEventDeliveries(ctx, scopeOf(m), eventID, remit.ListQuery{Limit: "100"})
	return m, ev, d.Items, err
}

// ResendEvent sends an event again to every enabled endpoint subscribed to its type, for an admin
// operator: the same engine call as POST /v1/events/{id}/resend, under the form's Idempotency-Key.
// It answers the deliveries made.
//
// Errors: forbidden (a viewer), not_found.
func (op *Operators) ResendEvent(ctx context.Context, o remit.Operator, merchantAccountID, eventID, key string) ([]remit.WebhookDelivery, error) {
	m, err := op.adminAccount(ctx, o, merchantAccountID)
	if err != nil {
		return nil, err
	}
	l, err := operatorWrite(ctx, op.core, o, m, "POST /dashboard/events/"+eventID+"/resend", key, func(ctx context.Context) (remit.List[remit.WebhookDelivery], error) {
		return op.webhooks.ResendEvent(ctx, scopeOf(m), eventID, nil)
	})
	return l.Items, err
}

// ListCustomers lists a merchant account's customers for the dashboard, newest first, with the
// API's paging; search is a customer ID or e-mail address (exact) or the start of a name.
//
// Errors: not_found (the account), validation_failure (limit, cursor).
func (op *Operators) ListCustomers(ctx context.Context, o remit.Operator, merchantAccountID, search, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Customer], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Customer], error) {
		return listPage(ctx, op.core, scopeOf(m), "dashboard-customers:"+search, remit.ListQuery{Limit: limit, Cursor: cursor}, nil, func(page store.ListPage) ([]remit.Customer, error) {
			return op.DB.Read(ctx).ListCustomers(ctx, m.ID, store.CustomerFilter{Search: search, ListPage: page})
		})
	})
}

// Customer gathers a customer's page: its newest invoices, payments and subscriptions (10 each,
// with whether there are more), and its prepaid balance with the newest 10 entries of its ledger.
//
// Errors: not_found.
func (op *Operators) Customer(ctx context.Context, o remit.Operator, merchantAccountID, customerID string) (remit.CustomerOverview, error) {
	m, invoices, err := op.ListInvoices(ctx, o, merchantAccountID, customerID, "", "10", "")
	v := remit.CustomerOverview{Account: m, Invoices: invoices}
	if err != nil {
		return v, err
	}
	if v.Customer, err = op.DB.Read(ctx).GetCustomer(ctx, m.ID, customerID); err != nil {
		return v, err
	}
	if v.Payments, err = op.payments.ListPayments(ctx, m, remit.PaymentQuery{CustomerID: customerID, ListQuery: remit.ListQuery{Limit: "10"}}); err != nil {
		return v, err
	}
	if v.Subscriptions, err = op.quotes.ListSubscriptions(ctx, m, remit.SubscriptionQuery{CustomerID: customerID, ListQuery: remit.ListQuery{Limit: "10"}}); err != nil {
		return v, err
	}
	if v.Methods, err = op.DB.Read(ctx).CustomerPaymentMethods(ctx, m.ID, customerID); err != nil {
		return v, err
	}
	bal, err := op.ledger.GetCustomerBalance(ctx, m, customerID)
	v.Balances, v.Entries = bal.Balances, bal.Entries
	if len(v.Entries) > 10 {
		v.Entries = v.Entries[:10] // the newest; the API's balance route answers them all
	}
	return v, err
}

// OperatorSubscription returns a subscription of a merchant account of the operator's
// organization.
//
// Errors: not_found.
func (op *Operators) OperatorSubscription(ctx context.Context, o remit.Operator, merchantAccountID, subscriptionID string) (remit.MerchantAccount, remit.Subscription, error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.Subscription, error) {
		return op.quotes.GetSubscription(ctx, m, subscriptionID)
	})
}

// SubscriptionAction runs an action of the dashboard on a subscription, for an admin operator,
// through the API's engine calls and the write entry point under the form's Idempotency-Key:
// "cancel-at-period-end" and "cancel-now" (POST /v1/subscriptions/{id}/cancel with at), "pause"
// and "resume".
//
// Errors: forbidden (a viewer), not_found, conflict (the state allows it not), validation_failure
// (an unknown action).
func (op *Operators) SubscriptionAction(ctx context.Context, o remit.Operator, merchantAccountID, subscriptionID, action, key string) (remit.Subscription, error) {
	return namedAction(ctx, op, o, merchantAccountID, "POST /dashboard/subscriptions/"+subscriptionID+"/", action, key,
		"The subscription actions are cancel-at-period-end, cancel-now, pause and resume.",
		func(m remit.MerchantAccount) map[string]func(ctx context.Context) (remit.Subscription, error) {
			cancel := func(at string) func(ctx context.Context) (remit.Subscription, error) {
				return func(ctx context.Context) (remit.Subscription, error) {
					return op.quotes.CancelSubscription(ctx, m, subscriptionID, remit.CancelInput{At: at})
				}
			}
			return map[string]func(ctx context.Context) (remit.Subscription, error){
				"cancel-at-period-end": cancel(remit.CancelAtPeriodEnd),
				"cancel-now":           cancel(remit.CancelNow),
				"pause": func(ctx context.Context) (remit.Subscription, error) {
					return op.quotes.PauseSubscription(ctx, m, subscriptionID)
				},
				"resume": func(ctx context.Context) (remit.Subscription, error) {
					return op.quotes.ResumeSubscription(ctx, m, subscriptionID)
				},
			}
		})
}

// AccountOverview gathers a merchant account's home: what it was paid per day over the last
// remit.RevenueDays days of its clock, its monthly recurring revenue on each of those days (from the
// recurring lines of its draft, open and paid invoices), what its open invoices ask (and of those, what is in
// dunning), its newest failed payments and how many of its jobs failed for good.
//
// Errors: not_found.
func (op *Operators) AccountOverview(ctx context.Context, o remit.Operator, merchantAccountID string) (remit.AccountOverview, error) {
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	v := remit.AccountOverview{Account: m}
	if err != nil {
		return v, err
	}
	v.Now = op.Now(m)
	from := v.Now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(remit.RevenueDays - 1))
	q := op.DB.Read(ctx)
	if v.Revenue, err = q.RevenueByDay(ctx, m.ID, from); err != nil {
		return v, err
	}
	lines, err := q.RecurringLines(ctx, m.ID, from)
	if err != nil {
		return v, err
	}
	v.MRR = remit.MRRByDay(lines, m.DefaultCurrency, from, remit.RevenueDays, v.Now)
	if v.Open, err = q.OpenTotals(ctx, m.ID); err != nil {
		return v, err
	}
	if v.FailedPayments, err = op.payments.ListPayments(ctx, m, remit.PaymentQuery{Status: string(remit.PaymentFailed), ListQuery: remit.ListQuery{Limit: "5"}}); err != nil {
		return v, err
	}
	v.FailedJobs, err = q.CountFailedJobs(ctx, m.ID)
	return v, err
}

// IssueCreditNote issues a credit note on an invoice for an admin operator: the same engine call
// as POST /v1/credit-notes with one line of the whole amount in one bucket (kind: offset, credit
// or refund), under the form's Idempotency-Key.
//
// Errors: forbidden (a viewer), not_found, validation_failure (the amount, the reason, the kind),
// conflict (the invoice's state).
func (op *Operators) IssueCreditNote(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID, kind string, amount int64, reason, description, key string) (remit.CreditNote, error) {
	m, err := op.adminAccount(ctx, o, merchantAccountID)
	if err != nil {
		return remit.CreditNote{}, err
	}
	in := remit.CreditNoteInput{InvoiceID: invoiceID, Reason: reason}
	if description != "" {
		in.Description = &description
	}
	switch kind {
	case "offset", "credit", "refund":
	default:
		return remit.CreditNote{}, remit.Invalid(remit.FieldError{Field: "kind", Location: remit.InBody, Reason: "invalid_enum",
			Message: "Choose how the amount is given back: offset (less to pay on an open invoice), credit (to the customer's balance) or refund (money back)."})
	}
	line := remit.CreditNoteLineInput{Bucket: &kind, Description: description, Amount: amount}
	if line.Description == "" {
		line.Description = "Credit"
	}
	in.Lines = []remit.CreditNoteLineInput{line}
	return operatorWrite(ctx, op.core, o, m, "POST /dashboard/invoices/"+invoiceID+"/credit-notes", key, func(ctx context.Context) (remit.CreditNote, error) {
		return op.creditNotes.CreateCreditNote(ctx, m, in)
	})
}

// The dashboard's other lists: the API's own list of each resource, for a merchant account of the
// operator's organization (not_found otherwise), with the API's filters, paging and errors.

// AccountPayments lists payments as GET /v1/payments does.
func (op *Operators) AccountPayments(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.PaymentQuery) (remit.MerchantAccount, remit.List[remit.Payment], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Payment], error) {
		return op.payments.ListPayments(ctx, m, in)
	})
}

// AccountSubscriptions lists subscriptions as GET /v1/subscriptions does.
func (op *Operators) AccountSubscriptions(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.SubscriptionQuery) (remit.MerchantAccount, remit.List[remit.Subscription], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Subscription], error) {
		return op.quotes.ListSubscriptions(ctx, m, in)
	})
}

// AccountEmails lists customer e-mails as GET /v1/emails does.
func (op *Operators) AccountEmails(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.EmailQuery) (remit.MerchantAccount, remit.List[remit.Email], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Email], error) {
		return op.emails.ListEmails(ctx, m, in)
	})
}

// InvoiceDocument gathers an invoice's PDF model, as GET /v1/invoices/{id}/pdf does.
//
// Errors: not_found.
func (op *Operators) InvoiceDocument(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID string) (document.Invoice, error) {
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	if err != nil {
		return document.Invoice{}, err
	}
	return op.documents.InvoiceDocument(ctx, m, invoiceID)
}

// DecideMerchant records an underwriting decision (approve, reject, request-update) on a merchant
// account in review, for an admin operator of its organization: the same engine call as
// `remit merchant decide`, under the form's Idempotency-Key. It answers the account's new status.
//
// Errors: forbidden (a viewer), not_found, validation_failure (decision), conflict (not in review).
func (op *Operators) DecideMerchant(ctx context.Context, o remit.Operator, merchantAccountID, decision, key string) (remit.MerchantStatus, error) {
	m, err := op.adminAccount(ctx, o, merchantAccountID)
	if err != nil {
		return "", err
	}
	return operatorWrite(ctx, op.core, o, m, "POST /dashboard/merchant-accounts/"+m.ID+"/decide/"+decision, key, func(ctx context.Context) (remit.MerchantStatus, error) {
		return op.merchants.DecideMerchant(ctx, m.ID, decision)
	})
}

// AccountReceipts lists payment receipts as GET /v1/payment-receipts does (offset-paged).
func (op *Operators) AccountReceipts(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.ReceiptQuery) (remit.MerchantAccount, remit.OffsetList[remit.PaymentReceipt], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.OffsetList[remit.PaymentReceipt], error) {
		return op.payments.ListPaymentReceipts(ctx, m, in)
	})
}

// AccountSettlements lists an account's settlements as GET /v1/merchant-accounts/{id}/settlements
// does, a page at a time (limit "" is 20 here: the dashboard never asks for every settlement).
func (op *Operators) AccountSettlements(ctx context.Context, o remit.Operator, merchantAccountID, scopeFilter, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Settlement], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Settlement], error) {
		if limit == "" {
			limit = "20"
		}
		return op.payments.ListSettlements(ctx, scopeOf(m), m.ID, remit.SettlementQuery{Scope: scopeFilter, ListQuery: remit.ListQuery{Limit: limit, Cursor: cursor}})
	})
}

// UsageOverview gathers a customer's usage of a meter, day by day over the last remit.RevenueDays
// days of the account's clock, each day by the meter's aggregation (a read of the hourly
// pre-aggregates and at most two edge hours each), and the meters to choose from (the first 100).
// With customerID or meterID empty only the meters come back.
//
// Errors: not_found (the account; the meter).
func (op *Operators) UsageOverview(ctx context.Context, o remit.Operator, merchantAccountID, customerID, meterID string) (remit.UsageOverview, error) {
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	v := remit.UsageOverview{Account: m}
	if err != nil {
		return v, err
	}
	v.Now = op.Now(m)
	meters, err := op.usage.ListMeters(ctx, m, remit.ListQuery{Limit: "100"})
	if err != nil {
		return v, err
	}
	v.Meters = meters.Items
	if customerID == "" || meterID == "" {
		return v, nil
	}
	meter, err := op.DB.Read(ctx).GetMeter(ctx, m.ID, meterID, store.Unlocked, true) // a meter used before it was created, too
	if err != nil {
		return v, err
	}
	v.Meter = &meter
	q := op.DB.Read(ctx)
	to := v.Now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -remit.RevenueDays)
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		n, err := op.usage.UsageInPeriod(ctx, q, m, customerID, meterID, d, d.AddDate(0, 0, 1))
		if err != nil {
			return v, err
		}
		if n != 0 {
			v.Days = append(v.Days, remit.DayRevenue{Day: d.Unix() / 86400, Amount: n})
		}
	}
	v.Total, err = op.usage.UsageInPeriod(ctx, q, m, customerID, meterID, from, to)
	return v, err
}

// CustomerNames returns the names of a merchant account's customers among ids (the dashboard's
// lists name the customers of a page, one query for the page). IDs that name no customer are
// absent.
//
// Errors: not_found (the account).
func (op *Operators) CustomerNames(ctx context.Context, o remit.Operator, merchantAccountID string, ids []string) (map[string]string, error) {
	m, err := op.OperatorAccount(ctx, o, merchantAccountID)
	if err != nil {
		return nil, err
	}
	return op.DB.Read(ctx).CustomerNames(ctx, m.ID, ids)
}
