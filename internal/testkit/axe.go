package testkit

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var axeSource = sync.OnceValues(func() ([]byte, error) {
	_, file, _, _ := runtime.Caller(0)
	return os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", "axe", "axe.min.js"))
})

// AxeCheck runs axe-core (internal/testkit/testdata/axe, vendored from npm) on the page in view
// and fails the test on any serious or critical violation; lesser ones are logged.
func AxeCheck(t testing.TB, b *Browser, name string) {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatal(err)
	}
	b.Script(string(src)+";return true;", nil)
	var res struct {
		Violations []struct {
			ID, Impact, Help string
			Nodes            []struct{ Target []any }
		}
		Error string
	}
	b.ScriptAsync(`const done = arguments[arguments.length - 1];
		axe.run(document, {resultTypes: ["violations"]}).then(r => done({violations: r.violations})).catch(e => done({error: String(e)}));`,
		30*time.Second, &res)
	if res.Error != "" {
		t.Fatalf("axe on %s: %s", name, res.Error)
	}
	for _, v := range res.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe on %s: %s (%s): %s, at %v", name, v.ID, v.Impact, v.Help, v.Nodes)
		} else {
			t.Logf("axe on %s (%s, let through): %s", name, v.Impact, v.ID)
		}
	}
}
