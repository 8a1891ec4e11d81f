package remit

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func migrationPrice(id, currency, interval string, count int64, unit int64) Price {
	return Price{PriceID: id, PriceType: PriceFixedRecurring, Currency: currency, BillingInterval: &interval, BillingIntervalCount: &count,
		UnitAmount: &unit, Name: "Plan " + id}
}

func problemsOf(p Problems) []string {
	var out []string
	for _, f := range p.Fields() {
		out = append(out, f.Field+":"+f.Reason)
	}
	slices.Sort(out)
	return out
}

func TestCheckPriceMigrationRequest(t *testing.T) {
	for _, c := range []struct {
		name string
		in   PriceMigrationInput
		want []string
	}{
		{"OK", PriceMigrationInput{FromPriceID: "a", ToPriceID: "b", Effective: ChangeNextRenewal}, nil},
		{"OKNowWithBehavior", PriceMigrationInput{FromPriceID: "a", ToPriceID: "b", Effective: ChangeNow, ProrationBehavior: ProrationNone}, nil},
		{"ErrEverything", PriceMigrationInput{Effective: "later", ProrationBehavior: "some", CustomerIDs: []string{"c", ""}},
			[]string{"customerIds[1]:required", "effective:invalid_enum", "fromPriceId:required", "prorationBehavior:invalid_enum", "toPriceId:required"}},
		{"ErrSamePrice", PriceMigrationInput{FromPriceID: "a", ToPriceID: "a", Effective: ChangeNow}, []string{"toPriceId:same_price"}},
		{"ErrEffectiveMissing", PriceMigrationInput{FromPriceID: "a", ToPriceID: "b"}, []string{"effective:invalid_enum"}},
		{"ErrTooManyCustomers", PriceMigrationInput{FromPriceID: "a", ToPriceID: "b", Effective: ChangeNow, CustomerIDs: make([]string, 1001)},
			nil}, // checked below: too_many and 1001 required
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Problems
			CheckPriceMigrationRequest(c.in, &p)
			got := problemsOf(p)
			if c.name == "ErrTooManyCustomers" {
				if !slices.Contains(got, "customerIds:too_many") {
					t.Fatalf("got %v", got)
				}
				return
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestCheckMigrationPrices(t *testing.T) {
	usd := migrationPrice("usd", "USD", "month", 1, 1000)
	oneTime := usd
	oneTime.PriceID, oneTime.PriceType = "once", PriceFixedOneTime
	for _, c := range []struct {
		name     string
		from, to Price
		want     []string
	}{
		{"OK", usd, migrationPrice("usd2", "USD", "month", 1, 1200), nil},
		{"ErrCurrency", usd, migrationPrice("eur", "EUR", "month", 1, 1000), []string{"fromPriceId:currency_mismatch", "toPriceId:currency_mismatch"}},
		{"ErrInterval", usd, migrationPrice("year", "USD", "year", 1, 1000), []string{"fromPriceId:interval_mismatch", "toPriceId:interval_mismatch"}},
		{"ErrIntervalCount", usd, migrationPrice("q", "USD", "month", 3, 1000), []string{"fromPriceId:interval_mismatch", "toPriceId:interval_mismatch"}},
		{"ErrBoth", usd, migrationPrice("eury", "EUR", "year", 1, 1000), []string{"fromPriceId:currency_mismatch", "fromPriceId:interval_mismatch",
			"toPriceId:currency_mismatch", "toPriceId:interval_mismatch"}},
		{"ErrNotRecurring", usd, oneTime, []string{"toPriceId:not_recurring"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Problems
			CheckMigrationPrices(c.from, c.to, &p)
			if got := problemsOf(p); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestPlanSubscriptionMigration(t *testing.T) {
	to := migrationPrice("new", "USD", "month", 1, 2500)
	two := int64(2)
	old := SubscriptionItem{PriceID: "old", PriceType: PriceFixedRecurring, UnitAmount: 2000, Quantity: &two, Description: "Old"}
	addon := SubscriptionItem{PriceID: "addon", PriceType: PriceFixedRecurring, UnitAmount: 300, Description: "Add-on"}
	onNew := SubscriptionItem{PriceID: "new", PriceType: PriceFixedRecurring, UnitAmount: 2500}
	sub := func(status SubscriptionStatus, items []SubscriptionItem, pending []SubscriptionItem) Subscription {
		return Subscription{SubscriptionID: "sub_1", Status: status, Items: items, PendingItems: pending}
	}
	moved := []SubscriptionItem{{PriceID: "new", PriceType: PriceFixedRecurring, UnitAmount: 2500, Quantity: &two, Description: "Plan new"}, addon}
	for _, c := range []struct {
		name      string
		sub       Subscription
		effective string
		outcome   string
		change    bool
		direct    bool
		items     []SubscriptionItem
		pending   []SubscriptionItem
		code      string
	}{
		{"ActiveNextRenewal", sub(SubscriptionActive, []SubscriptionItem{old, addon}, nil), ChangeNextRenewal, MigrationMigrated, true, false, moved, nil, ""},
		{"ActiveNow", sub(SubscriptionActive, []SubscriptionItem{old, addon}, nil), ChangeNow, MigrationMigrated, true, false, moved, nil, ""},
		{"TrialingNow", sub(SubscriptionTrialing, []SubscriptionItem{old, addon}, nil), ChangeNow, MigrationMigrated, true, false, moved, nil, ""},
		{"PastDue", sub(SubscriptionPastDue, []SubscriptionItem{old, addon}, nil), ChangeNextRenewal, MigrationMigrated, true, false, moved, nil, ""},
		{"PausedDirect", sub(SubscriptionPaused, []SubscriptionItem{old, addon}, nil), ChangeNextRenewal, MigrationMigrated, false, true, moved, nil, ""},
		{"SkippedCanceled", sub(SubscriptionCanceled, []SubscriptionItem{old}, nil), ChangeNow, MigrationSkipped, false, false, nil, nil, ""},
		{"SkippedNotOnPrice", sub(SubscriptionActive, []SubscriptionItem{addon}, nil), ChangeNow, MigrationSkipped, false, false, nil, nil, ""},
		{"SkippedPendingReplacesIt", sub(SubscriptionActive, []SubscriptionItem{old, addon}, []SubscriptionItem{addon}), ChangeNextRenewal,
			MigrationSkipped, false, false, nil, nil, ""},
		{"PendingMigratedNextRenewal", sub(SubscriptionActive, []SubscriptionItem{old, addon}, []SubscriptionItem{old, addon}), ChangeNextRenewal,
			MigrationMigrated, false, false, nil, moved, ""},
		{"PendingKeptNow", sub(SubscriptionActive, []SubscriptionItem{old, addon}, []SubscriptionItem{addon}), ChangeNow,
			MigrationMigrated, true, false, moved, nil, ""},
		{"FailedAlreadyOnNew", sub(SubscriptionActive, []SubscriptionItem{old, onNew}, nil), ChangeNow, MigrationFailed, false, false, nil, nil, "duplicate_item"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := PlanSubscriptionMigration(c.sub, "old", to, c.effective)
			if got.Outcome != c.outcome || got.Change != c.change || got.Direct != c.direct || got.Code != c.code {
				t.Fatalf("got %+v", got)
			}
			if !itemsEqual(got.Items, c.items) || !itemsEqual(got.Pending, c.pending) {
				t.Fatalf("items %+v pending %+v, want %+v and %+v", got.Items, got.Pending, c.items, c.pending)
			}
			if c.code != "" && !strings.Contains(got.Message, "sub_1") {
				t.Fatalf("message %q names no subscription", got.Message)
			}
		})
	}
}

func itemsEqual(a, b []SubscriptionItem) bool {
	return slices.EqualFunc(a, b, func(x, y SubscriptionItem) bool {
		q := func(p *int64) int64 {
			if p == nil {
				return -1
			}
			return *p
		}
		return x.PriceID == y.PriceID && x.UnitAmount == y.UnitAmount && q(x.Quantity) == q(y.Quantity) && x.Description == y.Description &&
			x.PriceType == y.PriceType
	})
}

func TestMigrateItemsMetered(t *testing.T) {
	interval, count := "month", int64(1)
	metered := Price{PriceID: "m2", PriceType: PriceUsageMetered, Currency: "USD", BillingInterval: &interval, BillingIntervalCount: &count}
	got := MigrateItems([]SubscriptionItem{{PriceID: "m1", PriceType: PriceUsageMetered}}, "m1", metered)
	if len(got) != 1 || got[0].PriceID != "m2" || got[0].Quantity != nil {
		t.Fatalf("metered to metered: %+v", got)
	}
	fixed := migrationPrice("f", "USD", "month", 1, 100)
	got = MigrateItems([]SubscriptionItem{{PriceID: "m1", PriceType: PriceUsageMetered}}, "m1", fixed)
	if got[0].Quantity == nil || *got[0].Quantity != 1 {
		t.Fatalf("metered to fixed: %+v", got)
	}
}

// The counts add up: every outcome recorded once, total reached only when all are in; errors
// listed up to MaxMigrationErrors while failed counts them all.
func TestPriceMigrationRecord(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name                      string
		total                     int64
		migrated, skipped, failed int
		complete                  bool
	}{
		{"AllMigrated", 10, 10, 0, 0, true},
		{"Mixed", 10, 6, 3, 1, true},
		{"NotYet", 10, 6, 3, 0, false},
		{"Empty", 0, 0, 0, 0, true},
		{"ManyFailures", 250, 0, 0, 250, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			pm := PriceMigration{Status: PriceMigrationRunning, Total: c.total}
			for range c.migrated {
				pm.Record("s", MigrationMigrated, "", "")
			}
			for range c.skipped {
				pm.Record("s", MigrationSkipped, "", "")
			}
			for range c.failed {
				pm.Record("s", MigrationFailed, "conflict", "no")
			}
			if pm.Migrated != int64(c.migrated) || pm.Skipped != int64(c.skipped) || pm.Failed != int64(c.failed) {
				t.Fatalf("counts %+v", pm)
			}
			if want := min(c.failed, MaxMigrationErrors); len(pm.Errors) != want {
				t.Fatalf("%d errors listed, want %d", len(pm.Errors), want)
			}
			if got := pm.Complete(now); got != c.complete {
				t.Fatalf("Complete = %v, want %v", got, c.complete)
			}
			if c.complete && (pm.Status != PriceMigrationCompleted || pm.Migrated+pm.Skipped+pm.Failed != pm.Total || pm.CompletedAt == nil) {
				t.Fatalf("completed %+v", pm)
			}
			if pm.Complete(now) {
				t.Fatal("completed twice")
			}
		})
	}
}
