package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// TestGuardControlRefusesBlockedAddresses: the dialer's Control hook, which sees the address each
// connection is about to reach (after any DNS answer), refuses every blocked one, in IPv4 and in
// each IPv6 form that carries an IPv4 address, and lets public ones through.
func TestGuardControlRefusesBlockedAddresses(t *testing.T) {
	for _, addr := range []string{
		"127.0.0.1:443", "10.0.0.7:443", "169.254.169.254:80", "0.0.0.0:443", "[::1]:443", "[::]:443",
		"[::ffff:127.0.0.1]:443", "[64:ff9b::7f00:1]:443", "[2002:7f00:1::]:443", "[2002:a00:1::1]:443",
		"[fe80::1%lo]:443", "[fd00::1]:443",
	} {
		if err := guardControl("tcp", addr, nil); err == nil || !strings.Contains(err.Error(), "private") {
			t.Errorf("guardControl(%s) = %v, want a refusal", addr, err)
		}
	}
	for _, addr := range []string{"93.184.216.34:443", "[2606:4700::1111]:443", "[2002:5db8:d822::1]:443", "[64:ff9b::808:808]:443"} {
		if err := guardControl("tcp", addr, nil); err != nil {
			t.Errorf("guardControl(%s) = %v, want nil", addr, err)
		}
	}
}

func TestParseRetrySchedule(t *testing.T) {
	d, err := ParseRetrySchedule("5s, 5m,30m,2h,5h,10h,10h")
	if err != nil || len(d) != 7 || d[1] != 5*time.Minute || d[6] != 10*time.Hour {
		t.Fatalf("%v %v", d, err)
	}
	for _, bad := range []string{"5", "-1s", "0s", "soon"} {
		if _, err := ParseRetrySchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSignatureMatchesStandardWebhooks(t *testing.T) {
	secret := newWebhookSecret()
	body := []byte(`{"eventId":"evt_1","type":"invoice.paid"}`)
	ts := time.Now().Unix()
	sig, err := SignWebhook(secret, "evt_1", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	wh, _ := standardwebhooks.NewWebhook(secret)
	want, _ := wh.Sign("evt_1", time.Unix(ts, 0), body)
	if sig != want {
		t.Fatalf("signature %s, library %s", sig, want)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

func TestSecretSealing(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+t.TempDir()+"/r.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	storeKeyed := New(db, remit.SystemClock{}, log, Config{})
	envKeyed := New(db, remit.SystemClock{}, log, Config{SecretKey: "operator key"})
	otherEnv := New(db, remit.SystemClock{}, log, Config{SecretKey: "another key"})

	s1, err := storeKeyed.Webhooks.sealSecret(ctx, "ma_1", "we_1", "whsec_abc")
	if err != nil || !strings.HasPrefix(s1, "v1.store.") || strings.Contains(s1, "whsec_abc") {
		t.Fatalf("store-sealed %q %v", s1, err)
	}
	s2, err := envKeyed.Webhooks.sealSecret(ctx, "ma_1", "we_1", "whsec_abc")
	if err != nil || !strings.HasPrefix(s2, "v1.env.") {
		t.Fatalf("env-sealed %q %v", s2, err)
	}
	// Secrets sealed with the store key still open once REMIT_SECRET_KEY is set.
	for _, c := range []struct {
		a      *App
		sealed string
	}{{storeKeyed, s1}, {envKeyed, s1}, {envKeyed, s2}} {
		if got, err := c.a.Webhooks.openSecret(ctx, "ma_1", "we_1", c.sealed); err != nil || got != "whsec_abc" {
			t.Fatalf("open %q: %q %v", c.sealed, got, err)
		}
	}
	// Another endpoint's row, another key, no key: refused.
	if _, err := envKeyed.Webhooks.openSecret(ctx, "ma_1", "we_2", s2); err == nil {
		t.Fatal("opened with another endpoint's additional data")
	}
	if _, err := otherEnv.Webhooks.openSecret(ctx, "ma_1", "we_1", s2); err == nil {
		t.Fatal("opened with another REMIT_SECRET_KEY")
	}
	if _, err := storeKeyed.Webhooks.openSecret(ctx, "ma_1", "we_1", s2); err == nil || !strings.Contains(err.Error(), "REMIT_SECRET_KEY") {
		t.Fatalf("opened without REMIT_SECRET_KEY: %v", err)
	}
}
