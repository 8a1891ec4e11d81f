package reliability_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
)

// Values an attacker or a broken client sends.
var (
	sqlLike    = []string{`' OR '1'='1`, `1; DROP TABLE customers; --`, `x" UNION SELECT secret FROM api_keys --`, `$1`}
	oddStrings = []string{"a\x00b", "\xff\xfe", strings.Repeat("x", 10_000), "../../etc/passwd", "ü🙂\u202e", "null"}
	overflows  = []string{`9223372036854775808`, `-9223372036854775809`, `1e400`, `-1e400`, `99999999999999999999999999`, `1.5`, `NaN`}
)

// hostileRequest is one request of the hostile input test.
type hostileRequest struct {
	what        string
	method      string
	path        string // escaped, with its query
	body        []byte
	contentType string
	noScope     bool
}

// TestHostileInput sends malformed, oversized, deeply nested, wrongly typed, int64-overflowing,
// NUL-containing and SQL-looking values to every route of api/openapi.yaml (path parameters,
// query parameters, bodies) and checks that every answer is a 4xx envelope, never a 5xx, and that
// no row of any table changed.
func TestHostileInput(t *testing.T) {
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		db := e.Remit.DB.SQL()
		before := rowCounts(t, db, e.Store)
		sent, byStatus := 0, map[int]int{}
		implemented := e.Remit.Handler.Operations()
		for _, op := range operations(spec) {
			for _, r := range hostileRequests(op) {
				opts := []testkit.Opt{testkit.Raw(r.body, r.contentType)}
				if r.noScope {
					opts = append(opts, testkit.NoScope())
				}
				if r.body == nil {
					opts = opts[1:]
				}
				res := e.Do(r.method, r.path, nil, opts...)
				sent++
				byStatus[res.Status]++
				switch {
				case r.method == "GET" && res.Status == 200:
					// A read with a free-text filter finds nothing: this tenant has no data.
					if items, ok := res.Data()["items"].([]any); ok && len(items) > 0 {
						t.Errorf("%s %s (%s): found %d items", r.method, trim(r.path), r.what, len(items))
					}
				case res.Status == 200 && judgesEach(op) && allRejected(res):
					// A batch judges each item alone (api.JudgedEach): hostile items are each
					// rejected with their own 4xx body, in a 200 (and nothing is recorded: see below).
				case res.Status == 501 && !implemented[op.id]:
					// The operation is part of the contract but not offered (a 501 after validation).
				case res.Status < 400 || res.Status > 499 || res.ErrorCode() == "":
					body := res.Body
					if len(body) > 300 {
						body = body[:300]
					}
					t.Errorf("%s %s (%s): %d %s", r.method, trim(r.path), r.what, res.Status, body)
				}
			}
		}
		after := rowCounts(t, db, e.Store)
		for table, n := range before {
			if after[table] != n {
				t.Errorf("table %s: %d rows before the hostile requests, %d after", table, n, after[table])
			}
		}
		t.Logf("%d hostile requests: statuses %v", sent, byStatus)
	})
}

// judgesEach reports whether the operation's body has an array judged item by item.
func judgesEach(op specOp) bool {
	if op.body == nil {
		return false
	}
	for _, ps := range op.body.Properties {
		if ps.Value != nil && api.JudgedEach(ps.Value) {
			return true
		}
	}
	return false
}

// allRejected reports whether every item of a batch's answer was rejected with a 4xx error body.
func allRejected(res *testkit.Response) bool {
	var env struct {
		Data struct {
			Items []struct {
				Status string `json:"status"`
				Error  struct {
					Error struct {
						Code string `json:"code"`
					} `json:"error"`
				} `json:"error"`
			} `json:"items"`
		} `json:"data"`
	}
	if json.Unmarshal(res.Body, &env) != nil {
		return false
	}
	for _, it := range env.Data.Items {
		if it.Status != "rejected" || it.Error.Error.Code == "" || it.Error.Error.Code == "internal_error" {
			return false
		}
	}
	return true
}

func trim(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

type specOp struct {
	id, method, path string
	op               *openapi3.Operation
	params           openapi3.Parameters
	body             *openapi3.Schema
}

// operations lists every operation of the contract, in a stable order.
func operations(spec *openapi3.T) []specOp {
	var out []specOp
	for _, path := range spec.Paths.InMatchingOrder() {
		item := spec.Paths.Value(path)
		for method, op := range item.Operations() {
			o := specOp{id: op.OperationID, method: method, path: path, op: op, params: append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					o.body = mt.Schema.Value
				}
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

// fill puts values into the path template: params maps a parameter name to its value (escaped here).
func fill(path string, params map[string]string, fallback string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], '}') + i
		b.WriteString(path[:i])
		v, ok := params[path[i+1:j]]
		if !ok {
			v = fallback
		}
		b.WriteString(url.PathEscape(v))
		path = path[j+1:]
	}
}

func hostileRequests(o specOp) []hostileRequest {
	var out []hostileRequest
	add := func(what, path string, body []byte, ct string, noScope bool) {
		out = append(out, hostileRequest{what: what, method: o.method, path: path, body: body, contentType: ct, noScope: noScope})
	}
	hasBody := o.body != nil
	okBody := func() []byte {
		if hasBody {
			return []byte(`{}`)
		}
		return nil
	}
	ct := "application/json"
	base := fill(o.path, nil, "does-not-exist")
	hasPath := base != o.path

	// Path parameters: every hostile value in each one (the others name nothing).
	for _, p := range o.params {
		if p.Value == nil || p.Value.In != "path" {
			continue
		}
		for _, v := range append(append([]string{}, sqlLike...), oddStrings...) {
			add("path "+p.Value.Name+"="+trim(fmt.Sprintf("%q", v)), fill(o.path, map[string]string{p.Value.Name: v}, "does-not-exist"), okBody(), ct, false)
		}
	}
	// Query parameters: the scope and each of the operation's own.
	sep := func(path string) string {
		if strings.Contains(path, "?") {
			return "&"
		}
		return "?"
	}
	for _, p := range o.params {
		if p.Value == nil || p.Value.In != "query" {
			continue
		}
		name := p.Value.Name
		for _, v := range append(append(append([]string{}, sqlLike...), oddStrings...), overflows...) {
			q := url.Values{}
			q.Set(name, v)
			noScope := name == "environment" || name == "merchantAccountId"
			if noScope {
				if name == "environment" {
					q.Set("merchantAccountId", "ma_does_not_exist")
				} else {
					q.Set("environment", "sandbox")
				}
			}
			add("query "+name+"="+trim(fmt.Sprintf("%q", v)), base+sep(base)+q.Encode(), okBody(), ct, noScope)
		}
	}
	if !hasBody {
		return out
	}
	// Bodies that are not one JSON object, too large, too deep, or of another type.
	deep := strings.Repeat(`{"a":`, 20_000) + "1" + strings.Repeat("}", 20_000)
	for what, b := range map[string]string{
		"truncated": `{"a":`, "not json": `{a:1}`, "array": `[1,2]`, "string": `"x"`, "null": `null`, "two objects": `{}{}`,
		"invalid utf-8": "{\"name\":\"\xff\xfe\"}", "deeply nested": deep, "deeply nested arrays": strings.Repeat("[", 50_000),
		"nested in a field": `{"metadata":` + deep + `}`, "oversized": `{"name":"` + strings.Repeat("x", 1<<20) + `"}`,
		"duplicate keys": `{"metadata":{"a":"1"},"metadata":7}`,
	} {
		add("body "+what, base, []byte(b), ct, false)
	}
	add("content type text/plain", base, []byte(`{}`), "text/plain", false)
	add("content type form", base, []byte(`a=1`), "application/x-www-form-urlencoded", false)

	// Each top-level field with a value of the wrong type, out of int64, with a NUL, huge, deep
	// or SQL-looking. A body that gives only one field lacks the others the operation requires;
	// for operations with a path parameter the path names nothing.
	required := map[string]bool{}
	for _, r := range o.body.Required {
		required[r] = true
	}
	names := make([]string, 0, len(o.body.Properties))
	for n := range o.body.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ps := o.body.Properties[name].Value
		var values []string
		switch {
		case ps.Type.Is("integer") || ps.Type.Is("number"):
			values = append([]string{`"12"`, `true`, `{}`}, overflows...)
		case ps.Type.Is("string"):
			values = []string{`12`, `["a"]`, `{"a":"b"}`, `"a\u0000b"`, `"` + strings.Repeat("y", 100_000) + `"`}
			// A lone SQL-looking string may be a valid body (a customer named so): sent only
			// where the body still cannot be accepted.
			if hasPath || len(required) > 1 || (len(required) == 1 && !required[name]) {
				for _, s := range sqlLike {
					values = append(values, fmt.Sprintf("%q", s))
				}
			}
		case ps.Type.Is("array"):
			values = []string{`"a"`, `{}`, `[` + strings.Repeat(`"a\u0000",`, 600) + `"z"]`, `[[[[[[[[[[1]]]]]]]]]]`}
		case ps.Type.Is("object"):
			values = []string{`[]`, `"a"`, `{"k\u0000":"v"}`, `{"k":"v\u0000"}`, deep}
		case ps.Type.Is("boolean"):
			values = []string{`"true"`, `1`, `null`}
		default:
			values = []string{`{"unexpected":[1,2,3]}`, `"a\u0000b"`}
		}
		for _, v := range values {
			add("body "+name+"="+trim(v), base, []byte(`{"`+name+`":`+v+`}`), ct, false)
		}
	}
	return out
}

// rowCounts counts the rows of every table but settings (which holds keys created on first use)
// and remembered 404 answers.
func rowCounts(t *testing.T, db *sql.DB, s testkit.Store) map[string]int {
	t.Helper()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if s == testkit.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		if n != "settings" {
			tables = append(tables, n)
		}
	}
	rows.Close()
	out := map[string]int{}
	for _, tb := range tables {
		q := `SELECT COUNT(*) FROM ` + tb
		if tb == "idempotency_keys" {
			// A 404 is a final answer and is remembered for its key (submitMerchantOnboarding
			// takes the key from its body too): that memory is not a change of the store's data.
			q += ` WHERE status <> 404`
		}
		out[tb] = count(t, db, q)
	}
	if len(out) < 20 {
		t.Fatalf("only %d tables found", len(out))
	}
	return out
}
