package remit

import (
	"encoding/json"
	"time"
)

// Event is an entry of the outbox: written in the same transaction as the change it describes.
// Types are named "resource.verb" (invoice.finalized, customer_balance.granted, ...); docs/events.md
// lists them.
type Event struct {
	ID                string          `json:"eventId"`
	Object            string          `json:"object"` // always "event"
	Type              string          `json:"type"`
	MerchantAccountID string          `json:"merchantAccountId"`
	Environment       Environment     `json:"environment"`
	CreatedAt         time.Time       `json:"createdAt"`
	Data              json.RawMessage `json:"data"` // {"object": <the resource after the change>}
	// Actor is who made the change (ActorOf the write's context); nil only on events written
	// before actors were recorded (migration 00040).
	Actor *Actor `json:"actor,omitempty"`
	// Sequence is the event's place in its merchant account's chain (1, 2, ... in commit order)
	// and Hash its chain hash (ChainHash); both are set when the transaction commits.
	Sequence int64  `json:"sequence"`
	Hash     string `json:"hash"`
}
