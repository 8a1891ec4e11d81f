package store_test

import (
	"context"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// Migration 24 keeps every row of the usage pre-aggregates; on SQLite the tables are then
// clustered on their keys (WITHOUT ROWID: they have no rowid left to select).
func TestUsagePreaggregatesClusteredMigration(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			ctx := context.Background()
			db := storeBefore(t, s, 23)
			rows := map[string]string{
				"usage_totals": `INSERT INTO usage_totals (merchant_account_id, customer_id, meter_id, total, event_count, next_threshold, updated_at, latest_ts, latest_seq, seq)
					VALUES ('ma', 'c', 'm', 7, 2, 10, 5, 4, 2, 2)`,
				"usage_hourly": `INSERT INTO usage_hourly (merchant_account_id, customer_id, meter_id, hour_start, quantity, event_count, max_quantity, latest_ts, latest_seq, latest_quantity)
					VALUES ('ma', 'c', 'm', 3600000000, 7, 2, 5, 4, 2, 5)`,
				"usage_unique_hourly": `INSERT INTO usage_unique_hourly (merchant_account_id, customer_id, meter_id, hour_start, value, events)
					VALUES ('ma', 'c', 'm', 3600000000, 'u1', 2)`,
				"usage_unique_values": `INSERT INTO usage_unique_values (merchant_account_id, customer_id, meter_id, value, events) VALUES ('ma', 'c', 'm', 'u1', 2)`,
			}
			for _, q := range rows {
				if _, err := db.SQL().ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var total, seq, latest, events int64
			if err := db.SQL().QueryRowContext(ctx, `SELECT t.total, t.seq, h.latest_quantity, u.events + v.events FROM usage_totals t
				JOIN usage_hourly h ON h.customer_id = t.customer_id JOIN usage_unique_hourly u ON u.customer_id = t.customer_id
				JOIN usage_unique_values v ON v.customer_id = t.customer_id`).Scan(&total, &seq, &latest, &events); err != nil {
				t.Fatal(err)
			}
			if total != 7 || seq != 2 || latest != 5 || events != 4 {
				t.Fatalf("after migration: total %d seq %d latest %d events %d", total, seq, latest, events)
			}
			if s != testkit.SQLite {
				return
			}
			for table := range rows {
				if _, err := db.SQL().ExecContext(ctx, `SELECT rowid FROM `+table); err == nil {
					t.Errorf("%s still has a rowid", table)
				}
			}
		})
	}
}
