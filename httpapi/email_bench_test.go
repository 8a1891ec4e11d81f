package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/mail"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// BenchmarkEmailWorker: REMIT_BENCH_EMAILS messages (default 500; the figures in
// docs/performance.md are 2,000) are recorded queued through the store (InsertEmail, 500 per
// transaction; bodies composed by mail.Compose, a few KB each), then the worker's SendDue drains
// them through a real SMTP server (mailpit, on this machine) and the clock stops when mailpit holds
// them all. Two kinds of message: plain (text and HTML) and pdf (the same with the PDF of a
// finalized three-line invoice attached, rendered by the worker for every message, as it does in
// production). Each runs with several batch × concurrency settings (EmailBatch messages per SMTP
// connection × EmailConcurrency connections at a time), REMIT_BENCH_EMAIL_SETTINGS (default
// "25x4,50x4,25x8,10x4"). Reports msgs/s and the CPU this process (worker, store, renderer)
// spent per message and, apart, mailpit's CPU per message (it shares the machine's cores here; a
// production SMTP server would not).
//
//	REMIT_BENCH_EMAILS=2000 go test ./httpapi/ -run '^$' -bench EmailWorker -benchtime 1x -count 2
func BenchmarkEmailWorker(b *testing.B) {
	n := benchEnvInt("REMIT_BENCH_EMAILS", 500)
	settings := emailSettings(b)
	for _, s := range testkit.Stores() {
		b.Run(string(s), func(b *testing.B) {
			mp := testkit.StartMailpit(b)
			mpPID := mailpitPID(mp)
			e := mailBenchEnv(b, s, mp)
			inv := finalizedInvoice(b, e)
			// The finalization queued its own invoice.finalized message: send it now, out of the count.
			if _, err := e.App.Emails.SendDue(context.Background()); err != nil {
				b.Fatal(err)
			}
			for _, kind := range []string{"plain", "pdf"} {
				for _, st := range settings {
					b.Run(fmt.Sprintf("%s/%dx%d", kind, st[0], st[1]), func(b *testing.B) {
						var took, cpu, mpCPU time.Duration
						for range b.N {
							b.StopTimer()
							mp.DeleteAll(b)
							queueEmails(b, e, inv, n, kind == "pdf")
							e.App.Config.EmailBatch, e.App.Config.EmailConcurrency = st[0], st[1]
							cpu0, mp0, start := testkit.ProcessCPU(), pidCPU(mpPID), time.Now()
							b.StartTimer()
							drainEmails(b, e, n)
							waitMailpit(b, mp, n, 2*time.Minute)
							b.StopTimer()
							took += time.Since(start)
							cpu += testkit.ProcessCPU() - cpu0
							mpCPU += pidCPU(mpPID) - mp0
							checkMailed(b, e, mp, n, kind == "pdf")
						}
						b.ReportMetric(float64(n*b.N)/took.Seconds(), "msgs/s")
						b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n*b.N), "cpu-ms/msg")
						if mpPID > 0 {
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
// drafts of customers with an address: invoice.finalized, the invoice PDF attached), from 16
// clients for REMIT_BENCH_WRITE_SECONDS (default 5), once with the worker idle (nothing queued)
// and once while the worker (RunEmails, the loop serve runs) drains a backlog of
// REMIT_BENCH_BACKLOG PDF messages (default 3,000) through mailpit and sends the new ones.
// Reports writes/s, their p99, and the messages the worker sent during the writes.
//
//	go test ./httpapi/ -run '^$' -bench WhileMailing -benchtime 1x -count 3
func BenchmarkAPIWritesWhileMailing(b *testing.B) {
	const clients = 16
	secs := benchEnvInt("REMIT_BENCH_WRITE_SECONDS", 5)
	backlog := benchEnvInt("REMIT_BENCH_BACKLOG", 3000)
	for _, s := range testkit.Stores() {
		b.Run(string(s), func(b *testing.B) {
			mp := testkit.StartMailpit(b)
			e := mailBenchEnv(b, s, mp)
			inv := finalizedInvoice(b, e)
			if _, err := e.App.Emails.SendDue(context.Background()); err != nil {
				b.Fatal(err)
			}
			// Enough drafts for every run: a finalization is a few ms.
			drafts := make(chan string, 100000)
			draftsFor := func(b *testing.B, k int) {
				for i := range k {
					d := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "mail-c", "billingAccountId": "ba-mail-c", "currency": "USD",
						"lines": []any{map[string]any{"priceId": "mail-item", "quantity": 1 + i%3}}}).Data()
					drafts <- d["invoiceId"].(string)
				}
			}
			for _, mode := range []string{"idle", "draining"} {
				b.Run(mode, func(b *testing.B) {
					for range b.N {
						b.StopTimer()
						for len(drafts) < 1500*secs {
							draftsFor(b, 500)
						}
						mp.DeleteAll(b)
						ctx, stop := context.WithCancel(context.Background())
						workerDone := make(chan struct{})
						if mode == "draining" {
							queueEmails(b, e, inv, backlog, true)
							go func() { defer close(workerDone); e.App.Emails.RunEmails(ctx) }()
							time.Sleep(200 * time.Millisecond) // the worker is into its first rounds
						} else {
							close(workerDone)
						}
						sent0 := emailCount(b, e, remit.EmailSent)
						b.StartTimer()
						lat := finalizeFor(b, e, drafts, clients, time.Duration(secs)*time.Second)
						b.StopTimer()
						sent := emailCount(b, e, remit.EmailSent) - sent0
						stop()
						<-workerDone
						// Leave nothing queued for the next run: the new messages and the backlog's rest
						// go out now, off the clock.
						drainEmails(b, e, -1)
						b.ReportMetric(float64(len(lat))/float64(secs), "writes/s")
						b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, "p99-ms")
						b.ReportMetric(float64(sent)/float64(secs), "mailed/s")
						b.ReportMetric(0, "ns/op")
					}
				})
			}
		})
	}
}

// finalizeFor finalizes drafts from clients goroutines for d and answers every finalization's latency.
func finalizeFor(b *testing.B, e *testkit.Env, drafts chan string, clients int, d time.Duration) []time.Duration {
	end := time.Now().Add(d)
	out := make(chan []time.Duration, clients)
	for range clients {
		go func() {
			var lat []time.Duration
			for time.Now().Before(end) {
				id := <-drafts
				t0 := time.Now()
				if r := e.Do("POST", "/v1/invoices/"+id+"/finalize", map[string]any{}); r.Status != 200 {
					b.Errorf("finalize %s: %d %s", id, r.Status, r.Body)
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
	return all
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
	spec := os.Getenv("REMIT_BENCH_EMAIL_SETTINGS")
	if spec == "" {
		spec = "25x4,50x4,25x8,10x4"
	}
	var out [][2]int
	for _, p := range strings.Split(spec, ",") {
		bs, cs, ok := strings.Cut(strings.TrimSpace(p), "x")
		batch, err1 := strconv.Atoi(bs)
		conc, err2 := strconv.Atoi(cs)
		if !ok || err1 != nil || err2 != nil || batch < 1 || conc < 1 {
			b.Fatalf("REMIT_BENCH_EMAIL_SETTINGS: %q is not BATCHxCONCURRENCY", p)
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

// mailBenchEnv starts a server on a new store of kind s that mails through mp, with no retries
// (a failed attempt fails the run's check instead of waiting for a retry).
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

// mailpitPID finds mailpit's process by its SMTP address (0 when /proc cannot tell).
func mailpitPID(mp *testkit.Mailpit) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmd), "--smtp\x00"+mp.SMTPAddr+"\x00") {
			return pid
		}
	}
	return 0
}

// pidCPU is the CPU time (user + system) process pid has used so far, from /proc/<pid>/stat.
func pidCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	rest := string(b)
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
