// Command webhook-listener receives Remit's webhooks on a local address, verifies each one with
// the Standard Webhooks reference library and prints the event.
//
//	go run ./cmd/remit bootstrap --organization Acme --json > acme.json
//	go run ./examples/webhook-listener -bootstrap acme.json
//
// Given an API key and merchant account (-bootstrap reads both from the output of `remit bootstrap
// --json`; or -key and -merchant), it registers its own URL as a webhook endpoint of the sandbox
// merchant account through the Go client, subscribed to every event, and verifies with the signing
// secret of the answer. The sandbox accepts endpoint URLs on loopback addresses; a server run with
// production merchant accounts needs REMIT_WEBHOOK_ALLOW_PRIVATE=true for that. With -secret
// whsec_... it only listens, for an endpoint registered by other means.
//
// A delivery whose signature does not verify is answered 400 (Remit then retries it on its
// schedule); a verified one 204. -out appends each verified event, one JSON object per line.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/remit-billing/remit/client"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "address to listen on")
	remitURL := flag.String("remit", envOr("REMIT_URL", "http://127.0.0.1:8080"), "Remit's base URL (REMIT_URL)")
	bootstrap := flag.String("bootstrap", "", "file with the output of `remit bootstrap --json` (API key and sandbox merchant account)")
	key := flag.String("key", os.Getenv("REMIT_API_KEY"), "API key (REMIT_API_KEY), instead of -bootstrap")
	merchant := flag.String("merchant", os.Getenv("REMIT_MERCHANT_ACCOUNT_ID"), "sandbox merchant account (REMIT_MERCHANT_ACCOUNT_ID), instead of -bootstrap")
	secret := flag.String("secret", os.Getenv("REMIT_WEBHOOK_SECRET"), "signing secret (whsec_...) of an endpoint registered already; skips registration")
	out := flag.String("out", "", "append every verified event to this file, one JSON object per line")
	flag.Parse()
	log.SetFlags(log.Ltime)

	if *bootstrap != "" {
		b, err := client.ReadBootstrap(*bootstrap)
		if err != nil {
			log.Fatalf("-bootstrap %v", err)
		}
		*key, *merchant = b.APIKey, b.MerchantAccounts["sandbox"]
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/webhooks"
	if *secret == "" {
		if *key == "" || *merchant == "" {
			log.Fatal("give -bootstrap acme.json (or -key and -merchant) to register this listener, or -secret for an endpoint registered already")
		}
		*secret = register(*remitURL, *key, *merchant, url)
	}
	wh, err := standardwebhooks.NewWebhook(*secret)
	if err != nil {
		log.Fatalf("signing secret: %v", err)
	}

	sink, closeSink := openSink(*out)
	defer closeSink()
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks", receiver(wh, sink))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	log.Printf("listening on %s", url)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// openSink opens the file every verified event is appended to (none: a discarding sink).
func openSink(path string) (io.Writer, func()) {
	if path == "" {
		return io.Discard, func() {}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	return f, func() { _ = f.Close() }
}

// receiver verifies each delivery with the Standard Webhooks library, logs it and appends it to
// sink; a delivery that does not verify is refused (400), so Remit retries it.
func receiver(wh *standardwebhooks.Webhook, sink io.Writer) http.HandlerFunc {
	var mu sync.Mutex
	return func(w http.ResponseWriter, r *http.Request) {
		payload, err := io.ReadAll(io.LimitReader(r.Body, 5<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if err := wh.Verify(payload, r.Header); err != nil {
			log.Printf("REJECTED %s: %v", r.Header.Get("webhook-id"), err)
			http.Error(w, "signature does not verify", http.StatusBadRequest)
			return
		}
		var ev struct {
			EventID string `json:"eventId"`
			Type    string `json:"type"`
			Data    struct {
				Object map[string]any `json:"object"`
			} `json:"data"`
		}
		_ = json.Unmarshal(payload, &ev)
		log.Printf("verified %-32s %s %s", ev.Type, ev.EventID, summary(ev.Data.Object))
		mu.Lock()
		_, _ = sink.Write(append(payload, '\n'))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}
}

// register creates a webhook endpoint for url, subscribed to every event, and returns its
// signing secret (shown once, in this answer).
func register(remitURL, key, merchant, url string) string {
	c, err := client.New(remitURL, client.WithAPIKey(key), client.WithScope(client.Sandbox, merchant))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CreateWebhookEndpointWithResponse(ctx, nil, client.WebhookEndpointCreateRequest{
		Url: url, EnabledEvents: &[]string{"*"}, Description: client.Ptr("examples/webhook-listener"),
	})
	if err != nil {
		log.Fatalf("register the webhook endpoint at %s: %v", remitURL, err)
	}
	ep := res.JSON201.Data
	log.Printf("registered webhook endpoint %s for %s (all events)", deref(ep.EndpointId), url)
	return deref(ep.Secret)
}

// summary names the object an event carries: its type, its own ID and its status.
func summary(obj map[string]any) string {
	typ, _ := obj["object"].(string)
	s := typ
	idField := map[string]string{"payment_method_setup_session": "sessionId", "payment_receipt": "receiptId",
		"webhook_endpoint": "endpointId", "balance_entry": "entryId", "test_clock": "merchantAccountId"}[typ]
	if idField == "" {
		parts := strings.Split(typ, "_")
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		idField = strings.Join(parts, "") + "Id"
	}
	if id, ok := obj[idField].(string); ok {
		s += " " + id
	}
	if st, ok := obj["status"].(string); ok {
		s += " (" + st + ")"
	}
	return s
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
