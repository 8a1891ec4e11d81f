package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Cursor lists (docs/api-conventions.md "Pagination") page by keyset on (creation time, ID), newest first. A
// cursor is opaque to callers: the position, the page size and the list and merchant account it
// belongs to, signed with a per-store key so that a tampered, foreign or garbage cursor is refused
// (422 on field cursor).

// Page is a decoded page request.
type Page struct {
	Limit     int       // 1..100
	AfterTime time.Time // zero on the first page
	AfterID   string
}

// First reports whether this is the first page.
func (p Page) First() bool { return p.AfterID == "" }

type cursorBody struct {
	List     string `json:"l"`
	Merchant string `json:"m"`
	Time     int64  `json:"t"`
	ID       string `json:"i"`
	Limit    int    `json:"n"`
}

var (
	cursorKeyMu sync.Mutex
	cursorKeys  = map[*store.DB][]byte{}
)

func (co *core) cursorKey(ctx context.Context) ([]byte, error) {
	cursorKeyMu.Lock()
	k, ok := cursorKeys[co.DB]
	cursorKeyMu.Unlock()
	if ok {
		return k, nil
	}
	var v string
	db := co.DB
	err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		v, err = tx.Setting(ctx, "cursor_key", NewSecret)
		// Cache the key only once it is committed: inside a caller's transaction that later
		// rolls back, a freshly created key would vanish.
		tx.AfterCommit(func() {
			cursorKeyMu.Lock()
			cursorKeys[db] = []byte(v)
			cursorKeyMu.Unlock()
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return []byte(v), nil
}

// ParsePage reads limit and cursor (raw query strings; "" when absent) for the list named list.
// defaultLimit applies when neither gives a size.
//
// Errors: validation_failure on limit (not an integer 1..100) or cursor (not one of ours, or
// another list's or merchant account's).
func (co *core) ParsePage(ctx context.Context, scope remit.Scope, list, limit, cursor string, defaultLimit int) (Page, error) {
	var p remit.Problems
	page := Page{Limit: defaultLimit}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > 100 {
			p.Add(remit.InQuery, "limit", "out_of_range", "limit must be an integer from 1 to 100.")
		} else {
			page.Limit = n
		}
	}
	if cursor != "" {
		c, ok := co.decodeCursor(ctx, cursor)
		if !ok || c.List != list || c.Merchant != scope.MerchantAccountID {
			p.Add(remit.InQuery, "cursor", "invalid_cursor", "cursor is not a nextCursor of this list; pass back the nextCursor value of the previous page verbatim.")
		} else {
			page.AfterTime, page.AfterID = remit.FromMicros(c.Time), c.ID
			if limit == "" {
				page.Limit = c.Limit
			}
		}
	}
	return page, p.Err()
}

// NextCursor returns the cursor for the page after the item (createdAt, id), or nil when there is
// no next page.
func (co *core) NextCursor(ctx context.Context, scope remit.Scope, list string, page Page, more bool, lastTime time.Time, lastID string) (*string, error) {
	if !more {
		return nil, nil
	}
	key, err := co.cursorKey(ctx)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(cursorBody{List: list, Merchant: scope.MerchantAccountID, Time: remit.Micros(lastTime), ID: lastID, Limit: page.Limit})
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	s := base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
	return &s, nil
}

func (co *core) decodeCursor(ctx context.Context, s string) (cursorBody, bool) {
	var c cursorBody
	if len(s) > 1024 {
		return c, false
	}
	b64, sig64, ok := strings.Cut(s, ".")
	if !ok {
		return c, false
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sig64)
	if err1 != nil || err2 != nil {
		return c, false
	}
	key, err := co.cursorKey(ctx)
	if err != nil {
		return c, false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	if !hmac.Equal(sig, mac.Sum(nil)[:16]) {
		return c, false
	}
	if json.Unmarshal(body, &c) != nil || c.Limit < 1 || c.Limit > 100 || c.ID == "" {
		return c, false
	}
	return c, true
}

// finishPage turns the rows of a keyset query that fetched page.Limit+1 items into the list
// answer: it drops the extra row, which only says that a next page exists, and signs the cursor
// of that next page from the last item kept (its remit.Keyed PageKey). A page.Limit of
// 0 means an unpaginated list: every item, no cursor. Every cursor list ends through here.
func finishPage[T remit.Keyed](ctx context.Context, a *core, scope remit.Scope, list string, page Page, items []T) (remit.List[T], error) {
	if page.Limit <= 0 || len(items) <= page.Limit {
		return remit.NewList(items, nil), nil
	}
	items = items[:page.Limit]
	at, id := items[len(items)-1].PageKey()
	next, err := a.NextCursor(ctx, scope, list, page, true, at, id)
	if err != nil {
		return remit.List[T]{}, err
	}
	return remit.NewList(items, next), nil
}

// ProblemsOf adds the field problems of a validation error to p and returns nil; any other error
// is returned as is (for list parameters checked in several places but answered in one 422).
func ProblemsOf(p *remit.Problems, err error) error {
	e, ok := err.(*remit.Error)
	if err == nil || !ok || e.Code != remit.EInvalid {
		return err
	}
	for _, f := range e.Fields {
		p.Add(f.Location, f.Field, f.Reason, f.Message)
	}
	return nil
}

// listPage answers one page of a list: the page parsed (limit, cursor: ParsePage) and its
// creation range (createdFrom, createdTo), the list's own filter problems (check, nil for none) in
// one 422 with the page's, one page of rows read (read, given where the page starts, its size and
// its range) and the next page's cursor (finishPage, from the last item's PageKey).
func listPage[T remit.Keyed](ctx context.Context, co *core, scope remit.Scope, list string, q remit.ListQuery, check func(*remit.Problems),
	read func(store.ListPage) ([]T, error)) (remit.List[T], error) {
	page, lp, err := co.pageOf(ctx, scope, list, q, check)
	if err != nil {
		return remit.List[T]{}, err
	}
	items, err := read(lp)
	if err != nil {
		return remit.List[T]{}, err
	}
	return finishPage(ctx, co, scope, list, page, items)
}

// pageOf checks a list's query (ParsePage, the creation range, the list's own filters: check) and
// returns the page asked for and the store's page to read; every problem is in one 422.
func (co *core) pageOf(ctx context.Context, scope remit.Scope, list string, q remit.ListQuery, check func(*remit.Problems)) (Page, store.ListPage, error) {
	page, err := co.ParsePage(ctx, scope, list, q.Limit, q.Cursor, 20)
	var p remit.Problems
	from, to := q.CreatedRange(&p)
	if check != nil {
		check(&p)
	}
	if err := ProblemsOf(&p, err); err != nil {
		return page, store.ListPage{}, err
	}
	if err := p.Err(); err != nil {
		return page, store.ListPage{}, err
	}
	lp := store.ListPage{Limit: page.Limit}
	if !from.IsZero() {
		lp.CreatedFrom = remit.Micros(from)
	}
	if !to.IsZero() {
		lp.CreatedTo = remit.Micros(to)
	}
	if !page.First() {
		lp.AfterCreated, lp.AfterID = remit.Micros(page.AfterTime), page.AfterID
	}
	return page, lp, nil
}

// statusNames lists states as strings (a list filter's allowed values).
func statusNames[S ~string](ss []S) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// listByStatus is listPage for a merchant account's list filtered by state (status=, one of
// statuses or absent: statusFilter).
func listByStatus[T remit.Keyed, S ~string](ctx context.Context, co *core, m remit.MerchantAccount, list string, q remit.ListQuery,
	status string, statuses []S, read func(store.ListPage) ([]T, error)) (remit.List[T], error) {
	return listPage(ctx, co, scopeOf(m), list, q, statusFilter(status, statuses), read)
}

// statusFilter is listPage's check of a list's status= filter: absent, or one of the resource's
// statuses.
func statusFilter[S ~string](value string, statuses []S) func(*remit.Problems) {
	return func(p *remit.Problems) { enumProblem(p, "status", value, statusNames(statuses)) }
}

// enumProblem records a query filter whose value is not one of allowed (none: any value).
func enumProblem(p *remit.Problems, param, value string, allowed []string) {
	if value != "" && !remit.OneOf(value, allowed) {
		p.Add(remit.InQuery, param, "invalid_enum", param+" must be one of "+strings.Join(allowed, ", ")+".")
	}
}

// boolParam reads a query filter that is true or false ("": false), recording any other value.
func boolParam(p *remit.Problems, param, value string) bool {
	if value != "" && value != "true" && value != "false" {
		p.Add(remit.InQuery, param, "invalid_type", param+" must be true or false.")
	}
	return value == "true"
}

// currencyFilter records a query filter that is not a currency the rails take ("": none).
func currencyFilter(p *remit.Problems, param, value string) {
	if value != "" {
		remit.CurrencyProblem(p, remit.InQuery, param, value)
	}
}
