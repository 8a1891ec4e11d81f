package document

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"

	"github.com/remit-billing/remit"
)

// The hosted setup page (GET /customer-portal/setup-sessions/{sessionId}): in the sandbox a choice
// of test cards; in production the processor's card element (Stripe.js), the only third-party code
// any hosted page loads, under a Content-Security-Policy that allows exactly its origins.

var (
	//go:embed assets/setup.html
	setupPageSource string
	//go:embed assets/setup.js
	setupJS string

	setupPage = template.Must(template.New("setup").Parse(setupPageSource))
)

// SetupPage is what the hosted setup page shows.
type SetupPage struct {
	SessionID     string
	Merchant      string              // the merchant account's display name
	Status        remit.SessionStatus // open, completed or expired
	PaymentMethod string              // completed: the saved card ("Visa •••• 4242")
	TestCards     []SetupOption       // sandbox: the test methods to choose from
	Card          *CardElement        // production: the processor's card element
	CompleteURL   string              // PUT: completes the session (relative to the page, with the token)
}

// SetupOption is one sandbox test method on the page.
type SetupOption struct {
	Token, Label, Outcome string
}

// CardElement is the processor's card element: its script, how it is started, and the origins
// the page's Content-Security-Policy allows for it.
type CardElement struct {
	Script, PublishableKey, ClientSecret        string
	ScriptSources, FrameSources, ConnectSources []string
}

// SetupHTML renders the hosted setup page.
func SetupHTML(p SetupPage) ([]byte, error) {
	view := map[string]any{
		"CSS": template.CSS(portalCSS), "JS": template.JS(setupJS), "Merchant": p.Merchant, "Status": p.Status,
		"PaymentMethod": p.PaymentMethod, "TestCards": p.TestCards, "Card": p.Card, "CompleteURL": p.CompleteURL,
	}
	var buf bytes.Buffer
	if err := setupPage.Execute(&buf, view); err != nil {
		return nil, fmt.Errorf("document: render hosted setup page: %w", err)
	}
	return buf.Bytes(), nil
}

// SetupPageCSP is the setup page's Content-Security-Policy: its own inline style and script (by
// hash) and fetches to its own origin, plus, with a card element, the element's script, frames
// and API origin, and nothing else.
func SetupPageCSP(p SetupPage) string {
	script, frame, connect := []string{hashQuoted(setupJS)}, []string{"'none'"}, []string{"'self'"}
	if p.Card != nil {
		script = append(script, p.Card.ScriptSources...)
		frame = p.Card.FrameSources
		connect = append(connect, p.Card.ConnectSources...)
	}
	return fmt.Sprintf("default-src 'none'; style-src %s; script-src %s; frame-src %s; connect-src %s; img-src 'self' data:; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'", hashQuoted(portalCSS), strings.Join(script, " "),
		strings.Join(frame, " "), strings.Join(connect, " "))
}

func hashQuoted(s string) string { return "'" + hashSource(s) + "'" }
