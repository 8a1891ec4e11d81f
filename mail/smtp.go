package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Outgoing is a recorded message ready to send.
type Outgoing struct {
	MessageID string // "em_…@remit" (no angle brackets): the same on every attempt, so mail stores can tell a resend
	From      string // the address of REMIT_EMAIL_FROM
	FromName  string // the merchant's display name
	To        string
	Subject   string
	Text      string
	HTML      string
	Date      time.Time
	FileName  string // the attached PDF, if any
	File      []byte
}

// Result is what became of one message: nil Err when the server accepted it; otherwise Temporary
// says whether another attempt may succeed (a 4xx answer or a connection problem) or not (a 5xx
// refusal: the address or the message is refused for good).
type Result struct {
	Err       error
	Temporary bool
}

// Sender sends messages, reporting per message. The e-mail worker (package app) sends through it.
type Sender interface {
	Send(ctx context.Context, msgs []Outgoing) []Result
}

// Config is an SMTP server from REMIT_SMTP_URL: smtp://user:pass@host:port (port 587 when
// omitted; STARTTLS when the server offers it; credentials optional).
type Config struct {
	Host     string
	Port     int
	Username string
	Password string
	Timeout  time.Duration // per connection step (30s when zero)
}

// ParseURL reads REMIT_SMTP_URL. Errors never repeat the password.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" || u.Hostname() == "" {
		return Config{}, errors.New("REMIT_SMTP_URL must look like smtp://user:pass@host:port")
	}
	c := Config{Host: u.Hostname(), Port: 587}
	if p := u.Port(); p != "" {
		if c.Port, err = strconv.Atoi(p); err != nil || c.Port < 1 || c.Port > 65535 {
			return Config{}, errors.New("REMIT_SMTP_URL has an invalid port")
		}
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	return c, nil
}

// Redacted is the server as logs may show it: no password.
func (c Config) Redacted() string {
	u := url.URL{Scheme: "smtp", Host: net.JoinHostPort(c.Host, strconv.Itoa(c.Port))}
	if c.Username != "" {
		u.User = url.User(c.Username)
	}
	return u.String()
}

// SMTP sends through one SMTP server, one connection per Send call (the worker sends a batch per
// call), with STARTTLS when offered. Credentials are sent over TLS only, except to a loopback server.
type SMTP struct{ cfg Config }

// NewSMTP returns a sender for cfg.
func NewSMTP(cfg Config) *SMTP {
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &SMTP{cfg: cfg}
}

func (s *SMTP) client() (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTLSPolicy(gomail.TLSOpportunistic), gomail.WithTimeout(s.cfg.Timeout),
		gomail.WithoutNoop()} // the connection is fresh: a NOOP before each message is a round trip for nothing
	if s.cfg.Username != "" {
		// Credentials go only over TLS (the strongest mechanism both sides know), except to a
		// server on this machine, which may take PLAIN without TLS (as net/smtp.PlainAuth allows).
		auth := gomail.SMTPAuthAutoDiscover
		if loopback(s.cfg.Host) {
			auth = gomail.SMTPAuthPlain
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	return gomail.NewClient(s.cfg.Host, opts...)
}

// Send delivers msgs over one connection. A connection that cannot be made or authenticated fails
// every message temporarily.
func (s *SMTP) Send(ctx context.Context, msgs []Outgoing) []Result {
	out := make([]Result, len(msgs))
	built := make([]*gomail.Msg, 0, len(msgs))
	index := make([]int, 0, len(msgs))
	for i, o := range msgs {
		m, err := build(o)
		if err != nil {
			out[i] = Result{Err: err}
			continue
		}
		built, index = append(built, m), append(index, i)
	}
	if len(built) == 0 {
		return out
	}
	c, err := s.client()
	if err == nil {
		err = c.DialAndSendWithContext(ctx, built...)
	}
	for j, m := range built {
		i := index[j]
		switch {
		case m.HasSendError():
			out[i] = Result{Err: m.SendError(), Temporary: !refused(m.SendError())}
		case err != nil && !m.IsDelivered():
			out[i] = Result{Err: fmt.Errorf("SMTP server %s: %w", s.cfg.Redacted(), err), Temporary: !refused(err)}
		}
	}
	return out
}

// loopback reports whether host is this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refused reports whether the server refused for good: a 5xx answer. A connection that could not
// be made or broke, or a 4xx answer, may work on another attempt.
func refused(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) {
		return se.ErrorCode() >= 500 && se.ErrorCode() < 600
	}
	return false
}

// build turns an outgoing message into a MIME message: text and HTML alternatives, the PDF
// attached, the stable Message-ID.
func build(o Outgoing) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.FromFormat(o.FromName, o.From); err != nil {
		return nil, fmt.Errorf("the sender address %q is invalid: %w", o.From, err)
	}
	if err := m.To(o.To); err != nil {
		return nil, fmt.Errorf("the recipient address is invalid: %w", err)
	}
	m.Subject(o.Subject)
	m.SetMessageIDWithValue(o.MessageID)
	m.SetDateWithValue(o.Date)
	m.SetBodyString(gomail.TypeTextPlain, o.Text)
	m.AddAlternativeString(gomail.TypeTextHTML, o.HTML)
	if o.FileName != "" {
		m.AttachReadSeeker(o.FileName, bytes.NewReader(o.File), gomail.WithFileContentType(gomail.ContentType("application/pdf")))
	}
	return m, nil
}
