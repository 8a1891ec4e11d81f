package reliability_test

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// TestPriceMigrationCrash is the crash of docs/reliability.md "A price migration that crashes":
// 10,000 subscriptions on one price are migrated next_renewal by `serve`, which is killed
// (SIGKILL) in the middle and started again; the store then shows every subscription migrated
// exactly once (its row migrated, one subscription.updated event, its pending change on the new
// price), the migration's counts adding up to its total, one price_migration.completed, no job
// failed. The subscriptions are seeded through the store's tables, not the API.
func TestPriceMigrationCrash(t *testing.T) {
	bin := testkit.BuildRemit(t)
	t.Run("sqlite", func(t *testing.T) {
		priceMigrationCrash(t, bin, testkit.NewStoreURL(t, testkit.SQLite), 10000)
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("REMIT_TEST_POSTGRES_URL") == "" {
			if os.Getenv("REMIT_CI") != "" {
				t.Fatal("REMIT_TEST_POSTGRES_URL is needed")
			}
			t.Skip("needs REMIT_TEST_POSTGRES_URL")
		}
		priceMigrationCrash(t, bin, testkit.NewStoreURL(t, testkit.Postgres), 10000)
	})
}

func priceMigrationCrash(t *testing.T, bin, dbURL string, n int) {
	env := append(os.Environ(),
		"REMIT_DATABASE_URL="+dbURL, "REMIT_REDIS_URL=", "REMIT_LOG_LEVEL=warn",
		"REMIT_RATE_LIMIT=1000000", "REMIT_RATE_BURST=1000000", "REMIT_SCHEDULER_INTERVAL=50ms",
		"REMIT_DATABASE_MAX_CONNS=8",
	)
	tn := bootstrap(t, bin, env, "Price migration")
	proc := testkit.StartServe(t, bin, env, testkit.FreeAddr(t))
	procs := []*testkit.Process{proc}
	defer func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("serve process %d logged:\n%s", i, p.Stderr.String())
			}
		}
	}()
	c := newClient(proc.Base)
	for id, amount := range map[string]int{"old": 2000, "new": 2500} {
		c.must(t, 200, tn, "POST", "/v1/prices", map[string]any{"priceId": id, "productId": "plan", "name": "Plan " + id,
			"priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": amount})
	}
	db := openStore(t, dbURL)
	began := time.Now()
	seedSubscriptions(t, db, strings.HasPrefix(dbURL, "sqlite:"), tn.sandbox(), "old", n)
	t.Logf("seeded %d subscriptions in %s", n, time.Since(began).Round(time.Millisecond))

	began = time.Now()
	pm := c.must(t, 202, tn, "POST", "/v1/price-migrations", map[string]any{"fromPriceId": "old", "toPriceId": "new", "effective": "next_renewal"})
	id, _ := pm["migrationId"].(string)
	if num(pm["total"]) != n || pm["status"] != "running" {
		t.Fatalf("migration %v", pm)
	}
	migrated := `SELECT COUNT(*) FROM price_migration_items WHERE merchant_account_id = $1 AND migration_id = $2 AND status = 'migrated'`
	testkit.WaitFor(t, 60*time.Second, "a third migrated", func() bool { return count(t, db, migrated, tn.sandbox(), id) >= n/3 })
	at := count(t, db, migrated, tn.sandbox(), id)
	proc.Kill(t)
	t.Logf("killed serve at %d of %d migrated (%s)", at, n, time.Since(began).Round(time.Millisecond))
	if at >= n {
		t.Fatalf("the migration ended before the kill (%d migrated)", at)
	}
	proc = testkit.StartServe(t, bin, env, testkit.FreeAddr(t))
	procs = append(procs, proc)
	c = newClient(proc.Base)
	var got map[string]any
	testkit.WaitFor(t, 60*time.Second, "the migration completed", func() bool {
		got = c.must(t, 200, tn, "GET", "/v1/price-migrations/"+id, nil)
		return got["status"] != "running"
	})
	t.Logf("completed after %s: %v", time.Since(began).Round(time.Millisecond), got)
	checkMigratedOnce(t, db, tn.sandbox(), id, n, got)
}

// checkMigratedOnce checks the store after a migration of n subscriptions from "old" to "new".
func checkMigratedOnce(t *testing.T, db *sql.DB, ma, id string, n int, got map[string]any) {
	t.Helper()
	if got["status"] != "completed" || num(got["total"]) != n || num(got["migrated"]) != n || num(got["skipped"]) != 0 || num(got["failed"]) != 0 {
		t.Fatalf("migration %v", got)
	}
	for what, q := range map[string]string{
		"rows migrated": `SELECT COUNT(*) FROM price_migration_items WHERE merchant_account_id = $1 AND migration_id = $2 AND status = 'migrated'`,
		"subscriptions with their pending change on the new price": `SELECT COUNT(*) FROM subscriptions WHERE merchant_account_id = $1 AND $2 <> ''
			AND pending_items LIKE '%"priceId":"new"%' AND items LIKE '%"priceId":"old"%'`,
		"subscriptions with one subscription.updated": `SELECT COUNT(*) FROM (SELECT object_id FROM events WHERE merchant_account_id = $1 AND $2 <> ''
			AND type = 'subscription.updated' GROUP BY object_id HAVING COUNT(*) = 1) x`,
	} {
		if c := count(t, db, q, ma, id); c != n {
			t.Errorf("%s: %d, want %d", what, c, n)
		}
	}
	if c := count(t, db, `SELECT COUNT(*) FROM events WHERE merchant_account_id = $1 AND type = 'subscription.updated'`, ma); c != n {
		t.Errorf("%d subscription.updated events for %d subscriptions", c, n)
	}
	if c := count(t, db, `SELECT COUNT(*) FROM events WHERE merchant_account_id = $1 AND type = 'price_migration.completed' AND object_id = $2`, ma, id); c != 1 {
		t.Errorf("%d price_migration.completed events", c)
	}
	if c := count(t, db, `SELECT COUNT(*) FROM jobs WHERE merchant_account_id = $1 AND status = 'failed'`, ma); c != 0 {
		t.Errorf("%d jobs failed", c)
	}
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// seedSubscriptions adds n customers with a send_invoice billing account and one active monthly
// subscription on priceID each, in multi-row INSERTs of one transaction.
func seedSubscriptions(t *testing.T, db *sql.DB, sqlite bool, ma, priceID string, n int) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	start, end := remit.Micros(now), remit.Micros(remit.AddInterval(now, "month", 1))
	items := `[{"priceId":"` + priceID + `","priceType":"fixed_recurring","quantity":1,"unitAmount":2000,"description":"Plan"}]`
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const per = 400
	for done := 0; done < n; done += per {
		var cus, ba, sub [][]any
		for i := done; i < min(n, done+per); i++ {
			cid, bid, sid := fmt.Sprintf("cus_m%06d", i), fmt.Sprintf("ba_m%06d", i), fmt.Sprintf("sub_m%06d", i)
			cus = append(cus, []any{ma, cid, "Subscriber " + strconv.Itoa(i), false, "{}", start})
			ba = append(ba, []any{ma, bid, cid, "USD", "send_invoice", "{}", start, start})
			sub = append(sub, []any{ma, sid, "active", cid, bid, "USD", items, "month", 1, start, 1, start, end, "[]", "{}", start, start, "[]"})
		}
		for _, ins := range []struct {
			table, cols string
			rows        [][]any
		}{
			{"customers", "merchant_account_id, id, name, tax_exempt, metadata, created_at", cus},
			{"billing_accounts", "merchant_account_id, id, customer_id, currency, collection_method, metadata, created_at, updated_at", ba},
			{"subscriptions", `merchant_account_id, id, status, customer_id, billing_account_id, currency, items, billing_interval,
				billing_interval_count, cycle_anchor, cycle_periods, current_period_start, current_period_end, coupon_ids, metadata,
				created_at, updated_at, pending_prorations`, sub},
		} {
			query, args := multiInsert(sqlite, ins.table, ins.cols, ins.rows)
			if _, err := tx.Exec(query, args...); err != nil {
				t.Fatalf("seed %s: %v", ins.table, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// multiInsert is one INSERT of rows; SQLite's parameters are ? (it looks $N names up one by one).
func multiInsert(sqlite bool, table, cols string, rows [][]any) (string, []any) {
	var sb strings.Builder
	var args []any
	sb.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
	for r, row := range rows {
		if r > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for c, v := range row {
			if c > 0 {
				sb.WriteString(", ")
			}
			args = append(args, v)
			if sqlite {
				sb.WriteByte('?')
			} else {
				sb.WriteString("$" + strconv.Itoa(len(args)))
			}
		}
		sb.WriteByte(')')
	}
	return sb.String(), args
}
