package remit

import (
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

var (
	idMu      sync.Mutex
	idEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns a generated ID: a type prefix ("cus", "inv", ...) and a random suffix that sorts by
// creation time, such as "cus_01jd3q8m7f6x4n2b0s9tz5wqkc". Within one process IDs are strictly
// increasing (monotonic within a millisecond), so records created in one transaction with the
// same timestamp keep their creation order.
func NewID(prefix string) string {
	idMu.Lock()
	id := ulid.MustNew(ulid.Timestamp(time.Now()), idEntropy)
	idMu.Unlock()
	return prefix + "_" + strings.ToLower(id.String())
}

// IDOr returns id, the one a caller chose, or a new ID with prefix when it chose none.
func IDOr(id, prefix string) string {
	if id != "" {
		return id
	}
	return NewID(prefix)
}
