// Package webui is the browser plumbing the operator dashboard and the customer portal share:
// their server-side sessions (github.com/alexedwards/scs/v2), the form's CSRF token, the security
// headers every answer carries, cross-origin writes refused (net/http's CrossOriginProtection),
// the embedded static files and a page's rendering. It holds no page and no rule of either.
package webui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
)

// CSRFKey is the session key of the session's CSRF token, which every form carries as "csrf".
const CSRFKey = "csrf"

// Cookie is how a session manager keeps its sessions: the cookie's name and path, its SameSite
// mode, the most a session lives and how long it lives without a request.
type Cookie struct {
	Name, Path     string
	SameSite       http.SameSite
	Lifetime, Idle time.Duration
}

// Sessions is a session manager over store with the cookie c: HttpOnly, and Secure when the
// public URL is https.
func Sessions(store scs.Store, c Cookie, publicURL string) *scs.SessionManager {
	sm := scs.New()
	sm.Store = store
	sm.Lifetime, sm.IdleTimeout = c.Lifetime, c.Idle
	sm.Cookie.Name, sm.Cookie.Path = c.Name, c.Path
	sm.Cookie.HttpOnly, sm.Cookie.SameSite = true, c.SameSite
	sm.Cookie.Secure = strings.HasPrefix(publicURL, "https://")
	return sm
}

// NewToken is 32 random bytes in hex: a CSRF token, a form's Idempotency-Key.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ValidCSRF reports whether the form's csrf field is the session's CSRF token, compared in
// constant time; a session without one has no valid form.
func ValidCSRF(sm *scs.SessionManager, r *http.Request) bool {
	want := sm.GetString(r.Context(), CSRFKey)
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(r.PostFormValue("csrf"))) == 1
}

// Begin starts a signed-in session under a new token (a token known before is worth nothing
// after): key holds id, beside a new CSRF token.
func Begin(ctx context.Context, sm *scs.SessionManager, key, id string) error {
	if err := sm.RenewToken(ctx); err != nil {
		return err
	}
	sm.Put(ctx, key, id)
	sm.Put(ctx, CSRFKey, NewToken())
	return nil
}

// Headers are the security headers every answer carries: the Content-Security-Policy, the
// Referrer-Policy and, with DenyFrames, X-Frame-Options DENY (beside nosniff and no-store).
type Headers struct {
	CSP, Referrer string
	DenyFrames    bool
}

// Protect serves mux with its sessions loaded and saved, cross-origin writes refused, and the
// headers h set on every answer.
func Protect(mux http.Handler, sm *scs.SessionManager, h Headers) http.Handler {
	next := http.NewCrossOriginProtection().Handler(sm.LoadAndSave(mux))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", h.CSP)
		if h.DenyFrames {
			hd.Set("X-Frame-Options", "DENY")
		}
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", h.Referrer)
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// Static serves the files under the folder "static" of files at prefix ("/dashboard/static/").
func Static(mux *http.ServeMux, prefix string, files fs.FS) {
	static, _ := fs.Sub(files, "static")
	mux.Handle("GET "+prefix, http.StripPrefix(prefix, http.FileServerFS(static)))
}

// Render writes the template name of t with data as an HTML page with the status. Its error is a
// failure while writing, after the status was sent: the caller logs it.
func Render(w http.ResponseWriter, status int, t *template.Template, name string, data any) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	return t.ExecuteTemplate(w, name, data)
}
