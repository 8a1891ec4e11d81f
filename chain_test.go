package remit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"
)

func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"keys sorted, no whitespace", `{ "b": 1, "a": [ true, false, null ] }`, `{"a":[true,false,null],"b":1}`},
		{"nested objects sorted", `{"z":{"y":1,"x":{"b":2,"a":1}}}`, `{"z":{"x":{"a":1,"b":2},"y":1}}`},
		{"numbers as written", `{"a":-12,"b":8.875,"c":0.2,"d":9007199254740993}`, `{"a":-12,"b":8.875,"c":0.2,"d":9007199254740993}`},
		{"escapes only quote, backslash, controls", `{"s":"a\"b\\c\n\t\r\b\f\u0001\u001f\u007f"}`, `{"s":"a\"b\\c\n\t\r\b\f\u0001\u001f` + "\x7f" + `"}`},
		{"no HTML escaping, characters as themselves", `{"s":"<a>&\u00e9\u2028 €😀/"}`, `{"s":"<a>&é` + "\u2028" + ` €😀/"}`},
		{"code point order of keys", `{"é":1,"z":2,"😀":3,"\uffff":4,"A":5}`, `{"A":5,"z":2,"é":1,"` + "\uffff" + `":4,"😀":3}`},
		{"top-level hash left out", `{"hash":"x","a":{"hash":"kept"}}`, `{"a":{"hash":"kept"}}`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Canonicalize(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
	if _, err := Canonicalize([]byte(`{"a":`)); err == nil {
		t.Error("a truncated document canonicalized")
	}
}

func TestChainHash(t *testing.T) {
	e := Event{
		ID: "evt_1", Object: "event", Type: "customer.created", MerchantAccountID: "ma_1", Environment: Sandbox,
		CreatedAt: time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.FixedZone("x", 3600)),
		Data:      json.RawMessage(`{"object": {"name": "Zoë", "amount": 1200}}`),
		Sequence:  1, Hash: "ignored",
	}
	canon, err := CanonicalEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	// The time is UTC at microseconds, as the store keeps and the API shows it.
	want := `{"createdAt":"2026-11-25T11:00:00.123456Z","data":{"object":{"amount":1200,"name":"Zoë"}},"environment":"sandbox",` +
		`"eventId":"evt_1","merchantAccountId":"ma_1","object":"event","sequence":1,"type":"customer.created"}`
	if string(canon) != want {
		t.Fatalf("canonical event\n got %s\nwant %s", canon, want)
	}
	first, err := ChainHash("", e)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(want))
	if first != hex.EncodeToString(sum[:]) {
		t.Errorf("first hash %s is not SHA-256 of the canonical event", first)
	}
	e2 := e
	e2.ID, e2.Sequence = "evt_2", 2
	second, _ := ChainHash(first, e2)
	c2, _ := CanonicalEvent(e2)
	sum = sha256.Sum256(append([]byte(first), c2...))
	if second != hex.EncodeToString(sum[:]) {
		t.Errorf("second hash does not cover the first")
	}
	// Any change of the event or of its predecessor changes the hash.
	for name, mutate := range map[string]func(*Event, *string){
		"amount":      func(e *Event, _ *string) { e.Data = json.RawMessage(`{"object":{"name":"Zoë","amount":1201}}`) },
		"type":        func(e *Event, _ *string) { e.Type = "customer.updated" },
		"time":        func(e *Event, _ *string) { e.CreatedAt = e.CreatedAt.Add(time.Microsecond) },
		"sequence":    func(e *Event, _ *string) { e.Sequence = 3 },
		"predecessor": func(_ *Event, p *string) { *p = "x" + first[1:] },
	} {
		e3, prev := e2, first
		mutate(&e3, &prev)
		if h, _ := ChainHash(prev, e3); h == second {
			t.Errorf("changing the %s kept the hash", name)
		}
	}
}
