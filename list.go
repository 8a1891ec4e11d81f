package remit

import "time"

// List is the data of every list response: {"object":"list","items":[...],"nextCursor":...,"hasMore":...}.
type List[T any] struct {
	Object     string  `json:"object"`
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
	HasMore    bool    `json:"hasMore"`
}

// NewList builds a list page. items must never be nil in JSON, so an empty page is [].
func NewList[T any](items []T, next *string) List[T] {
	if items == nil {
		items = []T{}
	}
	return List[T]{Object: "list", Items: items, NextCursor: next, HasMore: next != nil}
}

// ListQuery is what every cursor list takes besides its own filters (docs/api-conventions.md
// "Pagination"), each value the raw query string ("" when absent): the page size, the cursor of
// the page before, and the creation range [createdFrom, createdTo) in RFC 3339.
type ListQuery struct {
	Limit, Cursor          string
	CreatedFrom, CreatedTo string
}

// ListQueryOf reads a list's common parameters from a query string's values.
func ListQueryOf(get func(string) string) ListQuery {
	return ListQuery{Limit: get("limit"), Cursor: get("cursor"), CreatedFrom: get("createdFrom"), CreatedTo: get("createdTo")}
}

// CreatedRange checks a list's creation range and returns it (a zero time: no bound). Each bound is
// RFC 3339; createdTo must be later than createdFrom.
func (q ListQuery) CreatedRange(p *Problems) (from, to time.Time) {
	parse := func(param, v string) time.Time {
		if v == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			p.Add(InQuery, param, "invalid_format", param+" must be a date-time in RFC 3339 (2026-01-31T00:00:00Z).")
			return time.Time{}
		}
		return t
	}
	from, to = parse("createdFrom", q.CreatedFrom), parse("createdTo", q.CreatedTo)
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		p.Add(InQuery, "createdTo", "before_start", "createdTo must be later than createdFrom: the range is [createdFrom, createdTo).")
	}
	return from, to
}
