package store_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// The store contract: every test runs on SQLite and, when configured, PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			// A migrated copy on SQLite (testkit.MigratedStoreURL): migrating an empty store under
			// the race detector takes seconds, and the migrations' own tests start from empty.
			db, err := store.Open(context.Background(), testkit.MigratedStoreURL(t, s))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			fn(t, db)
		})
	}
}

func TestMigrateIsRepeatable(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
	})
}

func TestTxCommitsRollsBackAndJoins(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.NextNumber(ctx, "s", "rolled-back"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		err = db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			// A nested Tx joins the outer one: both numbers come from one transaction.
			return db.Tx(ctx, func(ctx context.Context, inner *store.Tx) error {
				if inner != tx {
					t.Error("nested Tx did not join the outer transaction")
				}
				n, err := inner.NextNumber(ctx, "s", "rolled-back")
				if n != 1 {
					t.Errorf("number after rollback = %d, want 1 (the rolled-back number is reused)", n)
				}
				return err
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// Concurrent transactions, some failing and one panicking, in the same group-commit batches: every
// successful one commits, every failed one leaves nothing, numbers stay gap-free.
func TestConcurrentTransactionsIsolateFailures(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 200
		var wg sync.WaitGroup
		var mu sync.Mutex
		var got []int64
		failures := 0
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if p := recover(); p != nil {
						mu.Lock()
						failures++
						mu.Unlock()
					}
				}()
				var num int64
				err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
					var err error
					num, err = tx.NextNumber(ctx, "m", "invoice")
					if err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2)`, fmt.Sprintf("k%d", i), "v"); err != nil {
						return err
					}
					switch {
					case i%10 == 3:
						return errors.New("rule refused")
					case i == 77:
						panic("handler bug")
					}
					return nil
				})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures++
					return
				}
				got = append(got, num)
			}()
		}
		wg.Wait()
		if failures != 21 { // 20 refused + 1 panic
			t.Fatalf("failures = %d, want 21", failures)
		}
		sort.Slice(got, func(a, b int) bool { return got[a] < got[b] })
		for i, v := range got {
			if v != int64(i+1) {
				t.Fatalf("numbers are not gap-free: position %d has %d (%v)", i, v, got)
			}
		}
		var rows int
		if err := db.Read(ctx).QueryRow(ctx, `SELECT COUNT(*) FROM settings WHERE name LIKE 'k%'`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != n-21 {
			t.Fatalf("%d rows committed, want %d: a failed transaction left rows or a good one lost them", rows, n-21)
		}
	})
}

// TestIdempotencyRecords: a remembered answer is found, kept from strangers, forgotten only by its
// owner and purged after the retention.
func TestIdempotencyRecords(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		rec := store.IdempotencyRecord{Route: "POST /v1/x", BodyHash: "h1", Owner: "o1", LeaseUntil: now.Add(time.Minute), CreatedAt: now}
		tx := func(fn func(ctx context.Context, tx *store.Tx) error) {
			t.Helper()
			if err := db.Tx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		lookup := func() (store.IdempotencyRecord, bool) {
			var ex store.IdempotencyRecord
			var found bool
			tx(func(ctx context.Context, tx *store.Tx) error {
				var err error
				ex, found, err = tx.LookupIdempotency(ctx, "scope", "k")
				return err
			})
			return ex, found
		}
		tx(func(ctx context.Context, tx *store.Tx) error {
			if ok, err := tx.StoreIdempotency(ctx, "scope", "k", rec, "", 201, []byte(`{"a":1}`)); !ok || err != nil {
				t.Fatalf("first answer not stored: %v %v", ok, err)
			}
			other := rec
			other.Owner = "o2"
			if ok, err := tx.StoreIdempotency(ctx, "scope", "k", other, "", 200, []byte("x")); ok || err != nil {
				t.Fatalf("a second new record was stored: %v %v", ok, err)
			}
			return tx.ForgetIdempotency(ctx, "scope", "k", "o2") // not its owner: nothing happens
		})
		if ex, found := lookup(); !found || ex.State != "done" || ex.Owner != "o1" || ex.Status != 201 || string(ex.Response) != `{"a":1}` {
			t.Fatalf("lookup: found=%v %+v", found, ex)
		}
		var n int64
		tx(func(ctx context.Context, tx *store.Tx) error {
			var err error
			n, err = tx.PurgeIdempotency(ctx, now.Add(time.Hour))
			return err
		})
		if _, found := lookup(); n != 1 || found {
			t.Fatalf("purge: n=%d, still found %v", n, found)
		}
	})
}

// TestStoreIdempotency: the one write of a key claimed inside its request's transaction.
func TestStoreIdempotency(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		rec := func(owner string) store.IdempotencyRecord {
			return store.IdempotencyRecord{Route: "POST /v1/x", BodyHash: "h", Owner: owner, LeaseUntil: now.Add(time.Minute), CreatedAt: now}
		}
		put := func(owner, replaces string, status int) bool {
			var ok bool
			if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				var err error
				ok, err = tx.StoreIdempotency(ctx, "scope", "k2", rec(owner), replaces, status, []byte(owner))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok
		}
		get := func() store.IdempotencyRecord {
			var r store.IdempotencyRecord
			if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				var found bool
				var err error
				if r, found, err = tx.LookupIdempotency(ctx, "scope", "k2"); err == nil && !found {
					t.Error("record not found")
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return r
		}
		if !put("o1", "", 201) {
			t.Fatal("a free key was not stored")
		}
		if put("o2", "", 200) {
			t.Fatal("a second answer for a new key was stored over the first")
		}
		if put("o3", "o-unknown", 200) {
			t.Fatal("a takeover of a record that is not there by that owner succeeded")
		}
		if r := get(); r.Owner != "o1" || r.State != "done" || r.Status != 201 || string(r.Response) != "o1" {
			t.Fatalf("record %+v", r)
		}
		if !put("o4", "o1", 200) {
			t.Fatal("the takeover of o1's record failed")
		}
		if r := get(); r.Owner != "o4" || r.Status != 200 || string(r.Response) != "o4" {
			t.Fatalf("after takeover: %+v", r)
		}
		if put("o5", "o1", 200) {
			t.Fatal("a second takeover of the same record succeeded")
		}
	})
}

func TestJobsRunInDueOrderOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := tx.CreateOrganization(ctx, remit.Organization{ID: "org_1", Name: "o", CreatedAt: now}); err != nil {
				return err
			}
			if err := tx.CreateMerchantAccount(ctx, remit.MerchantAccount{ID: "ma_1", OrganizationID: "org_1", Environment: remit.Sandbox,
				ExternalRef: "r", DisplayName: "d", LegalEntityType: "corporation", Country: "US", MerchantMode: "direct",
				DefaultCurrency: "USD", Status: "approved", CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
			for i, due := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour, 48 * time.Hour} {
				if err := tx.InsertJob(ctx, remit.Job{ID: fmt.Sprintf("job_%d", i), MerchantAccountID: "ma_1", Kind: "k", DueAt: now.Add(due)}, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for {
			var id string
			err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				j, ok, err := tx.ClaimDueJob(ctx, "ma_1", now.Add(24*time.Hour))
				if err != nil || !ok {
					return err
				}
				id = j.ID
				return tx.FinishJob(ctx, j.ID, now)
			})
			if err != nil {
				t.Fatal(err)
			}
			if id == "" {
				break
			}
			order = append(order, id)
		}
		if fmt.Sprint(order) != "[job_1 job_2 job_0]" {
			t.Fatalf("ran %v, want the three due jobs in due order", order)
		}
		ids, err := db.Read(ctx).MerchantsWithDueJobs(ctx, now.Add(49*time.Hour), 10)
		if err != nil || len(ids) != 1 {
			t.Fatalf("due merchants %v, %v", ids, err)
		}
	})
}

func TestSettingIsCreatedOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var wg sync.WaitGroup
		vals := make([]string, 10)
		for i := range vals {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
					var err error
					vals[i], err = tx.Setting(ctx, "key", func() string { return fmt.Sprint(i) })
					return err
				})
			}()
		}
		wg.Wait()
		for _, v := range vals {
			if v != vals[0] || v == "" {
				t.Fatalf("callers disagree on the setting: %v", vals)
			}
		}
	})
}
