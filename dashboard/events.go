package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/webui"
)

// eventsPage lists an account's events, newest first, with the API's paging; type filters them.
func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request) {
	searchList(s, w, r, "events", "Events", "type", s.eng.AccountEvents, func(p *page, typ string, items []remit.Event) {
		p.Filter.Type, p.Events = typ, items
	})
}

// listAnswered answers a list's error (a bad filter next to its field, an unknown account): false
// when it answered.
func (s *Server) listAnswered(w http.ResponseWriter, r *http.Request, name string, p *page, err error) bool {
	if fields := remit.FieldMessages(err); fields != nil {
		p.Errors = fields
		s.render(w, r, http.StatusUnprocessableEntity, name, *p)
		return false
	}
	if s.answered(w, r, err) {
		return false
	}
	return true
}

// loadEvent reads the event the path names, with its deliveries (false: answered).
func (s *Server) loadEvent(w http.ResponseWriter, r *http.Request) (page, bool) {
	m, ev, deliveries, err := s.eng.AccountEvent(r.Context(), operatorOf(r), r.PathValue("account"), r.PathValue("event"))
	if s.answered(w, r, err) {
		return page{}, false
	}
	var data bytes.Buffer
	if json.Indent(&data, ev.Data, "", "  ") != nil {
		data.Reset()
		data.Write(ev.Data)
	}
	p := s.accountBase(r, m, ev.Type)
	p.Event, p.Deliveries, p.EventData, p.Key = ev, deliveries, data.String(), webui.NewToken()
	return p, true
}

// eventPage shows an event, its deliveries and, to an admin, the resend form.
func (s *Server) eventPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadEvent(w, r)
	if !ok {
		return
	}
	if n := r.URL.Query().Get("resent"); n != "" {
		if k, err := strconv.Atoi(n); err == nil {
			p.Notice = "Sent again: " + strconv.Itoa(k) + " new deliveries."
		}
	}
	s.render(w, r, http.StatusOK, "event", p)
}

// resendEvent sends the event again through the engine, under the form's Idempotency-Key.
func (s *Server) resendEvent(w http.ResponseWriter, r *http.Request) {
	p, ok := s.adminPost(w, r, (*Server).loadEvent)
	if !ok {
		return
	}
	made, err := s.eng.ResendEvent(r.Context(), *p.Operator, p.Account.ID, p.Event.ID, r.PostFormValue("key"))
	switch c := remit.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, resourcePath(p.Account.ID, "events", p.Event.ID)+"?resent="+strconv.Itoa(len(made)), http.StatusSeeOther)
	case c == remit.EConflict || c == remit.ENotFound || c == remit.EForbidden:
		p.Error = remit.ErrorMessage(err)
		s.render(w, r, statusOf(c), "event", p)
	default:
		s.fail(w, r, err)
	}
}
