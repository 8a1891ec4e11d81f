package testkit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Browser is a headless Chromium (Debian's chromium package) driven through chromedriver
// (chromium-driver) over the W3C WebDriver protocol: a few JSON calls, no client library. Each
// browser has a fresh profile in a temporary folder, talks to nothing but the addresses the test
// opens (background networking, component updates, sync and QUIC are off), and is closed when the
// test ends.
type Browser struct {
	t       testing.TB
	base    string // chromedriver's URL
	session string
	client  *http.Client
	logPath string
}

// BrowserFlags are Chromium's flags for tests.
var BrowserFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
	"--disable-extensions", "--window-size=1200,1500"}

// StartBrowser starts chromedriver and a headless Chromium session. Without the tools it skips
// the test, except in CI (REMIT_CI set), where it fails: .ci/run installs them.
func StartBrowser(t testing.TB) *Browser {
	t.Helper()
	chromium, err1 := exec.LookPath("chromium")
	driver, err2 := exec.LookPath("chromedriver")
	if err1 != nil || err2 != nil {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatalf("chromium and chromedriver are required in CI (apt-get install -y chromium chromium-driver; .ci/run installs them)")
		}
		t.Skip("chromium or chromedriver is not installed (apt-get install -y chromium chromium-driver)")
	}
	port := freePort(t)
	dir := t.TempDir()
	b := &Browser{t: t, base: "http://127.0.0.1:" + strconv.Itoa(port), client: &http.Client{Timeout: 60 * time.Second},
		logPath: filepath.Join(dir, "chromedriver.log")}
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--log-path="+b.logPath, "--allowed-ips=127.0.0.1")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromedriver: %v", err)
	}
	t.Cleanup(func() {
		if b.session != "" {
			_, _ = b.call("DELETE", "/session/"+b.session, nil)
		}
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st struct {
			Value struct {
				Ready bool `json:"ready"`
			} `json:"value"`
		}
		res, err := b.client.Get(b.base + "/status")
		if err == nil {
			_ = json.NewDecoder(res.Body).Decode(&st)
			res.Body.Close()
			if st.Value.Ready {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not become ready: %v\n%s", err, b.driverLog())
		}
		time.Sleep(50 * time.Millisecond)
	}
	args := append(append([]string{}, BrowserFlags...), "--user-data-dir="+filepath.Join(dir, "profile"))
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
	}}}
	v, err := b.call("POST", "/session", caps)
	if err != nil {
		t.Fatalf("new browser session: %v\n%s", err, b.driverLog())
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(v, &s); err != nil || s.SessionID == "" {
		t.Fatalf("new browser session: %s", v)
	}
	b.session = s.SessionID
	return b
}

// freePort answers a port on 127.0.0.1 that nothing listens on, drawn below the kernel's ephemeral
// range (32768–60999 on Linux): a port the kernel hands out for listen(":0") or as a connection's
// source port cannot then be given to another process while a child that was stopped on purpose
// (mailpit's outage) is down, so the child can take its port again when it restarts.
func freePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	t.Fatalf("free port: none free in 20000-31999 after 200 tries")
	return 0
}

func (b *Browser) driverLog() string {
	data, _ := os.ReadFile(b.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// call sends one WebDriver command and returns its "value".
func (b *Browser) call(method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("webdriver %s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if res.StatusCode >= 300 {
		return nil, fmt.Errorf("webdriver %s %s: %d %s", method, path, res.StatusCode, env.Value)
	}
	return env.Value, nil
}

func (b *Browser) must(method, path string, body any) json.RawMessage {
	b.t.Helper()
	v, err := b.call(method, "/session/"+b.session+path, body)
	if err != nil {
		b.t.Fatalf("%v", err)
	}
	return v
}

// Open navigates to url and waits for the page to load.
func (b *Browser) Open(url string) {
	b.t.Helper()
	b.must("POST", "/url", map[string]any{"url": url})
}

// Element is an element found on the page.
type Element struct {
	b  *Browser
	id string
}

const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// Find returns the element matching a CSS selector, failing the test if there is none.
func (b *Browser) Find(css string) Element {
	b.t.Helper()
	el, ok := b.TryFind(css)
	if !ok {
		b.t.Fatalf("no element matches %q", css)
	}
	return el
}

// TryFind returns the element matching a CSS selector, if any.
func (b *Browser) TryFind(css string) (Element, bool) {
	b.t.Helper()
	v, err := b.call("POST", "/session/"+b.session+"/element", map[string]any{"using": "css selector", "value": css})
	if err != nil {
		if strings.Contains(err.Error(), "no such element") {
			return Element{}, false
		}
		b.t.Fatalf("find %q: %v", css, err)
	}
	var ref map[string]string
	if err := json.Unmarshal(v, &ref); err != nil || ref[elementKey] == "" {
		b.t.Fatalf("find %q: %s", css, v)
	}
	return Element{b: b, id: ref[elementKey]}, true
}

// Click clicks the element.
func (el Element) Click() {
	el.b.t.Helper()
	el.b.must("POST", "/element/"+el.id+"/click", map[string]any{})
}

// Type types text into the element (an input), as a person would.
func (el Element) Type(text string) {
	el.b.t.Helper()
	el.b.must("POST", "/element/"+el.id+"/value", map[string]any{"text": text})
}

// Text is the element's rendered text.
func (el Element) Text() string {
	el.b.t.Helper()
	var s string
	_ = json.Unmarshal(el.b.must("GET", "/element/"+el.id+"/text", nil), &s)
	return s
}

// text is Text, reporting false when the element left the page (a script replaced it).
func (el Element) text() (string, bool) {
	el.b.t.Helper()
	v, err := el.b.call("GET", "/session/"+el.b.session+"/element/"+el.id+"/text", nil)
	if err != nil {
		// A navigation may replace the page between finding the element and reading it.
		if msg := err.Error(); strings.Contains(msg, "stale element") || strings.Contains(msg, "no such element") ||
			strings.Contains(msg, "does not belong to the document") {
			return "", false
		}
		el.b.t.Fatalf("%v", err)
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s, true
}

// Script runs JavaScript in the page and decodes its return value into out (nil to ignore it).
func (b *Browser) Script(js string, out any) {
	b.t.Helper()
	v := b.must("POST", "/execute/sync", map[string]any{"script": js, "args": []any{}})
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			b.t.Fatalf("script result %s: %v", v, err)
		}
	}
}

// ScriptAsync runs JavaScript that calls its last argument (a callback) with its result, waits
// up to timeout for it and decodes the result into out (nil to ignore it).
func (b *Browser) ScriptAsync(js string, timeout time.Duration, out any) {
	b.t.Helper()
	b.must("POST", "/timeouts", map[string]any{"script": timeout.Milliseconds()})
	v := b.must("POST", "/execute/async", map[string]any{"script": js, "args": []any{}})
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			b.t.Fatalf("script result %s: %v", v, err)
		}
	}
}

// WaitText polls the element matching css until its text contains one of want, or fails the test
// after timeout. It returns the text. An element that a script replaces meanwhile is found again.
func (b *Browser) WaitText(css string, timeout time.Duration, want ...string) string {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if el, ok := b.TryFind(css); ok {
			if text, ok := el.text(); ok { // the page may replace the element meanwhile: look again
				last = text
				for _, w := range want {
					if strings.Contains(last, w) {
						return last
					}
				}
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%q still reads %q after %v; want one of %q", css, last, timeout, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot saves a PNG of the viewport to path (folders are created).
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	var s string
	_ = json.Unmarshal(b.must("GET", "/screenshot", nil), &s)
	png, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// SetWindowSize resizes the browser's window (CSS pixels), e.g. to 375 wide for a phone's view.
func (b *Browser) SetWindowSize(width, height int) {
	b.t.Helper()
	b.must("POST", "/window/rect", map[string]any{"width": width, "height": height})
}

// ClickWhenReady clicks the element matching css as soon as it is on the page, finding it again
// when a navigation or a script replaced it between the find and the click; it fails the test
// after timeout.
func (b *Browser) ClickWhenReady(css string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var err error
		if el, ok := b.TryFind(css); ok {
			if _, err = b.call("POST", "/session/"+b.session+"/element/"+el.id+"/click", map[string]any{}); err == nil {
				return
			}
			if msg := err.Error(); !strings.Contains(msg, "stale element") && !strings.Contains(msg, "no such element") {
				b.t.Fatalf("click %q: %v", css, err)
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no element to click matches %q after %v (%v)", css, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
