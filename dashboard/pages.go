package dashboard

import (
	"context"
	"net/http"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/webui"
)

// signInPage shows the sign-in form (a signed-in operator goes to the overview).
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request) {
	if s.sessions.GetString(r.Context(), keyOperator) != "" {
		http.Redirect(w, r, overviewPath, http.StatusSeeOther)
		return
	}
	p := page{Title: "Sign in"}
	if r.URL.Query().Get("password") == "set" {
		p.Notice = "Your password is set. Sign in with it."
	}
	s.render(w, r, http.StatusOK, "sign-in", p)
}

// signIn checks the form, the rate limits and the credentials, then starts the operator's
// session under a new token (a token known before signing in is worth nothing after). The limits
// count failed attempts only: each attempt takes its tokens first, and one that does not fail
// gives them back (SignInLimiter).
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	ctx := r.Context()
	email := strings.ToLower(strings.TrimSpace(r.PostFormValue("email")))
	var taken []string
	giveBack := func() {
		for _, key := range taken {
			s.signIns.Refund(ctx, key)
		}
	}
	for _, key := range []string{"signin:address:" + clientAddress(r), "signin:email:" + email} {
		if res := s.signIns.Allow(ctx, key); !res.Allowed {
			giveBack() // not an attempt: the other limit loses nothing
			s.render(w, r, http.StatusTooManyRequests, "sign-in", page{Title: "Sign in", Email: email,
				Error: "Too many sign-in attempts. Wait a minute, then try again."})
			return
		}
		taken = append(taken, key)
	}
	op, err := s.eng.SignIn(ctx, email, r.PostFormValue("password"))
	if remit.ErrorCode(err) == remit.EUnauthorized { // a failure: it keeps its tokens
		s.render(w, r, http.StatusUnauthorized, "sign-in", page{Title: "Sign in", Email: email, Error: remit.ErrorMessage(err)})
		return
	}
	giveBack()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := webui.Begin(ctx, s.sessions, keyOperator, op.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, overviewPath, http.StatusSeeOther)
}

// signOut ends the session.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	if err := s.sessions.Destroy(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, signInPath, http.StatusSeeOther)
}

// setPasswordPage shows the form of a one-time set-password link.
func (s *Server) setPasswordPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	op, err := s.eng.OperatorForLink(r.Context(), token)
	if s.linkGone(w, r, err) {
		return
	}
	s.render(w, r, http.StatusOK, "set-password", page{Title: "Set your password", Email: op.Email, Token: token,
		PasswordRule: remit.OperatorPasswordRule})
}

// setPassword sets the password through the link; the engine's field errors are shown next to
// their fields.
func (s *Server) setPassword(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	ctx := r.Context()
	token := r.PostFormValue("token")
	_, err := s.eng.SetOperatorPassword(ctx, token, r.PostFormValue("password"), r.PostFormValue("confirm"))
	if fields := remit.FieldMessages(err); fields != nil {
		op, lerr := s.eng.OperatorForLink(ctx, token)
		if s.linkGone(w, r, lerr) {
			return
		}
		s.render(w, r, http.StatusUnprocessableEntity, "set-password", page{Title: "Set your password", Email: op.Email, Token: token,
			PasswordRule: remit.OperatorPasswordRule, Errors: fields})
		return
	}
	if s.linkGone(w, r, err) {
		return
	}
	http.Redirect(w, r, signInPath+"?password=set", http.StatusSeeOther)
}

// linkGone answers a set-password link that cannot be used (true), or an unexpected error.
func (s *Server) linkGone(w http.ResponseWriter, r *http.Request, err error) bool {
	return s.answeredAs(w, r, err, "Link not usable")
}

type operatorKey struct{}

// signedIn runs next for a signed-in, active operator (in the request's context); anyone else goes
// to the sign-in page, and a session whose operator was disabled ends.
func (s *Server) signedIn(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		id := s.sessions.GetString(ctx, keyOperator)
		if id == "" {
			http.Redirect(w, r, signInPath, http.StatusSeeOther)
			return
		}
		op, err := s.eng.Operator(ctx, id)
		if err != nil && remit.ErrorCode(err) != remit.ENotFound {
			s.fail(w, r, err)
			return
		}
		if err != nil || op.DisabledAt != nil {
			if err := s.sessions.Destroy(ctx); err != nil {
				s.fail(w, r, err)
				return
			}
			http.Redirect(w, r, signInPath, http.StatusSeeOther)
			return
		}
		ctx = remit.WithActor(ctx, remit.Actor{Type: remit.ActorOperator, ID: op.ID}) // the operator's writes are their events' actor
		next(w, r.WithContext(context.WithValue(ctx, operatorKey{}, op)))
	}
}

func operatorOf(r *http.Request) remit.Operator {
	return r.Context().Value(operatorKey{}).(remit.Operator)
}

// environment is the environment the operator looks at: ?env= switches it for the session.
func (s *Server) environment(r *http.Request) remit.Environment {
	ctx := r.Context()
	if env := remit.Environment(r.URL.Query().Get("env")); env.Valid() {
		s.sessions.Put(ctx, keyEnv, string(env))
		return env
	}
	if env := remit.Environment(s.sessions.GetString(ctx, keyEnv)); env.Valid() {
		return env
	}
	return remit.Sandbox
}

// overview is the organization's home: its merchant accounts in the chosen environment.
func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	op := operatorOf(r)
	env := s.environment(r)
	org, accounts, err := s.eng.Organization(r.Context(), op.OrganizationID, env)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "overview", page{Title: org.Name, Operator: &op, Environment: env, Organization: org, Accounts: accounts})
}
