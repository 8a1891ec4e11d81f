package store

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Background WAL checkpoints for SQLite. By default SQLite checkpoints inside the commit that
// grows the write-ahead log past 1,000 pages: that commit copies the log into the database file
// and fsyncs it, on the one writer connection, so every request queued behind it waits. Instead
// a checkpointer on its own connection copies committed pages in the background (PASSIVE: it
// never blocks the writer or readers), and the writer checkpoints by itself only when the log
// grows past writerCheckpointPages, which happens only if the background one falls behind. A
// checkpoint moves data that is already durable in the log: nothing here changes what a commit
// guarantees.

// Measured with the load harness (docs/performance.md): every 50 ms halved grants' p99 (78–116 →
// 42–52 ms) but cost 15–20 % of their throughput and of usage events'; every 5 s made p99 worse
// (171 ms). 200 ms is kept.
const (
	checkpointEvery       = 200 * time.Millisecond
	writerCheckpointPages = 20000 // 80 MiB of log with 4 KiB pages
)

type checkpointer struct {
	db   *sql.DB
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, stop: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				// Errors (SQLITE_BUSY while another checkpoint runs, a closed store) only delay
				// the next checkpoint; the writer's own threshold is the backstop.
				_, _ = c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
			}
		}
	}()
	return c
}

// close stops the checkpointer; closing twice (a store closed twice) is a no-op.
func (c *checkpointer) close() (err error) {
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		err = c.db.Close()
	})
	return err
}
