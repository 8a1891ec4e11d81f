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
