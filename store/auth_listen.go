package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"
)

// The auth version from memory on PostgreSQL (docs/performance.md, "Who is calling, from
// memory"). Reading the version row is a round trip, one of the two an authenticated read makes.
// Instead a process listens: migration 29 makes the version's trigger also NOTIFY
// authVersionChannel, and a listener goroutine on a connection of its own keeps the version in
// memory:
//
//   - on each notification it reads the row again (the channel is database-wide; the row is its
//     schema's own);
//   - every authConfirmEvery without one it reads the row anyway, which also confirms that the
//     listener is alive;
//   - a version is trusted only while confirmed within AuthStaleAfter. Past that (the listener's
//     connection is down, PostgreSQL is slow) every request reads the row, as before.
//
// So a change committed by another process (the CLI revoking a key, another `serve` advancing a
// clock) is seen within AuthStaleAfter at worst, and within a notification's delivery, well under
// a millisecond on one host, in practice. A change committed by this process is seen by its very
// next request: a transaction that changed a key or a merchant account reads the new version
// after its commit (Tx.authChanged) and nothing older is trusted from then on.

const (
	authVersionChannel = "remit_auth_version"
	authConfirmEvery   = 250 * time.Millisecond
	AuthStaleAfter     = time.Second
)

type authListener struct {
	url       string
	start     sync.Once
	stop      context.CancelFunc
	done      chan struct{}
	version   atomic.Int64 // the version the listener last read
	confirmed atomic.Int64 // when it read it (Unix nanoseconds; 0: never)
	floor     atomic.Int64 // the newest version this process committed: nothing older is trusted
}

// AuthVersion is the current auth version: on PostgreSQL from the listener's memory when it is
// fresh (see above), otherwise read from its row.
func (db *DB) AuthVersion(ctx context.Context) (int64, error) {
	l := db.auth
	if l == nil || InTx(ctx) {
		return db.Read(ctx).AuthVersion(ctx)
	}
	l.start.Do(l.run)
	if v, ok := l.current(); ok {
		return v, nil
	}
	v, err := db.Read(ctx).AuthVersion(ctx)
	if err == nil {
		// The version never goes back in one process: the listener may still hold a value it read
		// just before this one (its notification not yet handled), and trusting it next would
		// serve what a revocation already replaced.
		l.raiseFloor(v)
	}
	return v, err
}

func (l *authListener) current() (int64, bool) {
	c := l.confirmed.Load()
	if c == 0 || time.Since(time.Unix(0, c)) > AuthStaleAfter {
		return 0, false
	}
	v := l.version.Load()
	return v, v >= l.floor.Load()
}

// raiseFloor records a version this process committed.
func (l *authListener) raiseFloor(v int64) {
	for {
		f := l.floor.Load()
		if v <= f || l.floor.CompareAndSwap(f, v) {
			return
		}
	}
}

func (l *authListener) run() {
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		for ctx.Err() == nil {
			_ = l.listen(ctx) // a lost connection: trust nothing, connect again
			l.confirmed.Store(0)
			select {
			case <-ctx.Done():
			case <-time.After(authConfirmEvery):
			}
		}
	}()
}

// listen connects, listens and keeps the version until the connection fails or ctx ends.
func (l *authListener) listen(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, l.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+authVersionChannel); err != nil {
		return err
	}
	for {
		var v int64
		if err := conn.QueryRow(ctx, `SELECT version FROM auth_version WHERE id = 1`).Scan(&v); err != nil {
			return err
		}
		l.version.Store(v)
		l.confirmed.Store(time.Now().UnixNano())
		wait, cancel := context.WithTimeout(ctx, authConfirmEvery)
		_, err := conn.WaitForNotification(wait)
		cancel()
		if err != nil && ctx.Err() != nil {
			return err
		}
		if err != nil && !conn.IsClosed() && wait.Err() != nil {
			continue // no notification in a while: read the row to confirm
		}
		if err != nil {
			return err
		}
	}
}

// close stops the listener, if it was started.
func (l *authListener) close() {
	l.start.Do(func() {}) // never start after this
	if l.stop != nil {
		l.stop()
		<-l.done
	}
}

// authChanged is called by the store methods that change an API key or a merchant account (the
// rows the auth version covers): once the transaction commits, this process reads the new
// version and trusts nothing older, so its next request sees the change.
func (q Q) authChanged(ctx context.Context) {
	if tx, ok := ctx.Value(txKey{}).(*Tx); ok && tx != nil {
		tx.changesAuth = true
	}
}

// afterAuthChange raises the listener's floor to the version a committed transaction left.
func (db *DB) afterAuthChange(ctx context.Context) {
	if db.auth == nil {
		return
	}
	if v, err := db.Read(withoutTx(ctx)).AuthVersion(context.WithoutCancel(ctx)); err == nil {
		db.auth.raiseFloor(v)
	} else {
		db.auth.confirmed.Store(0) // cannot tell: read the row until the listener confirms again
	}
}

// authNotifyMigration (version 29) makes the auth version's trigger function also notify
// authVersionChannel on PostgreSQL; SQLite reads its version row (in the process) as before.
func authNotifyMigration(d Dialect) *goose.Migration {
	run := func(notify bool) *goose.GoFunc {
		return &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			if d != Postgres {
				return nil
			}
			body := `UPDATE auth_version SET version = version + 1;`
			if notify {
				body += ` PERFORM pg_notify('` + authVersionChannel + `', '');`
			}
			_, err := tx.ExecContext(ctx, `CREATE OR REPLACE FUNCTION bump_auth_version() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN `+body+` RETURN NULL; END $$`)
			return err
		}}
	}
	return goose.NewGoMigration(29, run(true), run(false))
}
