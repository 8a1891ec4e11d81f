package document

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/locale"
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
	Locale        string // the customer's language (remit.Locales); empty or unknown is English
	SessionID     string
	Merchant      string              // the merchant account's display name
	Status        remit.SessionStatus // open, completed or expired
	PaymentMethod string              // completed: the saved card ("Visa •••• 4242")
	TestCards     []SetupOption       // sandbox: the test methods to choose from
	Card          *CardElement        // production: the processor's card element
	CompleteURL   string              // PUT: completes the session (relative to the page, with the token)
	BackURL       string              // a link back (the customer portal's page that opened it), if any
}

// SetupOption is one sandbox test method on the page. Outcome is what charging it does, in
// English: the page shows the catalog's text for the token (doc.setup.outcome.TOKEN) when it has one.
type SetupOption struct {
	Token, Label, Outcome string
}

// CardElement is the processor's card element: its script, how it is started, and the origins
// the page's Content-Security-Policy allows for it.
type CardElement struct {
	Script, PublishableKey, ClientSecret        string
	ScriptSources, FrameSources, ConnectSources []string
}

// SetupHTML renders the hosted setup page in the customer's language (p.Locale). The script's texts
// are attributes of the page's body (data-text-*), so the script is the same for every language.
func SetupHTML(p SetupPage) ([]byte, error) {
	tr := locale.For(p.Locale)
	cards := make([]SetupOption, len(p.TestCards))
	for i, c := range p.TestCards {
		cards[i] = c
		cards[i].Outcome = label(tr, "doc.setup.outcome.", c.Token)
		if cards[i].Outcome == c.Token {
			cards[i].Outcome = c.Outcome
		}
	}
	view := map[string]any{
		"Tr": tr, "CSS": template.CSS(portalCSS), "JS": template.JS(setupJS), "Merchant": p.Merchant, "Status": p.Status,
		"PaymentMethod": p.PaymentMethod, "TestCards": cards, "Card": p.Card, "CompleteURL": p.CompleteURL, "BackURL": p.BackURL,
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
