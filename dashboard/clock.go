package dashboard

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/webui"
)

// loadClock reads the sandbox account the path names and its clock (false: answered).
func (s *Server) loadClock(w http.ResponseWriter, r *http.Request) (page, bool) {
	m, c, err := s.eng.AccountClock(r.Context(), operatorOf(r), r.PathValue("account"))
	switch c := remit.ErrorCode(err); {
	case err == nil:
	case c == remit.ENotFound || c == remit.EForbidden:
		s.message(w, r, statusOf(c), "Not available", remit.ErrorMessage(err))
		return page{}, false
	default:
		s.fail(w, r, err)
		return page{}, false
	}
	p := s.accountBase(r, m, "Sandbox clock")
	p.Clock, p.Key = c, webui.NewToken()
	return p, true
}

// clockPage shows a sandbox account's clock and, to an admin, the form that advances it.
func (s *Server) clockPage(w http.ResponseWriter, r *http.Request) {
	s.show(w, r, (*Server).loadClock, "clock", doneNotice(r, "advanced", "The clock moved forward; what fell due has run."))
}

// advanceClock advances the clock through the engine; its field errors show next to the field.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request) {
	p, ok := s.adminPost(w, r, (*Server).loadClock)
	if !ok {
		return
	}
	p.Seconds = strings.TrimSpace(r.PostFormValue("seconds"))
	seconds, perr := strconv.ParseInt(p.Seconds, 10, 64)
	if perr != nil {
		p.Errors = map[string]string{"seconds": "seconds must be a whole number of seconds, such as 86400 for a day."}
		s.render(w, r, http.StatusUnprocessableEntity, "clock", p)
		return
	}
	_, err := s.eng.AdvanceClock(r.Context(), *p.Operator, p.Account.ID, seconds, r.PostFormValue("key"))
	if fields := remit.FieldMessages(err); fields != nil {
		p.Errors, p.Key = fields, webui.NewToken()
		p.Error = fields["key"] // not a field of the form: said above it
		s.render(w, r, http.StatusUnprocessableEntity, "clock", p)
		return
	}
	switch c := remit.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, "/dashboard/accounts/"+p.Account.ID+"/clock?done=advanced", http.StatusSeeOther)
	case c == remit.EConflict || c == remit.ENotFound || c == remit.EForbidden:
		p.Error, p.Key = remit.ErrorMessage(err), webui.NewToken()
		s.render(w, r, statusOf(c), "clock", p)
	default:
		s.fail(w, r, err)
	}
}
