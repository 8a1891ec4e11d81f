// Command remit-soak runs the randomized soak (internal/soak, docs/reliability.md "The randomized
// soak") against a running Remit server, in the sandbox of one merchant account:
//
//	remit-soak -url http://127.0.0.1:8080 -bootstrap acme.json [-seed N] [-duration 10m] [-clients 4] [-customers 20]
//
// It prints the run's figures and every finding with the requests that led to it, and exits 1
// when it found anything. It only sends to the server it is given (use a server of your own on
// this machine, never a production one: it moves the sandbox clock and creates many records).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/remit-billing/remit/client"
	"github.com/remit-billing/remit/internal/soak"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "the server's base URL")
	boot := flag.String("bootstrap", "", "the JSON that `remit bootstrap --json` printed (API key and sandbox merchant account)")
	key := flag.String("key", os.Getenv("REMIT_API_KEY"), "the API key (instead of -bootstrap)")
	account := flag.String("merchant-account", "", "the sandbox merchant account (instead of -bootstrap)")
	seed := flag.Int64("seed", time.Now().UnixNano()%1_000_000, "the seed of the clients' choices")
	duration := flag.Duration("duration", 2*time.Minute, "how long the clients run operations")
	clients := flag.Int("clients", 4, "concurrent clients")
	customers := flag.Int("customers", 20, "customers")
	flag.Parse()
	if *boot != "" {
		b, err := client.ReadBootstrap(*boot)
		if err != nil {
			fail(err)
		}
		*key, *account = b.APIKey, b.MerchantAccounts["sandbox"]
	}
	if *key == "" || *account == "" {
		fail(fmt.Errorf("give -bootstrap, or -key and -merchant-account"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r := soak.Run(ctx, soak.Config{Seed: *seed, Clients: *clients, Duration: *duration, Customers: *customers, Store: *base,
		Transport: &soak.HTTPTransport{BaseURL: *base, APIKey: *key, MerchantAccountID: *account, Client: &http.Client{Timeout: 5 * time.Minute}},
		Logf:      func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
	fmt.Print(r.Figures())
	if !r.OK() {
		fmt.Print(r.Text())
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "remit-soak:", err)
	os.Exit(2)
}
