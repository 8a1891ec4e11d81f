package httpapi

import (
	"context"
	"encoding/json"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// A batch of usage events (POST /v1/usage-events/batch, docs/usage.md "Batches") judges each
// event exactly as POST /v1/usage-events judges it alone: the single operation's own pipeline
// steps (parseBody, validate: the contract, the checks beyond it, its body rules) on the event's
// JSON, then the engine's work on the events that passed (Usage.CreateUsageEvents: one
// transaction, the single route's work per event in a savepoint, with the single route's merge of
// the problems kept for its answer, withProblems). A refused event's error is the body the single
// route would answer.

// usageBatchAnswer is the batch's answer (UsageEventBatch in the contract).
type usageBatchAnswer struct {
	Object     string           `json:"object"`
	Items      []usageBatchItem `json:"items"`
	Created    int              `json:"created"`
	Duplicates int              `json:"duplicates"`
	Rejected   int              `json:"rejected"`
}

// usageBatchItem is one event's outcome (UsageEventBatchItem).
type usageBatchItem struct {
	EventID *string         `json:"eventId"`
	Status  string          `json:"status"`
	Error   json.RawMessage `json:"error,omitempty"` // the single route's error body
}

// createUsageEventBatch handles POST /v1/usage-events/batch.
func (s *Server) createUsageEventBatch(ctx context.Context, r *Request) (any, error) {
	var body struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := r.Decode(&body); err != nil {
		return nil, err
	}
	single := s.ops["createUsageEvent"]
	items := make([]usageBatchItem, len(body.Events))
	var events []remit.UsageBatchEvent
	var at []int // the index in items of each of events
	for i, raw := range body.Events {
		items[i].EventID = batchEventID(raw)
		in, problems, err := s.judgeAlone(r, single, raw)
		if err != nil {
			items[i].Status, items[i].Error = remit.UsageBatchRejected, s.errorAnswer(r.HTTP, r.ID, err).Body
			continue
		}
		ev := remit.UsageBatchEvent{Input: in}
		if len(problems) > 0 { // as the single route's run: the problems replace or join its answer
			ev.Judge = func(err error) error { return withProblems(err, problems) }
		}
		events = append(events, ev)
		at = append(at, i)
	}
	if len(events) > 0 {
		outcomes, err := s.eng.Usage.CreateUsageEvents(ctx, r.Merchant, events)
		if err != nil {
			return nil, err
		}
		for k, o := range outcomes {
			items[at[k]].Status = o.Status
			if o.Err != nil {
				items[at[k]].Error = s.errorAnswer(r.HTTP, r.ID, o.Err).Body
			}
		}
	}
	return tally(items), nil
}

// tally is the batch's answer with its counts.
func tally(items []usageBatchItem) usageBatchAnswer {
	a := usageBatchAnswer{Object: "usage_event_batch", Items: items}
	for _, it := range items {
		switch it.Status {
		case remit.UsageBatchCreated:
			a.Created++
		case remit.UsageBatchDuplicate:
			a.Duplicates++
		default:
			a.Rejected++
		}
	}
	return a
}

// judgeAlone runs one event of a batch through the checks of the single route (single) before
// its work: the body (400), the contract and the rules beside it (422). It returns the event's
// input and the problems the single route keeps for its answer (withProblems), or the error the
// single route answers at once.
func (s *Server) judgeAlone(r *Request, single *operation, raw json.RawMessage) (remit.UsageEventInput, []remit.FieldError, error) {
	hr := r.HTTP.Clone(r.HTTP.Context())
	hr.GetBody = nil // the batch's validation left it answering the batch's body
	sub := &Request{HTTP: hr, ID: r.ID, Principal: r.Principal, Scope: r.Scope, Merchant: r.Merchant}
	var err error
	if sub.Body, err = parseBody(hr, single, raw); err != nil {
		return remit.UsageEventInput{}, nil, err
	}
	if err := s.validate(single, sub); err != nil {
		return remit.UsageEventInput{}, nil, err
	}
	var b api.UsageEventCreateRequest
	if err := sub.Decode(&b); err != nil {
		return remit.UsageEventInput{}, nil, err
	}
	return usageEventInput(b), sub.problems, nil
}

// batchEventID is the eventId an event of a batch carries, nil when it has no string eventId.
func batchEventID(raw json.RawMessage) *string {
	var v struct {
		EventID any `json:"eventId"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	if id, ok := v.EventID.(string); ok {
		return &id
	}
	return nil
}
