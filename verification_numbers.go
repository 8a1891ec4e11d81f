package remit

import (
	"fmt"
	"strconv"
	"strings"
)

// The rules of the money checks of document numbers (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// InvoiceNumberFacts is an invoice's state and number.
type InvoiceNumberFacts struct {
	InvoiceID string
	Status    InvoiceStatus
	Number    *string
}

// CheckInvoiceNumberFacts checks that an invoice has a number exactly when it was finalized: a
// draft has none, every other invoice (a void one too) keeps the one finalization gave it.
func CheckInvoiceNumberFacts(f InvoiceNumberFacts) []string {
	switch {
	case f.Status == InvoiceDraft && f.Number != nil:
		return []string{fmt.Sprintf("is a draft but carries number %s: numbers are given at finalization", *f.Number)}
	case f.Status != InvoiceDraft && f.Number == nil:
		return []string{fmt.Sprintf("is %s but has no number", f.Status)}
	}
	return nil
}

// maxUntracked bounds how far beyond the documents a counter is followed number by number (1 bit
// each): a counter further ahead than this is reported by range.
const maxUntracked = 1 << 20

// DocumentNumbering checks the numbers of one kind of document of a merchant account (INV-,
// RCPT-, CN-) for gap-free use: fed every number in any order, it finds numbers that are
// malformed, beyond the counter or used twice, then (Gaps) the numbers up to the counter that no
// document uses. Memory is one bit per number.
type DocumentNumbering struct {
	Prefix  string
	Counter int64

	seen  []uint64
	size  int64 // numbers 1..size are tracked one by one
	above int64 // numbers used beyond size (and within the counter)
}

// NewDocumentNumbering starts the check of numbers Prefix + 000001.. given the counter's value
// (0: no counter) and how many documents carry a number.
func NewDocumentNumbering(prefix string, counter, documents int64) *DocumentNumbering {
	size := min(counter, documents+maxUntracked)
	size = max(size, 0)
	return &DocumentNumbering{Prefix: prefix, Counter: counter, size: size, seen: make([]uint64, (size+63)/64)}
}

// Format writes number n of the sequence.
func (d *DocumentNumbering) Format(n int64) string { return formatNumber(d.Prefix, n) }

// Add records a document's number and returns what is wrong with it, or "".
func (d *DocumentNumbering) Add(number string) string {
	n, ok := d.parse(number)
	switch {
	case !ok:
		return fmt.Sprintf("carries number %q, which is not of the form %s", number, d.Format(1))
	case n > d.Counter:
		return fmt.Sprintf("carries number %s, beyond the counter, which stands at %d", number, d.Counter)
	case n > d.size:
		d.above++
		return ""
	}
	i, bit := (n-1)/64, uint64(1)<<((n-1)%64)
	if d.seen[i]&bit != 0 {
		return fmt.Sprintf("carries number %s, which another document carries too", number)
	}
	d.seen[i] |= bit
	return ""
}

func (d *DocumentNumbering) parse(s string) (int64, bool) {
	digits, ok := strings.CutPrefix(s, d.Prefix)
	if !ok || len(digits) < 6 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || d.Format(n) != s {
		return 0, false
	}
	return n, true
}

// Gaps calls fn with each range of numbers from 1 to the counter that no document carries, in
// order, with how many of the range are unused (all of it, except for a range beyond what is
// tracked one by one).
func (d *DocumentNumbering) Gaps(fn func(from, to, unused int64)) {
	from := int64(0)
	for n := int64(1); n <= d.size; n++ {
		used := d.seen[(n-1)/64]&(uint64(1)<<((n-1)%64)) != 0
		switch {
		case !used && from == 0:
			from = n
		case used && from != 0:
			fn(from, n-1, n-from)
			from = 0
		}
	}
	if from != 0 {
		fn(from, d.size, d.size-from+1)
	}
	if d.Counter > d.size && d.Counter-d.size > d.above {
		fn(d.size+1, d.Counter, d.Counter-d.size-d.above)
	}
}
