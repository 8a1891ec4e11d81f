package remit

import (
	"net/netip"
	"net/url"
	"testing"
)

// TestWebhookTargetSpellings: every spelling of a loopback, private, link-local, unique-local,
// CGNAT, 6to4 or NAT64 address that browsers and inet_aton read as one is refused as a webhook
// target, and public addresses are accepted in their usual spelling (EndpointURL, EndpointTarget).
func TestWebhookTargetSpellings(t *testing.T) {
	blocked := map[string]string{ // URL → the address it spells
		"https://127.0.0.1/":                "127.0.0.1",
		"https://2130706433/":               "127.0.0.1",
		"https://0x7f000001/":               "127.0.0.1",
		"https://0X7F000001/":               "127.0.0.1",
		"https://0177.0.0.1/":               "127.0.0.1",
		"https://0x7f.0.0.1/":               "127.0.0.1",
		"https://0x7f.1/":                   "127.0.0.1",
		"https://127.1/":                    "127.0.0.1",
		"https://127.0.1/":                  "127.0.0.1",
		"https://127.0.0.1./":               "127.0.0.1",
		"https://017700000001/":             "127.0.0.1",
		"https://127.0.0.1:8443/hook":       "127.0.0.1",
		"https://0/":                        "0.0.0.0",
		"https://0.0.0.0/":                  "0.0.0.0",
		"https://0x/":                       "0.0.0.0",
		"https://10.0.0.1/":                 "10.0.0.1",
		"https://167772161/":                "10.0.0.1",
		"https://012.0.0.1/":                "10.0.0.1",
		"https://172.16.0.1/":               "172.16.0.1",
		"https://172.31.255.255/":           "172.31.255.255",
		"https://192.168.1.10/":             "192.168.1.10",
		"https://0xc0.0xa8.1.10/":           "192.168.1.10",
		"https://169.254.169.254/":          "169.254.169.254",
		"https://2852039166/":               "169.254.169.254",
		"https://100.64.0.1/":               "100.64.0.1",
		"https://100.127.255.254/":          "100.127.255.254",
		"https://224.0.0.1/":                "224.0.0.1",
		"https://255.255.255.255/":          "255.255.255.255",
		"https://１２７.０.０.１/":                "127.0.0.1", // full-width, as a browser maps it
		"https://127。0。0。1/":                "127.0.0.1", // ideographic full stops
		"https://[::1]/":                    "::1",
		"https://[0:0:0:0:0:0:0:1]/":        "::1",
		"https://[::]/":                     "::",
		"https://[::ffff:127.0.0.1]/":       "::ffff:127.0.0.1",
		"https://[::ffff:7f00:1]/":          "::ffff:127.0.0.1",
		"https://[::ffff:a00:1]/":           "::ffff:10.0.0.1",
		"https://[::ffff:169.254.169.254]/": "::ffff:169.254.169.254",
		"https://[::127.0.0.1]/":            "::7f00:1",        // IPv4-compatible (deprecated)
		"https://[::ffff:0:7f00:1]/":        "::ffff:0:7f00:1", // IPv4-translated (SIIT)
		"https://[64:ff9b::7f00:1]/":        "64:ff9b::7f00:1",
		"https://[64:ff9b::127.0.0.1]/":     "64:ff9b::7f00:1",
		"https://[64:ff9b::a00:1]/":         "64:ff9b::a00:1",
		"https://[64:ff9b:1::1]/":           "64:ff9b:1::1", // local-use NAT64
		"https://[2002:7f00:1::]/":          "2002:7f00:1::",
		"https://[2002:7f00:0001::1]/":      "2002:7f00:1::1",
		"https://[2002:a00:1::]/":           "2002:a00:1::",
		"https://[2002:c0a8:10a::]/":        "2002:c0a8:10a::",
		"https://[2002:a9fe:a9fe::]/":       "2002:a9fe:a9fe::",
		"https://[2002::]/":                 "2002::", // 6to4 of 0.0.0.0
		"https://[fe80::1]/":                "fe80::1",
		"https://[fe80::1%25eth0]/":         "fe80::1%eth0",
		"https://[fc00::1]/":                "fc00::1",
		"https://[fd00::1]/":                "fd00::1",
		"https://[fd12:3456::1]/":           "fd12:3456::1",
		"https://[fec0::1]/":                "fec0::1",
		"https://[ff02::1]/":                "ff02::1",
		"https://[2001::1]/":                "2001::1", // Teredo
		"https://[2001:db8::1]/":            "2001:db8::1",
		"https://[100::1]/":                 "100::1",
	}
	for raw, want := range blocked {
		if u, name, refused := target(t, raw); u != nil && (u.Hostname() != want || name != "" || !refused) {
			t.Errorf("%s: host %s, to look up %q, blocked %v; want %s, blocked", raw, u.Hostname(), name, refused, want)
		}
	}
	public := map[string]string{ // URL → the URL stored
		"https://93.184.216.34/hook":      "https://93.184.216.34/hook",
		"https://1572395042/hook":         "https://93.184.216.34/hook",
		"https://0x5db8d822:8443/hook":    "https://93.184.216.34:8443/hook",
		"https://93.184.55330/":           "https://93.184.216.34/",
		"https://8.8.8.8/":                "https://8.8.8.8/",
		"https://172.32.0.1/":             "https://172.32.0.1/",
		"https://100.128.0.1/":            "https://100.128.0.1/",
		"https://[2606:4700::1111]/":      "https://[2606:4700::1111]/",
		"https://[64:ff9b::808:808]/":     "https://[64:ff9b::808:808]/",
		"https://[2002:5db8:d822::1]/":    "https://[2002:5db8:d822::1]/",
		"https://[::ffff:93.184.216.34]/": "https://[::ffff:93.184.216.34]/",
	}
	for raw, want := range public {
		if u, name, refused := target(t, raw); u != nil && (u.String() != want || name != "" || refused) {
			t.Errorf("%s: stored as %s, to look up %q, blocked %v; want %s, a public address", raw, u, name, refused, want)
		}
	}
}

// target runs the whole rule on raw: the URL EndpointURL keeps, and where EndpointTarget says it
// points (u is nil when the URL is refused).
func target(t *testing.T, raw string) (u *url.URL, name string, blocked bool) {
	t.Helper()
	var p Problems
	u, ok := EndpointURL(raw, Production, &p)
	if !ok || p.Err() != nil {
		t.Errorf("%s: refused as a URL (%v)", raw, p.Err())
		return nil, "", false
	}
	name, blocked = EndpointTarget(u)
	return u, name, blocked
}

// TestWebhookTargetNames: names are looked up (lower case, IDNA-mapped), except the local ones;
// hosts that end in a number but are no IPv4 address are no URL, as in a browser; a scheme other
// than http(s) is refused before anything else.
func TestWebhookTargetNames(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.example.com/":      "hooks.example.com",
		"https://Hooks.Example.COM./":     "hooks.example.com",
		"https://127.0.0.1.example.com/":  "127.0.0.1.example.com",
		"https://0x7f000001.example.com/": "0x7f000001.example.com",
		"https://bücher.example/":         "xn--bcher-kva.example",
	} {
		if u, name, blocked := target(t, raw); u != nil && (name != want || blocked) {
			t.Errorf("%s: to look up %q, blocked %v; want %q", raw, name, blocked, want)
		}
	}
	for _, raw := range []string{"https://localhost/", "https://LOCALHOST./", "https://api.localhost/", "https://ｌｏｃａｌｈｏｓｔ/"} {
		if u, name, blocked := target(t, raw); u != nil && (name != "" || !blocked) {
			t.Errorf("%s: to look up %q, blocked %v; want blocked", raw, name, blocked)
		}
	}
	for raw, reason := range map[string]string{
		"https://256.0.0.1/":        "invalid_url",
		"https://1.2.3.4.5/":        "invalid_url",
		"https://1.2.3.09/":         "invalid_url",
		"https://4294967296/":       "invalid_url",
		"https://1.16777216/":       "invalid_url",
		"https://example.0x7f/":     "invalid_url",
		"https://1..1/":             "invalid_url",
		"ftp://hooks.example.com/":  "invalid_scheme",
		"file:///etc/passwd":        "invalid_url",
		"gopher://127.0.0.1:25/":    "invalid_scheme",
		"javascript://example.com/": "invalid_scheme",
	} {
		var p Problems
		if _, ok := EndpointURL(raw, Production, &p); ok {
			t.Errorf("%s: accepted as a URL", raw)
			continue
		}
		if fe := p.Err(); fe == nil || fe.(*Error).Fields[0].Reason != reason {
			t.Errorf("%s: %v, want %s", raw, fe, reason)
		}
	}
}

// TestBlockedAddress: the address rule alone, on addresses as the dialer sees them.
func TestBlockedAddress(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "127.255.255.254": true, "10.0.0.1": true, "172.16.0.1": true, "172.31.255.255": true,
		"192.168.0.1": true, "169.254.169.254": true, "100.64.0.1": true, "0.0.0.0": true, "0.1.2.3": true,
		"224.0.0.1": true, "255.255.255.255": true, "198.18.0.1": true, "192.0.0.8": true,
		"::1": true, "::": true, "::7f00:1": true, "::ffff:127.0.0.1": true, "::ffff:10.0.0.1": true,
		"::ffff:0:a00:1": true, "fe80::1": true, "fe80::1%eth0": true, "fc00::1": true, "fd12::1": true,
		"fec0::1": true, "ff02::1": true, "64:ff9b::7f00:1": true, "64:ff9b::a9fe:a9fe": true,
		"64:ff9b:1::a00:1": true, "2002:7f00:1::": true, "2002:a00:1::1": true, "2002:ac10::": true,
		"2002:c0a8::": true, "2002:6440::": true, "2001::1": true, "2001:db8::1": true, "100::1": true,
		"93.184.216.34": false, "8.8.8.8": false, "172.32.0.1": false, "100.128.0.1": false, "1.1.1.1": false,
		"2606:4700::1111": false, "64:ff9b::808:808": false, "2002:808:808::": false, "::ffff:8.8.8.8": false,
		"2a00:1450:4001::200e": false,
	} {
		if got := BlockedAddress(netip.MustParseAddr(s)); got != want {
			t.Errorf("BlockedAddress(%s) = %v, want %v", s, got, want)
		}
	}
	if !BlockedAddress(netip.Addr{}) {
		t.Error("the zero address is not blocked")
	}
}
