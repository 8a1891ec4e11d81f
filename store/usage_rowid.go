package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/pressly/goose/v3"
)

// usageClusteredMigration (version 24) rebuilds SQLite's four usage pre-aggregates as WITHOUT
// ROWID tables: each row then lives in its primary key's B-tree, so the UPSERT every usage event
// makes on each of them walks one B-tree instead of two (the key's index, then the table by
// rowid) and a new row dirties one page instead of two (docs/performance.md "Metering in depth").
// PostgreSQL has no such option and nothing to do.
func usageClusteredMigration(d Dialect) *goose.Migration {
	run := func(clustered bool) *goose.GoFunc {
		return &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			if d == Postgres {
				return nil
			}
			for _, t := range usagePreaggregates {
				if err := rebuildTable(ctx, tx, t, clustered); err != nil {
					return err
				}
			}
			return nil
		}}
	}
	return goose.NewGoMigration(24, run(true), run(false))
}

// usagePreaggregates are the tables usageClusteredMigration rebuilds, as of migration 22.
var usagePreaggregates = []struct{ name, columns string }{
	{"usage_totals", `merchant_account_id TEXT NOT NULL, customer_id TEXT NOT NULL, meter_id TEXT NOT NULL,
		total BIGINT NOT NULL, event_count BIGINT NOT NULL, next_threshold BIGINT, updated_at BIGINT NOT NULL,
		latest_ts BIGINT, latest_seq BIGINT, seq BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (merchant_account_id, customer_id, meter_id), CHECK (total >= 0)`},
	{"usage_hourly", `merchant_account_id TEXT NOT NULL, customer_id TEXT NOT NULL, meter_id TEXT NOT NULL,
		hour_start BIGINT NOT NULL, quantity BIGINT NOT NULL, event_count BIGINT NOT NULL DEFAULT 0,
		max_quantity BIGINT, latest_ts BIGINT, latest_seq BIGINT, latest_quantity BIGINT,
		PRIMARY KEY (merchant_account_id, customer_id, meter_id, hour_start)`},
	{"usage_unique_hourly", `merchant_account_id TEXT NOT NULL, customer_id TEXT NOT NULL, meter_id TEXT NOT NULL,
		hour_start BIGINT NOT NULL, value TEXT NOT NULL, events BIGINT NOT NULL,
		PRIMARY KEY (merchant_account_id, customer_id, meter_id, hour_start, value)`},
	{"usage_unique_values", `merchant_account_id TEXT NOT NULL, customer_id TEXT NOT NULL, meter_id TEXT NOT NULL,
		value TEXT NOT NULL, events BIGINT NOT NULL,
		PRIMARY KEY (merchant_account_id, customer_id, meter_id, value)`},
}

// rebuildTable recreates table t (same columns, same rows), clustered on its primary key or not.
func rebuildTable(ctx context.Context, tx *sql.Tx, t struct{ name, columns string }, clustered bool) error {
	option := ""
	if clustered {
		option = " WITHOUT ROWID"
	}
	names := columnNames(t.columns)
	for _, s := range []string{
		`CREATE TABLE ` + t.name + `_rebuilt (` + t.columns + `)` + option,
		`INSERT INTO ` + t.name + `_rebuilt (` + names + `) SELECT ` + names + ` FROM ` + t.name,
		`DROP TABLE ` + t.name,
		`ALTER TABLE ` + t.name + `_rebuilt RENAME TO ` + t.name,
	} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// columnNames lists the column names of a column list (its definitions before the constraints).
func columnNames(columns string) string {
	var names []string
	for _, def := range strings.Split(columns, ",") {
		f := strings.Fields(def)
		if len(f) < 2 || f[0] == "PRIMARY" || f[0] == "CHECK" || strings.HasPrefix(f[0], "(") {
			continue
		}
		names = append(names, f[0])
	}
	return strings.Join(names, ", ")
}
