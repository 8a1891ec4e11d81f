// Package api holds Remit's contract: openapi.yaml (the single source of routes, types and
// validation rules) and the Go types of its request bodies generated from it (types.gen.go, by
// oapi-codegen through internal/requestmodels; regenerate with `go generate ./api` — CI fails when
// the committed file drifts). Answers have no generated types: their one Go source is package
// remit's domain types, checked against the contract by every test (internal/testkit).
package api

import (
	"context"
	_ "embed"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:generate go run ./internal/requestmodels openapi.yaml oapi-codegen.yaml

// Document is the contract as served at GET /openapi.yaml.
//
//go:embed openapi.yaml
var Document []byte

var (
	loadOnce sync.Once
	loaded   *openapi3.T
	loadErr  error
)

// Spec parses and validates the embedded document once. Its servers list is cleared so that
// validation does not check the Host header.
func Spec() (*openapi3.T, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

// load parses and validates a fresh copy of the embedded document, its servers list cleared.
func load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(Document)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil
	return doc, nil
}

// view returns the accessor of a view of the contract: a fresh copy of the document, changed by
// transform, made once on first use (Enforced, Strict). Spec is never changed.
func view(transform func(*openapi3.T)) func() (*openapi3.T, error) {
	return sync.OnceValues(func() (*openapi3.T, error) {
		doc, err := load()
		if err != nil {
			return nil, err
		}
		transform(doc)
		return doc, nil
	})
}
