package wire

import (
	"strings"
	"testing"
)

// REMIT_EMAIL_BUSY_RATE is read into the e-mail worker's busy rate, 5 by default, and a value
// outside 1..10000 stops startup with the variable named.
func TestEmailBusyRateFromEnv(t *testing.T) {
	c, err := FromEnv()
	if err != nil || c.EmailBusyRate != 5 {
		t.Fatalf("default: %d, %v", c.EmailBusyRate, err)
	}
	t.Setenv("REMIT_EMAIL_BUSY_RATE", "40")
	if c, err = FromEnv(); err != nil || c.EmailBusyRate != 40 {
		t.Fatalf("40: %d, %v", c.EmailBusyRate, err)
	}
	for _, bad := range []string{"0", "10001", "five", "-1"} {
		t.Setenv("REMIT_EMAIL_BUSY_RATE", bad)
		if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "REMIT_EMAIL_BUSY_RATE must be an integer from 1 to 10000") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// REMIT_METRICS_TOKEN and REMIT_METRICS_ADDR are read as they are (docs/operations.md).
func TestMetricsFromEnv(t *testing.T) {
	t.Setenv("REMIT_METRICS_TOKEN", "tok-1")
	t.Setenv("REMIT_METRICS_ADDR", "127.0.0.1:9100")
	c, err := FromEnv()
	if err != nil || c.MetricsToken != "tok-1" || c.MetricsAddr != "127.0.0.1:9100" {
		t.Fatalf("config %q %q, %v", c.MetricsToken, c.MetricsAddr, err)
	}
}
