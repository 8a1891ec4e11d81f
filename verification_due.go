package remit

import (
	"fmt"
	"time"
)

// The due_work check (docs/verification.md): work that bills or collects and is late. A
// subscription that was not renewed, a draft that was not finalized and a job failed for good
// lose revenue without any error a caller sees; this check names them.

// DueWorkGrace is how late due work may be before the check names it: the scheduler runs due jobs
// within seconds, a job that failed is tried again within minutes (JobRetryDelays), and a
// subscription's draft finalizes an hour after its period starts.
const DueWorkGrace = time.Hour

// SubscriptionDueFacts is a subscription whose current period ended before the check's cutoff
// (now less DueWorkGrace), as the store has it.
type SubscriptionDueFacts struct {
	SubscriptionID   string
	Status           SubscriptionStatus
	CurrentPeriodEnd time.Time
	Now              time.Time // the merchant clock
}

// CheckSubscriptionDue names a live subscription (trialing, active, past_due) whose period ended
// more than DueWorkGrace ago: its renewal (or its cancellation at the period's end) did not run.
func CheckSubscriptionDue(f SubscriptionDueFacts) []string {
	switch f.Status {
	case SubscriptionTrialing, SubscriptionActive, SubscriptionPastDue:
	default:
		return nil
	}
	late := f.Now.Sub(f.CurrentPeriodEnd)
	if late <= DueWorkGrace {
		return nil
	}
	return []string{fmt.Sprintf("is %s but its period ended at %s, %s ago, and it was not renewed (see GET /v1/jobs?status=failed)",
		f.Status, f.CurrentPeriodEnd.UTC().Format(time.RFC3339), roundLate(late))}
}

// DraftDueFacts is a draft invoice whose autoFinalizeAt is before the check's cutoff.
type DraftDueFacts struct {
	InvoiceID      string
	AutoFinalizeAt time.Time
	Now            time.Time // the merchant clock
}

// CheckDraftDue names a draft still a draft more than DueWorkGrace after its autoFinalizeAt.
func CheckDraftDue(f DraftDueFacts) []string {
	late := f.Now.Sub(f.AutoFinalizeAt)
	if late <= DueWorkGrace {
		return nil
	}
	return []string{fmt.Sprintf("is still a draft %s after its autoFinalizeAt %s (see GET /v1/jobs?status=failed)",
		roundLate(late), f.AutoFinalizeAt.UTC().Format(time.RFC3339))}
}

// CheckFailedJob names a job failed for good that bills, collects or moves money
// (JobBillsOrCollects); a failed notice is no violation (it moves nothing).
func CheckFailedJob(j Job) []string {
	if j.Status != JobFailed || !JobBillsOrCollects(j.Kind) {
		return nil
	}
	why := "no error recorded"
	if j.LastError != nil {
		why = string(j.LastError.Code) + ": " + j.LastError.Message
	}
	return []string{fmt.Sprintf("%s failed for good after %d attempts (%s); fix the cause, then POST /v1/jobs/%s/retry", j.Kind, j.Attempts, why, j.ID)}
}

// roundLate writes a delay for people, to the minute.
func roundLate(d time.Duration) string { return d.Round(time.Minute).String() }
