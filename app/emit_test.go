package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every event is emitted by its constant (remit.EventInvoiceFinalized, ...), never by a string
// literal: an event type is found by searching for its constant, and a misspelt literal would
// compile (EventType is a string type) and only fail at run time. This test reads the engine's
// source and fails on any call of Emit (or EmitUpdated) with a string literal among its arguments.
func TestEventsAreEmittedByConstant(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Emit" && sel.Sel.Name != "EmitUpdated") {
				return true
			}
			calls++
			for _, arg := range call.Args {
				if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					t.Errorf("%s: Emit with the literal %s: use its remit.Event… constant", fset.Position(lit.Pos()), lit.Value)
				}
			}
			return true
		})
	}
	if calls < 50 {
		t.Fatalf("found %d calls of Emit: the test no longer reads the engine's source", calls)
	}
}
