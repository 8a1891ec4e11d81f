package httpapi_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// TestSandboxClock: the test clock resource, advancing by seconds and to a time, and every way an
// advance is refused.
func TestSandboxClock(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		r := e.Must(200, "GET", clockPath, nil)
		d := r.Data()
		if d["object"] != "test_clock" || d["merchantAccountId"] != e.Tenant.Sandbox || d["environment"] != "sandbox" {
			t.Fatalf("clock resource: %s", r.Body)
		}
		start := clockNow(t, e)
		if !start.Equal(clock.Now()) {
			t.Fatalf("a new account's clock reads %v, want the real (fixed) time %v", start, clock.Now())
		}
		// Real time moves the sandbox clock too.
		clock.Add(5 * time.Second)
		if got := clockNow(t, e).Sub(start); got != 5*time.Second {
			t.Fatalf("clock moved %v with real time, want 5s", got)
		}

		// By seconds; the answer is the clock after the advance, 201.
		r = e.Must(201, "POST", advancePath, map[string]any{"seconds": 90})
		if r.Data()["object"] != "test_clock" || r.Data()["now"] != start.Add(95*time.Second).Format(time.RFC3339Nano) {
			t.Fatalf("advance answered %s", r.Body)
		}
		// Integral numbers however spelled are integers (6e1 and 60.0 are 60).
		e.Must(201, "POST", advancePath, nil, jsonBody(`{"seconds": 6e1}`))
		e.Must(201, "POST", advancePath, nil, jsonBody(`{"seconds": 60.0}`))
		if got := clockNow(t, e).Sub(start); got != 215*time.Second {
			t.Fatalf("clock moved %v, want 215s", got)
		}

		// To a time, given in any offset; answered in UTC.
		now := clockNow(t, e)
		to := now.Add(36 * time.Hour).Truncate(time.Second)
		r = e.Must(201, "POST", advancePath, map[string]any{"to": to.In(time.FixedZone("", -5*3600)).Format(time.RFC3339)})
		if r.Data()["now"] != to.UTC().Format(time.RFC3339Nano) {
			t.Fatalf("advance to %v answered %s", to, r.Body)
		}
		if got := clockNow(t, e); !got.Equal(to) {
			t.Fatalf("clock reads %v, want %v", got, to)
		}

		// Refusals: the clock only moves forward; exactly one of to and seconds.
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"to": to.Format(time.RFC3339Nano)}), "body:to:not_in_future")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"to": to.Add(-time.Second).Format(time.RFC3339)}), "body:to:not_in_future")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"to": to.Add(time.Hour).Format(time.RFC3339), "seconds": 60}),
			"body:to:mutually_exclusive", "body:seconds:mutually_exclusive")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{}), "body:to:required")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 20*366*86400 + 1}), "body:seconds:out_of_range")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"to": to.AddDate(21, 0, 0).Format(time.RFC3339)}), "body:to:too_far")
		if got := clockNow(t, e); !got.Equal(to) {
			t.Fatalf("a refused advance moved the clock to %v", got)
		}

		// Production has no test clock: 403 for both routes.
		wantError(t, e, e.Do("GET", clockPath, nil, testkit.Production()), 403, "forbidden")
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 60}, testkit.Production()), 403, "forbidden")

		// Each sandbox account has its own clock.
		second := newSandboxAccount(t, e, e.Tenant)
		asSecond := testkit.Scope("sandbox", second)
		if got := clockNow(t, e, asSecond); !got.Equal(clock.Now()) {
			t.Fatalf("another account's clock reads %v, want %v", got, clock.Now())
		}
		// One advance may move a clock at most 20 years (of 365 days), and the message says so.
		const maxSeconds = 20 * 365 * 86400
		r = e.Do("POST", advancePath, map[string]any{"seconds": maxSeconds + 1}, asSecond)
		wantProblems(t, e, r, "body:seconds:out_of_range")
		if msg := r.JSON()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "630720000") {
			t.Fatalf("message does not give the bound: %q", msg)
		}
		e.Must(201, "POST", advancePath, map[string]any{"seconds": maxSeconds}, asSecond)
	})
}

// TestSandboxClockRunsDueJobs: a job scheduled on the merchant clock runs when an advance passes
// its due time, at its due time, exactly once even when two advances race.
func TestSandboxClockRunsDueJobs(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		var runs atomic.Int64
		var ranAt atomic.Value
		e.App.RegisterJob("test.ping", func(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
			runs.Add(1)
			ranAt.Store(at)
			return e.App.Emit(ctx, tx, scope, at, "customer.created", job.ID, map[string]any{"object": "test_ping", "jobId": job.ID})
		})
		now := clockNow(t, e)
		due := now.Add(30 * time.Minute)
		var jobID string
		if err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := e.App.Schedule(ctx, tx, sandboxScope(e.Tenant), "test.ping", due, map[string]any{"n": 1}); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `SELECT id FROM jobs WHERE merchant_account_id = $1 AND kind = 'test.ping'`, e.Tenant.Sandbox).Scan(&jobID)
		}); err != nil {
			t.Fatal(err)
		}
		jobStatus := func() string {
			var s string
			if err := e.App.DB.SQL().QueryRow(`SELECT status FROM jobs WHERE id = $1`, jobID).Scan(&s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		events := func() int {
			evs, err := e.App.DB.Read(ctx).ListEventsByObject(ctx, e.Tenant.Sandbox, jobID)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs)
		}

		// Not yet due.
		e.AdvanceClock(600)
		if runs.Load() != 0 || jobStatus() != "pending" || events() != 0 {
			t.Fatalf("job ran before its due time: runs %d status %s", runs.Load(), jobStatus())
		}

		// Two advances race past the due time: the job runs once, at its due time.
		var wg sync.WaitGroup
		res := make([]*testkit.Response, 2)
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = e.Do("POST", advancePath, map[string]any{"seconds": 3600})
			}()
		}
		wg.Wait()
		for _, r := range res {
			if r == nil || r.Status != 201 {
				t.Fatalf("advance: %v", r)
			}
		}
		if runs.Load() != 1 || jobStatus() != "done" || events() != 1 {
			t.Fatalf("job ran %d times (status %s, %d events), want once", runs.Load(), jobStatus(), events())
		}
		if at := ranAt.Load().(time.Time); !at.Equal(due.Truncate(time.Microsecond)) {
			t.Fatalf("job ran at %v, want its due time %v", at, due)
		}
		e.AdvanceClock(86400)
		if runs.Load() != 1 {
			t.Fatalf("job ran again: %d", runs.Load())
		}
	})
}

// TestSandboxClockFailingJobIsRetriedLater: a job that fails during an advance is rolled back and
// tried again later on its backoff (remit.JobRetryDelays), as the scheduler does in production; the
// clock moves, the jobs after it run, and after its last attempt it is failed for good and runs no
// more.
func TestSandboxClockFailingJobIsRetriedLater(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		ctx := context.Background()
		var flaky, after atomic.Int64
		e.App.RegisterJob("test.flaky", func(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
			flaky.Add(1)
			return remit.Internal(context.DeadlineExceeded)
		})
		e.App.RegisterJob("test.after", func(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
			after.Add(1)
			return nil
		})
		start := clockNow(t, e)
		if err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := e.App.Schedule(ctx, tx, sandboxScope(e.Tenant), "test.flaky", start.Add(time.Minute), nil); err != nil {
				return err
			}
			return e.App.Schedule(ctx, tx, sandboxScope(e.Tenant), "test.after", start.Add(90*time.Second), nil)
		}); err != nil {
			t.Fatal(err)
		}
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 120}, testkit.Key("flaky")))
		if got := clockNow(t, e).Sub(start); got != 2*time.Minute || flaky.Load() != 1 || after.Load() != 1 {
			t.Fatalf("clock moved %v; flaky ran %d times, the next job %d", got, flaky.Load(), after.Load())
		}
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 30})
		if flaky.Load() != 1 {
			t.Fatalf("the failed job ran again before its backoff: %d", flaky.Load())
		}
		for i, d := range remit.JobRetryDelays {
			e.Must(201, "POST", advancePath, map[string]any{"seconds": int64(d / time.Second)})
			if flaky.Load() != int64(i+2) {
				t.Fatalf("after backoff %d (%v) the job ran %d times, want %d", i+1, d, flaky.Load(), i+2)
			}
		}
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 7 * 86400})
		if flaky.Load() != int64(remit.MaxJobAttempts) {
			t.Fatalf("the job failed for good ran again: %d", flaky.Load())
		}
		failed := e.Must(200, "GET", "/v1/jobs?status=failed&kind=test.flaky", nil).Data()["items"].([]any)
		if len(failed) != 1 || failed[0].(map[string]any)["attempts"] != float64(remit.MaxJobAttempts) {
			t.Fatalf("failed jobs %v", failed)
		}
	})
}
