package app

import (
	"context"

	"github.com/remit-billing/remit"
)

// The dashboard's Jobs page of a merchant account (docs/dashboard.md): the API's jobs list and job,
// and an admin's retry of a job failed for good, for a merchant account of the operator's
// organization (not_found otherwise). The rules and the event are the Jobs service's
// (docs/reliability.md "Scheduled work that fails").

// AccountJobs lists scheduled jobs as GET /v1/jobs does.
//
// Errors: not_found (the account), validation_failure (status, limit, cursor).
func (op *Operators) AccountJobs(ctx context.Context, o remit.Operator, merchantAccountID string, in remit.JobQuery) (remit.MerchantAccount, remit.List[remit.Job], error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.List[remit.Job], error) {
		return op.jobs.ListJobs(ctx, m, in)
	})
}

// OperatorJob returns a job of a merchant account of the operator's organization, as
// GET /v1/jobs/{id} does.
//
// Errors: not_found.
func (op *Operators) OperatorJob(ctx context.Context, o remit.Operator, merchantAccountID, jobID string) (remit.MerchantAccount, remit.Job, error) {
	return inAccount(ctx, op, o, merchantAccountID, func(m remit.MerchantAccount) (remit.Job, error) {
		return op.jobs.GetJob(ctx, m, jobID)
	})
}

// RetryJob puts a job failed for good back to pending, due now, for an admin operator: the same
// engine call as POST /v1/jobs/{id}/retry (same rule, job.retried), under the form's
// Idempotency-Key.
//
// Errors: forbidden (a viewer), not_found, conflict (the job is not failed).
func (op *Operators) RetryJob(ctx context.Context, o remit.Operator, merchantAccountID, jobID, key string) (remit.Job, error) {
	m, err := op.adminAccount(ctx, o, merchantAccountID)
	if err != nil {
		return remit.Job{}, err
	}
	return operatorWrite(ctx, op.core, o, m, "POST /dashboard/jobs/"+jobID+"/retry", key, func(ctx context.Context) (remit.Job, error) {
		return op.jobs.RetryJob(ctx, m, jobID)
	})
}
