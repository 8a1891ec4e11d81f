package wire

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// FromEnv reads exactly the variables of Variables, each once: a variable added to FromEnv and
// not to the list (or listed and never read) fails here.
func TestFromEnvReadsTheVariables(t *testing.T) {
	var read []string
	if _, err := fromEnv(func(name string) (string, bool) { read = append(read, name); return "", false }); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, v := range Variables {
		listed = append(listed, v.Name)
	}
	slices.Sort(read)
	slices.Sort(listed)
	if !slices.Equal(read, listed) {
		t.Fatalf("FromEnv reads %v\nVariables lists %v", read, listed)
	}
}

// The README's configuration table is Variables, row for row: name, flag, default and meaning.
func TestReadmeConfigurationTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## Configuration\n")
	if start < 0 {
		t.Fatal("the README has no Configuration section")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var rows []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "| `REMIT_") {
			rows = append(rows, l)
		}
	}
	var want []string
	for _, v := range Variables {
		want = append(want, ReadmeRow(v))
	}
	for i := 0; i < max(len(rows), len(want)); i++ {
		got, w := "", ""
		if i < len(rows) {
			got = rows[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if got != w {
			t.Errorf("README configuration row %d:\n got  %s\n want %s", i+1, got, w)
		}
	}
}

// Plain shows Markdown as a terminal does.
func TestPlain(t *testing.T) {
	for md, want := range map[string]string{
		"`sqlite:PATH` or `postgres://`":                  "sqlite:PATH or postgres://",
		"([docs/ops.md](docs/ops.md#metrics))":            "(docs/ops.md#metrics)",
		"see [the guide](https://example.com/g) for more": "see the guide (https://example.com/g) for more",
	} {
		if got := Plain(md); got != want {
			t.Errorf("Plain(%q) = %q, want %q", md, got, want)
		}
	}
}
