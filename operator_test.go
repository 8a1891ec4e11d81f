package remit

import (
	"strings"
	"testing"
)

func TestParseMajorAmount(t *testing.T) {
	cases := []struct {
		in, currency string
		want         int64
		ok           bool
	}{
		{"12.50", "USD", 1250, true}, {"12.5", "USD", 1250, true}, {"12", "USD", 1200, true}, {" 0.01 ", "USD", 1, true},
		{"1250", "JPY", 1250, true}, {"1.5", "JPY", 0, false}, {"1.234", "KWD", 1234, true}, {"1.2345", "KWD", 0, false},
		{"12.505", "USD", 0, false}, {"-1", "USD", 0, false}, {"1,250.00", "USD", 0, false}, {"", "USD", 0, false},
		{".5", "USD", 0, false}, {"1e3", "USD", 0, false}, {"9999999999999999", "USD", 0, false},
	}
	for _, c := range cases {
		var p Problems
		got := ParseMajorAmount(c.in, c.currency, "amount", &p)
		if ok := p.Err() == nil; ok != c.ok || got != c.want {
			t.Errorf("ParseMajorAmount(%q, %s) = %d, ok %v; want %d, %v", c.in, c.currency, got, ok, c.want, c.ok)
		}
	}
}

func TestNormalizeOperatorEmailAndPassword(t *testing.T) {
	for in, ok := range map[string]bool{"Ops@Example.com": true, " a@b.example ": true, "": false, "nope": false, "A <a@b.example>": false, "a@b.example, c@d.example": false} {
		var p Problems
		NormalizeOperatorEmail(in, &p)
		if (p.Err() == nil) != ok {
			t.Errorf("email %q: ok %v, want %v", in, p.Err() == nil, ok)
		}
	}
	for _, c := range []struct {
		pw, confirm string
		fields      int
	}{{"twelve chars", "twelve chars", 0}, {"short", "short", 1}, {"twelve chars", "other", 1}, {"short", "x", 2}, {string(make([]byte, 73)), string(make([]byte, 73)), 1}} {
		var p Problems
		CheckOperatorPassword(c.pw, c.confirm, "ops@example.com", &p)
		if len(p.list) != c.fields {
			t.Errorf("password %q/%q: %d problems, want %d", c.pw, c.confirm, len(p.list), c.fields)
		}
	}
}

// TestOperatorPasswordRule: blank, short once trimmed, common (listed, a listed word with digits
// and symbols around it, a sequence, a repetition) and the operator's own e-mail address are
// refused; the length rule stays; good passwords pass.
func TestOperatorPasswordRule(t *testing.T) {
	const email = "Averyverylongname@Example.com"
	for pw, reason := range map[string]string{
		"":                                 "blank",
		"            ":                     "blank",
		"\t\n \u3000":                      "blank",
		"           x":                     "too_short",
		"x           ":                     "too_short",
		"   a short   passphrase   ":       "",
		"eleven char":                      "too_short",
		strings.Repeat("é", 37):            "too_long",
		"password1234":                     "too_common",
		"PASSWORD1234":                     "too_common",
		"Password2024!":                    "too_common",
		"!!iloveyou!!2024":                 "too_common",
		"passwordpassword":                 "too_common",
		"qwertyuiop123":                    "too_common",
		"123456789012":                     "too_common",
		"  123456789012  ":                 "too_common",
		"1234567890123456":                 "too_common",
		"abcdefghijklm":                    "too_common",
		"qwertyuiopasdf":                   "too_common",
		"1q2w3e4r5t6y":                     "too_common",
		"aaaaaaaaaaaa":                     "too_common",
		"abcabcabcabcab":                   "too_common",
		"correcthorsebatterystaple":        "too_common",
		"averyverylongname@example.com":    "same_as_email",
		"AVERYVERYLONGNAME@EXAMPLE.COM":    "same_as_email",
		" averyverylongname@example.com ":  "same_as_email",
		"AveryVeryLongName":                "same_as_email",
		"correct horse battery":            "",
		"Tr0ub4dor&3 spoon":                "",
		"averyverylongname@example.org":    "",
		"9f7Kq!x2Lm4Z":                     "",
		"password is not my password 2024": "",
	} {
		var p Problems
		CheckOperatorPassword(pw, pw, email, &p)
		got := ""
		for _, f := range p.list {
			got = f.Reason
		}
		if got != reason {
			t.Errorf("password %q: %q, want %q", pw, got, reason)
		}
	}
}
