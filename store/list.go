package store

// Lists (docs/api-conventions.md "Pagination"): every list of the API reads one page the same
// way: the merchant account's rows, equal filters, the creation range, newest first by
// (created_at, id) from the keyset position of the page before (one index range, stable while rows
// are inserted), one more row than the page holds (to tell whether there is a next page).

// ListPage is where a list page starts and how many items it holds: the creation time and ID of
// the last item of the page before (AfterID empty: the first page), and the page's size.
type ListPage struct {
	AfterCreated int64
	AfterID      string
	// Limit is the page's size; 0 reads every row (the settlements' unpaginated form).
	Limit int
	// CreatedFrom and CreatedTo bound the rows' creation time, [from, to) in Unix microseconds;
	// 0: no bound.
	CreatedFrom, CreatedTo int64
	// TimeColumn is the column a list is ordered, paged and bounded on: created_at unless set (usage
	// events: ts, when the usage happened). Tie orders the rows of equal time: id unless set (a
	// customer's balance entries: seq, their append order).
	TimeColumn, Tie string
}

// Eq is an equal filter of a list: column = value, left out when value is empty.
type Eq = colValue

// pageQuery completes a list's query, base with its args (its WHERE names the merchant account,
// $1), with the equal filters, the page's range and keyset condition, the order (newest first)
// and a LIMIT of one more than the page.
func pageQuery(base string, args []any, p ListPage, filters ...Eq) (string, []any) {
	query, args := equalFilters(base, args, filters...)
	query, args = pageRange(query, args, p)
	column, tie := p.columns()
	cond, kargs, order := keysetOn(column, tie, len(args)+1, p.AfterCreated, p.AfterID)
	args = append(args, kargs...)
	query += cond + order
	if p.Limit <= 0 {
		return query, args
	}
	args = append(args, p.Limit+1)
	return query + " LIMIT $" + itoa(len(args)), args
}

// pageRange appends the page's range, [CreatedFrom, CreatedTo) on its time column, to a query.
func pageRange(query string, args []any, p ListPage) (string, []any) {
	column, _ := p.columns()
	return rangeFilter(query, args, column, p.CreatedFrom, p.CreatedTo)
}

func (p ListPage) columns() (column, tie string) {
	column, tie = p.TimeColumn, p.Tie
	if column == "" {
		column = "created_at"
	}
	if tie == "" {
		tie = "id"
	}
	return column, tie
}

// rangeFilter appends the range [from, to) on column (Unix microseconds; 0: no bound) to query
// and its bounds to args.
func rangeFilter(query string, args []any, column string, from, to int64) (string, []any) {
	if from != 0 {
		args = append(args, from)
		query += " AND " + column + " >= $" + itoa(len(args))
	}
	if to != 0 {
		args = append(args, to)
		query += " AND " + column + " < $" + itoa(len(args))
	}
	return query, args
}
