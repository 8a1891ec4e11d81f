package remit

import (
	"os"
	"strings"
	"testing"
)

// docs/events.md documents every event type of the catalog.
func TestEventCatalogDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range EventTypes {
		if !strings.Contains(string(doc), "| `"+typ+"` |") {
			t.Errorf("docs/events.md has no catalog row for %s", typ)
		}
	}
	seen := map[string]bool{}
	for _, typ := range EventTypes {
		if seen[typ] {
			t.Errorf("%s listed twice", typ)
		}
		seen[typ] = true
	}
}
