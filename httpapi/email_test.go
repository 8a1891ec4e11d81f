package httpapi_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// mailKit makes customers with an e-mail address and a language, and reads the e-mail log.
type mailKit struct{ payKit }

func newMailKit(t *testing.T, e *testkit.Env) mailKit { return mailKit{newPayKit(t, e)} }

// customer creates customer id writing to email ("" for none) in locale ("" for the default), with
// billing account ba-id collected by collection, paying with token ("" for none).
func (k mailKit) customer(id, email, locale, collection, token string) {
	k.t.Helper()
	body := map[string]any{"customerId": id, "name": "Customer " + id}
	if email != "" {
		body["email"] = email
	}
	if locale != "" {
		body["preferredLocale"] = locale
	}
	c := k.e.Must(201, "POST", "/v1/customers", body).Data()
	want := locale
	if want == "" {
		want = "en"
	}
	if c["preferredLocale"] != want {
		k.t.Fatalf("preferredLocale %v, want %s", c["preferredLocale"], want)
	}
	k.e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD",
		"collectionMethod": collection})
	if token != "" {
		k.attach(id, token)
	}
}

// emails lists the e-mail log with query (customerId=..., invoiceId=..., type=...).
func (k mailKit) emails(query string) []map[string]any {
	k.t.Helper()
	d := k.e.Must(200, "GET", "/v1/emails?"+query, nil).Data()
	var out []map[string]any
	for _, it := range d["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// only is the one message of the query, fetched with its bodies.
func (k mailKit) only(query string) map[string]any {
	k.t.Helper()
	l := k.emails(query)
	if len(l) != 1 {
		k.t.Fatalf("%s: %d messages, want 1: %v", query, len(l), l)
	}
	return k.e.Must(200, "GET", "/v1/emails/"+l[0]["emailId"].(string), nil).Data()
}

// Without REMIT_SMTP_URL every message is recorded skipped, with what would have gone out: who
// gets which message, in which language, with which links.
func TestEmailLogWithoutSMTP(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMailKit(t, e)
		k.customer("fr", "ap@client.example", "fr", "send_invoice", "")
		inv := k.invoice("fr", 2000)
		id := inv["invoiceId"].(string)
		m := k.only("invoiceId=" + id)
		hosted := strings.TrimSuffix(strings.Split(inv["paymentUrl"].(string), "?")[0], "/pay")
		if m["type"] != "invoice.finalized" || m["status"] != "skipped" || m["locale"] != "fr" || m["to"] != "ap@client.example" ||
			!strings.Contains(m["statusReason"].(string), "REMIT_SMTP_URL") || !strings.HasPrefix(m["subject"].(string), "Facture "+inv["number"].(string)) ||
			m["attachment"].(map[string]any)["fileName"] != inv["number"].(string)+".pdf" || m["sentAt"] != nil {
			t.Fatalf("invoice.finalized message: %v", m)
		}
		if text := m["textBody"].(string); !strings.Contains(text, hosted) || !strings.Contains(text, "Bonjour Customer fr,") ||
			!strings.Contains(nbsp(text), "20,00 $US") || !strings.Contains(m["htmlBody"].(string), `lang="fr"`) {
			t.Fatalf("bodies:\n%s\n%s", text, m["htmlBody"])
		}

		// charge_automatically: no invoice mail, the receipt instead; a customer without an address
		// gets none.
		k.customer("auto", "", "", "charge_automatically", "pm_card_visa")
		paid := k.invoice("auto", 1500)
		m = k.only("customerId=auto")
		if m["type"] != "payment.succeeded" || m["status"] != "skipped" || m["to"] != nil || m["statusReason"] != "The customer has no e-mail address." ||
			m["invoiceId"] != paid["invoiceId"] || m["attachment"].(map[string]any)["kind"] != "receipt" {
			t.Fatalf("receipt message: %v", m)
		}

		// A credit note is announced, its PDF attached.
		e.Must(200, "POST", "/v1/credit-notes", creditNote(paid["invoiceId"].(string), cnLine("", "credit", 500)))
		if m := k.only("customerId=auto&type=credit_note.issued"); m["attachment"].(map[string]any)["kind"] != "credit_note" {
			t.Fatalf("credit note message: %v", m)
		}
		if got := len(k.emails("type=payment.failed")); got != 0 {
			t.Fatalf("%d payment.failed messages before any failure", got)
		}
		e.Must(404, "GET", "/v1/emails/em_nope", nil)
		wantFields(t, e.Do("GET", "/v1/emails?type=invoice.paid", nil), "query:type:invalid_enum")
		wantFields(t, e.Do("POST", "/v1/customers", map[string]any{"preferredLocale": "it", "email": "nope"}),
			"body:name:required", "body:preferredLocale:invalid_enum", "body:email:invalid_format")
	})
}

// A declined charge is mailed with a link to a setup session: the customer saves another card there
// and the open invoice is charged at once. A charge that needs authentication is mailed with the
// authentication link.
func TestEmailPaymentFailedAndActionRequired(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMailKit(t, e)
		k.customer("de", "buchhaltung@kunde.example", "de", "charge_automatically", "pm_card_chargeDeclined")
		inv := k.invoice("de", 4200)
		id := inv["invoiceId"].(string)
		m := k.only("invoiceId=" + id + "&type=payment.failed")
		text := m["textBody"].(string)
		if m["locale"] != "de" || !strings.Contains(m["subject"].(string), "fehlgeschlagen") || !strings.Contains(nbsp(text), "42,00 $") {
			t.Fatalf("payment.failed message: %v\n%s", m, text)
		}
		retry := ts(t, inv["nextPaymentAttemptAt"]).UTC()
		if !strings.Contains(text, retry.Format("02.01.2006")) {
			t.Fatalf("the next retry (%s) is not in:\n%s", retry.Format("02.01.2006"), text)
		}
		link := linkWith(t, text, "/customer-portal/setup-sessions/")
		if page := e.Do("GET", link, nil, testkit.APIKey("")); page.Status != 200 || !bytes.Contains(page.Body, []byte("<html")) {
			t.Fatalf("the setup link answers %d", page.Status)
		}
		e.Must(200, "PUT", link+"&paymentMethod=pm_card_visa", nil, testkit.APIKey(""))
		if got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data(); got["status"] != "paid" {
			t.Fatalf("after a new card through the e-mailed link: %v", got["status"])
		}

		k.customer("es", "pagos@cliente.example", "es", "charge_automatically", "pm_card_threeDSecureRequired")
		inv = k.invoice("es", 990)
		m = k.only("invoiceId=" + inv["invoiceId"].(string) + "&type=payment.action_required")
		ps := k.payments(inv["invoiceId"].(string), e.Tenant.Sandbox)
		if len(ps) != 1 || ps[0].NextAction == nil || !strings.Contains(m["textBody"].(string), ps[0].NextAction.URL) || m["locale"] != "es" {
			t.Fatalf("payment.action_required message: %v (payments %+v)", m, ps)
		}
	})
}

// A monthly subscription's renewal is announced seven days before, on the merchant clock.
func TestEmailRenewalUpcoming(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_visa")
		sub, _ := k.subscribe("c", line("plan"))
		end := ts(t, sub["currentPeriodEnd"])
		advanceTo(e, end.Add(-7*24*time.Hour-time.Minute))
		mk := mailKit{k.payKit}
		if n := len(mk.emails("customerId=c&type=subscription.renewal_upcoming")); n != 0 {
			t.Fatalf("%d notices before the notice time", n)
		}
		advanceTo(e, end.Add(-7*24*time.Hour+time.Minute))
		m := mk.only("customerId=c&type=subscription.renewal_upcoming")
		if !strings.Contains(m["textBody"].(string), end.UTC().Format("Jan 2, 2006")) || m["invoiceId"] != nil {
			t.Fatalf("renewal notice: %v\n%s", m, m["textBody"])
		}
		// A subscription set to cancel at the period's end is not renewed: no notice for it.
		k.customer("d", "pm_card_visa")
		sub, _ = k.subscribe("d", line("plan"))
		e.Must(200, "POST", "/v1/subscriptions/"+sub["subscriptionId"].(string)+"/cancel", map[string]any{"at": "period_end"})
		advanceTo(e, ts(t, sub["currentPeriodEnd"]).Add(-24*time.Hour))
		if n := len(mk.emails("customerId=d&type=subscription.renewal_upcoming")); n != 0 {
			t.Fatalf("%d notices for a subscription ending at its period's end", n)
		}
	})
}

// linkWith is the URL in text whose path contains part, as a request URI.
func linkWith(t *testing.T, text, part string) string {
	t.Helper()
	for _, f := range strings.Fields(text) {
		if strings.Contains(f, part) {
			u, err := url.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			return u.RequestURI()
		}
	}
	t.Fatalf("no link with %s in:\n%s", part, text)
	return ""
}

// nbsp replaces the no-break spaces CLDR formats use with plain ones.
func nbsp(s string) string { return strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(s) }

// smtpEnv starts mailpit (with extra flags) and a server that mails through it.
func smtpEnv(t *testing.T, s testkit.Store, dbURL string, mp *testkit.Mailpit, retry string) *testkit.Env {
	t.Helper()
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.SMTPURL, cfg.EmailFrom, cfg.EmailRetry = mp.SMTPURL("remit", "s3cret-smtp-pass"), "billing@remit.example", retry
	e := testkit.StartOn(t, s, dbURL, testkit.Options{Config: &cfg})
	e.WatchSecret("the SMTP password", "s3cret-smtp-pass")
	return e
}

// sendAll runs the e-mail worker until nothing is queued and due, or fails the test at the deadline.
func sendAll(t *testing.T, e *testkit.Env, deadline time.Duration) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		if _, err := e.App.Emails.SendDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := e.App.DB.Read(context.Background()).NextEmailDue(context.Background()); !ok {
			return
		}
		if time.Now().After(end) {
			t.Fatal("messages are still queued at the deadline")
		}
		time.Sleep(5 * time.Millisecond) // the retry schedule of these tests is a few milliseconds
	}
}

// Through a real SMTP server: recipients, subject, both bodies as recorded, and the attached PDFs
// byte for byte the PDF routes' answers. A recipient the server refuses for good is failed with
// its answer; nothing else is held up.
func TestEmailsThroughMailpit(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel() // a mailpit and a store of its own
			mp := testkit.StartMailpit(t, "--smtp-allowed-recipients", `\.example$`)
			e := smtpEnv(t, s, testkit.MigratedStoreURL(t, s), mp, "10ms,10ms")
			k := newMailKit(t, e)
			k.customer("fr", "ap@client.example", "fr", "send_invoice", "")
			k.customer("auto", "ops@auto.example", "", "charge_automatically", "pm_card_visa")
			k.customer("refused", "someone@refused.test", "", "send_invoice", "")
			inv := k.invoice("fr", 2000)
			paid := k.invoice("auto", 1500)
			e.Must(200, "POST", "/v1/credit-notes", creditNote(paid["invoiceId"].(string), cnLine("", "credit", 500)))
			k.invoice("refused", 100)
			sendAll(t, e, 30*time.Second)
			msgs := mp.WaitForMessages(t, 3, 10*time.Second)
			if len(msgs) != 3 {
				t.Fatalf("%d messages delivered, want 3", len(msgs))
			}
			receipt := k.receipts("invoiceId=" + paid["invoiceId"].(string))[0]
			checks := map[string]string{
				"invoiceId=" + inv["invoiceId"].(string):  "/v1/invoices/" + inv["invoiceId"].(string) + "/pdf",
				"customerId=auto&type=payment.succeeded":  "/v1/payment-receipts/" + receipt["receiptId"].(string) + "/pdf",
				"customerId=auto&type=credit_note.issued": "",
			}
			for q, pdfPath := range checks {
				rec := k.only(q)
				if pdfPath == "" {
					pdfPath = "/v1/credit-notes/" + rec["attachment"].(map[string]any)["documentId"].(string) + "/pdf"
				}
				checkDelivered(t, e, mp, rec, pdfPath)
			}
			ref := k.only("customerId=refused")
			if ref["status"] != "failed" || num(ref["attempts"]) != 1 || !strings.Contains(ref["statusReason"].(string), "550") {
				t.Fatalf("refused recipient: %v", ref)
			}
		})
	}
}

// checkDelivered finds the recorded message rec in mailpit by its Message-ID and compares
// everything the customer receives with what the log and the PDF route say.
func checkDelivered(t *testing.T, e *testkit.Env, mp *testkit.Mailpit, rec map[string]any, pdfPath string) {
	t.Helper()
	if rec["status"] != "sent" || rec["sentAt"] == nil || num(rec["attempts"]) != 1 || rec["statusReason"] != nil {
		t.Fatalf("%s: %v", rec["type"], rec)
	}
	var id string
	for _, s := range mp.Messages(t) {
		if s.MessageID == rec["emailId"].(string)+"@remit" {
			id = s.ID
		}
	}
	if id == "" {
		t.Fatalf("%s: no message with Message-ID %s@remit", rec["type"], rec["emailId"])
	}
	got := mp.Message(t, id)
	crlf := strings.NewReplacer("\r\n", "\n")
	if got.Subject != rec["subject"] || len(got.To) != 1 || got.To[0].Address != rec["to"] || got.From.Address != "billing@remit.example" ||
		got.From.Name != "Acme Test" && got.From.Name == "" {
		t.Fatalf("%s: headers %+v, record %v", rec["type"], got, rec)
	}
	if strings.TrimSpace(crlf.Replace(got.Text)) != strings.TrimSpace(rec["textBody"].(string)) ||
		strings.TrimSpace(crlf.Replace(got.HTML)) != strings.TrimSpace(rec["htmlBody"].(string)) {
		t.Fatalf("%s: bodies differ\n--- sent text\n%s\n--- recorded\n%s", rec["type"], got.Text, rec["textBody"])
	}
	if len(got.Attachments) != 1 || got.Attachments[0].ContentType != "application/pdf" ||
		got.Attachments[0].FileName != rec["attachment"].(map[string]any)["fileName"] {
		t.Fatalf("%s: attachments %+v", rec["type"], got.Attachments)
	}
	want := e.Must(200, "GET", pdfPath, nil).Body
	if b := mp.Attachment(t, id, got.Attachments[0].PartID); !bytes.Equal(b, want) {
		t.Fatalf("%s: the attachment (%d bytes) is not the PDF route's answer (%d bytes)", rec["type"], len(b), len(want))
	}
}

// An SMTP outage: messages stay queued with the error, then each is delivered once when the server
// is back. A worker that claimed messages and died before sending leaves them to the next one
// when its lease ends; two servers sending at once send each message once.
func TestEmailOutageAndCrash(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel() // a mailpit and a store of its own
			mp := testkit.StartMailpit(t)
			dbURL := testkit.MigratedStoreURL(t, s)
			e := smtpEnv(t, s, dbURL, mp, "20ms,20ms,20ms,20ms,20ms,20ms,20ms,20ms")
			k := newMailKit(t, e)
			k.customer("c", "ap@client.example", "", "send_invoice", "")
			mp.Stop()
			for range 3 {
				k.invoice("c", 100)
			}
			if _, err := e.App.Emails.SendDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, m := range k.emails("customerId=c") {
				if m["status"] != "queued" || num(m["attempts"]) != 1 || m["statusReason"] == nil {
					t.Fatalf("during the outage: %v", m)
				}
			}
			mp.Restart()
			sendAll(t, e, 30*time.Second)
			if got := mp.WaitForMessages(t, 3, 10*time.Second); len(got) != 3 {
				t.Fatalf("%d messages after the outage, want 3", len(got))
			}

			// A worker claims two messages and dies: after its lease another sends them, once.
			for range 2 {
				k.invoice("c", 100)
			}
			err := e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
				now := time.Now()
				due, err := tx.ClaimDueEmails(ctx, now, now.Add(time.Hour), "ewk_dead", 10)
				if len(due) != 2 {
					t.Errorf("claimed %d", len(due))
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := e.App.Emails.SendDue(context.Background()); n != 0 {
				t.Fatalf("sent %d messages another worker holds", n)
			}
			// The dead worker's lease runs out (its end, next_attempt_at, is moved to now rather
			// than waited for: a short lease would end before the check above on a loaded host).
			if _, err := e.App.DB.SQL().ExecContext(context.Background(), `UPDATE emails SET next_attempt_at = $1 WHERE lease_owner = 'ewk_dead'`,
				time.Now().UnixMicro()); err != nil {
				t.Fatal(err)
			}
			sendAll(t, e, 30*time.Second)

			// Two servers on one store send a backlog at once.
			other := smtpEnv(t, s, dbURL, mp, "20ms")
			for range 20 {
				k.invoice("c", 100)
			}
			var wg sync.WaitGroup
			for _, env := range []*testkit.Env{e, other} {
				wg.Add(1)
				go func() { defer wg.Done(); _, _ = env.App.Emails.SendDue(context.Background()) }()
			}
			wg.Wait()
			sendAll(t, e, 30*time.Second)
			msgs := mp.WaitForMessages(t, 25, 10*time.Second)
			seen := map[string]int{}
			for _, m := range msgs {
				seen[m.MessageID]++
			}
			var ids []string
			for _, m := range k.emails("customerId=c&limit=100") {
				if m["status"] != "sent" {
					t.Errorf("%s: %v", m["emailId"], m["status"])
				}
				ids = append(ids, m["emailId"].(string)+"@remit")
			}
			if len(msgs) != 25 || len(seen) != 25 || len(ids) != 25 {
				t.Fatalf("%d messages delivered (%d distinct) for %d recorded", len(msgs), len(seen), len(ids))
			}
			for _, id := range ids {
				if seen[id] != 1 {
					t.Errorf("%s delivered %d times", id, seen[id])
				}
			}
		})
	}
}

// While the API is busy the worker yields: a round that finds it busy before a message leaves the
// messages it did not try queued, due at once, their attempt not counted; once the API is idle they
// are sent, each on its first attempt. (app.TestForegroundBusy tests when the API counts as busy.)
func TestEmailWorkerYieldsToTheAPI(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel() // a mailpit and a store of its own
			mp := testkit.StartMailpit(t)
			e := smtpEnv(t, s, testkit.MigratedStoreURL(t, s), mp, "20ms")
			k := newMailKit(t, e)
			k.customer("c", "ap@client.example", "", "send_invoice", "")
			for range 3 {
				k.invoice("c", 100)
			}
			at := time.Now()
			fg := app.NewForeground(func() time.Time { return at })
			e.App.Foreground = fg
			serving := fg.Serving() // a request in flight for the whole of the last window: busy
			at = at.Add(300 * time.Millisecond)
			if n, err := e.App.Emails.SendRound(context.Background(), 10, true); err != nil || n != 3 {
				t.Fatalf("round while busy: %d claimed, %v", n, err)
			}
			for _, m := range k.emails("customerId=c") {
				if m["status"] != "queued" || num(m["attempts"]) != 0 || m["statusReason"] != nil {
					t.Fatalf("while the API is busy: %v", m)
				}
			}
			if got := mp.Messages(t); len(got) != 0 {
				t.Fatalf("%d messages sent while the API was busy", len(got))
			}

			serving()
			at = at.Add(600 * time.Millisecond) // a whole idle window
			if n, err := e.App.Emails.SendRound(context.Background(), 10, true); err != nil || n != 3 {
				t.Fatalf("round once idle: %d claimed, %v", n, err)
			}
			for _, m := range k.emails("customerId=c") {
				if m["status"] != "sent" || num(m["attempts"]) != 1 {
					t.Fatalf("once the API is idle: %v", m)
				}
			}
			if got := mp.WaitForMessages(t, 3, 10*time.Second); len(got) != 3 {
				t.Fatalf("%d messages delivered, want 3", len(got))
			}
		})
	}
}
