package portal

import (
	"context"
	"net/http"

	"github.com/remit-billing/remit"
)

// The payment methods page (docs/customer-portal.md "Pages"): the customer's saved cards, a new
// one through the hosted setup page (which links back here), the default, a card removed after a
// confirmation.

// card is a saved card as the page shows it.
type card struct {
	ID, Label, Last4 string
	Default          bool
}

// walletPage lists the customer's cards, the default marked, each with its actions.
func (s *Server) walletPage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	methods, ok := loaded(s, w, r, &pc, remit.PortalFeaturePaymentMethods, s.eng.PortalPaymentMethods)
	if !ok {
		return
	}
	cards := make([]card, len(methods))
	for i, m := range methods {
		cards[i] = card{ID: m.PaymentMethodID, Label: remit.CardLabel(m.Brand, m.Last4), Last4: m.Last4, Default: len(m.DefaultForBillingAccountIDs) > 0}
	}
	s.render(w, r, http.StatusOK, "wallet.html", s.view(r, &pc, "portal.wallet.title", cards))
}

// addCard opens a setup session and sends the browser to its hosted page.
func (s *Server) addCard(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	to, err := s.eng.PortalAddCard(r.Context(), pc)
	s.formDone(w, r, &pc, err, to)
}

// makeDefault makes the card the one charged from now on.
func (s *Server) makeDefault(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	_, err := s.eng.PortalSetDefaultMethod(r.Context(), pc, r.PathValue("method"))
	s.formDone(w, r, &pc, err, home+"/payment-methods?done=default")
}

// removePage is the confirmation before a card is removed.
func (s *Server) removePage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	m, ok := loaded(s, w, r, &pc, remit.PortalFeaturePaymentMethods, func(ctx context.Context, pc remit.PortalContext) (remit.PaymentMethod, error) {
		return s.eng.PortalPaymentMethod(ctx, pc, r.PathValue("method"))
	})
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "remove.html", s.view(r, &pc, "portal.wallet.remove_title", card{ID: m.PaymentMethodID, Label: remit.CardLabel(m.Brand, m.Last4)}))
}

// remove removes the card (the form of removePage).
func (s *Server) remove(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	_, err := s.eng.PortalRemoveMethod(r.Context(), pc, r.PathValue("method"))
	s.formDone(w, r, &pc, err, home+"/payment-methods?done=removed")
}
