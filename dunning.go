package remit

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Dunning (docs/dunning.md): an automatic charge that fails is retried on the merchant clock by
// the billing account's schedule (days after the first failure); when it is exhausted the final
// action runs. These are its rules; the engine (app/dunning.go) loads, asks, writes and emits.

// DunningStatus is where an invoice's dunning is.
type DunningStatus string

// Dunning states.
const (
	DunningNone      DunningStatus = "none"
	DunningRetrying  DunningStatus = "retrying"
	DunningExhausted DunningStatus = "exhausted"
)

// Final actions.
const (
	FinalMarkUncollectible  = "mark_uncollectible"
	FinalLeaveOpen          = "leave_open"
	FinalCancelSubscription = "cancel_subscription"
)

// Dunning schedule bounds.
const (
	MaxDunningRetries = 10
	MaxDunningStep    = 60 // days
)

// Dunning is a billing account's dunning policy: retries at Schedule ("3d", days after the first
// failure, strictly increasing), then FinalAction.
type Dunning struct {
	Schedule    []string `json:"schedule"`
	FinalAction string   `json:"finalAction"`
}

// DefaultDunning is REMIT_DUNNING_SCHEDULE's default with the default final action.
var DefaultDunning = Dunning{Schedule: []string{"3d", "5d", "7d"}, FinalAction: FinalMarkUncollectible}

var dunningStep = regexp.MustCompile(`^([0-9]{1,3})d$`)

// DunningDays parses a schedule step ("3d") into days.
func DunningDays(step string) (int, bool) {
	m := dunningStep.FindStringSubmatch(step)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// CheckDunning records every problem of a dunning policy under field (a billing account's
// "dunning"): an empty, too long, malformed or not strictly increasing schedule, a step over 60
// days, an unknown final action.
func CheckDunning(d Dunning, field string, p *Problems) {
	switch d.FinalAction {
	case "", FinalMarkUncollectible, FinalLeaveOpen, FinalCancelSubscription:
	default:
		p.Body(field+".finalAction", "invalid_enum", "finalAction must be mark_uncollectible, leave_open or cancel_subscription.")
	}
	switch {
	case len(d.Schedule) == 0:
		p.Body(field+".schedule", "required", "schedule needs at least one retry, such as [\"3d\", \"5d\"] (days after the first failure).")
	case len(d.Schedule) > MaxDunningRetries:
		p.Body(field+".schedule", "too_many", fmt.Sprintf("schedule may have at most %d retries.", MaxDunningRetries))
	}
	prev := 0
	for i, step := range d.Schedule {
		f := fmt.Sprintf("%s.schedule[%d]", field, i)
		var sp Problems
		DunningStepProblem(&sp, f, step)
		days, _ := DunningDays(step)
		switch {
		case sp.Err() != nil:
			p.Merge(sp)
		case days <= prev:
			p.Body(f, "not_increasing", fmt.Sprintf("Each step comes after the one before it: %q is not after %dd.", step, prev))
		}
		prev = max(prev, days)
	}
}

// DunningStepProblem records a schedule step that is not 1 to 60 days ("3d").
func DunningStepProblem(p *Problems, field, step string) {
	days, ok := DunningDays(step)
	switch {
	case !ok || days < 1:
		p.Body(field, "invalid_format", fmt.Sprintf("A schedule step is a number of days after the first failure, such as \"3d\"; got %q.", step))
	case days > MaxDunningStep:
		p.Body(field, "out_of_range", fmt.Sprintf("A schedule step is at most %dd after the first failure.", MaxDunningStep))
	}
}

// ParseDunningSchedule reads REMIT_DUNNING_SCHEDULE ("3d,5d,7d").
func ParseDunningSchedule(v string) (Dunning, error) {
	d := Dunning{FinalAction: FinalMarkUncollectible}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			d.Schedule = append(d.Schedule, s)
		}
	}
	var p Problems
	CheckDunning(d, "REMIT_DUNNING_SCHEDULE", &p)
	if err := p.Err(); err != nil {
		return d, fmt.Errorf("REMIT_DUNNING_SCHEDULE=%q: %s", v, err.Error())
	}
	return d, nil
}

// NextRetry is when the retry after `done` retries is due, counted from the first failure, and
// whether the schedule has one left.
func (d Dunning) NextRetry(firstFailure time.Time, done int64) (time.Time, bool) {
	if done >= int64(len(d.Schedule)) {
		return time.Time{}, false
	}
	days, _ := DunningDays(d.Schedule[done])
	return firstFailure.Add(time.Duration(days) * 24 * time.Hour), true
}

// OrDefault is d, or def when d has no schedule; a missing final action is mark_uncollectible.
func (d *Dunning) OrDefault(def Dunning) Dunning {
	if d == nil || len(d.Schedule) == 0 {
		return def
	}
	out := *d
	if out.FinalAction == "" {
		out.FinalAction = FinalMarkUncollectible
	}
	return out
}
