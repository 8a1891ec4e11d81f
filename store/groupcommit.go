package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// Group commit for SQLite. SQLite has one writer, and with synchronous=FULL each commit pays an
// fsync, which caps single-transaction commits near 1,700/s on a small machine. The committer
// takes every write transaction queued at the moment it is free, runs their functions one after
// another inside ONE transaction, each in its own savepoint, and commits once:
//
//   - a function that fails is rolled back to its savepoint alone; the others commit;
//   - every caller waits for the shared COMMIT, so a nil error still means durable;
//   - at low load a batch is a single transaction and nothing waits for company.
//
// Functions run on the committer's goroutine with the caller's context values but not its
// cancellation: SQLite's statement interrupt would roll back the whole shared transaction, so a
// function that has started always finishes. A caller whose context ended before its turn is
// skipped.

const maxBatch = 128

type txRequest struct {
	ctx   context.Context
	fn    func(ctx context.Context, tx *Tx) error
	err   error
	panic any
	tx    *Tx
	done  chan struct{}
}

type groupCommitter struct {
	db     *sql.DB
	queue  chan *txRequest
	wg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once
}

func newGroupCommitter(db *sql.DB) *groupCommitter {
	g := &groupCommitter{db: db, queue: make(chan *txRequest, 1024), closed: make(chan struct{})}
	g.wg.Add(1)
	go g.loop()
	return g
}

var errStoreClosed = errors.New("store is closed")

func (g *groupCommitter) run(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	r := &txRequest{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case g.queue <- r:
	case <-g.closed:
		return wrapErr(errStoreClosed, "store.Tx")
	case <-ctx.Done():
		return ctx.Err()
	}
	<-r.done
	if r.panic != nil {
		panic(r.panic)
	}
	if r.err == nil {
		r.tx.committed()
	}
	return r.err
}

func (g *groupCommitter) close() {
	g.once.Do(func() { close(g.closed) })
	g.wg.Wait()
}

func (g *groupCommitter) loop() {
	defer g.wg.Done()
	for {
		var first *txRequest
		select {
		case first = <-g.queue:
		case <-g.closed:
			// Fail whatever is still queued.
			for {
				select {
				case r := <-g.queue:
					r.err = wrapErr(errStoreClosed, "store.Tx")
					close(r.done)
				default:
					return
				}
			}
		}
		batch := []*txRequest{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-g.queue:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		g.runBatch(batch)
	}
}

func (g *groupCommitter) runBatch(batch []*txRequest) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	sqlTx, err := g.db.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range batch {
			r.err = wrapErr(err, "store.Tx: begin")
		}
		return
	}
	var ok []*txRequest
	heads := map[string]chainLink{} // the event chains' last links, as the batch's released requests left them
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		// One name for every request's savepoint: they follow each other, never nest, and the
		// three statements stay in the connection's statement cache.
		const sp = "request"
		if _, err := sqlTx.Exec("SAVEPOINT " + sp); err != nil {
			r.err = wrapErr(err, "store.Tx: savepoint")
			continue
		}
		tx := &Tx{Q: Q{q: sqlTx, d: SQLite}, batchHeads: heads}
		r.tx = tx
		ctx := context.WithValue(context.WithoutCancel(r.ctx), txKey{}, tx)
		r.err, r.panic = safeRun(ctx, tx, r.fn)
		if r.err != nil || r.panic != nil {
			if _, err := sqlTx.Exec("ROLLBACK TO " + sp); err != nil {
				// The shared transaction is unusable: fail the whole batch.
				_ = sqlTx.Rollback()
				for _, o := range batch {
					if o.err == nil && o.panic == nil {
						o.err = wrapErr(err, "store.Tx: rollback to savepoint")
					}
				}
				return
			}
		}
		if _, err := sqlTx.Exec("RELEASE " + sp); err != nil && r.err == nil && r.panic == nil {
			r.err = wrapErr(err, "store.Tx: release savepoint")
		}
		if r.err == nil && r.panic == nil {
			ok = append(ok, r)
			for account, l := range tx.heads { // released: later requests continue from here
				heads[account] = l
			}
		}
	}
	if err := sqlTx.Commit(); err != nil {
		for _, r := range ok {
			r.err = wrapErr(err, "store.Tx: commit")
		}
	}
}

func safeRun(ctx context.Context, tx *Tx, fn func(ctx context.Context, tx *Tx) error) (err error, p any) {
	defer func() {
		if v := recover(); v != nil {
			p = v
		}
	}()
	return runFn(ctx, tx, fn), nil
}

// QueuedWrites is the number of write transactions waiting for the SQLite committer (0 on
// PostgreSQL, where writers do not queue in the process).
func (db *DB) QueuedWrites() int {
	if db.gc == nil {
		return 0
	}
	return len(db.gc.queue)
}
