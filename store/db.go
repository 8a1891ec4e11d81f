// Package store persists Remit's state in SQLite (embedded, the default) or PostgreSQL. Both
// dialects share one set of SQL statements and one set of migrations; the few places where they
// differ are methods of Dialect. The store knows nothing of HTTP: it returns domain errors
// (remit.Error) for not-found and conflicts and wraps everything else with where it came from.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // pure Go; opened through sqliteConnector (stmtcache.go)

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
)

// Dialect names the SQL dialect of a store.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is a store. Writes go through Tx; reads may use Read outside a transaction.
type DB struct {
	dialect Dialect
	write   *sql.DB // SQLite: exactly one connection, so writers queue in Go and never see SQLITE_BUSY
	read    *sql.DB // SQLite: a pool of read connections (WAL lets them run beside the writer)
	url     string
	gc      *groupCommitter // SQLite only
	ck      *checkpointer   // SQLite only
	chains  chainGroups     // PostgreSQL: chaining after commit, coalesced per account (chain.go)
	auth    *authListener   // PostgreSQL: the auth version kept by LISTEN (auth_listen.go)

	onChained     atomic.Pointer[func()]         // runs after each background chaining pass
	chainDispatch atomic.Pointer[ChainDispatch]  // dispatches what a chaining pass chains (chain.go)
	retries       atomic.Int64                   // transactions RetryTx ran again (retry.go)
	checker       atomic.Pointer[goose.Provider] // reads whether migrations are pending (migrate.go)
}

// The SQLite writer's page cache (negative: KiB), which holds a group-commit batch's pages. The
// 8 readers keep SQLite's default (2 MiB each): larger ones cost memory and saved no CPU.
const sqliteWriterCache = "-16384"

// Open opens the store named by rawURL: "sqlite:PATH" (or "sqlite::memory:" is refused; use a
// file) or "postgres://...". It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL string) (db *DB, err error) {
	defer wrap(&err, "store.Open")
	switch {
	case strings.HasPrefix(rawURL, "sqlite:"):
		path, err := SQLitePath(rawURL)
		if err != nil {
			return nil, err
		}
		dsn := func(extra string) string {
			return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)" + extra
		}
		drv := &sqlite.Driver{}
		// The writer keeps a large page cache, so that a group-commit batch's pages stay in
		// memory until its commit instead of spilling to the log midway, and its savepoints'
		// sub-journals in memory instead of temporary files (every request of a batch runs in a
		// savepoint); it checkpoints only as a backstop (checkpoint.go).
		w := sql.OpenDB(sqliteConnector{dsn: dsn("&_txlock=immediate&_pragma=cache_size(" + sqliteWriterCache + ")" +
			"&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(" + strconv.Itoa(writerCheckpointPages) + ")"), drv: drv})
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxLifetime(0)
		// The first connection creates the file and switches it to WAL before readers open.
		if err := w.PingContext(ctx); err != nil {
			w.Close()
			return nil, err
		}
		r := sql.OpenDB(sqliteConnector{dsn: dsn("&_pragma=query_only(ON)"), drv: drv})
		r.SetMaxOpenConns(8)
		r.SetMaxIdleConns(8)
		ck := sql.OpenDB(sqliteConnector{dsn: dsn(""), drv: drv})
		ck.SetMaxOpenConns(1)
		db := &DB{dialect: SQLite, write: w, read: r, url: rawURL}
		db.gc = newGroupCommitter(w)
		db.ck = startCheckpointer(ck)
		return db, nil
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		p, err := sql.Open("pgx", rawURL)
		if err != nil {
			return nil, err
		}
		p.SetMaxOpenConns(32)
		p.SetMaxIdleConns(32)
		p.SetConnMaxIdleTime(5 * time.Minute)
		if err := p.PingContext(ctx); err != nil {
			p.Close()
			return nil, err
		}
		return &DB{dialect: Postgres, write: p, read: p, url: rawURL, auth: &authListener{url: rawURL}}, nil
	default:
		return nil, fmt.Errorf("unsupported database URL %q: use sqlite:PATH or postgres://", redactURL(rawURL))
	}
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}

// SetMaxConns bounds the PostgreSQL connection pool of this process (32 by default). Several
// processes on one server must together stay under its max_connections. No effect on SQLite.
func (db *DB) SetMaxConns(n int) {
	if db.dialect == Postgres && n > 0 {
		db.write.SetMaxOpenConns(n)
		db.write.SetMaxIdleConns(n)
	}
}

// Dialect reports the store's dialect.
func (db *DB) Dialect() Dialect { return db.dialect }

// Close closes the store's connections.
func (db *DB) Close() error {
	db.chains.loops.Wait()
	if db.auth != nil {
		db.auth.close()
	}
	if db.gc != nil {
		db.gc.close()
	}
	if db.ck != nil {
		_ = db.ck.close()
	}
	err := db.write.Close()
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Ping reports whether the store answers. On SQLite it asks a read connection only: the single
// writer connection is busy for as long as a write transaction runs, which says nothing about
// whether the store is reachable.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var one int
	return db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// SQL exposes the write pool for tests and tools that need raw access.
func (db *DB) SQL() *sql.DB { return db.write }

type txKey struct{}

// Tx runs fn in a transaction and commits when fn returns nil. A Tx already in ctx (from an outer
// call) is joined instead, so a request's whole effect and its event commit together.
//
// On PostgreSQL the transaction is READ COMMITTED; rules that must not race take row locks
// (Q.ForUpdate). The events it wrote get their place in their chains just after the commit, in
// the background (chain.go). On SQLite all writes are serialized through one connection with group commit
// (see groupcommit.go): concurrent callers' functions run one after another inside one
// transaction, each in its own savepoint, and share one commit (one fsync). Tx returns only after
// that commit, so a nil error still means the effect is durable.
func (db *DB) Tx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (err error) {
	if tx, ok := ctx.Value(txKey{}).(*Tx); ok && tx != nil {
		return fn(ctx, tx)
	}
	ctx, span := telemetry.StartChild(ctx, "store.tx") // a span only inside a traced operation
	if span.IsRecording() {
		telemetry.Strings(span, "db.system.name", db.dialect.systemName())
		defer func() { telemetry.End(span, err) }()
	}
	if db.gc != nil {
		return db.gc.run(ctx, fn)
	}
	return db.pgTx(ctx, fn)
}

// systemName is the dialect's db.system.name in OpenTelemetry's words.
func (d Dialect) systemName() string {
	if d == Postgres {
		return "postgresql"
	}
	return "sqlite"
}

// runFn runs fn and then the transaction's before-commit hooks.
func runFn(ctx context.Context, tx *Tx, fn func(ctx context.Context, tx *Tx) error) error {
	if err := fn(ctx, tx); err != nil {
		return err
	}
	for _, hook := range tx.beforeEvents {
		if err := hook(ctx); err != nil {
			return err
		}
	}
	for _, hook := range tx.beforeCommit {
		if err := hook(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) committed() {
	for _, hook := range tx.afterCommit {
		hook()
	}
}

// withoutTx returns ctx without its transaction: what runs with it opens its own.
func withoutTx(ctx context.Context) context.Context {
	return context.WithValue(ctx, txKey{}, (*Tx)(nil))
}

// InTx reports whether ctx carries a transaction. It is for tests that assert where work runs
// (a host name lookup never inside one); the engine passes its transactions explicitly and never
// asks.
func InTx(ctx context.Context) bool { tx, ok := ctx.Value(txKey{}).(*Tx); return ok && tx != nil }

// Read returns the queries for reads: the transaction in ctx if there is one, else the read pool.
func (db *DB) Read(ctx context.Context) Q {
	if tx, ok := ctx.Value(txKey{}).(*Tx); ok && tx != nil {
		return tx.Q
	}
	return Q{q: db.read, d: db.dialect}
}

// Tx is an open transaction. Its methods (through Q) are the store's operations.
type Tx struct {
	Q
	beforeCommit []func(context.Context) error
	afterCommit  []func()
	beforeEvents []func(context.Context) error // run before beforeCommit: they may still emit events
	locals       map[any]any                   // values the engine keeps for the transaction (Local)
	spSeq        int
	later        []laterWrite         // PostgreSQL: writes sent with the COMMIT (pipeline.go)
	changesAuth  bool                 // it changed an API key or a merchant account (auth_listen.go)
	events       []pendingEvent       // written before commit (AppendEvent)
	unchained    []string             // PostgreSQL: accounts whose events it wrote unchained (chain.go)
	heads        map[string]chainLink // the chain links this transaction wrote, by merchant account
	batchHeads   map[string]chainLink // SQLite: the links earlier transactions of its group commit wrote
	hot          bool                 // it locked a row many writes share (retry.go, TookHotRows)
	alone        bool                 // a job that is a batch of its own ran in it (retry.go, EndJobBatch)
}

// BeforeCommit registers fn to run inside the transaction after the work succeeded and before commit.
func (tx *Tx) BeforeCommit(fn func(context.Context) error) {
	tx.beforeCommit = append(tx.beforeCommit, fn)
}

// BeforeEvents registers fn to run inside the transaction after the work succeeded, before the
// before-commit hooks (the outbox among them): what it emits is written with the transaction's
// other events.
func (tx *Tx) BeforeEvents(fn func(context.Context) error) {
	tx.beforeEvents = append(tx.beforeEvents, fn)
}

// Local returns the transaction's value for key, made by create (and kept) the first time it is
// asked for: state the engine gathers over one transaction (the customers whose entitlements it
// changed). created reports whether this call made it.
func (tx *Tx) Local(key any, create func() any) (v any, created bool) {
	if v, ok := tx.locals[key]; ok {
		return v, false
	}
	if tx.locals == nil {
		tx.locals = map[any]any{}
	}
	v = create()
	tx.locals[key] = v
	return v, true
}

// AfterCommit registers fn to run once the transaction committed (for example to wake a worker).
func (tx *Tx) AfterCommit(fn func()) { tx.afterCommit = append(tx.afterCommit, fn) }

type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q runs the store's statements on a transaction or on the read pool.
type Q struct {
	q queryer
	d Dialect
}

// ForUpdate is the row-lock clause for a SELECT in this dialect. SQLite needs none: its write
// transactions are serialized.
func (q Q) ForUpdate() string {
	if q.d == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// SkipLocked is the clause that lets several processes claim different rows of one queue.
func (q Q) SkipLocked() string {
	if q.d == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

func (q Q) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Exec runs a statement and returns the number of rows it affected.
func (q Q) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	n, err := q.exec(ctx, query, args...)
	return n, wrapErr(err, "store.Exec")
}

// QueryRow runs a query expected to return at most one row.
func (q Q) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return q.q.QueryRowContext(ctx, query, args...)
}

// Query runs a query returning rows.
func (q Q) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.q.QueryContext(ctx, query, args...)
}

// isForeignKeyViolation reports whether err is a foreign-key violation in either dialect: a row
// that names a parent row that does not exist.
func isForeignKeyViolation(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "FOREIGN KEY constraint failed") || strings.Contains(s, "SQLSTATE 23503")
}

// IsUniqueViolation reports whether err is a unique-constraint violation in either dialect.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "SQLSTATE 23505") || strings.Contains(s, "duplicate key value")
}

// wrap annotates *errp with op unless it is nil or already a domain error.
func wrap(errp *error, op string) {
	if *errp != nil {
		*errp = wrapErr(*errp, op)
	}
}

// notFoundOr is wrapErr for a read of one row: no row is remit.NotFound of that kind and ID.
func notFoundOr(err error, kind, id, op string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return remit.NotFound(kind, id, "")
	}
	return wrapErr(err, op)
}

// foundOr is wrapErr for a read of a row that may be missing: found reports whether it was read,
// and no row is found=false with no error (notFoundOr's counterpart for a row that is optional).
func foundOr(err error, op string) (found bool, _ error) {
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrapErr(err, op)
}

func wrapErr(err error, op string) error {
	if err == nil {
		return nil
	}
	if isDomain(err) {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Savepoint runs fn inside a savepoint of tx: if fn fails, only its own writes are rolled back
// and the transaction goes on. Use it where a step may be refused without failing its caller
// (an automatic finalization inside a clock advance, an event of a usage batch).
func (tx *Tx) Savepoint(ctx context.Context, fn func() error) error {
	tx.spSeq++
	name := fmt.Sprintf("sp_%d", tx.spSeq)
	events, later, after := len(tx.events), len(tx.later), len(tx.afterCommit)
	if _, err := tx.q.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return wrapErr(err, "store.Savepoint")
	}
	if err := fn(); err != nil {
		// The savepoint's events, queued writes and after-commit work go with its writes.
		tx.events, tx.later, tx.afterCommit = tx.events[:events], tx.later[:later], tx.afterCommit[:after]
		if _, rerr := tx.q.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rerr != nil {
			return wrapErr(rerr, "store.Savepoint: rollback")
		}
		_, _ = tx.q.ExecContext(ctx, "RELEASE SAVEPOINT "+name)
		return err
	}
	_, err := tx.q.ExecContext(ctx, "RELEASE SAVEPOINT "+name)
	return wrapErr(err, "store.Savepoint: release")
}

// Read says how a getter reads its row.
type Read struct {
	// ForUpdate holds the row's lock to the end of the transaction (SELECT ... FOR UPDATE on
	// PostgreSQL; SQLite's one writer runs write transactions one at a time anyway).
	ForUpdate bool
	// ForShare holds a shared lock instead (SELECT ... FOR SHARE): other readers that share it go
	// on, a change of the row waits.
	ForShare bool
}

var (
	// Locked reads a row and holds its lock to the end of the transaction, for a change that
	// depends on what was read.
	Locked = Read{ForUpdate: true}
	// Unlocked reads a row as it is.
	Unlocked = Read{}
	// Shared reads a row and keeps it from changing to the end of the transaction, for a use that
	// depends on what was read while other uses go on.
	Shared = Read{ForShare: true}
)

// lockFor is the clause that takes a read row's lock as read asks (nothing on SQLite, whose one
// writer runs write transactions one at a time).
func (q Q) lockFor(read Read) string {
	switch {
	case read.ForUpdate:
		return q.ForUpdate()
	case read.ForShare && q.d == Postgres:
		return " FOR SHARE"
	}
	return ""
}

// queryAll runs a query and scans every row with scan, then sets each item's merchant account
// with own (nil: nothing to set). op names the caller in errors.
func queryAll[T any](ctx context.Context, q Q, op string, scan func(interface{ Scan(...any) error }) (T, error), own func(*T), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, wrapErr(err, op)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, wrapErr(err, op)
		}
		if own != nil {
			own(&v)
		}
		out = append(out, v)
	}
	return out, wrapErr(rows.Err(), op)
}

// queryStrings runs a query of one text column and returns its values in order. op names the
// caller in errors.
func queryStrings(ctx context.Context, q Q, op, query string, args ...any) ([]string, error) {
	return queryAll(ctx, q, op, func(row interface{ Scan(...any) error }) (string, error) {
		var v string
		return v, row.Scan(&v)
	}, nil, query, args...)
}

// earliest runs a query of one time in Unix microseconds that may be NULL (a queue's MIN of when
// its rows fall due) and returns it, or ok=false when it is NULL (no row). op names the caller in
// errors.
func (q Q) earliest(ctx context.Context, op, query string, args ...any) (t time.Time, ok bool, err error) {
	var v sql.NullInt64
	err = q.QueryRow(ctx, query, args...).Scan(&v)
	if err != nil || !v.Valid {
		return t, false, wrapErr(err, op)
	}
	return remit.FromMicros(v.Int64), true, nil
}

// colValue is one equality filter of a list: a column and the value it must equal ("" for no
// filter).
type colValue struct{ col, v string }

// equalFilters appends "AND col = $n" to query for each filter with a value, and its value to args.
func equalFilters(query string, args []any, filters ...colValue) (string, []any) {
	for _, c := range filters {
		if c.v != "" {
			args = append(args, c.v)
			query += " AND " + c.col + " = $" + itoa(len(args))
		}
	}
	return query, args
}
