//go:build remitfloor

package wire

import (
	"database/sql"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/remit-billing/remit/store"
)

// This file is compiled only with `go build -tags remitfloor`: the normal binary has no such
// route. The load harness (cmd/remit-load) builds the server with the tag and measures the
// invoice read (b) against this route in the same run: issue 41's target for (b) is a share of it
// (docs/benchmarks.md, "Issue 41's targets"; docs/performance.md, "Floors measured by the
// harness").

func init() { floorRoute = withFloor }

// withFloor serves FloorInvoicePath, the floor of the invoice read: it reads one invoice's row by
// primary key from the store's read pool and writes its stored lines (lines_doc) back raw. No
// authentication, request ID, logging, validation, envelope or JSON encoding: what is left of
// GET /v1/invoices/{id} when everything but the store read and the HTTP is taken away. Served
// only with REMIT_LOAD_CEILING=true, beside the ceiling.
func withFloor(db *store.DB, next http.Handler) http.Handler {
	const query = `SELECT lines_doc FROM invoices WHERE merchant_account_id = $1 AND id = $2`
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := strings.CutPrefix(req.URL.Path, FloorInvoicePath)
		if !ok {
			next.ServeHTTP(w, req)
			return
		}
		ctx := req.Context()
		var doc sql.NullString
		err := db.Read(ctx).QueryRow(ctx, query, req.URL.Query().Get("merchantAccountId"), id).Scan(&doc)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			http.Error(w, "no such invoice", http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, "store read failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(doc.String)))
		_, _ = w.Write([]byte(doc.String))
	})
}
