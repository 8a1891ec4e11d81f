package reliability_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
)

// TestSlowClientsCutOff: a client that does not finish its headers within ReadHeaderTimeout, or its
// body within ReadTimeout (here 300 ms and 800 ms; 10 s and 30 s by default, REMIT_READ_HEADER_TIMEOUT
// and REMIT_READ_TIMEOUT), is cut off, nothing it sent is applied, and the server keeps answering.
func TestSlowClientsCutOff(t *testing.T) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.ReadHeaderTimeout, cfg.ReadTimeout = 300*time.Millisecond, 800*time.Millisecond
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		addr := strings.TrimPrefix(e.Server.URL, "http://")
		if srv := e.Remit.HTTPServer(); srv.ReadHeaderTimeout != cfg.ReadHeaderTimeout || srv.ReadTimeout != cfg.ReadTimeout || srv.WriteTimeout == 0 || srv.IdleTimeout == 0 {
			t.Fatalf("server timeouts: %+v", srv)
		}
		body := `{"customerId":"slow","name":"Slow Client"}`
		headers := fmt.Sprintf("POST /v1/customers?environment=sandbox&merchantAccountId=%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			e.Tenant.Sandbox, addr, e.Tenant.APIKey, len(body))
		for _, c := range []struct {
			name  string
			send  func(conn net.Conn)
			limit time.Duration
		}{
			{"headers never finished", func(conn net.Conn) { _, _ = io.WriteString(conn, headers[:40]) }, 300 * time.Millisecond},
			{"body stalls", func(conn net.Conn) { _, _ = io.WriteString(conn, headers+body[:10]) }, 800 * time.Millisecond},
			{"body dripped", func(conn net.Conn) {
				_, _ = io.WriteString(conn, headers)
				for i := range len(body) - 1 {
					if _, err := io.WriteString(conn, body[i:i+1]); err != nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}, 800 * time.Millisecond},
		} {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			go c.send(conn)
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			took := time.Since(start)
			if err == nil {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode < 400 || res.StatusCode > 499 {
					t.Errorf("%s: answered %d %s", c.name, res.StatusCode, b)
				}
			} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("%s: the server did not cut the client off within 10 s", c.name)
			}
			if took < c.limit-50*time.Millisecond || took > c.limit+3*time.Second {
				t.Errorf("%s: cut off after %s, want about %s", c.name, took, c.limit)
			}
			conn.Close()
		}
		e.Must(404, "GET", "/v1/customers/slow", nil) // nothing applied
		e.Must(200, "GET", "/v1/test-helpers/clock", nil)
	})
}
