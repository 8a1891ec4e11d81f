package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/mail"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// BenchmarkEmailWorker: REMIT_BENCH_EMAILS messages (default 100, which keeps the run of every benchmark in CI short; the figures in
// docs/performance.md are 2,000) are recorded queued through the store (InsertEmail, 500 per
// transaction; bodies composed by mail.Compose, a few KB each), then the worker's SendDue drains
// them through a real SMTP server (mailpit, on this machine) and the clock stops when mailpit holds
// them all. Three kinds: plain (text and HTML bodies), pdf (the same with the PDF of a finalized
// three-line invoice attached, rendered by the worker for every message, as it does in
// production), and plain-rtt20ms (plain, through a proxy that delays every packet by 10 ms each
// way: an SMTP server 20 ms away, as a hosted relay is; REMIT_BENCH_SMTP_RTT changes it; at most
// 500 messages). Each runs with several batch × concurrency settings (EmailBatch messages per
// SMTP connection × EmailConcurrency connections at a time), REMIT_BENCH_EMAIL_SETTINGS (default
// "25x16", the defaults; the figures in docs/performance.md name theirs). Reports msgs/s, the CPU this process (worker, store, renderer) spent
// and the memory it allocated per message and, apart, mailpit's CPU per message (it shares the
// machine's cores here; a production SMTP server would not).
//
//	REMIT_BENCH_EMAILS=2000 go test ./httpapi/ -run '^$' -bench EmailWorker -benchtime 1x -count 2
func BenchmarkEmailWorker(b *testing.B) {
	n := benchEnvInt("REMIT_BENCH_EMAILS", 100)
	settings := emailSettings(b)
	rtt := 20 * time.Millisecond
	if v, err := time.ParseDuration(os.Getenv("REMIT_BENCH_SMTP_RTT")); err == nil && v > 0 {
		rtt = v
	}
	rttKind := "plain-rtt" + rtt.String()
	for _, s := range testkit.Stores() {
		b.Run(string(s), func(b *testing.B) {
			mp := testkit.StartMailpit(b)
			e := mailBenchEnv(b, s, mp)
			inv := finalizedInvoice(b, e)
			// The finalization queued its own invoice.finalized message: send it now, out of the count.
			if _, err := e.App.Emails.SendDue(context.Background()); err != nil {
				b.Fatal(err)
			}
			// The worker's sender: mailpit directly, or through the latency proxy.
			local := e.App.Config.Mailer
			_, proxyPort, _ := strings.Cut(latencyProxy(b, mp.SMTPAddr, rtt/2), ":")
			remote := mail.NewSMTP(mail.Config{Host: "127.0.0.1", Port: atoi(proxyPort), Username: "remit", Password: "bench"})
			for _, kind := range []string{"plain", "pdf", rttKind} {
				for _, st := range settings {
					b.Run(fmt.Sprintf("%s/%dx%d", kind, st[0], st[1]), func(b *testing.B) {
						n := n
						e.App.Config.Mailer = local
						if kind == rttKind {
							n = min(n, 500)
							e.App.Config.Mailer = remote
						}
						defer func() { e.App.Config.Mailer = local }()
						var took, cpu, mpCPU time.Duration
						var alloc uint64
						for range b.N {
							b.StopTimer()
							mp.DeleteAll(b)
							queueEmails(b, e, inv, n, kind == "pdf")
							e.App.Config.EmailBatch, e.App.Config.EmailConcurrency = st[0], st[1]
							var ms runtime.MemStats
							runtime.ReadMemStats(&ms)
							alloc0 := ms.TotalAlloc
							cpu0, mp0, start := testkit.ProcessCPU(), mp.CPU(), time.Now()
							b.StartTimer()
							drainEmails(b, e, n)
							waitMailpit(b, mp, n, 2*time.Minute)
							b.StopTimer()
							took += time.Since(start)
							cpu += testkit.ProcessCPU() - cpu0
							mpCPU += mp.CPU() - mp0
							runtime.ReadMemStats(&ms)
							alloc += ms.TotalAlloc - alloc0
							checkMailed(b, e, mp, n, kind == "pdf")
						}
						b.ReportMetric(float64(n*b.N)/took.Seconds(), "msgs/s")
						b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n*b.N), "cpu-ms/msg")
						b.ReportMetric(float64(alloc)/(1<<20)/float64(n*b.N), "alloc-MiB/msg")
						if mp.CPU() > 0 {
							b.ReportMetric(float64(mpCPU.Microseconds())/1000/float64(n*b.N), "mailpit-cpu-ms/msg")
						}
						b.ReportMetric(0, "ns/op")
					})
				}
			}
		})
	}
}

// BenchmarkAPIWritesWhileMailing: API writes that each queue a message (finalizing send_invoice
// drafts of a customer with an address: invoice.finalized, the invoice PDF attached) from 16
// clients over HTTP for REMIT_BENCH_WRITE_SECONDS (default 5), once with the worker idle and then
// while the worker (RunEmails, the loop serve runs) drains a backlog of REMIT_BENCH_BACKLOG
// messages (default 5,000: more than it sends in the window) through mailpit, once per backlog and
// batch × concurrency setting of REMIT_BENCH_WHILE_SETTINGS (default
// "pdf/25x4,pdf/25x2,pdf/25x1,plain/25x4": messages with the invoice PDF at three concurrencies,
// and messages without attachment at the default). Reports writes/s, their p50 and p99, the
// messages the worker sent per second during the writes (counted when a round's outcomes commit,
// so in steps of a round), and the cores this process and mailpit used. What is left queued after
// a run is set skipped (off the clock), so every run starts with the same backlog.
//
//	go test ./httpapi/ -run '^$' -bench WhileMailing -benchtime 1x -count 3
func BenchmarkAPIWritesWhileMailing(b *testing.B) {
	const clients = 16
	secs := benchEnvInt("REMIT_BENCH_WRITE_SECONDS", 1)
	backlog := benchEnvInt("REMIT_BENCH_BACKLOG", 500)
	for _, s := range testkit.Stores() {
		b.Run(string(s), func(b *testing.B) {
			mp := testkit.StartMailpit(b)
			e := mailBenchEnv(b, s, mp)
			inv := finalizedInvoice(b, e)
			c := benchClient()
			drafts := make(chan string, 100000)
			modes := []string{"idle"}
			modes = append(modes, whileModes(b)...)
			for _, mode := range modes {
				b.Run(mode, func(b *testing.B) {
					var writes, mailed int
					var lat []time.Duration
					var cpu, mpCPU time.Duration
					for range b.N {
						b.StopTimer()
						if len(drafts) < 2000*secs {
							makeDrafts(b, e, c, drafts, 2000*secs-len(drafts)+500)
						}
						mp.DeleteAll(b)
						ctx, stop := context.WithCancel(context.Background())
						workerDone := make(chan struct{})
						if kind, batch, conc, ok := drainSetting(mode); ok {
							e.App.Config.EmailBatch, e.App.Config.EmailConcurrency = batch, conc
							queueEmails(b, e, inv, backlog, kind == "pdf")
							go func() { defer close(workerDone); e.App.Emails.RunEmails(ctx) }()
							waitForClaims(b, e) // the worker is into its first round
						} else {
							close(workerDone)
						}
						sent0 := emailCount(b, e, remit.EmailSent)
						cpu0, mp0 := testkit.ProcessCPU(), mp.CPU()
						b.StartTimer()
						l := finalizeFor(b, e, c, drafts, clients, time.Duration(secs)*time.Second)
						b.StopTimer()
						cpu += testkit.ProcessCPU() - cpu0
						mpCPU += mp.CPU() - mp0
						mailed += emailCount(b, e, remit.EmailSent) - sent0
						stop()
						<-workerDone
						writes += len(l)
						lat = append(lat, l...)
						if _, err := e.App.DB.SQL().Exec(`UPDATE emails SET status = 'skipped', next_attempt_at = NULL WHERE status = 'queued'`); err != nil {
							b.Fatal(err)
						}
					}
					window := float64(secs * b.N)
					b.ReportMetric(float64(writes)/window, "writes/s")
					b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(mailed)/window, "mailed/s")
					b.ReportMetric(cpu.Seconds()/window, "cores")
					if mp.CPU() > 0 {
						b.ReportMetric(mpCPU.Seconds()/window, "mailpit-cores")
					}
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

// makeDrafts creates k draft invoices of mail-c (one to three lines) through the API, 16 at a
// time, into drafts.
func makeDrafts(b *testing.B, e *testkit.Env, c *http.Client, drafts chan string, k int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)); i <= k; i = int(next.Add(1)) {
				lines := `{"priceId":"mail-plan"}`
				for j := range i % 3 {
					lines += fmt.Sprintf(`,{"priceId":"mail-item","quantity":%d}`, j+1)
				}
				var d struct {
					Data struct {
						InvoiceID string `json:"invoiceId"`
					} `json:"data"`
				}
				if err := apiCall(c, e, "POST", "/v1/invoices", `{"customerId":"mail-c","billingAccountId":"ba-mail-c","currency":"USD","lines":[`+lines+`]}`, 201, &d); err != nil {
					b.Error(err)
					return
				}
				drafts <- d.Data.InvoiceID
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// finalizeFor finalizes drafts from clients goroutines for d and answers every finalization's latency.
func finalizeFor(b *testing.B, e *testkit.Env, c *http.Client, drafts chan string, clients int, d time.Duration) []time.Duration {
	end := time.Now().Add(d)
	out := make(chan []time.Duration, clients)
	for range clients {
		go func() {
			var lat []time.Duration
			for time.Now().Before(end) {
				var id string
				select {
				case id = <-drafts:
				default:
					b.Error("the drafts ran out")
					out <- lat
					return
				}
				t0 := time.Now()
				if err := apiCall(c, e, "POST", "/v1/invoices/"+id+"/finalize", `{}`, 200, nil); err != nil {
					b.Error(err)
					break
				}
				lat = append(lat, time.Since(t0))
			}
			out <- lat
		}()
	}
	var all []time.Duration
	for range clients {
		all = append(all, <-out...)
	}
	if b.Failed() {
		b.FailNow()
	}
	return all
}

// apiCall sends one request in the tenant's sandbox with a plain client (no contract check: the
// client's CPU is the server's too here) and decodes the answer into v when v is not nil.
func apiCall(c *http.Client, e *testkit.Env, method, path, body string, want int, v any) error {
	req, err := http.NewRequest(method, e.Server.URL+path+"?environment=sandbox&merchantAccountId="+url.QueryEscape(e.Tenant.Sandbox),
		strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	if v != nil {
		return json.Unmarshal(raw, v)
	}
	return nil
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// emailSettings reads REMIT_BENCH_EMAIL_SETTINGS: batch×concurrency pairs.
func emailSettings(b *testing.B) [][2]int {
	return parseSettings(b, "REMIT_BENCH_EMAIL_SETTINGS", "25x16")
}

// whileModes reads REMIT_BENCH_WHILE_SETTINGS: the backlogs to drain, KIND/BATCHxCONCURRENCY
// with KIND pdf or plain, as "draining/KIND/BxC" modes.
func whileModes(b *testing.B) []string {
	spec := os.Getenv("REMIT_BENCH_WHILE_SETTINGS")
	if spec == "" {
		spec = "pdf/25x16"
	}
	var out []string
	for _, p := range strings.Split(spec, ",") {
		m := "draining/" + strings.TrimSpace(p)
		if _, _, _, ok := drainSetting(m); !ok {
			b.Fatalf("REMIT_BENCH_WHILE_SETTINGS: %q is not pdf/BxC or plain/BxC", p)
		}
		out = append(out, m)
	}
	return out
}

// drainSetting reads "draining/KIND/BxC".
func drainSetting(mode string) (kind string, batch, conc int, ok bool) {
	spec, ok := strings.CutPrefix(mode, "draining/")
	if !ok {
		return "", 0, 0, false
	}
	kind, spec, _ = strings.Cut(spec, "/")
	if _, err := fmt.Sscanf(spec, "%dx%d", &batch, &conc); err != nil || batch < 1 || conc < 1 || (kind != "pdf" && kind != "plain") {
		return "", 0, 0, false
	}
	return kind, batch, conc, true
}

func parseSettings(b *testing.B, name, def string) [][2]int {
	spec := os.Getenv(name)
	if spec == "" {
		spec = def
	}
	var out [][2]int
	for _, p := range strings.Split(spec, ",") {
		bs, cs, ok := strings.Cut(strings.TrimSpace(p), "x")
		batch, err1 := strconv.Atoi(bs)
		conc, err2 := strconv.Atoi(cs)
		if !ok || err1 != nil || err2 != nil || batch < 1 || conc < 1 {
			b.Fatalf("%s: %q is not BATCHxCONCURRENCY", name, p)
		}
		out = append(out, [2]int{batch, conc})
	}
	return out
}

func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// mailBenchEnv starts a server on a new store of kind s that mails through mp. A failed attempt
// is retried only after 1 s: it leaves its message queued, which fails the benchmark's check.
func mailBenchEnv(b *testing.B, s testkit.Store, mp *testkit.Mailpit) *testkit.Env {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 1000000, 1000000
	cfg.SMTPURL, cfg.EmailFrom, cfg.EmailRetry = mp.SMTPURL("remit", "bench"), "billing@remit.example", "1s"
	return testkit.Start(b, s, testkit.Options{Config: &cfg})
}

// finalizedInvoice creates a send_invoice customer with an address and finalizes a three-line
// invoice through the API: the document every pdf message attaches.
func finalizedInvoice(b *testing.B, e *testkit.Env) remit.Invoice {
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "mail-item", "productId": "mail-item", "name": "Consulting hour",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 12500})
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "mail-plan", "productId": "mail-plan", "name": "Pro plan (monthly)",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 4900})
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "mail-c", "name": "Globex Corporation", "email": "ap@globex.example"})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-mail-c", "customerId": "mail-c", "currency": "USD",
		"collectionMethod": "send_invoice"})
	d := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "mail-c", "billingAccountId": "ba-mail-c", "currency": "USD",
		"lines": []any{map[string]any{"priceId": "mail-plan"}, map[string]any{"priceId": "mail-item", "quantity": 6},
			map[string]any{"priceId": "mail-item", "quantity": 2, "description": "On-site workshop"}}}).Data()
	var inv remit.Invoice
	e.Must(200, "POST", "/v1/invoices/"+d["invoiceId"].(string)+"/finalize", map[string]any{}).Decode(b, &inv)
	if inv.Number == nil {
		b.Fatalf("the finalized invoice has no number: %+v", inv)
	}
	return inv
}

// queueEmails records n queued invoice.finalized messages, due now, each to its own address, in
// transactions of 500; with pdf, each attaches inv's PDF.
func queueEmails(b *testing.B, e *testkit.Env, inv remit.Invoice, n int, pdf bool) {
	ctx := context.Background()
	m := mustMerchant(b, e, e.Tenant.Sandbox)
	now := e.Clock.Now()
	due := micro(now)
	for start := 0; start < n; start += 500 {
		err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			for i := start; i < min(start+500, n); i++ {
				loc := remit.Locales[i%len(remit.Locales)]
				number := fmt.Sprintf("INV-%06d", i+1)
				f := mail.Facts{Type: remit.EmailInvoiceFinalized, Locale: loc, Merchant: m.DisplayName, Customer: fmt.Sprintf("Customer %d", i),
					InvoiceNumber: number, Amount: inv.AmountRemaining, Currency: inv.Currency, Date: now,
					ActionURL: "https://pay.remit.example/invoices/" + inv.InvoiceID + "?token=" + strings.Repeat("x", 43), HasAttachment: pdf}
				msg, err := mail.Compose(f)
				if err != nil {
					return err
				}
				to := fmt.Sprintf("customer%d@client.example", i)
				em := remit.Email{Object: "email", EmailID: remit.NewID("em"), Type: f.Type, To: &to, Subject: msg.Subject, Locale: loc,
					Status: remit.EmailQueued, CustomerID: inv.CustomerID, InvoiceID: &inv.InvoiceID, Environment: m.Environment,
					MerchantAccountID: m.ID, CreatedAt: due, TextBody: msg.Text, HTMLBody: msg.HTML, FromName: m.DisplayName, NextAttemptAt: &due}
				if pdf {
					em.Attachment = &remit.EmailFile{Kind: remit.AttachInvoice, DocumentID: inv.InvoiceID, FileName: *inv.Number + ".pdf"}
				}
				if err := tx.InsertEmail(ctx, em); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// drainEmails runs SendDue until nothing is due; with n ≥ 0 it fails unless n attempts were made.
func drainEmails(b *testing.B, e *testkit.Env, n int) {
	total := 0
	for {
		k, err := e.App.Emails.SendDue(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += k
		if k == 0 {
			break
		}
	}
	if n >= 0 && total != n {
		b.Fatalf("SendDue made %d attempts, want %d", total, n)
	}
}

// waitMailpit polls mailpit's message count until it reaches n.
func waitMailpit(b *testing.B, mp *testkit.Mailpit, n int, deadline time.Duration) {
	end := time.Now().Add(deadline)
	for {
		res, err := http.Get(mp.HTTPURL + "/api/v1/messages?limit=1")
		if err != nil {
			b.Fatal(err)
		}
		var page struct {
			Total int `json:"total"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		if page.Total >= n {
			return
		}
		if time.Now().After(end) {
			b.Fatalf("mailpit holds %d messages after %s, want %d", page.Total, deadline, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkMailed checks that every queued message is recorded sent and that mailpit holds n
// messages, each with one attachment when pdf.
func checkMailed(b *testing.B, e *testkit.Env, mp *testkit.Mailpit, n int, pdf bool) {
	if q := emailCount(b, e, remit.EmailQueued); q != 0 {
		b.Fatalf("%d messages still queued", q)
	}
	if f := emailCount(b, e, remit.EmailFailed); f != 0 {
		b.Fatalf("%d messages failed", f)
	}
	msgs := mp.Messages(b)
	if len(msgs) != n {
		b.Fatalf("mailpit holds %d messages, want %d", len(msgs), n)
	}
	var size uint64
	for _, m := range msgs {
		size += m.Size
		if want := map[bool]int{true: 1, false: 0}[pdf]; m.Attachments != want {
			b.Fatalf("message %s has %d attachments, want %d", m.MessageID, m.Attachments, want)
		}
	}
	b.ReportMetric(float64(size)/float64(n)/1024, "KiB/msg")
}

// emailCount counts the messages of every account with status.
func emailCount(b *testing.B, e *testkit.Env, status remit.EmailStatus) int {
	var k int
	if err := e.App.DB.SQL().QueryRow(`SELECT COUNT(*) FROM emails WHERE status = '` + string(status) + `'`).Scan(&k); err != nil {
		b.Fatal(err)
	}
	return k
}

// latencyProxy listens on a loopback port and forwards each connection to target, delaying every
// chunk by oneWay in each direction (order kept): target as if it were 2×oneWay away. It answers
// its address.
func latencyProxy(b *testing.B, target string, oneWay time.Duration) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				s, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					return
				}
				go delayCopy(s, c, oneWay)
				delayCopy(c, s, oneWay)
			}()
		}
	}()
	return ln.Addr().String()
}

// delayCopy copies src to dst, writing each chunk oneWay after it was read, and closes dst when
// src ends.
func delayCopy(dst, src net.Conn, oneWay time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{time.Now().Add(oneWay), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	for range q { // the other direction closes src: the reader ends
	}
}

// waitForClaims polls until the worker has claimed a message (an attempt is counted), or fails at
// a deadline.
func waitForClaims(b *testing.B, e *testkit.Env) {
	b.Helper()
	end := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := e.App.DB.SQL().QueryRow(`SELECT COUNT(*) FROM emails WHERE attempts > 0 AND status = 'queued'`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(end) {
			b.Fatal("the worker claimed nothing within 30 s")
		}
		time.Sleep(time.Millisecond) // a poll with a deadline
	}
}
