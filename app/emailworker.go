package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/mail"
	"github.com/remit-billing/remit/store"
)

// The e-mail worker sends queued messages (docs/email.md), like the webhook worker sends
// deliveries: it claims due messages in a short transaction that numbers the attempt and leases
// them (next_attempt_at = the lease's end), commits, renders the attached PDF from the document as
// it is now, sends a batch over one SMTP connection, and records each outcome in a second
// transaction that checks the worker still holds the lease. A worker that dies before recording
// leaves the messages due again when the lease ends. Every message carries the Message-ID
// <emailId@remit> on every attempt: a message sent twice (the process died after the server
// accepted it and before the commit) is the same message to the receiving mail store.
//
// Retry timing is real time: after attempt n fails temporarily (a connection problem, a 4xx
// answer), attempt n+1 is due after EmailRetry[n-1] ± 10 %; when the schedule is used up, or the
// server refuses for good (5xx), the message is failed with the server's answer as its reason.

// DefaultEmailRetry is the default retry schedule (REMIT_EMAIL_RETRY_SCHEDULE).
var DefaultEmailRetry = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

func setEmailDefaults(cfg *Config) {
	if cfg.EmailRetry == nil {
		cfg.EmailRetry = DefaultEmailRetry
	}
	if cfg.EmailLease <= 0 {
		cfg.EmailLease = 2 * time.Minute
	}
	if cfg.EmailPoll <= 0 {
		cfg.EmailPoll = time.Second
	}
	if cfg.EmailBatch <= 0 {
		cfg.EmailBatch = 25
	}
	if cfg.EmailConcurrency <= 0 {
		cfg.EmailConcurrency = 16
	}
	if cfg.EmailRenders <= 0 {
		cfg.EmailRenders = 2
	}
	if cfg.EmailBusyRate <= 0 {
		cfg.EmailBusyRate = 5
	}
	if cfg.EmailFrom == "" {
		cfg.EmailFrom = "billing@remit.invalid"
	}
}

// wakeEmails tells this process's worker that a message was queued.
func (co *core) wakeEmails() {
	select {
	case co.emailWake <- struct{}{}:
	default:
	}
}

// RunEmails runs the e-mail worker until ctx ends: it sends what is due, waking when this process
// queues a message, when the next retry falls due, and at least every EmailPoll (for messages other
// processes queued). While the API is busy (Foreground) it sends at most EmailBusyRate messages a
// second and is not woken early. When ctx ends it finishes the batches in flight.
func (es *Emails) RunEmails(ctx context.Context) {
	if es.Config.Mailer == nil {
		return // every message is recorded skipped
	}
	for ctx.Err() == nil {
		started := time.Now()
		busy := es.Foreground.Busy()
		size := es.roundSize(busy)
		n, err := es.SendRound(ctx, size, !busy)
		if err != nil && ctx.Err() == nil {
			es.Log.Error("emails: send", "err", err)
		}
		wait := es.Config.EmailPoll
		switch {
		case err != nil:
		case busy:
			wait = time.Second - time.Since(started) // EmailBusyRate messages a second at most
		case n == size:
			continue // more are due
		case n == 0:
			if next, ok, err := es.DB.Read(ctx).NextEmailDue(ctx); err == nil && ok {
				wait = min(wait, max(next.Sub(es.Clock.Now()), time.Millisecond))
			}
		}
		es.sleep(ctx, wait, busy)
	}
}

// sleep waits d, or less when this process queues a message and the API is not busy.
func (es *Emails) sleep(ctx context.Context, d time.Duration, busy bool) {
	if d <= 0 {
		return
	}
	wake := es.emailWake
	if busy {
		wake = nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}

// roundSize is how many messages a round claims: EmailConcurrency batches of EmailBatch, or
// EmailBusyRate while the API is busy.
func (es *Emails) roundSize(busy bool) int {
	if busy {
		return es.Config.EmailBusyRate
	}
	return es.Config.EmailBatch * es.Config.EmailConcurrency
}

// SendDue sends every message due now, in rounds of EmailConcurrency batches of EmailBatch
// messages (one SMTP connection per batch), and returns how many attempts it made. It does not
// pace itself by the API (RunEmails does): tests and benchmarks drain with it.
func (es *Emails) SendDue(ctx context.Context) (int, error) {
	if es.Config.Mailer == nil {
		return 0, nil
	}
	total := 0
	size := es.roundSize(false)
	for {
		n, err := es.SendRound(ctx, size, false)
		total += n
		if err != nil || n < size {
			return total, err
		}
	}
}

// SendRound claims up to size due messages, sends them and records the outcomes, and returns how
// many it claimed (RunEmails runs rounds; tests run one). With yieldToAPI, a batch that finds the
// API busy before a message stops there: the messages it did not try are released, due at once,
// their attempt not counted.
func (es *Emails) SendRound(ctx context.Context, size int, yieldToAPI bool) (int, error) {
	owner := remit.NewID("ewk")
	var due []store.DueEmail
	err := es.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) (err error) {
		now := es.Clock.Now()
		due, err = tx.ClaimDueEmails(ctx, now, now.Add(es.Config.EmailLease), owner, size)
		return err
	})
	if err != nil || len(due) == 0 {
		return 0, err
	}
	yield, idle := func() bool { return false }, func() bool { return true }
	if yieldToAPI {
		yield, idle = es.Foreground.Busy, es.Foreground.Idle
	}
	results := es.sendClaimed(context.WithoutCancel(ctx), due, yield, idle)
	return len(due), es.finish(context.WithoutCancel(ctx), due, results, owner)
}

// sendClaimed sends claimed messages in batches, EmailConcurrency at a time, within half the lease.
// Sending mostly waits on the SMTP server; rendering PDFs is what takes CPU (docs/performance.md,
// "Customer e-mail"), so at most EmailRenders render at once (one while the API is not idle),
// whatever the concurrency. A batch
// asks yield before each message and again before each render and, when it says so, leaves the
// rest untried (a nil result pointer: released by finish).
func (es *Emails) sendClaimed(ctx context.Context, due []store.DueEmail, yield, idle func() bool) []*mail.Result {
	ctx, cancel := context.WithTimeout(ctx, es.Config.EmailLease/2)
	defer cancel()
	r := &round{first: make(chan struct{}, 1), more: make(chan struct{}, es.Config.EmailRenders-1), yield: yield, idle: idle,
		merchants: map[string]remit.MerchantAccount{}}
	results := make([]*mail.Result, len(due))
	var wg sync.WaitGroup
	for start := 0; start < len(due); start += es.Config.EmailBatch {
		end := min(start+es.Config.EmailBatch, len(due))
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]mail.Outgoing, 0, end-start)
			idx := make([]int, 0, end-start)
			for i := start; i < end && !yield(); i++ {
				o, err := es.outgoing(ctx, due[i], r)
				if errors.Is(err, errYield) {
					break // this message and the rest of the batch stay untried
				}
				if err != nil {
					results[i] = &mail.Result{Err: err, Temporary: true}
					continue
				}
				out, idx = append(out, o), append(idx, i)
			}
			sctx, span := telemetry.Start(ctx, "smtp.send", trace.SpanKindClient)
			telemetry.SetInt(span, "remit.messages", len(out))
			failed := 0
			for j, r := range es.Config.Mailer.Send(sctx, out) {
				results[idx[j]] = &r
				if r.Err != nil {
					failed++
				}
			}
			telemetry.SetInt(span, "remit.messages_failed", failed)
			if failed > 0 {
				telemetry.End(span, fmt.Errorf("%d of %d messages not accepted", failed, len(out)))
			} else {
				telemetry.End(span, nil)
			}
		}()
	}
	wg.Wait()
	return results
}

// outgoing is a claimed message as it is sent: the sender, the stable Message-ID and the PDF.
func (es *Emails) outgoing(ctx context.Context, d store.DueEmail, r *round) (mail.Outgoing, error) {
	o := mail.Outgoing{
		MessageID: d.EmailID + "@remit", From: es.Config.EmailFrom, FromName: d.FromName, To: deref(d.To), Subject: d.Subject,
		Text: d.TextBody, HTML: d.HTMLBody, Date: d.CreatedAt,
	}
	if d.Attachment == nil {
		return o, nil
	}
	// The document's facts are read first; only its rendering (CPU) takes a render slot, so a
	// store's round trips never hold one.
	render, err := es.attachment(ctx, r, d.MerchantAccountID, *d.Attachment)
	var pdf []byte
	if err == nil {
		release := r.slot()
		if r.yield() { // the API became busy while this batch waited for its turn to render
			release()
			return o, errYield
		}
		pdf, err = render()
		release()
	}
	if err != nil {
		return o, fmt.Errorf("the attachment %s could not be rendered: %w", d.Attachment.FileName, err)
	}
	o.FileName, o.File = d.Attachment.FileName, pdf
	return o, nil
}

// attachment reads what the PDF a message carries shows, exactly as its PDF route would now, and
// returns its rendering.
func (es *Emails) attachment(ctx context.Context, r *round, merchantAccountID string, f remit.EmailFile) (func() ([]byte, error), error) {
	m, err := r.merchant(ctx, es.DB, merchantAccountID)
	if err != nil {
		return nil, err
	}
	switch f.Kind {
	case remit.AttachInvoice:
		d, err := es.documents.InvoiceDocument(ctx, m, f.DocumentID)
		return func() ([]byte, error) { return document.InvoicePDF(d) }, err
	case remit.AttachReceipt:
		d, err := es.documents.ReceiptDocument(ctx, m, f.DocumentID)
		return func() ([]byte, error) { return document.ReceiptPDF(d) }, err
	case remit.AttachCreditNote:
		d, err := es.documents.CreditNoteDocument(ctx, m, f.DocumentID)
		return func() ([]byte, error) { return document.CreditNotePDF(d) }, err
	}
	return nil, fmt.Errorf("unknown attachment kind %q", f.Kind)
}

// round is what the batches of one round share: the render slots, and the merchant accounts their
// attachments show (read once per round, not once per message).
type round struct {
	first, more chan struct{} // render slots: one always, EmailRenders-1 more while the API is idle
	yield       func() bool   // asked before each message and again before each render
	idle        func() bool   // whether the more slots may be taken
	mu          sync.Mutex
	merchants   map[string]remit.MerchantAccount
}

// slot waits for a render slot and returns its release. The first slot is always there to take;
// the others only while the API is idle, so that the worker renders on a second core only when no
// request needs it.
func (r *round) slot() (release func()) {
	if r.idle() {
		select {
		case r.first <- struct{}{}:
			return func() { <-r.first }
		case r.more <- struct{}{}:
			return func() { <-r.more }
		}
	}
	r.first <- struct{}{}
	return func() { <-r.first }
}

// errYield: the message was not tried, because the API became busy (SendRound's yieldToAPI).
var errYield = errors.New("app: e-mail worker yields to the API")

func (r *round) merchant(ctx context.Context, db *store.DB, id string) (remit.MerchantAccount, error) {
	r.mu.Lock()
	m, ok := r.merchants[id]
	r.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := db.Read(ctx).GetMerchantAccount(ctx, id, store.Unlocked)
	if err == nil {
		r.mu.Lock()
		r.merchants[id] = m
		r.mu.Unlock()
	}
	return m, err
}

// finish records the outcomes of one round in one transaction; a message that was not tried (nil
// result) is released, due at once, as if it had not been claimed.
func (es *Emails) finish(ctx context.Context, due []store.DueEmail, results []*mail.Result, owner string) error {
	now := es.Clock.Now().Truncate(time.Microsecond)
	return es.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		for i, d := range due {
			if results[i] == nil {
				if err := tx.ReleaseEmail(ctx, d, owner, now); err != nil {
					return err
				}
				continue
			}
			o := EmailOutcome(d.Attempts, *results[i], es.Config.EmailRetry, now, rand.Float64())
			if o.Status == remit.EmailSent {
				sent := remit.MerchantNow(fixedClock(now), d.ClockOffset).Truncate(time.Microsecond)
				o.SentAt = &sent
			}
			if _, err := tx.FinishEmail(ctx, d, owner, o); err != nil {
				return err
			}
		}
		return nil
	})
}

// EmailOutcome decides what one send attempt (number attempt, from 1) leaves: sent; queued again
// after the schedule's wait with ±10 % jitter (jitter in [0,1)) for a temporary failure; failed for
// a permanent one or when the schedule is used up.
func EmailOutcome(attempt int, r mail.Result, schedule []time.Duration, now time.Time, jitter float64) store.EmailOutcome {
	if r.Err == nil {
		return store.EmailOutcome{Status: remit.EmailSent}
	}
	reason := oneLineReason(r.Err)
	if !r.Temporary {
		return store.EmailOutcome{Status: remit.EmailFailed, Reason: reason}
	}
	if attempt > len(schedule) {
		return store.EmailOutcome{Status: remit.EmailFailed, Reason: fmt.Sprintf("%s (after %d attempts)", reason, attempt)}
	}
	wait := time.Duration(float64(schedule[attempt-1]) * (0.9 + 0.2*jitter))
	next := now.Add(wait).Truncate(time.Microsecond)
	return store.EmailOutcome{Status: remit.EmailQueued, NextAttemptAt: &next, Reason: reason}
}

// oneLineReason is an SMTP error as the e-mail log shows it: one line, at most 500 characters.
func oneLineReason(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if errors.Is(err, context.DeadlineExceeded) {
		s = "The SMTP server did not answer in time."
	}
	if r := []rune(s); len(r) > 500 {
		s = string(r[:500])
	}
	return s
}

// fixedClock is a remit.Clock that always says t.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }
