package remit

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Where a webhook endpoint may point (docs/security.md, "Webhook targets"). An endpoint makes Remit
// send requests to a URL the caller chose, so in production (unless REMIT_WEBHOOK_ALLOW_PRIVATE)
// it may not reach loopback, private, link-local, unique-local or other non-public addresses, in
// any spelling. A URL's host is read as browsers (the WHATWG URL standard) and inet_aton read it:
// 2130706433, 0x7f000001, 0177.0.0.1, 127.1 and 0 are all IPv4 addresses, and an IPv6 address that
// carries an IPv4 one (IPv4-mapped, NAT64, 6to4) is judged by the address it carries. The engine
// resolves names and checks every address again when it connects (app/webhookurl.go).

// errNotAHost is HostAddress's answer for a host that ends in a number but is no IPv4 address.
var errNotAHost = errors.New("the host looks like an IPv4 address but is none")

// HostAddress reads host (a URL's host as url.URL.Hostname returns it: an IPv6 address without its
// brackets) as browsers do. It returns the address and true when host spells an address, false
// when it is a name to resolve, and an error when it is neither: a host whose last label is a
// number must be an IPv4 address of one to four parts, each decimal, octal (leading 0) or
// hexadecimal (0x), the last filling the bytes the others leave (256.0.0.1 and 1.2.3.09 are no
// hosts). A host that is not ASCII is first mapped as browsers map it (UTS 46: full-width digits
// and dots become ASCII).
func HostAddress(host string) (netip.Addr, bool, error) {
	if strings.Contains(host, ":") {
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return netip.Addr{}, false, err
		}
		return ip, true, nil
	}
	host, err := ASCIIHost(host)
	if err != nil {
		return netip.Addr{}, false, err
	}
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // a trailing dot
	}
	if !endsInNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	ip, ok := parseIPv4(parts)
	if !ok {
		return netip.Addr{}, false, errNotAHost
	}
	return ip, true, nil
}

// endsInNumber reports whether the last label of a host makes it an IPv4 address to browsers: all
// decimal digits, or 0x and hexadecimal digits.
func endsInNumber(last string) bool {
	if last == "" {
		return false
	}
	if allDigits(last) {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// parseIPv4 is the WHATWG IPv4 parser (inet_aton's forms): one to four numbers, every one but the
// last at most 255, the last filling the remaining bytes.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, part := range parts {
		n, ok := ipv4Number(part)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Number reads one part of an IPv4 host: 0x or 0X then hexadecimal, 0 then octal, else
// decimal ("0x" alone is 0). Values past 32 bits are refused.
func ipv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case s == "":
		return 0, false
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	if s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	return n, err == nil && n <= 1<<32-1
}

// ASCIIHost is host as browsers and Go's HTTP client look it up: lower case, and a host that is not
// ASCII mapped by UTS 46 (IDNA) to its ASCII form.
func ASCIIHost(host string) (string, error) {
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return idna.Lookup.ToASCII(host)
		}
	}
	return strings.ToLower(host), nil
}

// blockedPrefixes are the ranges an endpoint may not reach unless private addresses are allowed:
// "this network", private, shared (CGNAT), loopback, link-local, IETF protocol assignments,
// benchmarking, multicast and reserved IPv4 ranges; IPv6's unspecified, loopback and
// IPv4-compatible (::/96), IPv4-translated (SIIT), local-use NAT64, discard-only, Teredo,
// documentation, unique-local, link-local, site-local and multicast ranges.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32",
		"fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // the IPv4 address in the last four bytes
	sixToFour   = netip.MustParsePrefix("2002::/16")    // the IPv4 address in bytes 2 to 5
)

// BlockedAddress reports whether ip is not a public unicast address, judging an IPv6 address that
// carries an IPv4 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) by the
// address it carries. An IPv6 zone is ignored.
func BlockedAddress(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(ip):
			ip = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// LocalName reports whether host (lower case, without a trailing dot) is a name that always means
// this machine: localhost and the names under it.
func LocalName(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}
