// Command requestmodels generates api/types.gen.go: Go types for the schemas that request bodies
// use (and what they reference), and no others. The answers' shapes have one Go source, the domain
// types of package remit, which every test checks against the contract (internal/testkit);
// generating response models too would keep two. It writes a copy of the contract that holds only
// those schemas and runs oapi-codegen on it. Run by `go generate ./api`.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit/api"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "requestmodels:", err)
		os.Exit(1)
	}
}

// run generates the request models of the contract at specPath with the oapi-codegen config at
// configPath.
func run(specPath, configPath string) error {
	doc, err := openapi3.NewLoader().LoadFromFile(specPath)
	if err != nil {
		return err
	}
	// A model carries the fields only, as one plain struct: how they combine is the operation's
	// own rule (api.StripOperationRules).
	api.StripOperationRules(doc)
	used := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					visit(mt.Schema, used)
				}
			}
		}
	}
	trimmed := &openapi3.T{
		OpenAPI: doc.OpenAPI, Info: doc.Info, Paths: openapi3.NewPaths(),
		Components: &openapi3.Components{Schemas: openapi3.Schemas{}},
	}
	for name := range used {
		trimmed.Components.Schemas[name] = doc.Components.Schemas[name]
	}
	data, err := json.Marshal(trimmed)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "requestmodels")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "requests.json")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "tool", "oapi-codegen", "-config", configPath, tmp)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// visit marks the component schemas reachable from ref.
func visit(ref *openapi3.SchemaRef, used map[string]bool) {
	if ref == nil {
		return
	}
	if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
		if used[name] {
			return
		}
		used[name] = true
	}
	s := ref.Value
	if s == nil {
		return
	}
	for _, p := range s.Properties {
		visit(p, used)
	}
	visit(s.Items, used)
	if s.AdditionalProperties.Schema != nil {
		visit(s.AdditionalProperties.Schema, used)
	}
	for _, r := range s.AllOf {
		visit(r, used)
	}
}
