package remit

import "fmt"

// ValueRules are the rules on a single value that the contract states as a table or a pattern and
// marks with the rule's name (x-remit-rule in api/openapi.yaml). When the contract's check refuses
// such a value, the HTTP edge words the problem with the rule named here, so that the reason is
// the same whichever layer sees the value first (docs/api-conventions.md, "What the schema says").
var ValueRules = map[string]func(p *Problems, field, value string){
	"currency":       func(p *Problems, field, v string) { CurrencyProblem(p, InBody, field, v) },
	"country":        CountryProblem,
	"event_type":     EventTypeProblem,
	"account_number": AccountNumberProblem,
	"dunning_step":   DunningStepProblem,
}

// EventTypeProblem records a webhook subscription to something that is neither "*" nor an event
// type of the catalog (EventTypes).
func EventTypeProblem(p *Problems, field, t string) {
	if t != "*" && !KnownEventType(t) {
		p.Body(field, "unknown_event_type", fmt.Sprintf("'%s' is not an event type; use \"*\" or a type listed in docs/events.md, such as invoice.finalized.", t))
	}
}

// AccountNumberProblem records a bank account number that is not 5 to 34 letters or digits once
// spaces and hyphens are removed.
func AccountNumberProblem(p *Problems, field, n string) {
	if !bankAccountNumberPattern.MatchString(NormalizeAccountNumber(n)) {
		p.Body(field, "invalid_account_number", field+" must be 5 to 34 letters or digits (spaces and hyphens are ignored).")
	}
}
