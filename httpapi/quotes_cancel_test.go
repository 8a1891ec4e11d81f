package httpapi_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// A draft quote is canceled once: canceled, it cannot be accepted, and nothing it would have made
// exists; an accepted quote is not canceled (409 with currentState), nor is a canceled one again.
func TestQuoteCancel(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "TX", false)
		q := e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "c1", line("plan"))).Data()
		id := q["quoteId"].(string)
		if q["canceledAt"] != nil {
			t.Fatalf("a new quote has canceledAt: %v", q)
		}

		other := e.NewTenant("Other", false)
		e.Must(404, "POST", "/v1/quotes/"+id+"/cancel", map[string]any{}, testkit.As(other))
		e.Must(404, "POST", "/v1/quotes/Q-nope/cancel", map[string]any{})
		e.Must(422, "POST", "/v1/quotes/"+id+"/cancel", map[string]any{"reason": "x"})

		c := e.Must(200, "POST", "/v1/quotes/"+id+"/cancel", map[string]any{}).Data()
		v := c["versions"].([]any)[0].(map[string]any)
		if c["status"] != "canceled" || v["status"] != "canceled" || c["canceledAt"] == nil || c["updatedAt"] != c["canceledAt"] ||
			c["acceptedAt"] != nil || c["subscriptionId"] != nil || c["invoiceId"] != nil {
			t.Fatalf("canceled: %v", c)
		}
		if g := e.Must(200, "GET", "/v1/quotes/"+id, nil).Data(); g["status"] != "canceled" || g["canceledAt"] != c["canceledAt"] {
			t.Fatalf("get: %v", g)
		}
		wantEvents(t, e, id, "quote.created", "quote.canceled")
		for _, action := range []string{"accept", "cancel"} {
			r := e.Must(409, "POST", "/v1/quotes/"+id+"/"+action, map[string]any{})
			if r.ErrorDetails()["currentState"] != "canceled" || r.ErrorDetails()["reason"] != "invalid_state" {
				t.Fatalf("%s a canceled quote: %s", action, r.Body)
			}
		}
		if subs := e.Must(200, "GET", "/v1/subscriptions?customerId=c1", nil).Data()["items"].([]any); len(subs) != 0 {
			t.Fatalf("a canceled quote made subscriptions: %v", subs)
		}

		accepted := e.Must(201, "POST", "/v1/quotes", quoteBody("one_off", "c1", line("setup"))).Data()["quoteId"].(string)
		e.Must(200, "POST", "/v1/quotes/"+accepted+"/accept", map[string]any{})
		r := e.Must(409, "POST", "/v1/quotes/"+accepted+"/cancel", map[string]any{})
		if r.ErrorDetails()["currentState"] != "accepted" {
			t.Fatalf("cancel an accepted quote: %s", r.Body)
		}
		if g := e.Must(200, "GET", "/v1/quotes/"+accepted, nil).Data(); g["status"] != "accepted" || g["canceledAt"] != nil {
			t.Fatalf("the accepted quote changed: %v", g)
		}
	})
}

// A cancel and an accept of one draft quote sent together: exactly one wins, and the quote shows
// the winner (a subscription and its invoice exist exactly when the accept won).
func TestQuoteCancelRacesAccept(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "TX", false)
		wins := map[string]int{}
		for round := range 6 {
			id := fmt.Sprintf("race-%d", round)
			e.Must(201, "POST", "/v1/quotes", with(quoteBody("subscription_creation", "c1", line("plan")), "quoteId", id))
			var wg sync.WaitGroup
			var accept, cancel *testkit.Response
			wg.Add(2)
			go func() { defer wg.Done(); accept = e.Do("POST", "/v1/quotes/"+id+"/accept", map[string]any{}) }()
			go func() { defer wg.Done(); cancel = e.Do("POST", "/v1/quotes/"+id+"/cancel", map[string]any{}) }()
			wg.Wait()
			q := e.Must(200, "GET", "/v1/quotes/"+id, nil).Data()
			switch {
			case accept.Status == 200 && cancel.Status == 409 && cancel.ErrorDetails()["currentState"] == "accepted":
				if q["status"] != "accepted" || q["subscriptionId"] == nil || q["canceledAt"] != nil {
					t.Fatalf("round %d, accept won: %v", round, q)
				}
				e.Must(200, "GET", "/v1/subscriptions/"+q["subscriptionId"].(string), nil)
				wins["accept"]++
			case cancel.Status == 200 && accept.Status == 409 && accept.ErrorDetails()["currentState"] == "canceled":
				if q["status"] != "canceled" || q["subscriptionId"] != nil || q["invoiceId"] != nil {
					t.Fatalf("round %d, cancel won: %v", round, q)
				}
				wins["cancel"]++
			default:
				t.Fatalf("round %d: accept %d %s; cancel %d %s", round, accept.Status, accept.Body, cancel.Status, cancel.Body)
			}
		}
		t.Logf("winners: %v", wins)
		if n := len(e.Must(200, "GET", "/v1/subscriptions?customerId=c1&limit=100", nil).Data()["items"].([]any)); n != wins["accept"] {
			t.Fatalf("%d subscriptions for %d accepts", n, wins["accept"])
		}
	})
}
