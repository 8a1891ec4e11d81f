package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
)

// Endpoint URL safety (docs/security.md, "Webhook targets"). A webhook endpoint makes Remit send
// requests to a URL the caller chose, so unless private addresses are allowed
// (REMIT_WEBHOOK_ALLOW_PRIVATE; by default allowed in sandbox, refused in production) an endpoint
// may not point at loopback, private, link-local or other non-public addresses, in any spelling
// (the rule: remit.EndpointURL, remit.EndpointTarget, remit.BlockedAddress). It is checked when
// the endpoint is created (a literal address, or every address the host name resolves to then)
// and again on every connection, in the dialer's Control function, on the address actually
// dialled — so a DNS answer that changes later cannot turn a delivery inward. Production
// endpoints must use https. Redirects are not followed and no proxy is used.

// allowPrivate reports whether endpoints of env may reach private addresses.
func (wh *Webhooks) allowPrivate(env remit.Environment) bool {
	switch wh.Config.WebhookAllowPrivate {
	case "true":
		return true
	case "false":
		return false
	}
	return env == remit.Sandbox
}

// checkEndpointURL adds the problems of an endpoint URL to p and returns the normalized URL: its
// shape (remit.EndpointURL), then whether it points at an address endpoints may not reach.
func (wh *Webhooks) checkEndpointURL(ctx context.Context, raw string, env remit.Environment, p *remit.Problems) string {
	u, ok := remit.EndpointURL(raw, env, p)
	if !ok {
		return raw
	}
	if wh.allowPrivate(env) {
		return u.String()
	}
	name, blocked := remit.EndpointTarget(u)
	if name != "" {
		// A name: refuse it when it resolves to a blocked address now. A name that does not
		// resolve yet is accepted; every connection is checked again when it is made.
		r, ok := ctx.Value(resolvedKey{name}).(resolvedHost)
		if !ok {
			r = wh.resolve(ctx, name)
		}
		blocked = r.err == nil && slices.ContainsFunc(r.addrs, remit.BlockedAddress)
	}
	if blocked {
		p.Body("url", "private_address", "url points at a loopback, private or link-local address, which endpoints may not reach here; use a public address (or set REMIT_WEBHOOK_ALLOW_PRIVATE=true for testing).")
	}
	return u.String()
}

type resolvedKey struct{ host string }

type resolvedHost struct {
	addrs []netip.Addr
	err   error
}

// resolve looks host up, giving up after 2 seconds.
func (wh *Webhooks) resolve(ctx context.Context, host string) resolvedHost {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var r resolvedHost
	if wh.Config.LookupHost != nil {
		r.addrs, r.err = wh.Config.LookupHost(rctx, host)
	} else {
		r.addrs, r.err = net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	}
	return r
}

// ResolveEndpointHost resolves the host name of an endpoint URL that checkEndpointURL will need to
// look up, and returns ctx carrying the answer, which checkEndpointURL then uses. The request
// pipeline calls it before a write's transaction: a DNS lookup can take seconds, and on SQLite the
// transaction holds the one writer every other write waits for. A URL that is unusable (not http
// or https, no host) is looked up by neither. Nothing else changes: the check itself, and its
// rule, stay in checkEndpointURL.
func (wh *Webhooks) ResolveEndpointHost(ctx context.Context, raw string, env remit.Environment) context.Context {
	if wh.allowPrivate(env) {
		return ctx
	}
	var p remit.Problems
	u, ok := remit.EndpointURL(raw, env, &p)
	if !ok {
		return ctx
	}
	name, _ := remit.EndpointTarget(u)
	if name == "" {
		return ctx
	}
	return context.WithValue(ctx, resolvedKey{name}, wh.resolve(ctx, name))
}

// errBlockedAddress is returned by the guarded dialer.
type errBlockedAddress struct{ addr string }

func (e errBlockedAddress) Error() string {
	return fmt.Sprintf("the endpoint resolved to %s, a loopback, private or link-local address that endpoints may not reach", e.addr)
}

// guardControl is the dialer Control function that refuses blocked addresses at connect time.
func guardControl(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || remit.BlockedAddress(ip) {
		return errBlockedAddress{addr: host}
	}
	return nil
}

// newWebhookClient returns the HTTP client of deliveries; guarded clients refuse blocked addresses
// on every connection.
func newWebhookClient(guarded bool, conc int) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if guarded {
		d.Control = guardControl
	}
	t := &http.Transport{
		Proxy:                  nil, // a proxy would dial for us and bypass the address check
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           4 * conc,
		MaxIdleConnsPerHost:    conc,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport:     telemetry.Transport(t), // each attempt sends its span as traceparent
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// describeSendError turns a transport error into the message stored with the attempt.
func describeSendError(err error, timeout time.Duration) string {
	var blocked errBlockedAddress
	if errors.As(err, &blocked) {
		return blocked.Error() + "."
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("No answer within %s.", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return "The request failed: " + err.Error() + "."
}
