package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
)

// reachable is the edge's Health for a server without a store: every error is the edge's own.
type reachable struct{}

func (reachable) Ready(context.Context) (remit.Readiness, error) {
	return remit.Readiness{Store: "none"}, nil
}
func (reachable) Unavailable(error) bool { return false }

// TestStreamCutOff holds a Stream answer to what docs/exports.md promises a client: an error before
// the first byte is the JSON envelope; after it, the body ends without its last chunk (HTTP/1.1)
// or the stream is reset (HTTP/2), so that a client reading it sees an error, never a complete
// body; a stream that ends well is read to its end.
func TestStreamCutOff(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler), metrics: newMetrics(), eng: Engine{Health: reachable{}}, cfg: Config{PublicURL: "http://remit.test"}}
	o := &operation{success: http.StatusOK}
	chunk := bytes.Repeat([]byte("a,b,c\r\n"), 20000) // 140 kB
	for _, c := range []struct {
		name       string
		write      func(ctx context.Context, w io.Writer) error
		wantStatus int
		wantJSON   bool
		wantErr    bool
	}{
		{"error before the first byte", func(ctx context.Context, w io.Writer) error { return errors.New("the store went away") }, 500, true, false},
		{"error after the first byte", func(ctx context.Context, w io.Writer) error {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			return errors.New("the store went away")
		}, 200, false, true},
		{"complete", func(ctx context.Context, w io.Writer) error { _, err := w.Write(chunk); return err }, 200, false, false},
	} {
		for _, h2 := range []bool{false, true} {
			name := c.name + map[bool]string{false: " (HTTP/1.1)", true: " (HTTP/2)"}[h2]
			t.Run(name, func(t *testing.T) {
				srv := httptest.NewUnstartedServer(s.withRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					s.respond(w, r, o, "", Stream{ContentType: "text/csv; charset=utf-8", Write: c.write}, nil)
				})))
				if h2 {
					srv.EnableHTTP2 = true
					srv.StartTLS()
				} else {
					srv.Start()
				}
				defer srv.Close()
				res, err := srv.Client().Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				if h2 != (res.ProtoMajor == 2) {
					t.Fatalf("protocol %s", res.Proto)
				}
				body, err := io.ReadAll(res.Body)
				if res.StatusCode != c.wantStatus || (err != nil) != c.wantErr {
					t.Fatalf("status %d, read error %v; want %d, an error: %v", res.StatusCode, err, c.wantStatus, c.wantErr)
				}
				if json := strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"); json != c.wantJSON {
					t.Fatalf("Content-Type %q", res.Header.Get("Content-Type"))
				}
				if c.wantJSON && (!bytes.Contains(body, []byte(`"internal_error"`)) || bytes.Contains(body, []byte("store went away"))) {
					t.Fatalf("envelope %s", body)
				}
				if !c.wantJSON && !c.wantErr && !bytes.Equal(body, chunk) {
					t.Fatalf("body of %d bytes, want %d", len(body), len(chunk))
				}
			})
		}
	}
}
