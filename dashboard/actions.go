package dashboard

import (
	"context"
	"net/http"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/webui"
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

// resourceActions is what the two pages of a resource's actions need: its actions by slug (find,
// and slug: an action's), how to load the resource the path names (false: answered), its
// confirmation page, the engine's call (act: the action named by its slug, on the resource of the
// account, under the form's key) and the resource of a page (its ID and its page's path, where the
// action goes back to, with ?done= its slug).
type resourceActions[A, R any] struct {
	find     func(slug string) (A, bool)
	slug     func(a A) string
	load     loader
	confirm  func(a A, p page) confirmation
	act      func(e Engine, ctx context.Context, o remit.Operator, merchantAccountID, id, action, key string) (R, error)
	resource func(p page) (id, path string)
}

// page asks an admin to confirm the action the path names (GET …/{action}).
func (k resourceActions[A, R]) page(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, p, ok := k.open(s, w, r)
		if ok {
			s.confirm(w, r, p, func(p page) confirmation { return k.confirm(a, p) })
		}
	}
}

// act runs the confirmed action through the engine, under the form's Idempotency-Key (POST).
func (k resourceActions[A, R]) post(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.checkCSRF(w, r) {
			return
		}
		a, p, ok := k.open(s, w, r)
		if !ok {
			return
		}
		id, path := k.resource(p)
		_, err := k.act(s.eng, r.Context(), *p.Operator, p.Account.ID, id, k.slug(a), r.PostFormValue("key"))
		s.finish(w, r, p, err, path+"?done="+k.slug(a), func(p page) confirmation { return k.confirm(a, p) })
	}
}

// open finds the action and loads its resource for an admin (false: answered).
func (k resourceActions[A, R]) open(s *Server, w http.ResponseWriter, r *http.Request) (A, page, bool) {
	a, ok := k.find(r.PathValue("action"))
	if !ok {
		s.notFound(w, r)
		return a, page{}, false
	}
	p, ok := k.load(s, w, r)
	if !ok || !s.admin(w, r, p) {
		return a, page{}, false
	}
	return a, p, true
}

// loader reads the resource a dashboard path names, for the signed-in operator (false: answered).
type loader func(s *Server, w http.ResponseWriter, r *http.Request) (page, bool)

// adminPost opens an admin's form POST: the CSRF token checked, the resource loaded, a viewer
// answered 403 (false: answered).
func (s *Server) adminPost(w http.ResponseWriter, r *http.Request, load loader) (page, bool) {
	if !s.checkCSRF(w, r) {
		return page{}, false
	}
	p, ok := load(s, w, r)
	if !ok || !s.admin(w, r, p) {
		return page{}, false
	}
	return p, true
}

// confirm renders an action's confirmation page with a new Idempotency-Key.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, p page, c func(page) confirmation) {
	p.Key = webui.NewToken()
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
		p.Error, p.Key = remit.ErrorMessage(err), webui.NewToken()
		p.Confirm = c(p)
		s.render(w, r, statusOf(code), "action", p)
	default:
		s.fail(w, r, err)
	}
}

// answered answers an engine error on a page: not found as 404 (another organization's resource
// alike), anything else as a failure. It reports whether it answered (err not nil).
func (s *Server) answered(w http.ResponseWriter, r *http.Request, err error) bool {
	return s.answeredAs(w, r, err, "Not found")
}

// answeredAs is answered with the 404 page's title.
func (s *Server) answeredAs(w http.ResponseWriter, r *http.Request, err error, notFound string) bool {
	switch {
	case err == nil:
		return false
	case remit.ErrorCode(err) == remit.ENotFound:
		s.message(w, r, http.StatusNotFound, notFound, remit.ErrorMessage(err))
	default:
		s.fail(w, r, err)
	}
	return true
}
