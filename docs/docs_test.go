package docs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit/docs"
)

// The vendored bundle is byte for byte the one published at the pinned version, and the browser
// test pins the same version (CI also compares the bundle with the npm tarball).
func TestRedocIsThePinnedRelease(t *testing.T) {
	sum := sha256.Sum256(docs.Redoc)
	if got := hex.EncodeToString(sum[:]); got != docs.RedocSHA256 {
		t.Fatalf("docs/redoc/redoc.standalone.js has SHA-256 %s, want %s (redoc@%s); use docs/redoc/update.sh", got, docs.RedocSHA256, docs.RedocVersion)
	}
	if !bytes.Contains(docs.RedocThirdPartyLicenses, []byte(`Version: "`+docs.RedocVersion+`"`)) {
		t.Fatalf("redoc.standalone.js.LICENSE.txt does not name version %s", docs.RedocVersion)
	}
	if !bytes.Contains(docs.RedocLicense, []byte("MIT License")) {
		t.Fatal("docs/redoc/LICENSE is not Redoc's MIT licence")
	}
	raw, err := os.ReadFile("../test/browser/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Config["redocVersion"] != docs.RedocVersion {
		t.Fatalf("test/browser/package.json config.redocVersion is %q, want %q", pkg.Config["redocVersion"], docs.RedocVersion)
	}
}

// The README is a newcomer's way in: it keeps the two-command quick start, links every page of
// docs/, and links nothing that does not exist.
func TestREADMELinksEveryDoc(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	for _, cmd := range []string{"go run ./cmd/remit serve", "go test ./..."} {
		if !strings.Contains(text, "\n"+cmd+" ") {
			t.Errorf("README.md lost the quick-start command %q", cmd)
		}
	}
	pages, _ := filepath.Glob("*.md")
	for _, p := range pages {
		if !strings.Contains(text, "](docs/"+p+")") {
			t.Errorf("README.md does not link docs/%s", p)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(text, -1) {
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("README.md links %s, which does not exist", m[1])
		}
	}
}
