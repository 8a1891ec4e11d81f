package store

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable reports whether err says the store could not be reached or dropped the connection
// (PostgreSQL stopped, restarting or refusing connections; the network between). Such a failure is
// transient: the edge answers it 503, the request's transaction did not commit, and the connection
// pool reconnects by itself once the store is back. A store closed by this process is not
// unavailable in this sense (it never comes back).
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 (connection exception); 57P01..57P03: admin shutdown, crash shutdown, cannot
		// connect now (starting up or shutting down); 53300: too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var oe *net.OpError
	switch {
	case errors.As(err, &ce), errors.As(err, &oe):
		return true
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgx reports a connection the server closed under a statement as "conn closed" or
	// "unexpected EOF" without a typed error in some paths.
	s := err.Error()
	return strings.Contains(s, "conn closed") || strings.Contains(s, "unexpected EOF") || strings.Contains(s, "failed to connect to")
}

// ErrDuplicate reports a row whose unique key another row already has. The error is a
// *DuplicateError, which names the key; the engine answers it with the field the caller chose.
var ErrDuplicate = errors.New("store: duplicate key")

// DuplicateError is a unique key already taken: "id" for the row's own ID (within its merchant
// account, or its customer for balance entries), or the other unique column ("external_id",
// "external_ref").
type DuplicateError struct{ Key string }

func (e *DuplicateError) Error() string        { return "store: duplicate " + e.Key }
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

func duplicate(key string) error { return &DuplicateError{Key: key} }

// DuplicateKey is the key err says is taken, or "" when err is no duplicate.
func DuplicateKey(err error) string {
	var d *DuplicateError
	if errors.As(err, &d) {
		return d.Key
	}
	return ""
}

// ErrNotFound is a row that does not exist, from a store method whose caller gives the answer its
// words (the others answer remit.NotFound with the resource and its ID).
var ErrNotFound = errors.New("store: not found")

// ErrConflict is a conditional change whose condition no longer held (another request changed
// the row first).
var ErrConflict = errors.New("store: conflict")

// IsRetryable reports whether err is a transaction that lost to another one and may simply run
// again: a deadlock (PostgreSQL 40P01, the victim PostgreSQL chose) or a serialization failure
// (40001). Nothing of the transaction committed. RetryTx runs such a transaction again.
func IsRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}
