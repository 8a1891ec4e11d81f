package remit

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
