// Package portal is the customer portal served at /portal (docs/customer-portal.md): a customer's
// own pages, rendered on the server with html/template in the customer's language, usable without
// JavaScript. It is an edge like package dashboard: it reads forms, calls the engine (Engine) and
// renders; it holds no business rule. A session comes from a one-time URL the API made
// (POST /v1/customer-portal-sessions); the browser's session is server-side
// (github.com/alexedwards/scs/v2, kept in the store like the dashboard's), ends after an hour
// without a request, and is bound to that one customer of that one merchant account: every ID in a
// URL is looked up among that customer's own, so another customer's (or another environment's) is
// 404. Forms carry a CSRF token; cross-origin writes are refused.
package portal

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/webui"
	"github.com/remit-billing/remit/locale"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Engine is what the portal asks of the engine (app.Portal).
type Engine interface {
	OpenPortalSession(ctx context.Context, token string) (remit.PortalSession, error)
	PortalSession(ctx context.Context, sessionID string) (context.Context, remit.PortalContext, error)
	PortalSubscriptions(ctx context.Context, pc remit.PortalContext) ([]remit.Subscription, error)
	PortalSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Subscription, error)
	PortalCancelSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Subscription, error)
	PortalKeepSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Subscription, error)
	PortalUpcoming(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Invoice, bool, error)
	PortalPauseSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string, pause bool) (remit.Subscription, error)
	PortalUpdateCustomer(ctx context.Context, pc remit.PortalContext, fields map[string]string) (remit.Customer, error)
	PortalInvoices(ctx context.Context, pc remit.PortalContext) ([]remit.Invoice, error)
	PortalPrices(ctx context.Context, pc remit.PortalContext) ([]remit.Price, error)
	PortalPreviewChange(ctx context.Context, pc remit.PortalContext, subscriptionID, priceID string) (remit.SubscriptionChangePreview, error)
	PortalChangeSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID, priceID string) (remit.Subscription, error)
	PortalBalance(ctx context.Context, pc remit.PortalContext) ([]remit.CurrencyBalance, error)
	PortalPaymentMethods(ctx context.Context, pc remit.PortalContext) ([]remit.SavedPaymentMethod, error)
	PortalPaymentMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.PaymentMethod, error)
	PortalAddCard(ctx context.Context, pc remit.PortalContext) (string, error)
	PortalSetDefaultMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.BillingAccount, error)
	PortalRemoveMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.PaymentMethod, error)
}

// Config is the portal's configuration.
type Config struct {
	PublicURL string // https: the session cookie is Secure
}

const (
	cookieName = "remit_portal"
	keySession = "portal_session"
	home       = "/portal"
)

// contentSecurityPolicy allows the page's own stylesheets and forms, nothing inline, no framing.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Server serves the portal.
type Server struct {
	eng      Engine
	sessions *scs.SessionManager
	pages    *template.Template
	log      *slog.Logger
	handler  http.Handler
	patterns []string // the routes with a handler of their own (TestPortalEveryRouteGuarded lists them)
}

// New builds the portal. sessions is where browser sessions are kept (app.OperatorSessions: the
// same table as the dashboard's, under another cookie and path).
func New(eng Engine, sessions scs.Store, log *slog.Logger, cfg Config) (*Server, error) {
	pages, err := template.New("portal").Funcs(template.FuncMap{
		"t":       func(tr *locale.Tr, key string, pairs ...string) string { return tr.T(key, pairs...) },
		"money":   func(tr *locale.Tr, amount int64, currency string) string { return tr.Money(amount, currency) },
		"date":    func(tr *locale.Tr, d time.Time) string { return tr.Date(d) },
		"country": func(tr *locale.Tr, code string) string { return tr.Country(code) },
		"deref":   func(p *int64) int64 { return *p },
		"list":    func(v ...string) []string { return v },
	}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	sm := webui.Sessions(sessions, webui.Cookie{Name: cookieName, Path: "/portal", SameSite: http.SameSiteLaxMode,
		Lifetime: 12 * time.Hour, Idle: remit.PortalIdle}, cfg.PublicURL)
	s := &Server{eng: eng, sessions: sm, pages: pages, log: log}
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) { s.fail(w, r, nil, err) }

	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) {
		mux.HandleFunc(pattern, h)
		s.patterns = append(s.patterns, pattern)
	}
	webui.Static(mux, "/portal/static/", staticFS)
	handle("GET /portal/start", s.start)
	handle("GET /portal", s.signedIn(s.overview))
	handle("GET /portal/theme.css", s.signedIn(s.theme))
	handle("GET /portal/subscriptions/{subscription}/cancel", s.signedIn(s.cancelPage))
	handle("POST /portal/subscriptions/{subscription}/cancel", s.signedIn(s.checked(s.cancel)))
	handle("POST /portal/subscriptions/{subscription}/keep", s.signedIn(s.checked(s.keep)))
	handle("GET /portal/subscriptions/{subscription}/change", s.signedIn(s.changePage))
	handle("GET /portal/invoices", s.signedIn(s.invoicesPage))
	handle("GET /portal/invoices/{invoice}/pay", s.signedIn(s.payInvoice))
	handle("GET /portal/details", s.signedIn(s.detailsPage))
	handle("POST /portal/details", s.signedIn(s.checked(s.details)))
	handle("GET /portal/payment-methods", s.signedIn(s.walletPage))
	handle("POST /portal/payment-methods/add", s.signedIn(s.checked(s.addCard)))
	handle("POST /portal/payment-methods/{method}/default", s.signedIn(s.checked(s.makeDefault)))
	handle("GET /portal/payment-methods/{method}/remove", s.signedIn(s.removePage))
	handle("POST /portal/payment-methods/{method}/remove", s.signedIn(s.checked(s.remove)))
	handle("GET /portal/subscriptions/{subscription}/{action}", s.signedIn(s.pausePage))
	handle("POST /portal/subscriptions/{subscription}/{action}", s.signedIn(s.checked(s.pause)))
	handle("POST /portal/subscriptions/{subscription}/change", s.signedIn(s.checked(s.change)))
	mux.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) {
		s.message(w, r, nil, http.StatusNotFound, "portal.error.not_found")
	})
	s.handler = webui.Protect(mux, sm, webui.Headers{CSP: contentSecurityPolicy, Referrer: "no-referrer"})
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// start opens a portal session from its one-time URL: a new browser session (a new cookie token)
// for the portal session, then its flow's page or the overview.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	ps, err := s.eng.OpenPortalSession(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		var pc *remit.PortalContext
		if ps.SessionID != "" { // a used or expired link: say so in the session's language
			pc = &remit.PortalContext{Session: remit.PortalSession{Locale: ps.Locale}}
		}
		s.fail(w, r, pc, err)
		return
	}
	if err := webui.Begin(r.Context(), s.sessions, keySession, ps.SessionID); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, flowPage(ps.Flow), http.StatusSeeOther)
}

// flowPage is the portal page a session's flow opens: the cancel or change page of its
// subscription, the payment methods, the invoice's hosted pay page; without a flow, the overview.
func flowPage(f *remit.PortalFlow) string {
	switch {
	case f == nil:
		return home
	case f.Type == remit.FlowSubscriptionCancel && f.SubscriptionID != nil:
		return home + "/subscriptions/" + url.PathEscape(*f.SubscriptionID) + "/cancel"
	case f.Type == remit.FlowSubscriptionUpdate && f.SubscriptionID != nil:
		return home + "/subscriptions/" + url.PathEscape(*f.SubscriptionID) + "/change"
	case f.Type == remit.FlowPaymentMethodUpdate:
		return home + "/payment-methods"
	case f.Type == remit.FlowInvoicePayment && f.InvoiceID != nil:
		return home + "/invoices/" + url.PathEscape(*f.InvoiceID) + "/pay"
	}
	return home
}

type portalKey struct{}

// signedIn runs next for the browser's open portal session (its context carries the session's
// customer_portal actor); without one: the link-expired page.
func (s *Server) signedIn(next func(http.ResponseWriter, *http.Request, remit.PortalContext)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := s.sessions.GetString(r.Context(), keySession)
		if id == "" {
			s.message(w, r, nil, http.StatusUnauthorized, "portal.error.signed_out")
			return
		}
		ctx, pc, err := s.eng.PortalSession(r.Context(), id)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		next(w, r.WithContext(ctx), pc)
	}
}

// checked refuses a form without the session's CSRF token (403).
func (s *Server) checked(next func(http.ResponseWriter, *http.Request, remit.PortalContext)) func(http.ResponseWriter, *http.Request, remit.PortalContext) {
	return func(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
		if !webui.ValidCSRF(s.sessions, r) {
			s.message(w, r, &pc, http.StatusForbidden, "portal.error.stale_form")
			return
		}
		next(w, r, pc)
	}
}

// view is what every page template gets.
type view struct {
	Tr       *locale.Tr
	Merchant string
	Logo     string
	Return   string
	CSRF     string
	Customer remit.Customer
	Config   remit.PortalConfiguration
	Data     any
	Title    string
	Done     string
}

func (s *Server) view(r *http.Request, pc *remit.PortalContext, title string, data any) view {
	v := view{Tr: locale.For(r.URL.Query().Get("locale")), Title: title, Data: data, CSRF: s.sessions.GetString(r.Context(), webui.CSRFKey),
		Done: r.URL.Query().Get("done")}
	if pc != nil {
		v.Tr = locale.For(pc.Session.Locale)
		v.Customer, v.Config = pc.Customer, pc.Config
		v.Merchant = pc.Merchant.DisplayName
		if b := pc.Config.Branding; b.DisplayName != nil {
			v.Merchant = *b.DisplayName
		}
		if b := pc.Config.Branding; b.LogoURL != nil {
			v.Logo = *b.LogoURL
		}
		if pc.Session.ReturnURL != nil {
			v.Return = *pc.Session.ReturnURL
		}
	}
	return v
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	if err := webui.Render(w, status, s.pages, page, v); err != nil {
		s.log.Error("portal: render", "page", page, "err", err.Error())
	}
}

// message renders a page that only says something (an error, in plain words).
func (s *Server) message(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, status int, key string) {
	s.render(w, r, status, "message.html", s.view(r, pc, key, nil))
}

// pageOff reports whether the configuration turns the page's feature off, having answered it: a
// feature turned off has no page (404; its forms are refused with 403 before they reach here).
func (s *Server) pageOff(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, feature string) bool {
	if remit.PortalAllows(pc.Config, feature) == nil {
		return false
	}
	s.message(w, r, pc, http.StatusNotFound, "portal.error.not_found")
	return true
}

// loaded reads with get what a page of feature shows; false when the configuration turns the
// feature off (pageOff) or the read failed, having answered.
func loaded[T any](s *Server, w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, feature string,
	get func(ctx context.Context, pc remit.PortalContext) (T, error)) (T, bool) {
	var v T
	if s.pageOff(w, r, pc, feature) {
		return v, false
	}
	v, err := get(r.Context(), *pc)
	return v, !s.failed(w, r, pc, err)
}

// failed reports whether err is an error, having answered it (fail).
func (s *Server) failed(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, err error) bool {
	if err != nil {
		s.fail(w, r, pc, err)
	}
	return err != nil
}

// formDone answers a form the engine has acted on: its error's page, or the page it leads to (a
// redirect, so that reloading the page does not send the form again).
func (s *Server) formDone(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, err error, to string) {
	if err != nil {
		s.fail(w, r, pc, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// fail answers an engine error in words: 401 link, 403 feature off, 404 not the customer's, 409
// a state that forbids it; anything else 500 (logged, not shown).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, err error) {
	switch remit.ErrorCode(err) {
	case remit.EUnauthorized:
		s.message(w, r, pc, http.StatusUnauthorized, "portal.error.link")
	case remit.EForbidden:
		s.message(w, r, pc, http.StatusForbidden, "portal.error.off")
	case remit.ENotFound:
		s.message(w, r, pc, http.StatusNotFound, "portal.error.not_found")
	case remit.EConflict:
		s.message(w, r, pc, http.StatusConflict, "portal.error.conflict")
	default:
		s.log.Error("portal: request failed", "path", r.URL.Path, "err", err.Error())
		s.message(w, r, pc, http.StatusInternalServerError, "portal.error.internal")
	}
}
