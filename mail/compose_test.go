package mail

import (
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

func TestComposeEveryTypeInEveryLanguage(t *testing.T) {
	day := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	next := day.AddDate(0, 0, 3)
	for _, typ := range remit.EmailTypes {
		for _, loc := range remit.Locales {
			f := Facts{Type: typ, Locale: loc, Merchant: `Globex <script>alert(1)</script>`, Customer: "Ana & Co", InvoiceNumber: "INV-000042",
				Amount: 123456, Currency: "EUR", Date: day, NextAttempt: &next, ReceiptNumber: "RCPT-000007", CreditNoteNumber: "CN-000003",
				PaymentMethod: "Visa •••• 4242", Period: [2]time.Time{day, day.AddDate(0, 1, 0)}, ActionURL: "https://remit.example/pay?token=a&b=c",
				InvoiceURL: "https://remit.example/inv", HasAttachment: true}
			m, err := Compose(f)
			if err != nil {
				t.Fatalf("%s %s: %v", typ, loc, err)
			}
			for name, s := range map[string]string{"subject": m.Subject, "text": m.Text, "html": m.HTML} {
				if strings.Contains(s, "email.") || strings.Contains(s, "{") && name != "html" {
					t.Errorf("%s %s: %s shows a catalog key or placeholder: %s", typ, loc, name, s)
				}
			}
			if strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "Ana &amp; Co") || !strings.Contains(m.HTML, `lang="`+loc+`"`) {
				t.Errorf("%s %s: the HTML body does not escape what it shows:\n%s", typ, loc, m.HTML)
			}
			if !strings.Contains(m.Text, "Ana & Co") || strings.Contains(m.Subject, "\n") {
				t.Errorf("%s %s: text %q subject %q", typ, loc, m.Text, m.Subject)
			}
		}
	}
	if _, err := Compose(Facts{Type: "invoice.paid"}); err == nil {
		t.Error("an unknown type composed")
	}
}

// What each type says, in the words and formats of its language.
func TestComposeSays(t *testing.T) {
	day := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		f                Facts
		subject          string
		inText           []string
		notInTextWithout string
	}{
		{Facts{Type: remit.EmailInvoiceFinalized, Locale: "fr", Merchant: "Globex", Customer: "Ana", InvoiceNumber: "INV-1", Amount: 123456,
			Currency: "EUR", ActionURL: "https://x.example/inv"}, "Facture INV-1 de Globex", []string{"Bonjour Ana,", "1 234,56 €", "https://x.example/inv", "Payer cette facture"}, ""},
		{Facts{Type: remit.EmailPaymentFailed, Locale: "de", Merchant: "Globex", Customer: "Ana", InvoiceNumber: "INV-2", Amount: 500,
			Currency: "USD", Date: day, NextAttempt: &day, ActionURL: "https://x.example/setup"}, "Die Zahlung der Rechnung INV-2 von Globex ist fehlgeschlagen",
			[]string{"03.03.2026", "5,00 $", "https://x.example/setup"}, ""},
		{Facts{Type: remit.EmailPaymentSucceeded, Locale: "es", Merchant: "Globex", Customer: "Ana", InvoiceNumber: "INV-3", ReceiptNumber: "RCPT-9",
			Amount: 2500, Currency: "EUR", Date: day}, "Su recibo de Globex [n.º RCPT-9]", []string{"Hola, Ana:", "25,00 €", "3 mar 2026"}, ""},
		{Facts{Type: remit.EmailSubscriptionRenewalSoon, Locale: "en", Merchant: "Globex", Customer: "Ana", Amount: 9000, Currency: "USD", Date: day,
			Period: [2]time.Time{day, day.AddDate(0, 1, 0)}}, "Your subscription with Globex renews on Mar 3, 2026", []string{"$90.00", "Mar 3 – Apr 3, 2026"}, ""},
	} {
		m, err := Compose(c.f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(m.Text)
		if m.Subject != c.subject {
			t.Errorf("%s/%s subject %q, want %q", c.f.Type, c.f.Locale, m.Subject, c.subject)
		}
		for _, w := range c.inText {
			if !strings.Contains(text, w) {
				t.Errorf("%s/%s: %q is not in\n%s", c.f.Type, c.f.Locale, w, text)
			}
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, redacted string
		user, pass   string
		bad          bool
	}{
		{"smtp://u:p%40ss@mail.example:2525", "smtp://u@mail.example:2525", "u", "p@ss", false},
		{"smtp://mail.example", "smtp://mail.example:587", "", "", false},
		{"smtps://mail.example", "", "", "", true},
		{"smtp://u:secret@mail.example:99999", "", "", "", true},
		{"mail.example:25", "", "", "", true},
	} {
		cfg, err := ParseURL(c.in)
		if (err != nil) != c.bad {
			t.Fatalf("%s: err %v", c.in, err)
		}
		if err != nil {
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: the error repeats the password: %v", c.in, err)
			}
			continue
		}
		if cfg.Redacted() != c.redacted || cfg.Username != c.user || cfg.Password != c.pass {
			t.Errorf("%s: %+v %s", c.in, cfg, cfg.Redacted())
		}
	}
}
