package soak

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// apiError is the error envelope.
type apiError struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func errorOf(a Answer) apiError {
	var e apiError
	_ = json.Unmarshal(a.Body, &e)
	return e
}

// reason answers error.details.reason.
func (e apiError) reason() string { s, _ := e.Error.Details["reason"].(string); return s }

// fields answers error.details.fields as "field reason", sorted.
func (e apiError) fields() []string {
	var out []string
	fs, _ := e.Error.Details["fields"].([]any)
	for _, f := range fs {
		m, _ := f.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v", m["field"], m["reason"]))
	}
	sort.Strings(out)
	return out
}

// decode decodes the envelope's data into v.
func decode(a Answer, v any) bool {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	return json.Unmarshal(a.Body, &env) == nil && json.Unmarshal(env.Data, v) == nil
}

var idSegment = regexp.MustCompile(`/(inv|sub|qt|cn|pay|ble|pm|pmss|rcpt|txn|u|c|g|rp|q|i)[-_][^/?]*`)

// routeOf answers path with its IDs replaced, so that sightings on different resources are one
// finding.
func routeOf(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return idSegment.ReplaceAllString(path, "/{id}")
}

// find records a finding seen by this client, with its last requests and the last advances.
func (c *client) find(class, key, detail string, history ...*ring) {
	f := Finding{Class: class, Key: class + " | " + key, Detail: detail, Client: c.id, Requests: c.ring.list(), Advances: c.d.lastAdvances()}
	for _, h := range history {
		if h != nil {
			f.History = append(f.History, h.list()...)
		}
	}
	if c.d.t.find(f) {
		c.d.cfg.Logf("soak %s: finding [%s] %s", c.d.cfg.Store, class, key)
	}
}

// findAlone records a finding that no client's requests led to (a line of the server's log).
func (d *driver) findAlone(class, key, detail string) {
	if d.t.find(Finding{Class: class, Key: class + " | " + key, Detail: detail, Client: -1, Advances: d.lastAdvances()}) {
		d.cfg.Logf("soak %s: finding [%s] %s", d.cfg.Store, class, key)
	}
}

// serverError records a 5xx, classified by what the server logged for it.
func (c *client) serverError(method, path string, a Answer) {
	why := ""
	if c.d.cfg.ExplainServerError != nil {
		why = c.d.cfg.ExplainServerError(a.RequestID)
	}
	class := ClassOther
	if strings.Contains(why, "deadlock") {
		class = ClassDeadlock
	}
	key := fmt.Sprintf("%d on %s %s", a.Status, method, routeOf(path))
	if class == ClassDeadlock {
		key += " (deadlock)"
	}
	c.find(class, key, fmt.Sprintf("%s %s answered %d: %s\n  the server logged: %s", method, path, a.Status, shorten(a.Body, 300), why))
}

// want reports whether a has one of the statuses the model expects. Anything else but a 5xx
// (already recorded by call) is a finding; history names the resource's requests.
func (c *client) want(a Answer, what string, statuses []int, history ...*ring) bool {
	if slices.Contains(statuses, a.Status) {
		return true
	}
	if a.Status >= 500 || a.Status == 0 {
		return false
	}
	e := errorOf(a)
	class := ClassOther
	if a.Status == 422 && pricedLineRefused(e) {
		class = ClassTieredProration
	}
	why := e.fields()
	if r := e.reason(); r != "" {
		why = append(why, r)
	}
	key := fmt.Sprintf("unexpected %d %s on %s (%s)", a.Status, e.Error.Code, what, strings.Join(why, ", "))
	c.find(class, key, fmt.Sprintf("%s: the model expected %v, the server answered %d %s", what, statuses, a.Status, shorten(a.Body, 600)), history...)
	return false
}

// wantState is want for an operation on a resource the server's own work may have moved: when a
// clock advance overlapped the operation, the state the model read may have changed under it (a
// draft finalized itself, a past_due subscription's invoice was paid by a dunning retry), so a
// 200 where the model expected 409 is expected too, and a 409 where it expected 200.
func (c *client) wantState(a Answer, what string, statuses []int, history ...*ring) bool {
	moved := (a.Status == 409 && !slices.Contains(statuses, 409)) ||
		(a.Status == 200 && slices.Contains(statuses, 409) && !slices.Contains(statuses, 200))
	if moved && c.overlapped() {
		c.d.t.check(fmt.Sprintf("%d under a clock advance", a.Status))
		return a.Status == 200
	}
	return c.want(a, what, statuses, history...)
}

// pricedLineRefused reports whether a 422 refuses a unit amount on a line: what the server
// answers when it bills a price priced by tiers or packages with a unit amount of its own (the
// known proration defect of issue 44).
func pricedLineRefused(e apiError) bool {
	for _, f := range e.fields() {
		if strings.HasPrefix(f, "lines[") && strings.Contains(f, "unitAmount") {
			return true
		}
	}
	return false
}

// one is a status list of one.
func one(s int) []int { return []int{s} }
