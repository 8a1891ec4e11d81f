package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mailpit is a real SMTP server (github.com/axllent/mailpit, a tool of this module) started by
// StartMailpit for one test. It accepts any SMTP credentials without TLS, keeps every message in a
// SQLite database in the test's temporary folder (so messages survive Stop and Restart), and its
// HTTP API is used to read messages back.
//
// Stop and Restart fail the test that started mailpit, so call them from that test's goroutine.
type Mailpit struct {
	SMTPAddr string // 127.0.0.1:port of the SMTP server
	HTTPURL  string // http://127.0.0.1:port of the web UI and API

	t       testing.TB
	bin     string
	db      string
	logPath string
	http    *http.Client

	extra []string // further mailpit flags (StartMailpit's)

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited; nil when not running
}

// MailpitSummary is one message in a mailpit listing (GET /api/v1/messages).
type MailpitSummary struct {
	ID          string // mailpit's database ID, for Message and Attachment
	MessageID   string // the Message-ID header without <>
	From        mail.Address
	To          []mail.Address
	Cc          []mail.Address
	Bcc         []mail.Address // the Bcc header, plus envelope recipients that are in no header
	Subject     string
	Created     time.Time // when mailpit received it
	Size        uint64
	Attachments int // number of attachments (not counting inline parts)
}

// MailpitMessage is one message read by mailpit (GET /api/v1/message/{ID}).
type MailpitMessage struct {
	ID          string
	MessageID   string
	From        mail.Address
	To          []mail.Address
	Cc          []mail.Address
	Bcc         []mail.Address
	ReplyTo     []mail.Address
	ReturnPath  string // the SMTP envelope sender
	Subject     string
	Date        time.Time
	Username    string // the SMTP AUTH user name; mailpit v1.27.11 records it for AUTH LOGIN, not PLAIN
	Text        string // the text/plain body, decoded
	HTML        string // the text/html body, decoded
	Size        uint64
	Inline      []MailpitAttachment // inline parts (e.g. images an HTML body refers to by cid:)
	Attachments []MailpitAttachment
}

// MailpitAttachment is one attachment or inline part of a message; its content is read with
// Mailpit.Attachment(t, message ID, PartID).
type MailpitAttachment struct {
	PartID      string
	FileName    string
	ContentType string
	ContentID   string
	Size        uint64
}

// MailAddrs returns the bare addresses (no display names) of as, e.g. to compare recipients.
func MailAddrs(as []mail.Address) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Address
	}
	return out
}

var mailpitBuild struct {
	once sync.Once
	bin  string
	err  error
	took time.Duration
}

// mailpitBinary builds mailpit once per test process with `go tool -n mailpit`, which builds the
// module's tool into the go build cache and prints its path: nothing is left behind in /tmp, and
// later processes find it built.
func mailpitBinary(t testing.TB) string {
	t.Helper()
	b := &mailpitBuild
	b.once.Do(func() {
		start := time.Now()
		out, err := exec.Command("go", "tool", "-n", "mailpit").Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			b.err = fmt.Errorf("%v\n%s", err, stderr)
			return
		}
		b.bin, b.took = strings.TrimSpace(string(out)), time.Since(start)
	})
	if b.err != nil {
		t.Fatalf("build mailpit: %v", b.err)
	}
	return b.bin
}

// StartMailpit builds (once per test process) and starts mailpit on free loopback ports for SMTP
// and HTTP, waits until both answer, and stops it when the test ends. If the test fails, mailpit's
// log is shown. extra are further mailpit flags, e.g. "--smtp-allowed-recipients", "@example\\.com$".
func StartMailpit(t testing.TB, extra ...string) *Mailpit {
	t.Helper()
	bin := mailpitBinary(t)
	dir := t.TempDir()
	m := &Mailpit{
		t:       t,
		bin:     bin,
		db:      filepath.Join(dir, "mailpit.db"),
		logPath: filepath.Join(dir, "mailpit.log"),
		http:    &http.Client{Timeout: 30 * time.Second},
		extra:   extra,
	}
	t.Cleanup(func() {
		m.Stop()
		if t.Failed() {
			t.Logf("mailpit log (%s):\n%s", m.logPath, m.logTail(64<<10))
		}
	})
	// Another process may take a port between freePort and mailpit's bind: try fresh ports then.
	for attempt := 1; ; attempt++ {
		m.SMTPAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		m.HTTPURL = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		err := m.start()
		if err == nil {
			return m
		}
		if attempt == 3 || !strings.Contains(m.logTail(4<<10), "address already in use") {
			t.Fatalf("start mailpit: %v\n%s", err, m.logTail(64<<10))
		}
	}
}

// SMTPURL returns smtp://user:pass@SMTPAddr (without user info when both are empty); mailpit
// accepts any user name and password.
func (m *Mailpit) SMTPURL(user, pass string) string {
	u := url.URL{Scheme: "smtp", Host: m.SMTPAddr}
	if user != "" || pass != "" {
		u.User = url.UserPassword(user, pass)
	}
	return u.String()
}

// Stop kills mailpit and waits for it to exit: its ports refuse connections until Restart. The
// messages stay in its database. Stopping a stopped mailpit does nothing.
func (m *Mailpit) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.exited == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	<-m.exited
	m.cmd, m.exited = nil, nil
}

// Restart starts mailpit again on the same ports and database (stopping it first if it runs) and
// waits until both ports answer; the test fails if it does not.
func (m *Mailpit) Restart() {
	m.t.Helper()
	m.Stop()
	if err := m.start(); err != nil {
		m.t.Fatalf("restart mailpit: %v\n%s", err, m.logTail(64<<10))
	}
}

// start runs mailpit on m's ports and database and waits until its HTTP API is ready and its
// SMTP port greets; on failure mailpit is not running.
func (m *Mailpit) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.exited != nil {
		return fmt.Errorf("mailpit is already running")
	}
	logFile, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	fmt.Fprintf(logFile, "--- testkit: starting mailpit, SMTP %s, HTTP %s, %s\n", m.SMTPAddr, m.HTTPURL, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(m.bin, append([]string{
		"--database", m.db,
		"--smtp", m.SMTPAddr,
		"--listen", strings.TrimPrefix(m.HTTPURL, "http://"),
		"--smtp-auth-accept-any",
		"--smtp-auth-allow-insecure",
		"--smtp-disable-rdns", // no reverse DNS lookup of 127.0.0.1 for each connection
		"--disable-version-check",
		"--max", "100000",
	}, m.extra...)...)
	// Mailpit also reads its settings from MP_* variables: keep a developer's out of tests.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	const timeout = 60 * time.Second
	deadline := time.Now().Add(timeout)
	httpReady, smtpReady := false, false
	for !httpReady || !smtpReady {
		select {
		case <-exited:
			return fmt.Errorf("mailpit exited: %v", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("mailpit did not answer within %s (HTTP ready: %v, SMTP ready: %v)", timeout, httpReady, smtpReady)
		}
		if !httpReady {
			httpReady = m.httpReady()
		}
		if !smtpReady {
			smtpReady = smtpGreets(m.SMTPAddr)
		}
		if !httpReady || !smtpReady {
			time.Sleep(5 * time.Millisecond)
		}
	}
	m.cmd, m.exited = cmd, exited
	return nil
}

// httpReady reports whether mailpit's /readyz answers 200 (HTTP server up, database open).
func (m *Mailpit) httpReady() bool {
	res, err := m.http.Get(m.HTTPURL + "/readyz")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// smtpGreets reports whether an SMTP server at addr answers a connection with a 220 greeting.
func smtpGreets(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "220") {
		return false
	}
	_, _ = io.WriteString(c, "QUIT\r\n")
	return true
}

// logTail returns at most the last n bytes of mailpit's log.
func (m *Mailpit) logTail(n int64) string {
	f, err := os.Open(m.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// api sends a request to mailpit's HTTP API and returns the body of a 200 answer; anything else
// fails the test.
func (m *Mailpit) api(t testing.TB, method, path string, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(method, m.HTTPURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("mailpit %s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := m.http.Do(req)
	if err != nil {
		t.Fatalf("mailpit %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("mailpit %s %s: read: %v", method, path, err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("mailpit %s %s: %s: %s", method, path, res.Status, b)
	}
	return b
}

func (m *Mailpit) apiJSON(t testing.TB, path string, v any) {
	t.Helper()
	b := m.api(t, http.MethodGet, path, nil)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("mailpit GET %s: %v\n%s", path, err, b)
	}
}

// mailpitPage is the answer of GET /api/v1/messages.
type mailpitPage struct {
	Total    int              `json:"total"`
	Messages []MailpitSummary `json:"messages"` // a null From decodes as the zero Address
}

// Messages returns every message mailpit holds, oldest first.
func (m *Mailpit) Messages(t testing.TB) []MailpitSummary {
	t.Helper()
	const limit = 500
	var newestFirst []MailpitSummary
	seen := map[string]bool{}
	for start := 0; ; start += limit {
		var page mailpitPage
		m.apiJSON(t, fmt.Sprintf("/api/v1/messages?start=%d&limit=%d", start, limit), &page)
		for _, s := range page.Messages {
			// A message arriving while we page shifts later pages by one: skip repeats.
			if seen[s.ID] {
				continue
			}
			seen[s.ID] = true
			newestFirst = append(newestFirst, s)
		}
		if len(page.Messages) < limit {
			break
		}
	}
	out := make([]MailpitSummary, len(newestFirst))
	for i, s := range newestFirst {
		out[len(out)-1-i] = s
	}
	return out
}

// count returns how many messages mailpit holds.
func (m *Mailpit) count(t testing.TB) int {
	t.Helper()
	var page mailpitPage
	m.apiJSON(t, "/api/v1/messages?limit=1", &page)
	return page.Total
}

// WaitForMessages polls until mailpit holds at least n messages and returns them all, oldest
// first; the test fails if they are not there within deadline.
func (m *Mailpit) WaitForMessages(t testing.TB, n int, deadline time.Duration) []MailpitSummary {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		if m.count(t) >= n {
			return m.Messages(t)
		}
		if time.Now().After(end) {
			have := m.Messages(t)
			var subjects []string
			for _, s := range have {
				subjects = append(subjects, fmt.Sprintf("%q to %v", s.Subject, MailAddrs(s.To)))
			}
			t.Fatalf("timed out after %s waiting for %d messages in mailpit; it has %d: %s", deadline, n, len(have), strings.Join(subjects, ", "))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Message returns the message with mailpit ID id (a MailpitSummary.ID, or "latest").
func (m *Mailpit) Message(t testing.TB, id string) MailpitMessage {
	t.Helper()
	var msg MailpitMessage
	m.apiJSON(t, "/api/v1/message/"+url.PathEscape(id), &msg)
	return msg
}

// Headers returns the headers of message id, by canonical name.
func (m *Mailpit) Headers(t testing.TB, id string) map[string][]string {
	t.Helper()
	h := map[string][]string{}
	m.apiJSON(t, "/api/v1/message/"+url.PathEscape(id)+"/headers", &h)
	return h
}

// Attachment returns the decoded content of part partID (a MailpitAttachment.PartID) of message id.
func (m *Mailpit) Attachment(t testing.TB, id, partID string) []byte {
	t.Helper()
	return m.api(t, http.MethodGet, "/api/v1/message/"+url.PathEscape(id)+"/part/"+url.PathEscape(partID), nil)
}

// DeleteAll deletes every message mailpit holds.
func (m *Mailpit) DeleteAll(t testing.TB) {
	t.Helper()
	m.api(t, http.MethodDelete, "/api/v1/messages", []byte("{}"))
}

// CPU is the CPU time (user + system) the running mailpit process has used so far, from
// /proc/<pid>/stat; 0 when it is not running or elsewhere than Linux. Benchmarks report it apart:
// here mailpit shares the machine's cores, a production SMTP server would not.
func (m *Mailpit) CPU() time.Duration {
	m.mu.Lock()
	cmd := m.cmd
	m.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	rest := string(b) // the command name (field 2) is in parentheses and may hold spaces
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}
