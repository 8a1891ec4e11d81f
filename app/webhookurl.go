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
	"strings"
	"syscall"
	"time"

	"github.com/remit-billing/remit"
)

// Endpoint URL safety. A webhook endpoint makes Remit send requests to a URL the caller chose, so
// unless private addresses are allowed (REMIT_WEBHOOK_ALLOW_PRIVATE; by default allowed in sandbox,
// refused in production) an endpoint may not point at loopback, private, link-local or other
// non-public addresses. The rule is checked when the endpoint is created (a literal address, or
// every address the host name resolves to then) and again on every connection, in the dialer's
// Control function, on the address actually dialled — so a DNS answer that changes later cannot
// turn a delivery inward. Production endpoints must use https. Redirects are not followed and
// no proxy is used.

// blockedPrefixes are the address ranges an endpoint may not reach unless private addresses are
// allowed: "this network", private, shared (CGNAT), loopback, link-local, IETF protocol
// assignments, benchmarking, multicast and reserved ranges, and their IPv6 counterparts.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// blockedAddr reports whether ip is not a public unicast address.
func blockedAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if nat64.Contains(ip) { // NAT64 embeds an IPv4 address in the last four bytes
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

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
	host, name := endpointHost(u)
	blocked := false
	switch {
	case !name:
		blocked = host == "localhost" || strings.HasSuffix(host, ".localhost")
		if ip, err := netip.ParseAddr(host); err == nil {
			blocked = blockedAddr(ip)
		}
	default:
		// A name: refuse it when it resolves to a blocked address now. A name that does not
		// resolve yet is accepted; every connection is checked again when it is made.
		r, ok := ctx.Value(resolvedKey{host}).(resolvedHost)
		if !ok {
			r = wh.resolve(ctx, host)
		}
		if r.err == nil {
			blocked = slices.ContainsFunc(r.addrs, blockedAddr)
		}
	}
	if blocked {
		p.Body("url", "private_address", "url points at a loopback, private or link-local address, which endpoints may not reach here; use a public address (or set REMIT_WEBHOOK_ALLOW_PRIVATE=true for testing).")
	}
	return u.String()
}

// endpointHost is the URL's host, lower case without a trailing dot, and whether it is a name to
// resolve (not an address literal, not localhost).
func endpointHost(u *url.URL) (host string, name bool) {
	host = strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return host, false
	}
	_, err := netip.ParseAddr(host)
	return host, err != nil
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
// transaction holds the one writer every other write waits for. Nothing else changes: the check
// itself, and its rule, stay in checkEndpointURL.
func (wh *Webhooks) ResolveEndpointHost(ctx context.Context, raw string, env remit.Environment) context.Context {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" || wh.allowPrivate(env) {
		return ctx
	}
	host, name := endpointHost(u)
	if !name {
		return ctx
	}
	return context.WithValue(ctx, resolvedKey{host}, wh.resolve(ctx, host))
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
	if err != nil || blockedAddr(ip) {
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
		Transport:     t,
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
