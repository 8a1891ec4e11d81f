package httpapi

import (
	"bytes"
	"compress/gzip"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/remit-billing/remit/docs"
)

// The developer documentation served beside the API, all from the binary (nothing is fetched
// from the internet at run time):
//
//	GET /docs                              the API reference: Redoc rendering GET /openapi.yaml
//	GET /docs/errors                       the errors guide (operational.go)
//	GET /docs/events                       the event catalog, docs/events.md rendered
//	GET /docs/assets/redoc.standalone.js   Redoc's standalone bundle (gzip when accepted)
//	GET /docs/assets/redoc-licenses.txt    Redoc's licence and those of the code it bundles
func (s *Server) mountDocs() {
	s.mux.HandleFunc("GET /docs", s.apiReference)
	s.mux.HandleFunc("GET /docs/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/docs", http.StatusMovedPermanently)
	})
	s.mux.HandleFunc("GET /docs/events", s.eventCatalog)
	s.mux.HandleFunc("GET /docs/assets/redoc.standalone.js", serveRedoc)
	s.mux.HandleFunc("GET /docs/assets/remit-docs.js", func(w http.ResponseWriter, r *http.Request) {
		setDocsHeaders(w, "text/javascript; charset=utf-8")
		_, _ = w.Write(remitDocsJS)
	})
	s.mux.HandleFunc("GET /docs/assets/redoc-licenses.txt", func(w http.ResponseWriter, r *http.Request) {
		setDocsHeaders(w, "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Redoc " + docs.RedocVersion + " (npm package redoc), https://github.com/Redocly/redoc\n\n"))
		_, _ = w.Write(docs.RedocLicense)
		_, _ = w.Write([]byte("\n\nCode bundled into redoc.standalone.js:\n\n"))
		_, _ = w.Write(docs.RedocThirdPartyLicenses)
	})
}

// docsFavicon is an empty icon, so that browsers do not ask for /favicon.ico.
const docsFavicon = `<link rel="icon" href="data:,">`

// docsNav is the bar shared by the documentation pages.
const docsNav = `<nav class="remit-nav"><strong>Remit</strong>
<a href="/docs">API reference</a>
<a href="/docs/errors">Errors guide</a>
<a href="/docs/events">Event catalog</a>
<a href="/openapi.yaml">openapi.yaml</a></nav>`

const docsNavStyle = `.remit-nav{position:sticky;top:0;z-index:10;height:44px;box-sizing:border-box;display:flex;gap:1.25rem;align-items:center;padding:0 1.25rem;background:#1f2a37;color:#fff;font:15px/1 system-ui,sans-serif}
.remit-nav a{color:#cfe0ff;text-decoration:none}.remit-nav a:hover{text-decoration:underline}`

var apiReferencePage = []byte(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Remit API reference</title>` + docsFavicon + `
<style>body{margin:0}` + docsNavStyle + `</style></head>
<body>` + docsNav + `
<div id="redoc"><noscript>The API reference needs JavaScript. The contract itself is at <a href="/openapi.yaml">/openapi.yaml</a>.</noscript></div>
<script src="/docs/assets/redoc.standalone.js"></script>
<script src="/docs/assets/remit-docs.js"></script>
</body></html>
`)

// remitDocsJS starts Redoc on the contract; a file of its own so that the page's
// Content-Security-Policy needs no inline script.
var remitDocsJS = []byte(`Redoc.init("/openapi.yaml", {
  scrollYOffset: ".remit-nav",
  expandResponses: "200,201",
  requiredPropsFirst: true,
  jsonSampleExpandLevel: 3,
  theme: {colors: {primary: {main: "#1f4fd1"}}, typography: {fontFamily: "system-ui, sans-serif", headings: {fontFamily: "system-ui, sans-serif"}}}
}, document.getElementById("redoc"));
`)

// docsCSP keeps the documentation pages to this server: Redoc's sidebar footer would otherwise
// fetch its logo from Redocly's CDN (the image is then left out), and nothing else may reach
// another host either. Redoc injects its styles and runs its search index in a blob: worker.
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"

func setDocsHeaders(w http.ResponseWriter, contentType string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Security-Policy", docsCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

func (s *Server) apiReference(w http.ResponseWriter, r *http.Request) {
	setDocsHeaders(w, "text/html; charset=utf-8")
	_, _ = w.Write(apiReferencePage)
}

var (
	eventsOnce sync.Once
	eventsHTML []byte
)

var eventsPageTmpl = template.Must(template.New("events").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Remit event catalog</title>` + docsFavicon + `
<style>body{margin:0;font:16px/1.55 system-ui,sans-serif;color:#222}main{max-width:62rem;margin:1.5rem auto;padding:0 1.25rem}
code{background:#f3f3f3;padding:0 .25rem;border-radius:3px}pre{background:#f6f8fa;padding:.75rem;overflow:auto}pre code{background:none;padding:0}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa}
` + docsNavStyle + `</style></head>
<body>` + docsNav + `<main>{{.}}</main></body></html>
`))

// eventCatalog renders docs/events.md (GitHub-flavoured Markdown; raw HTML in it is not passed
// through) once.
func (s *Server) eventCatalog(w http.ResponseWriter, r *http.Request) {
	eventsOnce.Do(func() {
		md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithParserOptions(parser.WithAutoHeadingID()))
		var body bytes.Buffer
		if err := md.Convert(docs.Events, &body); err != nil {
			body.Reset()
			body.WriteString("<pre>")
			template.HTMLEscape(&body, docs.Events)
			body.WriteString("</pre>")
		}
		var page bytes.Buffer
		_ = eventsPageTmpl.Execute(&page, template.HTML(body.String()))
		eventsHTML = page.Bytes()
	})
	setDocsHeaders(w, "text/html; charset=utf-8")
	_, _ = w.Write(eventsHTML)
}

var (
	redocGzipOnce sync.Once
	redocGzip     []byte
)

// serveRedoc serves the vendored bundle with a strong ETag, gzip-compressed when the client
// accepts it (about a third of the size).
func serveRedoc(w http.ResponseWriter, r *http.Request) {
	setDocsHeaders(w, "text/javascript; charset=utf-8")
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("ETag", docs.RedocETag)
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, docs.RedocETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := docs.Redoc
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		redocGzipOnce.Do(func() {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			_, _ = zw.Write(docs.Redoc)
			_ = zw.Close()
			redocGzip = b.Bytes()
		})
		body = redocGzip
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}
