package portal

import (
	"net/http"

	"github.com/remit-billing/remit"
)

// changeView is the change page: the prices on offer, or (price chosen) the confirmation with
// what the switch bills and credits.
type changeView struct {
	Subscription remit.Subscription
	Prices       []remit.Price
	Price        string
	Preview      *remit.SubscriptionChangePreview
	Figures      remit.ChangeFigures
	Currency     string
}

// changePage lists the prices the customer may switch to; with ?price= it is the confirmation,
// showing the switch's preview (nothing written).
func (s *Server) changePage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	sub, ok := loaded(s, w, r, &pc, remit.PortalFeatureUpdate, s.pathSubscription(r))
	if !ok {
		return
	}
	v := changeView{Subscription: sub, Currency: sub.Currency}
	var err error
	if v.Prices, err = s.eng.PortalPrices(r.Context(), pc); s.failed(w, r, &pc, err) {
		return
	}
	if price := r.URL.Query().Get("price"); price != "" {
		pv, err := s.eng.PortalPreviewChange(r.Context(), pc, sub.SubscriptionID, price)
		if s.failed(w, r, &pc, err) {
			return
		}
		v.Price, v.Preview, v.Figures = price, &pv, remit.ChangeFiguresOf(pv)
	}
	s.render(w, r, http.StatusOK, "change.html", s.view(r, &pc, "portal.change.title", v))
}

// change switches the subscription to the confirmed price.
func (s *Server) change(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	_, err := s.eng.PortalChangeSubscription(r.Context(), pc, r.PathValue("subscription"), r.PostFormValue("price"))
	s.formDone(w, r, &pc, err, home+"?done=changed")
}
