// Package dashboard is the operator console served at /dashboard (docs/dashboard.md): pages
// rendered on the server with html/template, assets embedded, usable without JavaScript. It is an
// edge like package httpapi: it reads forms, calls the engine (Engine) and renders; it holds no
// business rule. Sessions are server-side (github.com/alexedwards/scs/v2, kept in the store by the
// engine), forms carry a CSRF token and cross-origin writes are refused (net/http's
// CrossOriginProtection), sign-ins are rate-limited per address and per account.
package dashboard

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/internal/webui"
	"github.com/remit-billing/remit/locale"
	"github.com/remit-billing/remit/ratelimit"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Engine is what the dashboard asks of the engine (app.Operators).
type Engine interface {
	SignIn(ctx context.Context, email, password string) (remit.Operator, error)
	Operator(ctx context.Context, id string) (remit.Operator, error)
	OperatorForLink(ctx context.Context, token string) (remit.Operator, error)
	SetOperatorPassword(ctx context.Context, token, password, confirm string) (remit.Operator, error)
	Organization(ctx context.Context, organizationID string, env remit.Environment) (remit.Organization, []remit.MerchantAccount, error)
	OperatorInvoice(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID string) (remit.MerchantAccount, remit.Invoice, error)
	InvoiceOverview(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID string) (remit.InvoiceOverview, error)
	InvoiceAction(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID, action, key string) (remit.Invoice, error)
	ListInvoices(ctx context.Context, o remit.Operator, merchantAccountID, customerID, status, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Invoice], error)
	AccountEvents(ctx context.Context, o remit.Operator, merchantAccountID, typ, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Event], error)
	AccountEvent(ctx context.Context, o remit.Operator, merchantAccountID, eventID string) (remit.MerchantAccount, remit.Event, []remit.WebhookDelivery, error)
	ResendEvent(ctx context.Context, o remit.Operator, merchantAccountID, eventID, key string) ([]remit.WebhookDelivery, error)
	ListCustomers(ctx context.Context, o remit.Operator, merchantAccountID, search, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Customer], error)
	Customer(ctx context.Context, o remit.Operator, merchantAccountID, customerID string) (remit.CustomerOverview, error)
	OperatorSubscription(ctx context.Context, o remit.Operator, merchantAccountID, subscriptionID string) (remit.MerchantAccount, remit.Subscription, error)
	SubscriptionAction(ctx context.Context, o remit.Operator, merchantAccountID, subscriptionID, action, key string) (remit.Subscription, error)
	AccountOverview(ctx context.Context, o remit.Operator, merchantAccountID string) (remit.AccountOverview, error)
	IssueCreditNote(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID, kind string, amount int64, reason, description, key string) (remit.CreditNote, error)
	AccountPayments(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.PaymentQuery) (remit.MerchantAccount, remit.List[remit.Payment], error)
	AccountSubscriptions(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.SubscriptionQuery) (remit.MerchantAccount, remit.List[remit.Subscription], error)
	AccountEmails(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.EmailQuery) (remit.MerchantAccount, remit.List[remit.Email], error)
	InvoiceDocument(ctx context.Context, o remit.Operator, merchantAccountID, invoiceID string) (document.Invoice, error)
	DecideMerchant(ctx context.Context, o remit.Operator, merchantAccountID, decision, key string) (remit.MerchantStatus, error)
	AccountReceipts(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.ReceiptQuery) (remit.MerchantAccount, remit.OffsetList[remit.PaymentReceipt], error)
	AccountSettlements(ctx context.Context, o remit.Operator, merchantAccountID, scopeFilter, limit, cursor string) (remit.MerchantAccount, remit.List[remit.Settlement], error)
	UsageOverview(ctx context.Context, o remit.Operator, merchantAccountID, customerID, meterID string) (remit.UsageOverview, error)
	AccountClock(ctx context.Context, o remit.Operator, merchantAccountID string) (remit.MerchantAccount, remit.TestClock, error)
	AdvanceClock(ctx context.Context, o remit.Operator, merchantAccountID string, seconds int64, key string) (remit.TestClock, error)
	AccountJobs(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.JobQuery) (remit.MerchantAccount, remit.List[remit.Job], error)
	OperatorJob(ctx context.Context, o remit.Operator, merchantAccountID, jobID string) (remit.MerchantAccount, remit.Job, error)
	RetryJob(ctx context.Context, o remit.Operator, merchantAccountID, jobID, key string) (remit.Job, error)
	CustomerNames(ctx context.Context, o remit.Operator, merchantAccountID string, ids []string) (map[string]string, error)
}

// Config is the dashboard's configuration.
type Config struct {
	PublicURL string // https: the session cookie is Secure
	// SessionLifetime is the most a session lives; SessionIdle ends it sooner without requests.
	SessionLifetime, SessionIdle time.Duration
}

// Session cookie and keys.
const (
	cookieName   = "remit_dashboard"
	keyOperator  = "operator"
	keyEnv       = "environment"
	signInPath   = "/dashboard/sign-in"
	overviewPath = "/dashboard"
)

// contentSecurityPolicy allows the page's own stylesheet and forms, nothing inline, no framing.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Server serves the dashboard.
type Server struct {
	eng       Engine
	publicURL string
	sessions  *scs.SessionManager
	signIns   SignInLimiter
	pages     map[string]*template.Template
	log       *slog.Logger
	handler   http.Handler
}

// SignInLimiter limits failed sign-in attempts: an attempt takes a token of its client address's
// bucket and of its e-mail address's before the password is compared (so attempts made in parallel
// cannot pass the limit), and a sign-in that does not fail gives them back.
type SignInLimiter interface {
	ratelimit.Limiter
	ratelimit.Refunder
}

// New builds the dashboard. sessions is where sessions are kept (app.OperatorSessions); signIns
// limits failed sign-in attempts (keys "signin:address:..." and "signin:email:...").
func New(eng Engine, sessions scs.Store, signIns SignInLimiter, log *slog.Logger, cfg Config) (*Server, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	sm := webui.Sessions(sessions, webui.Cookie{Name: cookieName, Path: "/dashboard", SameSite: http.SameSiteStrictMode,
		Lifetime: orDefault(cfg.SessionLifetime, 12*time.Hour), Idle: orDefault(cfg.SessionIdle, time.Hour)}, cfg.PublicURL)
	s := &Server{eng: eng, publicURL: cfg.PublicURL, sessions: sm, signIns: signIns, pages: pages, log: log}
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) { s.fail(w, r, err) }

	mux := http.NewServeMux()
	webui.Static(mux, "/dashboard/static/", staticFS)
	mux.HandleFunc("GET /dashboard/sign-in", s.signInPage)
	mux.HandleFunc("POST /dashboard/sign-in", s.signIn)
	mux.HandleFunc("POST /dashboard/sign-out", s.signOut)
	mux.HandleFunc("GET /dashboard/set-password", s.setPasswordPage)
	mux.HandleFunc("POST /dashboard/set-password", s.setPassword)
	mux.HandleFunc("GET /dashboard", s.signedIn(s.overview))
	mux.HandleFunc("GET /dashboard/invoices", s.signedIn(s.findInvoice))
	mux.HandleFunc("GET /dashboard/accounts/{account}/invoices/{invoice}", s.signedIn(s.invoicePage))
	mux.HandleFunc("GET /dashboard/accounts/{account}", s.signedIn(s.accountPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/decide/{decision}", s.signedIn(s.decisionPage))
	mux.HandleFunc("POST /dashboard/accounts/{account}/decide/{decision}", s.signedIn(s.decide))
	mux.HandleFunc("GET /dashboard/accounts/{account}/invoices", s.signedIn(s.invoicesPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/payments", s.signedIn(s.paymentsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/subscriptions", s.signedIn(s.subscriptionsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/emails", s.signedIn(s.emailsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/receipts", s.signedIn(s.receiptsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/usage", s.signedIn(s.usagePage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/settlements", s.signedIn(s.settlementsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/events", s.signedIn(s.eventsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/events/{event}", s.signedIn(s.eventPage))
	mux.HandleFunc("POST /dashboard/accounts/{account}/events/{event}/resend", s.signedIn(s.resendEvent))
	mux.HandleFunc("GET /dashboard/accounts/{account}/customers", s.signedIn(s.customersPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/customers/{customer}", s.signedIn(s.customerPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/subscriptions/{subscription}", s.signedIn(s.subscriptionPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/subscriptions/{subscription}/{action}", s.signedIn(subscriptionActionPages.page(s)))
	mux.HandleFunc("POST /dashboard/accounts/{account}/subscriptions/{subscription}/{action}", s.signedIn(subscriptionActionPages.post(s)))
	mux.HandleFunc("GET /dashboard/accounts/{account}/jobs", s.signedIn(s.jobsPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/jobs/{job}", s.signedIn(s.jobPage))
	mux.HandleFunc("GET /dashboard/accounts/{account}/jobs/{job}/retry", s.signedIn(s.jobRetryPage))
	mux.HandleFunc("POST /dashboard/accounts/{account}/jobs/{job}/retry", s.signedIn(s.retryJob))
	mux.HandleFunc("GET /dashboard/accounts/{account}/clock", s.signedIn(s.clockPage))
	mux.HandleFunc("POST /dashboard/accounts/{account}/clock", s.signedIn(s.advanceClock))
	mux.HandleFunc("GET /dashboard/accounts/{account}/invoices/{invoice}/pdf", s.signedIn(s.invoicePDF))
	mux.HandleFunc("GET /dashboard/accounts/{account}/invoices/{invoice}/credit-notes", s.signedIn(s.creditNotePage))
	mux.HandleFunc("POST /dashboard/accounts/{account}/invoices/{invoice}/credit-notes", s.signedIn(s.issueCreditNote))
	mux.HandleFunc("GET /dashboard/accounts/{account}/invoices/{invoice}/{action}", s.signedIn(invoiceActionPages.page(s)))
	mux.HandleFunc("POST /dashboard/accounts/{account}/invoices/{invoice}/{action}", s.signedIn(invoiceActionPages.post(s)))
	mux.HandleFunc("/dashboard/", s.notFound)
	s.handler = webui.Protect(mux, sm, webui.Headers{CSP: contentSecurityPolicy, Referrer: "same-origin", DenyFrames: true})
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	funcs := template.FuncMap{"money": money, "who": who}
	for _, name := range []string{"sign-in", "set-password", "overview", "message", "invoice", "action", "clock", "invoices", "events", "event", "customers", "customer", "subscription", "account", "credit-note", "list", "usage", "job"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/chart.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// customerRef is a customer as a page shows it: its name, linked to its page, and its ID beside
// (the "customer" template); the ID alone when it has no name.
type customerRef struct{ Name, ID, Href string }

// who is the customer of the account by ID, named from names (template function).
func who(account, id string, names map[string]string) customerRef {
	return customerRef{Name: names[id], ID: id, Href: resourcePath(account, "customers", id)}
}

// customerNames reads the names of the customers of a page, of the account: one query.
func (s *Server) customerNames(r *http.Request, accountID string, ids []string) (map[string]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.eng.CustomerNames(r.Context(), operatorOf(r), accountID, ids)
}

// money formats an amount of minor units in its currency (English).
var money = locale.For("en").Money

// confirmation is what an action's confirmation page says: what it does, the API request that
// does the same, and where the form goes.
type confirmation struct {
	Title, Explain  string
	Back, BackLabel string
	API, Body       string // the API route's path (after the host) and its JSON body, if any
	Command         string // or the CLI command that does the same, when no API route does
	Post, Button    string
}

// page is what every template reads; each page fills its part.
type page struct {
	Title        string
	CSRF         string
	Operator     *remit.Operator
	Names        map[string]string // the names of the customers the page shows, by ID (customerNames)
	Environment  remit.Environment
	Environments []remit.Environment
	// sign-in, set-password, message
	Email, Notice, Error, Message, Token string
	Errors                               map[string]string
	PasswordRule                         string // remit.OperatorPasswordRule
	// overview
	Organization remit.Organization
	Accounts     []remit.MerchantAccount
	// invoice, void
	Account    remit.MerchantAccount
	Invoice    remit.Invoice
	CanAct     bool // an admin
	Actions    []invoiceAction
	Confirm    confirmation          // an action being confirmed
	HostedPage string                // the invoice's hosted page (hostedInvoiceUrl)
	Belongs    remit.InvoiceOverview // its payments, receipts and credit notes
	Totals     []document.Total      // its totals block, as its documents show it
	Key        string                // the action's Idempotency-Key
	PublicURL  string
	// clock
	Clock   remit.TestClock
	Seconds string
	// a list that is only a table (lists.go)
	List *listView
	// credit note
	Form    creditNoteForm
	Kinds   []option
	Reasons []string
	// usage
	Usage remit.UsageOverview
	// account
	Decisions []decision
	Home      remit.AccountOverview
	MRR       chart
	Chart     chart
	// job
	Job        remit.Job
	JobPayload []payloadField // nil: the payload is not an object
	JobRetry   bool           // the job's state allows a retry
	// subscription
	Subscription        remit.Subscription
	SubscriptionActions []subscriptionAction
	// customers
	Customers []remit.Customer
	View      remit.CustomerOverview
	// events
	Events     []remit.Event
	Event      remit.Event
	Deliveries []remit.WebhookDelivery
	EventData  string
	// invoices
	Invoices []remit.Invoice
	Filter   listFilter
	Statuses []string
	NextPage string
}

// render writes a page with the status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.CSRF = s.csrfToken(r.Context())
	p.PublicURL = s.publicURL
	p.Environments = []remit.Environment{remit.Sandbox, remit.Production}
	if err := webui.Render(w, status, s.pages[name], "layout", p); err != nil {
		s.log.Error("dashboard: render", "page", name, "err", err.Error())
	}
}

// message renders a short page that says one thing.
func (s *Server) message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	s.render(w, r, status, "message", page{Title: title, Message: msg})
}

// fail answers an unexpected error: logged, never shown.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("dashboard: request failed", "path", r.URL.Path, "err", err.Error())
	s.message(w, r, http.StatusInternalServerError, "Something went wrong", "The request could not be completed. Try again; if it keeps failing, the server's log says why.")
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.message(w, r, http.StatusNotFound, "Not found", "There is no such page.")
}

// csrfToken returns the session's CSRF token, creating it (and so the session) on first use.
func (s *Server) csrfToken(ctx context.Context) string {
	t := s.sessions.GetString(ctx, webui.CSRFKey)
	if t == "" {
		t = webui.NewToken()
		s.sessions.Put(ctx, webui.CSRFKey, t)
	}
	return t
}

// checkCSRF reports whether a form's token is the session's; it answers 403 when not.
func (s *Server) checkCSRF(w http.ResponseWriter, r *http.Request) bool {
	if !webui.ValidCSRF(s.sessions, r) {
		s.message(w, r, http.StatusForbidden, "Form expired", "This form is out of date (or was not sent from this dashboard). Open the page again and resend it.")
		return false
	}
	return true
}

// clientAddress is the peer's IP address (a proxy's forwarding headers are not trusted).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
