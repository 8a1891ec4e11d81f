package main

import (
	"context"
	"io"
	"testing"
	"time"
)

func TestSeedTiming(t *testing.T) {
	start := time.Now()
	_, err := seed(context.Background(), "sqlite:"+t.TempDir()+"/r.db", "http://x", Sizes{200, 2000, 20000}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(time.Since(start))
}
