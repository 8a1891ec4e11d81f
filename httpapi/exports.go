package httpapi

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/remit-billing/remit"
)

// exportChunk is how much of an export is gathered before it is sent: one chunk of the chunked
// body, and all the memory an export holds besides the row being written.
const exportChunk = 64 << 10

// exportDataset handles GET /v1/exports/{dataset}.csv (docs/exports.md): the engine checks the
// query, then the rows are written as CSV while the store reads them (a Stream).
func (s *Server) exportDataset(ctx context.Context, r *Request) (any, error) {
	exp, err := s.eng.Exports.Export(ctx, r.Merchant, exportQuery(r))
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": exp.Dataset + ".csv"}))
	return Stream{ContentType: "text/csv; charset=utf-8", Header: h, Write: func(ctx context.Context, w io.Writer) error {
		return s.writeCSV(ctx, w, exp)
	}}, nil
}

// exportQuery is the export a request asks for: its dataset and every query parameter but the
// scope's.
func exportQuery(r *Request) remit.ExportQuery {
	params := map[string][]string{}
	for name, vs := range r.HTTP.URL.Query() {
		if name != "environment" && name != "merchantAccountId" {
			params[name] = vs
		}
	}
	return remit.ExportQuery{Dataset: r.Path("dataset"), Params: params}
}

// writeCSV writes an export as RFC 4180 CSV in UTF-8: the header row, then one row per record as
// the store reads it, every line ending CRLF (a line break inside a value too, whichever it was),
// sent in chunks of exportChunk. It counts the export in the metrics, with how it ended.
func (s *Server) writeCSV(ctx context.Context, w io.Writer, exp remit.Export) error {
	buf := bufio.NewWriterSize(w, exportChunk)
	cw := csv.NewWriter(buf) // writes into buf itself: it is large enough
	cw.UseCRLF = true
	rows := 0
	err := exp.Rows(ctx, func(values []string) error {
		if rows == 0 {
			if err := cw.Write(exp.Columns); err != nil {
				return err
			}
		}
		rows++
		for i, v := range values {
			values[i] = lineBreaks(v)
		}
		return cw.Write(values)
	})
	if err == nil && rows == 0 {
		err = cw.Write(exp.Columns)
	}
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	outcome := "completed"
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.Is(err, errClientGone):
		outcome = "canceled"
	default:
		outcome = "failed"
	}
	s.metrics.exported(exp.Dataset, outcome, rows)
	return err
}

// lineBreaks makes every line break of v a line feed, which the CSV writer writes as CRLF: a
// carriage return alone would otherwise be dropped.
func lineBreaks(v string) string {
	if !strings.ContainsRune(v, '\r') {
		return v
	}
	return strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\r", "\n")
}
