package remit

import (
	"crypto/rand"
	"regexp"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns a generated ID: a type prefix ("cus", "inv", ...) and a random suffix that sorts by
// creation time, such as "cus_01JD3Q8M7F6X4N2B0S9TZ5WQKC".
func NewID(prefix string) string {
	id := ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader)
	return prefix + "_" + strings.ToLower(id.String())
}

var callerIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,255}$`)

// ValidCallerID reports whether s may be used as a caller-supplied ID (priceId, customerId, ...).
func ValidCallerID(s string) bool { return callerIDPattern.MatchString(s) }
