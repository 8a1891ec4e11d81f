package testkit

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net"
	"net/smtp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMailpit(t *testing.T) {
	start := time.Now()
	mp := StartMailpit(t)
	t.Logf("mailpit ready after %s (build of this process: %s)", time.Since(start).Round(time.Millisecond), mailpitBuild.took.Round(time.Millisecond))

	if got, want := mp.SMTPURL("billing@example.com", "p@ss word"), "smtp://billing%40example.com:p%40ss%20word@"+mp.SMTPAddr; got != want {
		t.Errorf("SMTPURL = %q, want %q", got, want)
	}
	host, _, _ := net.SplitHostPort(mp.SMTPAddr)
	auth := smtp.PlainAuth("", "remit", "secret", host) // any credentials are accepted
	send := func(to []string, msg string) error {
		return smtp.SendMail(mp.SMTPAddr, auth, "billing@remit.test", to, []byte(strings.ReplaceAll(msg, "\n", "\r\n")))
	}

	// A plain text message to one header recipient and one envelope-only (Bcc) recipient.
	if err := send([]string{"alice@example.com", "audit@remit.test"}, `From: Remit Billing <billing@remit.test>
To: Alice <alice@example.com>
Subject: Your receipt
Message-ID: <receipt-1@remit.test>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Thank you for your payment of 12.00 EUR.
`); err != nil {
		t.Fatalf("send receipt: %v", err)
	}

	// A message with a binary attachment.
	pdf := make([]byte, 3000)
	for i := range pdf {
		pdf[i] = byte(i * 7)
	}
	copy(pdf, "%PDF-1.4\n")
	var body bytes.Buffer
	fmt.Fprint(&body, `From: billing@remit.test
To: bob@example.com, carol@example.com
Subject: Invoice INV-0001
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: text/plain; charset=utf-8

Your invoice is attached.
--b1
Content-Type: application/pdf
Content-Disposition: attachment; filename="INV-0001.pdf"
Content-Transfer-Encoding: base64

`)
	enc := base64.StdEncoding.EncodeToString(pdf)
	for len(enc) > 76 {
		fmt.Fprintln(&body, enc[:76])
		enc = enc[76:]
	}
	fmt.Fprintf(&body, "%s\n--b1--\n", enc)
	if err := send([]string{"bob@example.com", "carol@example.com"}, body.String()); err != nil {
		t.Fatalf("send invoice: %v", err)
	}

	msgs := mp.WaitForMessages(t, 2, 10*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2: %+v", len(msgs), msgs)
	}
	bySubject := map[string]MailpitSummary{}
	for _, s := range msgs {
		bySubject[s.Subject] = s
	}

	receipt, ok := bySubject["Your receipt"]
	if !ok {
		t.Fatalf("no receipt among %+v", msgs)
	}
	if receipt.MessageID != "receipt-1@remit.test" || receipt.From.Address != "billing@remit.test" ||
		!slices.Equal(MailAddrs(receipt.To), []string{"alice@example.com"}) ||
		!slices.Equal(MailAddrs(receipt.Bcc), []string{"audit@remit.test"}) || receipt.Attachments != 0 {
		t.Errorf("receipt summary = %+v", receipt)
	}
	full := mp.Message(t, receipt.ID)
	if full.Subject != "Your receipt" || full.From.Name != "Remit Billing" ||
		strings.TrimSpace(full.Text) != "Thank you for your payment of 12.00 EUR." || len(full.Attachments) != 0 {
		t.Errorf("receipt = %+v", full)
	}
	if h := mp.Headers(t, receipt.ID); !slices.Equal(h["Message-Id"], []string{"<receipt-1@remit.test>"}) {
		t.Errorf("receipt headers = %v", h)
	}

	invoice, ok := bySubject["Invoice INV-0001"]
	if !ok {
		t.Fatalf("no invoice among %+v", msgs)
	}
	if !slices.Equal(MailAddrs(invoice.To), []string{"bob@example.com", "carol@example.com"}) || invoice.Attachments != 1 {
		t.Errorf("invoice summary = %+v", invoice)
	}
	full = mp.Message(t, invoice.ID)
	if strings.TrimSpace(full.Text) != "Your invoice is attached." || len(full.Attachments) != 1 {
		t.Fatalf("invoice = %+v", full)
	}
	att := full.Attachments[0]
	if att.FileName != "INV-0001.pdf" || att.ContentType != "application/pdf" || att.Size != uint64(len(pdf)) {
		t.Errorf("attachment = %+v", att)
	}
	if got := mp.Attachment(t, invoice.ID, att.PartID); !bytes.Equal(got, pdf) {
		t.Errorf("attachment content: got %d bytes, want the %d sent", len(got), len(pdf))
	}

	// An outage: the SMTP port refuses until mailpit restarts on the same ports and database.
	smtpAddr, httpURL := mp.SMTPAddr, mp.HTTPURL
	mp.Stop()
	if c, err := net.DialTimeout("tcp", mp.SMTPAddr, time.Second); err == nil {
		c.Close()
		t.Fatal("SMTP port still accepts connections after Stop")
	}
	if err := send([]string{"dave@example.com"}, "Subject: lost\n\nlost\n"); err == nil {
		t.Fatal("sending during the outage succeeded")
	}
	mp.Stop() // stopping twice does nothing
	mp.Restart()
	if mp.SMTPAddr != smtpAddr || mp.HTTPURL != httpURL {
		t.Fatalf("restarted on %s / %s, want %s / %s", mp.SMTPAddr, mp.HTTPURL, smtpAddr, httpURL)
	}
	if err := send([]string{"dave@example.com"}, "From: billing@remit.test\nTo: dave@example.com\nSubject: After the outage\n\nback\n"); err != nil {
		t.Fatalf("send after restart: %v", err)
	}
	msgs = mp.WaitForMessages(t, 3, 10*time.Second)
	var subjects []string
	for _, s := range msgs {
		subjects = append(subjects, s.Subject)
	}
	slices.Sort(subjects)
	if want := []string{"After the outage", "Invoice INV-0001", "Your receipt"}; !slices.Equal(subjects, want) {
		t.Fatalf("after restart: subjects %q, want %q", subjects, want)
	}
	if got := mp.Message(t, "latest"); got.Subject != "After the outage" {
		t.Errorf("latest = %q", got.Subject)
	}

	mp.DeleteAll(t)
	if msgs := mp.Messages(t); len(msgs) != 0 {
		t.Errorf("after DeleteAll: %d messages", len(msgs))
	}
}

// TestMailpitPaging checks that Messages reads past mailpit's page size, oldest first.
func TestMailpitPaging(t *testing.T) {
	mp := StartMailpit(t)
	c, err := smtp.Dial(mp.SMTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 520 // more than one page of 500
	for i := range n {
		if err := c.Mail("billing@remit.test"); err != nil {
			t.Fatal(err)
		}
		if err := c.Rcpt("x@example.com"); err != nil {
			t.Fatal(err)
		}
		w, err := c.Data()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "To: x@example.com\r\nSubject: %d\r\n\r\n.\r\n", i)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	msgs := mp.WaitForMessages(t, n, 30*time.Second)
	if len(msgs) != n {
		t.Fatalf("got %d messages, want %d", len(msgs), n)
	}
	seen := map[string]bool{}
	for _, s := range msgs {
		seen[s.Subject] = true
	}
	if len(seen) != n {
		t.Fatalf("got %d distinct messages, want %d", len(seen), n)
	}
	if msgs[0].Created.After(msgs[n-1].Created) {
		t.Errorf("not oldest first: first %s, last %s", msgs[0].Created, msgs[n-1].Created)
	}
}
