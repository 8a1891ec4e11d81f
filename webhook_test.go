package remit

import (
	"go/ast"
	"go/parser"
	"go/token"
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
		if !strings.Contains(string(doc), "| `"+string(typ)+"` |") {
			t.Errorf("docs/events.md has no catalog row for %s", typ)
		}
	}
	seen := map[EventType]bool{}
	for _, typ := range EventTypes {
		if seen[typ] {
			t.Errorf("%s listed twice", typ)
		}
		seen[typ] = true
	}
}

// TestEventConstantsInCatalog: every EventType constant is in EventTypes (Emit refuses a type that
// is not).
func TestEventConstantsInCatalog(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "eventtypes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, name := range spec.(*ast.ValueSpec).Names {
				n++
				lit := spec.(*ast.ValueSpec).Values[0].(*ast.BasicLit).Value
				if !KnownEventType(strings.Trim(lit, `"`)) {
					t.Errorf("%s (%s) is not in EventTypes", name.Name, lit)
				}
			}
		}
	}
	if n != len(EventTypes) {
		t.Errorf("%d EventType constants, %d entries in EventTypes", n, len(EventTypes))
	}
}
