package remit

import "time"

// Backlog is the work waiting in the store, over every merchant account: what GET /metrics shows
// of the queues (docs/operations.md, "Metrics"). It is read from the store, so every process on
// one PostgreSQL store shows the same figures.
type Backlog struct {
	Webhooks Queue // webhook deliveries pending (due now, in flight or waiting for a retry)
	Emails   Queue // customer e-mail queued (due now, in flight or waiting for a retry)
	// ReconcilePayments are payment attempts left processing, ReconcileRefunds refunds left
	// pending at the processor: what the reconciler has to resolve.
	ReconcilePayments, ReconcileRefunds int
	// DunningScheduled are the dunning retries scheduled; DunningDue those of them whose time has
	// come on their merchant clock and that the scheduler has not run yet (0 while it keeps up).
	DunningScheduled, DunningDue int
}

// Queue is the size of one queue and the age of its oldest item (0 when it is empty).
type Queue struct {
	Depth  int
	Oldest time.Duration
}

// Readiness is what GET /readyz answers: whether the store answers and its schema has every
// migration this binary knows (docs/operations.md, "Readiness").
type Readiness struct {
	Store             string // the store's dialect: sqlite, postgres
	MigrationsPending bool
}
