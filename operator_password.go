package remit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The operator password rule (docs/security.md, "Operator passwords"). A password is what the
// operator typed, kept and compared as typed; the rule reads it without the white space around it:
//
//   - not blank;
//   - at least OperatorPasswordMin characters (without the white space around them) and at most
//     OperatorPasswordMax bytes (bcrypt reads no further);
//   - not common: not one of commonPasswords, nor one of them with only digits and symbols around it
//     (Password2024!), nor a run of one keyboard or alphabet sequence (123456789012, qwertyuiopas),
//     nor a shorter piece repeated (aaaaaaaaaaaa, abcabcabcabc);
//   - not the operator's e-mail address, nor the part before its @ (either case);
//   - the confirmation equal to it.

// OperatorPasswordRule is the rule as the set-password form says it.
var OperatorPasswordRule = fmt.Sprintf("At least %d characters (spaces around it do not count); not a common password, and not your e-mail address.", OperatorPasswordMin)

// CheckOperatorPassword applies the password rule to the password an operator with e-mail address
// email chose, and records at most one problem of the password (the first of: blank, too_short,
// too_long, too_common, same_as_email) and one of the confirmation (mismatch).
func CheckOperatorPassword(password, confirm, email string, p *Problems) {
	pw := strings.TrimSpace(password)
	switch {
	case pw == "":
		p.Body("password", "blank", "The password may not be blank. "+OperatorPasswordRule)
	case utf8.RuneCountInString(pw) < OperatorPasswordMin:
		p.Body("password", "too_short", fmt.Sprintf("The password must be at least %d characters long, not counting spaces around it.", OperatorPasswordMin))
	case len(password) > OperatorPasswordMax:
		p.Body("password", "too_long", fmt.Sprintf("The password may be at most %d bytes long.", OperatorPasswordMax))
	case commonPassword(pw):
		p.Body("password", "too_common", "This password is among the most common ones, which are tried first; choose another.")
	case sameAsEmail(pw, email):
		p.Body("password", "same_as_email", "The password may not be your e-mail address.")
	}
	if confirm != password {
		p.Body("confirm", "mismatch", "The two passwords differ; type the same password twice.")
	}
}

func sameAsEmail(pw, email string) bool {
	email = strings.TrimSpace(email)
	local, _, _ := strings.Cut(email, "@")
	return email != "" && (strings.EqualFold(pw, email) || strings.EqualFold(pw, local))
}

// commonPassword reports whether pw (trimmed) is common: see the rule above.
func commonPassword(pw string) bool {
	lower := strings.ToLower(pw)
	core := strings.TrimFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) })
	if commonPasswords[lower] || commonPasswords[core] || repeated(lower) {
		return true
	}
	for _, seq := range passwordSequences {
		if strings.Contains(seq, lower) {
			return true
		}
	}
	return false
}

// repeated reports whether s is a shorter piece written again and again (the last time perhaps in
// part): aaaaaaaaaaaa, abcabcabcabc, 12341234123.
func repeated(s string) bool {
	r := []rune(s)
	for period := 1; period <= len(r)/2; period++ {
		same := true
		for i := period; i < len(r) && same; i++ {
			same = r[i] == r[i-period]
		}
		if same {
			return true
		}
	}
	return false
}

// passwordSequences are runs a password may not be a piece of: digits and letters in order and
// backwards, keyboard rows and columns.
var passwordSequences = []string{
	"012345678901234567890123456789", "987654321098765432109876543210",
	"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcbazyxwvutsrqponmlkjihgfedcba",
	"qwertyuiopasdfghjklzxcvbnm", "qwertzuiopasdfghjklyxcvbnm", "azertyuiopqsdfghjklmwxcvbn",
	"1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p", "1q2w3e4r5t6y7u8i9o0p", "q1w2e3r4t5y6u7i8o9p0", "qazwsxedcrfvtgbyhnujmikolp",
	"!@#$%^&*()_+", "1234567890-=qwertyuiop[]asdfghjkl;'zxcvbnm,./",
}

// commonPasswords are the most common passwords of leaked lists (lower case), and the words most
// often found at their heart; shorter ones are refused by the length rule anyway, but serve as the
// core of a longer one (password1234!, iloveyou2024).
var commonPasswords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		password passwort motdepasse contraseña senha passw0rd p@ssword p@ssw0rd pa55word pass
		mypassword newpassword yourpassword thepassword password1234 passwordpassword
		qwerty qwertyuiop asdfgh asdfghjkl zxcvbnm 1q2w3e4r5t6y q1w2e3r4t5y6 1qaz2wsx3edc zaq12wsx zaq1zaq1
		iloveyou loveyou lovely love welcome welcomeback letmein letmeinplease trustno1 changeme
		admin administrator adminadmin root rootroot superuser user guest default login
		secret topsecret master monkey dragon shadow sunshine princess football baseball soccer hockey
		superman batman starwars pokemon freedom whatever computer internet qazwsx michael jennifer
		charlie jordan hunter ranger buster thomas tigger summer winter spring autumn
		hello helloworld test testing testtest abc abcdef abcd abcdefg
		remit remitbilling billing dashboard operator payments invoice
		correcthorsebatterystaple
		123456789012 1234567890123 12345678901234 111111111111 000000000000 123123123123 123456123456
		987654321012 121212121212 112233445566 147258369147 159357159357 789456123789
	`) {
		m[w] = true
	}
	return m
}()
