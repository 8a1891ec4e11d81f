package store

import (
	"fmt"

	"github.com/pressly/goose/v3"
)

// catalogMigration (version 41) adds catalog depth (docs/entitlements.md): products become a
// resource of their own (name, description, active, metadata; the products prices created on first
// use are kept and named after their ID), features, the features each product grants, and the
// entitlement versions with their triggers. It is a Go migration because a trigger is written
// differently on SQLite and PostgreSQL.
//
// The entitlement versions: one row per merchant account and customer (customer_id ” for the
// account's catalog) whose version moves, by trigger, in the same transaction as every change
// that can change the customer's entitlements: a subscription inserted, deleted or changed in its
// status, items, customer or period; a usage event recorded or voided; a product granting or no
// longer granting a feature, or a grant's limit or value changing; a meter's aggregation changing.
// An entitlement check reads the customer's two versions; a cached answer of other versions is
// computed again (app/entitlements.go).
func catalogMigration(d Dialect) *goose.Migration {
	up := []string{
		`ALTER TABLE products ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE products ADD COLUMN description TEXT`,
		`ALTER TABLE products ADD COLUMN active BOOLEAN NOT NULL DEFAULT TRUE`,
		`ALTER TABLE products ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'`,
		`UPDATE products SET name = id WHERE name = ''`,
		`CREATE INDEX products_list ON products(merchant_account_id, created_at, id)`,
		`CREATE INDEX products_active_list ON products(merchant_account_id, active, created_at, id)`,
		`CREATE TABLE features (
			merchant_account_id TEXT NOT NULL,
			id                  TEXT NOT NULL,
			name                TEXT NOT NULL,
			type                TEXT NOT NULL,
			meter_id            TEXT,
			created_at          BIGINT NOT NULL,
			PRIMARY KEY (merchant_account_id, id)
		)`,
		`CREATE INDEX features_list ON features(merchant_account_id, created_at, id)`,
		`CREATE TABLE product_features (
			merchant_account_id TEXT NOT NULL,
			product_id          TEXT NOT NULL,
			feature_key         TEXT NOT NULL,
			limit_units         BIGINT,
			soft_limit          BOOLEAN NOT NULL DEFAULT FALSE,
			value               TEXT,
			PRIMARY KEY (merchant_account_id, product_id, feature_key),
			FOREIGN KEY (merchant_account_id, product_id) REFERENCES products(merchant_account_id, id),
			FOREIGN KEY (merchant_account_id, feature_key) REFERENCES features(merchant_account_id, id)
		)`,
		`CREATE TABLE entitlement_versions (
			merchant_account_id TEXT NOT NULL,
			customer_id         TEXT NOT NULL,
			version             BIGINT NOT NULL,
			PRIMARY KEY (merchant_account_id, customer_id)
		)`,
		// The last entitlements each customer was told of (customer.entitlements_changed): the
		// features held and the metered ones exhausted, as JSON.
		`CREATE TABLE entitlement_states (
			merchant_account_id TEXT NOT NULL,
			customer_id         TEXT NOT NULL,
			state               TEXT NOT NULL,
			PRIMARY KEY (merchant_account_id, customer_id)
		)`,
	}
	// Grants' spending priority and category (docs/catalog-and-balance.md "Spending order"):
	// existing lots keep the default priority; grants are promotional, top-ups and credit notes
	// paid, and an application or expiry takes its lot's.
	up = append(up,
		`ALTER TABLE balance_entries ADD COLUMN priority BIGINT NOT NULL DEFAULT 50`,
		`ALTER TABLE balance_entries ADD COLUMN category TEXT NOT NULL DEFAULT 'promotional'`,
		`UPDATE balance_entries SET category = 'paid' WHERE type IN ('top_up', 'credit_note')`,
		`UPDATE balance_entries SET category = (SELECT s.category FROM balance_entries s WHERE s.merchant_account_id = balance_entries.merchant_account_id
			AND s.customer_id = balance_entries.customer_id AND s.id = balance_entries.source_entry_id) WHERE source_entry_id IS NOT NULL`,
	)
	down := []string{`DROP TABLE entitlement_states`, `DROP TABLE entitlement_versions`, `DROP TABLE product_features`, `DROP TABLE features`,
		`DROP INDEX products_active_list`, `DROP INDEX products_list`,
		`ALTER TABLE products DROP COLUMN metadata`, `ALTER TABLE products DROP COLUMN active`,
		`ALTER TABLE products DROP COLUMN description`, `ALTER TABLE products DROP COLUMN name`,
		`ALTER TABLE balance_entries DROP COLUMN category`, `ALTER TABLE balance_entries DROP COLUMN priority`}
	t, tdown := entitlementTriggers(d)
	up = append(up, t...)
	down = append(tdown, down...)
	return statementsMigration(41, up, down)
}

// entitlementTrigger is one trigger moving an entitlement version: on table, after ops (each
// "INSERT", "DELETE" or "UPDATE OF columns"), for the row's customer (customer) or the account's
// catalog.
type entitlementTrigger struct {
	table    string
	ops      []string
	customer bool
}

var entitlementTriggerList = []entitlementTrigger{
	{"subscriptions", []string{"INSERT", "DELETE", "UPDATE OF status, items, customer_id, current_period_start, current_period_end"}, true},
	{"usage_events", []string{"INSERT", "UPDATE OF voided_at"}, true},
	{"product_features", []string{"INSERT", "DELETE", "UPDATE"}, false},
	{"meters", []string{"UPDATE"}, false},
}

const bumpEntitlements = `INSERT INTO entitlement_versions (merchant_account_id, customer_id, version) VALUES (%s.merchant_account_id, %s, 1)
	ON CONFLICT (merchant_account_id, customer_id) DO UPDATE SET version = entitlement_versions.version + 1;`

func entitlementTriggers(d Dialect) (up, down []string) {
	bump := func(row string, customer bool) string {
		who := "''"
		if customer {
			who = row + ".customer_id"
		}
		return fmt.Sprintf(bumpEntitlements, row, who)
	}
	if d == Postgres {
		for _, customer := range []bool{true, false} {
			name := map[bool]string{true: "bump_customer_entitlements", false: "bump_catalog_entitlements"}[customer]
			up = append(up, `CREATE FUNCTION `+name+`() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF TG_OP = 'DELETE' THEN `+bump("OLD", customer)+` ELSE `+bump("NEW", customer)+` END IF; RETURN NULL; END $$`)
			down = append(down, `DROP FUNCTION `+name+`()`)
		}
	}
	for _, t := range entitlementTriggerList {
		for i, op := range t.ops {
			name := fmt.Sprintf("%s_entitlements_%d", t.table, i)
			row := "NEW"
			if op == "DELETE" {
				row = "OLD"
			}
			if d == Postgres {
				fn := map[bool]string{true: "bump_customer_entitlements", false: "bump_catalog_entitlements"}[t.customer]
				up = append(up, `CREATE TRIGGER `+name+` AFTER `+op+` ON `+t.table+` FOR EACH ROW EXECUTE FUNCTION `+fn+`()`)
				down = append([]string{`DROP TRIGGER ` + name + ` ON ` + t.table}, down...)
			} else {
				up = append(up, `CREATE TRIGGER `+name+` AFTER `+op+` ON `+t.table+` BEGIN `+bump(row, t.customer)+` END`)
				down = append([]string{`DROP TRIGGER ` + name}, down...)
			}
		}
	}
	return up, down
}
