package soak

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Answer is one answer of the API.
type Answer struct {
	Status    int
	Body      []byte
	RequestID string
	Replayed  bool // Idempotent-Replayed: true
	// RetryAfter is the Retry-After header of a 429 (0 when absent).
	RetryAfter time.Duration
}

// Transport sends one request to a Remit server. path is a /v1 path without the scope parameters
// (the transport adds environment=sandbox and the merchant account), or a portal path with its
// own query string; body is JSON (nil for none); idempotencyKey "" sends none. An error means no
// answer was seen (the connection failed).
type Transport interface {
	Send(ctx context.Context, method, path string, body []byte, idempotencyKey string) (Answer, error)
}

// HTTPTransport talks to a server over HTTP as one API key in the sandbox of one merchant account.
type HTTPTransport struct {
	BaseURL           string // http://127.0.0.1:8080
	APIKey            string
	MerchantAccountID string // the sandbox merchant account (ma_...)
	Client            *http.Client
	// Observe, if set, sees every request and its answer (a test checks them against the
	// contract). It must be safe for concurrent use.
	Observe func(req *http.Request, body []byte, status int, header http.Header, answer []byte)
}

// Send implements Transport.
func (h *HTTPTransport) Send(ctx context.Context, method, path string, body []byte, key string) (Answer, error) {
	u := strings.TrimRight(h.BaseURL, "/") + path
	v1 := strings.HasPrefix(path, "/v1/")
	if v1 {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		u += sep + "environment=sandbox&merchantAccountId=" + url.QueryEscape(h.MerchantAccountID)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return Answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if v1 {
		req.Header.Set("Authorization", "Bearer "+h.APIKey)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	c := h.Client
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Answer{}, err
	}
	if h.Observe != nil {
		h.Observe(req, body, res.StatusCode, res.Header, b)
	}
	a := Answer{Status: res.StatusCode, Body: b, RequestID: res.Header.Get("Request-Id"),
		Replayed: res.Header.Get("Idempotent-Replayed") == "true"}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
		a.RetryAfter = time.Duration(s) * time.Second
	}
	return a, nil
}

// Exchange is one request and its answer, as a finding shows it.
type Exchange struct {
	At        time.Time // real time the request was sent
	Client    int
	Op        string
	Method    string
	Path      string
	Body      string // shortened
	Status    int    // 0: no answer
	Answer    string // shortened
	RequestID string
	Took      time.Duration
}

func (x Exchange) String() string {
	s := fmt.Sprintf("%s c%d %-14s %s %s", x.At.Format("15:04:05.000"), x.Client, x.Op, x.Method, x.Path)
	if x.Body != "" {
		s += " " + x.Body
	}
	return s + fmt.Sprintf("\n        → %d (%s, %s) %s", x.Status, x.Took.Round(time.Millisecond), x.RequestID, x.Answer)
}

// shorten keeps the first n bytes of b on one line.
func shorten(b []byte, n int) string {
	s := strings.ReplaceAll(string(b), "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ring keeps the last exchanges of one client (or one resource). Not safe for concurrent use.
type ring struct {
	buf  []Exchange
	next int
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]Exchange, n)} }

func (r *ring) add(x Exchange) {
	r.buf[r.next] = x
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

// list answers the exchanges oldest first.
func (r *ring) list() []Exchange {
	if !r.full {
		return append([]Exchange(nil), r.buf[:r.next]...)
	}
	return append(append([]Exchange(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}
