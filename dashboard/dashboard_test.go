package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// browser is a cookie-keeping client that does not follow redirects (the tests look at them).
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, e *testkit.Env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: e.Server.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, res.Header, string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	return b.do(req)
}

// post sends a form as this dashboard's own page would (same origin), with the CSRF token of
// the page last read unless the form names its own.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.base)
	return b.do(req)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", p.body)
	}
	return m[1]
}

func wantStatus(t *testing.T, p page, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d:\n%s", p.status, status, p.body)
	}
	for _, s := range contains {
		if !strings.Contains(p.body, s) {
			t.Fatalf("page lacks %q:\n%s", s, p.body)
		}
	}
}

func wantRedirect(t *testing.T, p page, to string) {
	t.Helper()
	if p.status != http.StatusSeeOther || p.header.Get("Location") != to {
		t.Fatalf("answer %d to %q, want 303 to %q:\n%s", p.status, p.header.Get("Location"), to, p.body)
	}
}

// The set-password form says the password rule, and refuses a password that is blank once
// trimmed (eleven spaces and an x), common, or the operator's own e-mail address, each with its
// message next to the field; the link still works after each refusal.
func TestSetPasswordRule(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		_, link, err := e.App.Operators.CreateOperator(context.Background(), e.Tenant.OrganizationID, "Finance.Team@Example.com", remit.OperatorAdmin)
		if err != nil {
			t.Fatal(err)
		}
		b := newBrowser(t, e)
		path := strings.TrimPrefix(link, e.App.Config.PublicURL)
		token := strings.TrimPrefix(path, "/dashboard/set-password?token=")
		form := b.get(path)
		wantStatus(t, form, 200, `id="password-rule"`, "At least 12 characters", "not a common password", "not your e-mail address")
		for pw, want := range map[string]string{
			"           x":             "at least 12 characters long, not counting spaces",
			"            ":             "may not be blank",
			"Password1234!":            "among the most common",
			"123456789012":             "among the most common",
			"finance.team@example.com": "may not be your e-mail address",
		} {
			bad := b.post("/dashboard/set-password", url.Values{"csrf": {csrfOf(t, form)}, "token": {token}, "password": {pw}, "confirm": {pw}})
			wantStatus(t, bad, 422, `id="password-error"`, want, `aria-describedby="password-rule password-error"`)
			form = bad
		}
		set := b.post("/dashboard/set-password", url.Values{"csrf": {csrfOf(t, form)}, "token": {token},
			"password": {"  a quiet harbour at dusk  "}, "confirm": {"  a quiet harbour at dusk  "}})
		wantRedirect(t, set, "/dashboard/sign-in?password=set")
		if _, err := e.App.Operators.SignIn(context.Background(), "finance.team@example.com", "  a quiet harbour at dusk  "); err != nil {
			t.Errorf("sign in with the password as typed: %v", err)
		}
	})
}

// An operator is created with a one-time link, sets a password through it (the rules' messages
// next to their fields), signs in, sees their organization, and signs out. Every page carries the
// security headers; the link works once.
func TestOperatorSetsPasswordSignsInAndOut(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		op, link, err := e.App.Operators.CreateOperator(ctx, e.Tenant.OrganizationID, " Ops@Example.COM ", remit.OperatorAdmin)
		if err != nil {
			t.Fatal(err)
		}
		if op.Email != "ops@example.com" || !strings.HasPrefix(link, e.App.Config.PublicURL+"/dashboard/set-password?token=") {
			t.Fatalf("operator %+v, link %s", op, link)
		}
		b := newBrowser(t, e)

		// Signed out: the overview sends to the sign-in page.
		wantRedirect(t, b.get("/dashboard"), "/dashboard/sign-in")

		// The link's form; a short password and a different confirmation: both messages.
		path := strings.TrimPrefix(link, e.App.Config.PublicURL)
		form := b.get(path)
		wantStatus(t, form, 200, "ops@example.com", `name="password"`)
		for h, want := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
			if form.header.Get(h) != want {
				t.Errorf("%s: %q, want %q", h, form.header.Get(h), want)
			}
		}
		if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
		token := strings.TrimPrefix(path, "/dashboard/set-password?token=")
		bad := b.post("/dashboard/set-password", url.Values{"csrf": {csrfOf(t, form)}, "token": {token}, "password": {"short"}, "confirm": {"other"}})
		wantStatus(t, bad, 422, `id="password-error"`, "at least 12 characters", `id="confirm-error"`, "The two passwords differ")
		set := b.post("/dashboard/set-password", url.Values{"csrf": {csrfOf(t, bad)}, "token": {token},
			"password": {"correct horse battery"}, "confirm": {"correct horse battery"}})
		wantRedirect(t, set, "/dashboard/sign-in?password=set")
		wantStatus(t, b.get(path), 404, "Link not usable") // once only

		// A wrong password, then the right one.
		signIn := b.get("/dashboard/sign-in?password=set")
		wantStatus(t, signIn, 200, "Your password is set")
		wrong := b.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, signIn)}, "email": {"ops@example.com"}, "password": {"wrong password!"}})
		wantStatus(t, wrong, 401, "The e-mail address or the password is wrong")
		before := b.c.Jar.Cookies(mustURL(t, b.base+"/dashboard"))
		ok := b.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, wrong)}, "email": {"OPS@example.com"}, "password": {"correct horse battery"}})
		wantRedirect(t, ok, "/dashboard")
		cookie := ok.header.Get("Set-Cookie")
		for _, attr := range []string{"remit_dashboard=", "Path=/dashboard", "HttpOnly", "SameSite=Strict"} {
			if !strings.Contains(cookie, attr) {
				t.Errorf("session cookie %q lacks %s", cookie, attr)
			}
		}
		if after := b.c.Jar.Cookies(mustURL(t, b.base+"/dashboard")); len(before) == 1 && len(after) == 1 && before[0].Value == after[0].Value {
			t.Error("signing in kept the session's token")
		}

		// The overview: the organization and its sandbox merchant account; then production.
		home := b.get("/dashboard")
		wantStatus(t, home, 200, "Acme Test", e.Tenant.Sandbox, "ops@example.com (admin)")
		if strings.Contains(home.body, e.Tenant.Production) {
			t.Error("the sandbox overview lists the production account")
		}
		wantStatus(t, b.get("/dashboard?env=production"), 200, e.Tenant.Production)
		wantStatus(t, b.get("/dashboard"), 200, e.Tenant.Production) // the switch holds for the session

		// Signing out ends the session.
		wantRedirect(t, b.post("/dashboard/sign-out", url.Values{"csrf": {csrfOf(t, home)}}), "/dashboard/sign-in")
		wantRedirect(t, b.get("/dashboard"), "/dashboard/sign-in")
	})
}

// Forms without the session's CSRF token, and cross-origin posts, are refused; sign-ins are
// limited per account; a disabled operator's session ends at its next request; another
// organization's operator sees none of the first one's accounts.
func TestDashboardRefusals(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		signedIn := func(email string, org string) *browser {
			t.Helper()
			_, link, err := e.App.Operators.CreateOperator(ctx, org, email, remit.OperatorViewer)
			if err != nil {
				t.Fatal(err)
			}
			token := link[strings.Index(link, "token=")+len("token="):]
			if _, err := e.App.Operators.SetOperatorPassword(ctx, token, "a long enough password", "a long enough password"); err != nil {
				t.Fatal(err)
			}
			b := newBrowser(t, e)
			wantRedirect(t, b.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, b.get("/dashboard/sign-in"))},
				"email": {email}, "password": {"a long enough password"}}), "/dashboard")
			return b
		}
		b := signedIn("viewer@example.com", e.Tenant.OrganizationID)
		home := b.get("/dashboard")
		wantStatus(t, home, 200, e.Tenant.Sandbox)

		// No token, a wrong token, another origin.
		wantStatus(t, b.post("/dashboard/sign-out", url.Values{}), 403, "Form expired")
		wantStatus(t, b.post("/dashboard/sign-out", url.Values{"csrf": {strings.Repeat("0", 64)}}), 403)
		req, _ := http.NewRequest(http.MethodPost, b.base+"/dashboard/sign-out", strings.NewReader("csrf="+csrfOf(t, home)))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if p := b.do(req); p.status != http.StatusForbidden {
			t.Fatalf("cross-site post: %d", p.status)
		}
		wantStatus(t, b.get("/dashboard"), 200) // still signed in

		// Another organization's operator: none of the first organization's names or IDs.
		org2 := e.NewTenant("Globex Other", false)
		b2 := signedIn("ops@globex.example", org2.OrganizationID)
		for _, env := range []string{"sandbox", "production"} {
			p := b2.get("/dashboard?env=" + env)
			wantStatus(t, p, 200, "Globex Other")
			for _, leak := range []string{"Acme Test", e.Tenant.OrganizationID, e.Tenant.Sandbox, e.Tenant.Production} {
				if strings.Contains(p.body, leak) {
					t.Errorf("%s overview of another organization shows %s", env, leak)
				}
			}
		}

		// Wrong passwords, until the limit (a burst of 5 failed sign-ins per client address and per
		// account; the two sign-ins above succeeded and count for nothing); then even the right
		// password waits.
		other := newBrowser(t, e)
		form := other.get("/dashboard/sign-in")
		tries := 0
		for form.status != http.StatusTooManyRequests {
			if tries++; tries > 6 {
				t.Fatal("more than 5 failed sign-ins from one address were let through")
			}
			form = other.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, form)}, "email": {"viewer@example.com"}, "password": {"not the password"}})
			if form.status != http.StatusUnauthorized && form.status != http.StatusTooManyRequests {
				t.Fatalf("wrong password: %d", form.status)
			}
		}
		if tries != 6 {
			t.Fatalf("refused after %d failed sign-ins, want after 5", tries-1)
		}
		wantStatus(t, other.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, form)}, "email": {"viewer@example.com"},
			"password": {"a long enough password"}}), 429, "Too many sign-in attempts")

		// Disabled: the open session ends at its next request, and signing in is refused.
		if _, err := e.App.Operators.DisableOperator(ctx, "viewer@example.com"); err != nil {
			t.Fatal(err)
		}
		wantRedirect(t, b.get("/dashboard"), "/dashboard/sign-in")
		wantStatus(t, b.get("/dashboard/unknown"), 404, "There is no such page")
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A session past its expiry is gone: the store no longer finds it, and the next request signs in
// again (sessions live 12 hours at most and end after an idle hour; scs writes that expiry).
func TestSessionExpiry(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		wantStatus(t, b.get("/dashboard"), 200, "viewer@example.com")
		var expires int64
		if err := e.App.DB.SQL().QueryRow(`SELECT MAX(expires_at) FROM operator_sessions`).Scan(&expires); err != nil {
			t.Fatal(err)
		}
		if left := time.Until(time.UnixMicro(expires)); left < 50*time.Minute || left > 61*time.Minute {
			t.Fatalf("a new session expires in %s, want an idle hour", left)
		}
		if _, err := e.App.DB.SQL().Exec(`UPDATE operator_sessions SET expires_at = 1`); err != nil {
			t.Fatal(err)
		}
		wantRedirect(t, b.get("/dashboard"), "/dashboard/sign-in")
	})
}

// Sessions live in the store: a session opened on one server is good on another server of the
// same store (another `serve` process), and signing out on one ends it on both.
func TestSessionAcrossServers(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		one := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		home := one.get("/dashboard")
		wantStatus(t, home, 200, "viewer@example.com")
		second := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{})
		two := &browser{t: t, base: second.Server.URL, c: &http.Client{Jar: one.c.Jar, CheckRedirect: one.c.CheckRedirect}}
		// The jar keys cookies by host: give the second server the first one's session cookie.
		u1, u2 := mustURL(t, one.base+"/dashboard"), mustURL(t, two.base+"/dashboard")
		jar, _ := cookiejar.New(nil)
		jar.SetCookies(u2, one.c.Jar.Cookies(u1))
		two.c.Jar = jar
		wantStatus(t, two.get("/dashboard"), 200, "viewer@example.com")
		wantRedirect(t, one.post("/dashboard/sign-out", url.Values{"csrf": {csrfOf(t, home)}}), "/dashboard/sign-in")
		wantRedirect(t, two.get("/dashboard"), "/dashboard/sign-in")
	})
}

// Sign-ins are limited per account too: wrong passwords from five different addresses use up the
// account's burst, and a sixth address is refused for that account (while another account signs in
// from it).
func TestSignInLimitPerAccount(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		signedInAs(t, e, "target@example.com", remit.OperatorViewer) // from 127.0.0.1
		signedInAs(t, e, "other@example.com", remit.OperatorViewer)
		try := func(addr, email, password string) int { t.Helper(); return signInFrom(t, e, addr, email, password) }
		got := []int{}
		for i := range 6 {
			got = append(got, try(fmt.Sprintf("10.0.0.%d:4000", i+1), "target@example.com", "not the password"))
		}
		if got[5] != http.StatusTooManyRequests || got[0] != http.StatusUnauthorized {
			t.Fatalf("wrong passwords from six addresses: %v, want 401s then 429", got)
		}
		if c := try("10.0.0.9:4000", "target@example.com", "a long enough password"); c != http.StatusTooManyRequests {
			t.Fatalf("the right password for the limited account: %d, want 429", c)
		}
		if c := try("10.0.0.9:4000", "other@example.com", "a long enough password"); c != http.StatusSeeOther {
			t.Fatalf("another account from the same new address: %d, want 303", c)
		}
	})
}

// signInFrom sends the sign-in form from the client address addr (host:port) and answers the
// status.
func signInFrom(t *testing.T, e *testkit.Env, addr, email, password string) int {
	t.Helper()
	get := httptest.NewRequest(http.MethodGet, "/dashboard/sign-in", nil)
	get.RemoteAddr = addr
	rec := httptest.NewRecorder()
	e.Server.Config.Handler.ServeHTTP(rec, get)
	csrf := csrfOf(t, page{status: rec.Code, body: rec.Body.String()})
	post := httptest.NewRequest(http.MethodPost, "/dashboard/sign-in", strings.NewReader(url.Values{
		"csrf": {csrf}, "email": {email}, "password": {password}}.Encode()))
	post.RemoteAddr = addr
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range rec.Result().Cookies() {
		post.AddCookie(c)
	}
	rec = httptest.NewRecorder()
	e.Server.Config.Handler.ServeHTTP(rec, post)
	return rec.Code
}

// The sign-in limits count failed attempts only: six people of one office (one client address)
// sign in within a minute, and one of them six times; then wrong passwords from that address are
// refused after the burst of 5, and so are wrong passwords for that account from other addresses.
// An attempt refused by one limit takes nothing from the other.
func TestSignInLimitCountsFailuresOnly(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		const office, pw = "10.1.1.1:5000", "a long enough password"
		for i := range 6 {
			signedInAs(t, e, fmt.Sprintf("person%d@example.com", i+1), remit.OperatorViewer)
		}
		for i := range 6 {
			if c := signInFrom(t, e, office, fmt.Sprintf("person%d@example.com", i+1), pw); c != http.StatusSeeOther {
				t.Fatalf("person %d signing in from the office: %d, want 303", i+1, c)
			}
		}
		for i := range 6 {
			if c := signInFrom(t, e, fmt.Sprintf("10.2.0.%d:5000", i+1), "person1@example.com", pw); c != http.StatusSeeOther {
				t.Fatalf("person 1's sign-in %d: %d, want 303", i+1, c)
			}
		}
		failures := func(addr func(i int) string, email string) []int {
			var got []int
			for i := range 6 {
				got = append(got, signInFrom(t, e, addr(i), email, "not the password"))
			}
			return got
		}
		want := fmt.Sprint([]int{401, 401, 401, 401, 401, 429})
		if got := failures(func(int) string { return office }, "nobody@example.com"); fmt.Sprint(got) != want {
			t.Fatalf("wrong passwords from the office: %v, want %s", got, want)
		}
		for range 3 {
			if c := signInFrom(t, e, office, "person3@example.com", pw); c != http.StatusTooManyRequests {
				t.Fatalf("the office after its failures: %d, want 429", c)
			}
		}
		// Refused by the office's limit, person 3's account lost nothing.
		if got := failures(func(i int) string { return fmt.Sprintf("10.3.0.%d:5000", i+1) }, "person3@example.com"); fmt.Sprint(got) != want {
			t.Fatalf("wrong passwords for one account from six addresses: %v, want %s", got, want)
		}
		if c := signInFrom(t, e, "10.3.0.9:5000", "person4@example.com", pw); c != http.StatusSeeOther {
			t.Fatalf("another account from a new address: %d, want 303", c)
		}
	})
}
