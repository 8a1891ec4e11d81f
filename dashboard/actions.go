package dashboard

import (
	"net/http"

	"github.com/remit-billing/remit"
)

// Every action of the dashboard goes the same way: a confirmation page (what it does, and the API
// request or command that does the same) with a one-time Idempotency-Key, then the form's POST,
// which runs the engine's call and either goes back to the resource with a notice or shows the
// engine's refusal, in its words and with its status, on the confirmation page again.

// bySlug finds the entry of list whose slug (key) is slug.
func bySlug[T any](list []T, slug string, key func(T) string) (T, bool) {
	for _, v := range list {
		if key(v) == slug {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// confirm renders an action's confirmation page with a new Idempotency-Key.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, p page, c func(page) confirmation) {
	p.Key = newToken()
	p.Confirm = c(p)
	s.render(w, r, http.StatusOK, "action", p)
}

// finish answers an action the engine ran: on success a redirect to done; a refusal (conflict, not
// found, forbidden, invalid) on the confirmation page again, with a new key; anything else fails.
func (s *Server) finish(w http.ResponseWriter, r *http.Request, p page, err error, done string, c func(page) confirmation) {
	switch code := remit.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, done, http.StatusSeeOther)
	case code == remit.EConflict || code == remit.ENotFound || code == remit.EForbidden || code == remit.EInvalid:
		p.Error, p.Key = remit.ErrorMessage(err), newToken()
		p.Confirm = c(p)
		s.render(w, r, statusOf(code), "action", p)
	default:
		s.fail(w, r, err)
	}
}

// answered answers an engine error on a page: not found as 404 (another organization's resource
// alike), anything else as a failure. It reports whether it answered (err not nil).
func (s *Server) answered(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return false
	case remit.ErrorCode(err) == remit.ENotFound:
		s.message(w, r, http.StatusNotFound, "Not found", remit.ErrorMessage(err))
	default:
		s.fail(w, r, err)
	}
	return true
}
