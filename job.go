package remit

import (
	"encoding/json"
	"time"
)

// Scheduled work and what happens when it fails (docs/reliability.md "Scheduled work that
// fails"). A job runs on its merchant account's clock; one that fails is tried again later, on
// the backoff of JobRetryAt, and only a job that failed every attempt is failed for good: a state
// listed by GET /v1/jobs?status=failed, counted in /metrics, named by the verification's due_work
// check, and put back to pending by an operator (POST /v1/jobs/{id}/retry).

// Job kinds. Each area registers the function that runs its kinds (app, registerJobs).
const (
	JobSubscriptionRenew   = "subscription.renew"
	JobTrialEnding         = "subscription.trial_ending"
	JobRenewalNotice       = "subscription.renewal_notice"
	JobInvoiceAutoFinalize = "invoice.auto_finalize"
	JobDunningRetry        = "invoice.dunning_retry"
	JobGrantEffective      = "balance.grant_effective"
	JobGrantExpire         = "balance.grant_expire"
	JobSettlementClose     = "settlement.close"
	JobSettlementPayout    = "settlement.payout"
	JobRecognizeRevenue    = "revenue.recognize"
	JobPriceMigrationBatch = "price_migration.batch"
)

// JobKinds lists every kind.
var JobKinds = []string{JobSubscriptionRenew, JobTrialEnding, JobRenewalNotice, JobInvoiceAutoFinalize, JobDunningRetry,
	JobGrantEffective, JobGrantExpire, JobSettlementClose, JobSettlementPayout, JobRecognizeRevenue, JobPriceMigrationBatch}

// jobMovesMoney: the kinds that bill, collect or move a balance or a payout. A notice (an e-mail
// before a renewal, the end of a trial coming) moves nothing.
var jobMovesMoney = map[string]bool{
	JobSubscriptionRenew: true, JobInvoiceAutoFinalize: true, JobDunningRetry: true,
	JobGrantEffective: true, JobGrantExpire: true, JobSettlementClose: true, JobSettlementPayout: true,
	JobRecognizeRevenue: true, JobPriceMigrationBatch: true,
}

// JobBillsOrCollects reports whether a job of kind bills, collects or moves money: its failure
// loses revenue or leaves a balance wrong until it runs.
func JobBillsOrCollects(kind string) bool { return jobMovesMoney[kind] }

// JobStatus is the state of a job.
type JobStatus string

// Job states. A job that failed and waits for its next attempt is pending, with attempts > 0 and
// its last error.
const (
	JobPending JobStatus = "pending"
	JobDone    JobStatus = "done"
	JobFailed  JobStatus = "failed"
)

// JobStatuses lists the states.
var JobStatuses = []JobStatus{JobPending, JobDone, JobFailed}

// ActionRetry is an operator's retry of a job failed for good (JobStates).
const ActionRetry = "retried"

// Job is scheduled work on a merchant account's clock, as the runner and the API see it.
type Job struct {
	Object            string          `json:"object"` // always "job"
	ID                string          `json:"jobId"`
	MerchantAccountID string          `json:"merchantAccountId"`
	Environment       Environment     `json:"environment"`
	Kind              string          `json:"kind"`
	Status            JobStatus       `json:"status"`
	Payload           json.RawMessage `json:"payload"`
	// ScheduledFor is the moment on the merchant clock the work is for (a renewal at the period's
	// end); DueAt when its next attempt runs: the same until an attempt failed.
	ScheduledFor time.Time  `json:"scheduledFor"`
	DueAt        time.Time  `json:"dueAt"`
	Attempts     int        `json:"attempts"`
	LastError    *JobError  `json:"lastError"`
	CreatedAt    time.Time  `json:"createdAt"`
	FinishedAt   *time.Time `json:"finishedAt"`
}

// JobQuery is the jobs list's query, every value the raw query string ("" when absent).
type JobQuery struct {
	Status, Kind string
	ListQuery
}

// JobError is why a job's last attempt failed, in the API's words (never an internal detail: an
// internal error says only that it was one, and the log has the rest under the job's ID).
type JobError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// JobFailure is err as a job's last error.
func JobFailure(err error) JobError {
	code := ErrorCode(err)
	if code == EInternal {
		return JobError{Code: code, Message: "An internal error occurred; the log has its details under the job's ID."}
	}
	return JobError{Code: code, Message: ErrorMessage(err)}
}

// JobRetryDelays is the backoff between a job's failed attempts: after the n-th failure the next
// attempt is JobRetryDelays[n-1] later on the merchant clock. A job whose last attempt of
// MaxJobAttempts failed is failed for good.
var JobRetryDelays = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}

// MaxJobAttempts is how many times a job runs before it is failed for good.
var MaxJobAttempts = len(JobRetryDelays) + 1

// JobRetryAt is when a job that failed its attempts-th attempt (1 for the first) at now runs
// again, and false when it is failed for good.
func JobRetryAt(attempts int, now time.Time) (time.Time, bool) {
	if attempts < 1 || attempts >= MaxJobAttempts {
		return time.Time{}, false
	}
	return now.Add(JobRetryDelays[attempts-1]), true
}
