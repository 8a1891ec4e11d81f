package store

import (
	"context"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
)

// A prepared-statement cache for SQLite. modernc.org/sqlite prepares every statement anew
// (sqlite3_prepare_v2: tokenizing, parsing and planning), which is most of the cost of a small
// query — about 40% of the CPU of an authenticated read or an invoice finalization under load
// (docs/performance.md). PostgreSQL needs nothing here: pgx caches prepared statements per
// connection itself.
//
// Each SQLite connection keeps its own statements by SQL text (a statement belongs to one
// connection). database/sql uses a connection from one goroutine at a time, so the cache needs
// no lock. A cached statement whose rows are still open (a query run again while iterating its
// own results, in one transaction) is not shared: that call prepares a statement of its own, as
// before. Statements are finalized when their connection closes. A schema change is no concern:
// sqlite3_prepare_v2 statements re-prepare themselves when the schema changed.

const (
	stmtCacheSize  = 256  // statements per connection; when full the cache starts over
	stmtCacheMaxSQ = 8192 // longer SQL (bulk INSERTs) is not cached
)

// sqliteConnector opens modernc.org/sqlite connections with a statement cache.
type sqliteConnector struct {
	dsn string
	drv *sqlite.Driver
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newCachedConn(conn)
}

func (c sqliteConnector) Driver() driver.Driver { return c.drv }

// sqliteConn is what database/sql needs of a modernc.org/sqlite connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

type cachedConn struct {
	c     sqliteConn
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	s    driver.Stmt
	busy bool // its rows are open
}

var _ sqliteConn = (*cachedConn)(nil)

func newCachedConn(conn driver.Conn) (*cachedConn, error) {
	c, ok := conn.(sqliteConn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("store: the SQLite driver's connection lacks a context method")
	}
	return &cachedConn{c: c, stmts: map[string]*cachedStmt{}}, nil
}

// stmt returns the connection's statement for query, or nil when the call should prepare its own
// (too long, or the cached one is busy).
func (c *cachedConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if len(query) > stmtCacheMaxSQ {
		return nil, nil
	}
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		return cs, nil
	}
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, ok := s.(driver.StmtQueryContext); !ok {
		_ = s.Close()
		return nil, nil
	}
	if _, ok := s.(driver.StmtExecContext); !ok {
		_ = s.Close()
		return nil, nil
	}
	if len(c.stmts) >= stmtCacheSize {
		c.evict()
	}
	cs := &cachedStmt{s: s}
	c.stmts[query] = cs
	return cs, nil
}

// evict finalizes every statement not in use.
func (c *cachedConn) evict() {
	for q, cs := range c.stmts {
		if !cs.busy {
			_ = cs.s.Close()
			delete(c.stmts, q)
		}
	}
}

func (c *cachedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.c.QueryContext(ctx, query, args)
	}
	rows, err := cs.s.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, cs: cs}, nil
}

func (c *cachedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.c.ExecContext(ctx, query, args)
	}
	cs.busy = true
	defer func() { cs.busy = false }()
	return cs.s.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachedConn) Close() error {
	for q, cs := range c.stmts {
		_ = cs.s.Close()
		delete(c.stmts, q)
	}
	return c.c.Close()
}

func (c *cachedConn) Prepare(query string) (driver.Stmt, error) { return c.c.Prepare(query) }
func (c *cachedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.c.PrepareContext(ctx, query)
}
func (c *cachedConn) Begin() (driver.Tx, error) { return c.c.Begin() } //nolint:staticcheck // required by driver.Conn
func (c *cachedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}
func (c *cachedConn) Ping(ctx context.Context) error         { return c.c.Ping(ctx) }
func (c *cachedConn) ResetSession(ctx context.Context) error { return c.c.ResetSession(ctx) }
func (c *cachedConn) IsValid() bool                          { return c.c.IsValid() }

// cachedRows releases its statement for reuse when closed.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	return err
}
