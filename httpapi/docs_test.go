package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/docs"
	"github.com/remit-billing/remit/internal/testkit"
)

// The documentation routes serve everything from the binary. (The browser test in test/browser
// checks what a person sees.)
func TestDocsRoutes(t *testing.T) {
	e := testkit.Start(t, testkit.SQLite, testkit.Options{})
	get := func(path string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", e.Server.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		tr := &http.Transport{DisableCompression: true}
		res, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	body := func(res *http.Response) string { b, _ := io.ReadAll(res.Body); return string(b) }

	res := get("/docs")
	page := body(res)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, `src="/docs/assets/redoc.standalone.js"`) || !strings.Contains(page, `href="/docs/errors"`) || !strings.Contains(page, `href="/docs/events"`) {
		t.Fatalf("GET /docs: %d %s", res.StatusCode, page)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q", csp)
	}
	if strings.Contains(page, "https://") || strings.Contains(page, "http://") {
		t.Errorf("the page references another host:\n%s", page)
	}
	if res := get("/docs/"); res.StatusCode != 301 || res.Header.Get("Location") != "/docs" {
		t.Errorf("GET /docs/: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := get("/docs/assets/remit-docs.js"); res.StatusCode != 200 || !strings.Contains(body(res), `Redoc.init("/openapi.yaml"`) {
		t.Errorf("remit-docs.js: %d", res.StatusCode)
	}

	// The bundle: the vendored release, gzip when accepted, cached by ETag.
	res = get("/docs/assets/redoc.standalone.js")
	if b := body(res); res.StatusCode != 200 || !bytes.Equal([]byte(b), docs.Redoc) || res.Header.Get("ETag") == "" {
		t.Fatalf("bundle: %d, %d bytes, ETag %q", res.StatusCode, len(b), res.Header.Get("ETag"))
	}
	res = get("/docs/assets/redoc.standalone.js", "Accept-Encoding", "gzip")
	zr, err := gzip.NewReader(res.Body)
	if err != nil || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip bundle: %v %q", err, res.Header.Get("Content-Encoding"))
	}
	if unz, _ := io.ReadAll(zr); !bytes.Equal(unz, docs.Redoc) {
		t.Fatal("the gzip bundle is not the bundle")
	}
	if res := get("/docs/assets/redoc.standalone.js", "If-None-Match", docs.RedocETag); res.StatusCode != 304 {
		t.Errorf("If-None-Match: %d", res.StatusCode)
	}
	if lic := body(get("/docs/assets/redoc-licenses.txt")); !strings.Contains(lic, "MIT License") || !strings.Contains(lic, docs.RedocVersion) {
		t.Errorf("licences: %.200s", lic)
	}

	// The event catalog, rendered: every type appears in a table.
	res = get("/docs/events")
	cat := body(res)
	if res.StatusCode != 200 || !strings.Contains(cat, "<table>") || !strings.Contains(cat, `<h1 id="events-and-webhooks">`) {
		t.Fatalf("GET /docs/events: %d %.300s", res.StatusCode, cat)
	}
	for _, typ := range remit.EventTypes {
		if !strings.Contains(cat, "<code>"+string(typ)+"</code>") {
			t.Errorf("/docs/events does not list %s", typ)
		}
	}
	if res := get("/docs/errors"); res.StatusCode != 200 || !strings.Contains(body(res), `id="validation_failure"`) {
		t.Errorf("GET /docs/errors: %d", res.StatusCode)
	}
}
