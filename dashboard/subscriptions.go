package dashboard

import (
	"net/http"

	"github.com/remit-billing/remit"
)

// subscriptionAction is an action an admin may take on a subscription.
type subscriptionAction struct {
	Slug, Label, Title, Explain string
	API, Body, Done, Button     string
	Move                        string                   // the rule's action (remit.SubscriptionStatus.Allows)
	Not                         remit.SubscriptionStatus // a state the rule allows but this form does not offer
}

// subscriptionActions are the subscription page's actions, in the order shown.
var subscriptionActions = []subscriptionAction{
	{Slug: "cancel-at-period-end", Label: "Cancel at the period's end…", Title: "Cancel at the end of the period:", Button: "Cancel at the period's end",
		Explain: "The subscription ends when its current period ends, instead of renewing; until then it stays as it is. The event subscription.updated is sent now.",
		API:     "/cancel", Body: `{"at": "period_end"}`, Done: "The subscription will end at the end of its period.", Move: remit.ActionCancel, Not: remit.SubscriptionPaused},
	{Slug: "cancel-now", Label: "Cancel now…", Title: "Cancel now:", Button: "Cancel it now",
		Explain: "The subscription ends at once, and the unused share of the current period's fixed items is given back as a credit. The event subscription.canceled is sent. It cannot be undone.",
		API:     "/cancel", Body: `{"at": "now"}`, Done: "The subscription is canceled.", Move: remit.ActionCancel},
	{Slug: "pause", Label: "Pause…", Title: "Pause:", Button: "Pause it",
		Explain: "No renewal and no invoice until it is resumed. The event subscription.paused is sent.",
		API:     "/pause", Body: `{}`, Done: "The subscription is paused.", Move: remit.ActionPause},
	{Slug: "resume", Label: "Resume…", Title: "Resume:", Button: "Resume it",
		Explain: "A new period starts now: its fixed items are invoiced for it, and it renews at its end. The event subscription.resumed is sent.",
		API:     "/resume", Body: `{}`, Done: "The subscription is active again.", Move: remit.ActionResume},
}

// offered is the actions the subscription's state allows.
func offered(sub remit.Subscription) []subscriptionAction {
	var out []subscriptionAction
	for _, a := range subscriptionActions {
		if sub.Status.Allows(a.Move) && sub.Status != a.Not {
			out = append(out, a)
		}
	}
	return out
}

func subscriptionPath(account, id string) string { return resourcePath(account, "subscriptions", id) }

// loadSubscription reads the subscription the path names (false: answered).
func (s *Server) loadSubscription(w http.ResponseWriter, r *http.Request) (page, bool) {
	p, sub, ok := loadResource(s, w, r, "subscription", s.eng.OperatorSubscription)
	if !ok {
		return p, false
	}
	p.Title, p.Subscription, p.SubscriptionActions = "Subscription "+sub.SubscriptionID, sub, offered(sub)
	return p, true
}

// subscriptionPage shows a subscription and, to an admin, what its state allows.
func (s *Server) subscriptionPage(w http.ResponseWriter, r *http.Request) {
	s.show(w, r, (*Server).loadSubscription, "subscription", func(p *page) (err error) {
		if a, ok := findSubscriptionAction(r.URL.Query().Get("done")); ok {
			p.Notice = a.Done
		}
		p.Names, err = s.customerNames(r, p.Account.ID, []string{p.Subscription.CustomerID})
		return err
	})
}

// subscriptionSlug is a subscription action's slug.
func subscriptionSlug(a subscriptionAction) string { return a.Slug }

func findSubscriptionAction(slug string) (subscriptionAction, bool) {
	return bySlug(subscriptionActions, slug, subscriptionSlug)
}

// subscriptionConfirmation is the confirmation page of a subscription action.
func subscriptionConfirmation(a subscriptionAction, p page) confirmation {
	base := subscriptionPath(p.Account.ID, p.Subscription.SubscriptionID)
	return confirmation{Title: a.Title + " subscription " + p.Subscription.SubscriptionID + "?", Explain: a.Explain, Back: base,
		BackLabel: "Back to the subscription", API: "/v1/subscriptions/" + p.Subscription.SubscriptionID + a.API, Body: a.Body,
		Post: base + "/" + a.Slug, Button: a.Button}
}

// subscriptionActionPages are the subscription actions' confirmation page and form.
var subscriptionActionPages = resourceActions[subscriptionAction, remit.Subscription]{
	find: findSubscriptionAction, slug: subscriptionSlug, load: (*Server).loadSubscription, confirm: subscriptionConfirmation,
	act: Engine.SubscriptionAction,
	resource: func(p page) (string, string) {
		return p.Subscription.SubscriptionID, subscriptionPath(p.Account.ID, p.Subscription.SubscriptionID)
	},
}
