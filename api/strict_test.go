package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit/api"
)

// Every example of the document is a real answer or request, so it must pass the strict view:
// no field its schema does not declare (Redocly's lint in .ci/run checks the same).
func TestExamplesDeclareEveryField(t *testing.T) {
	doc, err := api.Strict()
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, s *openapi3.SchemaRef, example any, opt openapi3.SchemaValidationOption) {
		if s == nil || s.Value == nil || example == nil {
			return
		}
		if err := s.Value.VisitJSON(example, opt, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: the example does not match the strict view of its schema:\n%s", where, reasons(err))
		}
	}
	for name, s := range doc.Components.Schemas {
		check("components.schemas."+name, s, s.Value.Example, openapi3.VisitAsResponse())
	}
	shared := map[string]bool{} // components.responses, checked once
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := op.OperationID + " (" + method + " " + path + ")"
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					check(at+" request", mt.Schema, mt.Example, openapi3.VisitAsRequest())
				}
			}
			for code, res := range op.Responses.Map() {
				if res.Ref != "" {
					if shared[res.Ref] {
						continue
					}
					shared[res.Ref], at, code = true, res.Ref, ""
				}
				for _, mt := range res.Value.Content {
					check(at+" "+code, mt.Schema, mt.Example, openapi3.VisitAsResponse())
					for _, ex := range mt.Examples {
						check(at+" "+code, mt.Schema, ex.Value.Value, openapi3.VisitAsResponse())
					}
				}
			}
		}
	}
}

// reasons lists a validation error's problems, one a line, without the schema dump.
func reasons(err error) string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if me, ok := err.(openapi3.MultiError); ok {
			for _, e := range me {
				walk(e)
			}
			return
		}
		if se, ok := err.(*openapi3.SchemaError); ok {
			out = append(out, "  "+strings.Join(se.JSONPointer(), ".")+": "+se.Reason)
			return
		}
		out = append(out, "  "+err.Error())
	}
	walk(err)
	return strings.Join(out, "\n")
}

// The strict view closes the objects of answers, and only what it should: allOf is merged before
// closing, oneOf/anyOf variants with properties are closed with the outer properties, the members
// of a discriminated union are closed as they are, rule-only variants and explicit maps keep their
// meaning, and request bodies are not touched.
func TestStrictViewClosesAnswers(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(strictFixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	api.CloseResponses(doc)
	schema := doc.Paths.Find("/things").Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"id": "a", "address": {"city": "x"}, "kind": {"name": "n", "id": "a"}, "labels": {"any": "key"}}`, true},
		{`{"id": "a", "address": null}`, true},
		{`{"id": "a", "extra": 1}`, false},                                                         // undeclared at the top
		{`{"id": "a", "address": {"city": "x", "zip": "1"}}`, false},                               // undeclared in a nullable allOf
		{`{"id": "a", "page": {"items": [{"object": "item", "id": "a"}], "hasMore": true}}`, true}, // allOf of two objects
		{`{"id": "a", "page": {"items": [{"object": "item", "id": "a", "x": 1}]}}`, false},         // undeclared in merged items
		{`{"id": "a", "page": {"x": 1}}`, false},                                                   // undeclared beside allOf
		{`{"id": "a", "kind": {"id": "a", "name": "n", "x": 1}}`, false},                           // undeclared in a oneOf variant
		{`{"id": "a", "kind": {"id": "a", "size": 2}}`, true},                                      // the other variant, with the outer id
		{`{"id": "a", "rule": {"p": 1}}`, true},                                                    // anyOf of rules only: closed on its own
		{`{"id": "a", "rule": {"p": 1, "x": 1}}`, false},
		{`{"id": "a", "labels": {"k": 1}}`, false},           // an explicit map keeps its value schema
		{`{"thing": {"object": "item", "id": "x"}}`, true},   // a union member, by its discriminator
		{`{"thing": {"object": "other", "size": 1}}`, true},  // the other member
		{`{"thing": {"object": "item", "size": 1}}`, false},  // a field of another member is undeclared here
		{`{"thing": {"object": "other", "id": "x"}}`, false}, // likewise
	} {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatal(err)
		}
		err := schema.VisitJSON(v, openapi3.VisitAsResponse(), openapi3.MultiErrors())
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.body, err, c.ok)
		}
	}
	req := doc.Paths.Find("/things").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	if req.AdditionalProperties.Has != nil {
		t.Errorf("a request body only schema was closed")
	}
	page := doc.Components.Schemas["Page"].Value
	if page.AdditionalProperties.Has != nil || page.Properties["items"].Value.Items.Value.AdditionalProperties.Has != nil {
		t.Errorf("Page, a member of allOf, was closed on its own (it would refuse the other member's fields)")
	}
}

const strictFixture = `
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /things:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  id: {type: string}
                  address:
                    type: object
                    nullable: true
                    allOf:
                    - $ref: '#/components/schemas/Address'
                  page:
                    allOf:
                    - $ref: '#/components/schemas/Page'
                    - type: object
                      properties:
                        items:
                          type: array
                          items: {$ref: '#/components/schemas/Item'}
                  kind:
                    type: object
                    properties:
                      id: {type: string}
                    oneOf:
                    - type: object
                      required: [name]
                      properties:
                        name: {type: string}
                    - type: object
                      required: [size]
                      properties:
                        size: {type: integer}
                  rule:
                    type: object
                    properties:
                      p: {type: integer}
                      q: {type: integer}
                    anyOf:
                    - required: [p]
                    - required: [q]
                  labels:
                    type: object
                    additionalProperties: {type: string}
                  thing:
                    oneOf:
                    - $ref: '#/components/schemas/Item'
                    - $ref: '#/components/schemas/Other'
                    discriminator:
                      propertyName: object
                      mapping:
                        item: '#/components/schemas/Item'
                        other: '#/components/schemas/Other'
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                id: {type: string}
      responses:
        '204': {description: ok}
components:
  schemas:
    Address:
      type: object
      properties:
        city: {type: string}
    Page:
      type: object
      properties:
        items:
          type: array
          items: {type: object}
        hasMore: {type: boolean}
    Item:
      type: object
      required: [object]
      properties:
        object: {type: string}
        id: {type: string}
    Other:
      type: object
      required: [object]
      properties:
        object: {type: string}
        size: {type: integer}
`
