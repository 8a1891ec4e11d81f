package app

import (
	"context"
	"errors"
	"testing"
)

// Follow-ups run in order once, after their transaction; the last result is the answer, a nil
// result leaves the one before, an error stops them.
func TestFollowUps(t *testing.T) {
	co := &core{}
	ctx, f := withFollowUps(context.Background())
	var ran []string
	step := func(name string, data any, err error) FollowUp {
		return func(context.Context) (any, error) { ran = append(ran, name); return data, err }
	}
	for _, fn := range []FollowUp{step("charge", nil, nil), step("answer", "invoice", nil), step("more", nil, nil)} {
		if err := co.after(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	if !f.pending() {
		t.Fatal("nothing pending")
	}
	data, err := f.run(context.Background())
	if data != "invoice" || err != nil || len(ran) != 3 || f.pending() {
		t.Fatalf("run: %v %v %v", data, err, ran)
	}
	// A rolled-back transaction drops what it registered.
	_ = co.after(ctx, step("dropped", "x", nil))
	f.reset()
	if f.pending() {
		t.Fatal("reset kept follow-ups")
	}
	// An error stops the rest.
	boom := errors.New("boom")
	_ = co.after(ctx, step("fails", nil, boom))
	_ = co.after(ctx, step("never", "y", nil))
	ran = nil
	if _, err := f.run(context.Background()); !errors.Is(err, boom) || len(ran) != 1 {
		t.Fatalf("error: %v %v", err, ran)
	}
	// No transaction owner to run them: an internal error, not a silent drop.
	if err := co.after(context.Background(), step("orphan", nil, nil)); err == nil {
		t.Fatal("a follow-up without an owner was accepted")
	}
}
