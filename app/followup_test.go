package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// The job runner's follow-ups: split cuts them into one group per job that registered any, and
// the pool runs the groups side by side, each in its order, and counts them once per wait.
func TestFollowUpGroupsRunSideBySide(t *testing.T) {
	co := &core{}
	ctx, f := withFollowUps(context.Background())
	var mu sync.Mutex
	ran := map[string][]int{}
	step := func(job string, i int) FollowUp {
		return func(context.Context) (any, error) {
			mu.Lock()
			ran[job] = append(ran[job], i)
			mu.Unlock()
			return nil, nil
		}
	}
	var marks []int
	for _, job := range []struct {
		name  string
		steps int
	}{{"a", 2}, {"none", 0}, {"b", 3}} {
		marks = append(marks, f.mark())
		for i := range job.steps {
			_ = co.after(ctx, step(job.name, i))
		}
	}
	groups := f.split(marks)
	if len(groups) != 2 || f.pending() {
		t.Fatalf("%d groups, pending %v", len(groups), f.pending())
	}
	pool := newFollowUpPool(co, 1)
	for _, g := range groups {
		pool.start(context.Background(), g)
	}
	if n := pool.wait(); n != 2 {
		t.Fatalf("wait counted %d groups", n)
	}
	if fmt.Sprint(ran["a"]) != "[0 1]" || fmt.Sprint(ran["b"]) != "[0 1 2]" || len(ran) != 2 {
		t.Fatalf("ran %v", ran)
	}
	if n := pool.wait(); n != 0 {
		t.Fatalf("a second wait counted %d", n)
	}
}
