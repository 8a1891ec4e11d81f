package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// `remit user create|list|disable` while serve runs on the store: the link it prints sets the
// password and the operator signs in; a disabled operator cannot.
func TestUserCommands(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		cli := func(args ...string) (string, error) {
			var out, errb bytes.Buffer
			err := run(ctx, append([]string{args[0], args[1], "--database-url", e.DBURL, "--public-url", "https://billing.example"}, args[2:]...), &out, &errb)
			return out.String(), err
		}
		out, err := cli("user", "create", "--organization-id", e.Tenant.OrganizationID, "--email", "Finance@Acme.example", "--role", "viewer", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var created struct{ OperatorID, Email, Role, SetPasswordURL string }
		if err := json.Unmarshal([]byte(out), &created); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if created.Email != "finance@acme.example" || created.Role != "viewer" || !strings.HasPrefix(created.SetPasswordURL, "https://billing.example/dashboard/set-password?token=") {
			t.Fatalf("created: %+v", created)
		}
		if _, err := cli("user", "create", "--organization-id", e.Tenant.OrganizationID, "--email", "finance@acme.example", "--role", "admin"); err == nil ||
			!strings.Contains(err.Error(), "already exists") {
			t.Errorf("same e-mail again: %v", err)
		}
		if _, err := cli("user", "create", "--organization-id", e.Tenant.OrganizationID, "--email", "x@acme.example", "--role", "owner"); err == nil ||
			!strings.Contains(err.Error(), "role must be admin or viewer") {
			t.Errorf("unknown role: %v", err)
		}
		token := created.SetPasswordURL[strings.Index(created.SetPasswordURL, "token=")+len("token="):]
		if _, err := e.App.Operators.SetOperatorPassword(ctx, token, "twelve chars at least", "twelve chars at least"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.Operators.SignIn(ctx, "finance@acme.example", "twelve chars at least"); err != nil {
			t.Fatalf("sign in: %v", err)
		}
		if out, err := cli("user", "list", "--organization-id", e.Tenant.OrganizationID); err != nil || !strings.Contains(out, "finance@acme.example  viewer  active") {
			t.Fatalf("list: %q %v", out, err)
		}
		if _, err := cli("user", "disable", "--email", "FINANCE@acme.example"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.Operators.SignIn(ctx, "finance@acme.example", "twelve chars at least"); err == nil {
			t.Fatal("a disabled operator signed in")
		}
		if out, _ := cli("user", "list", "--organization-id", e.Tenant.OrganizationID); !strings.Contains(out, "viewer  disabled") {
			t.Fatalf("list after disable: %q", out)
		}
	})
}
