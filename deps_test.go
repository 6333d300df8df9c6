package scribe_test

import (
	"os/exec"
	"strings"
	"testing"

	_ "github.com/scribe-archive/scribe/internal/testenv" // understands -update (go test ./... -update)
)

// TestLayering states the import policy as a test, in the spirit of
// go/build's deps_test.go: data flows one way, adapters -> model ->
// store/index -> exporters; each third-party dependency is imported by one
// package. Do not change this to make a build pass.
func TestLayering(t *testing.T) {
	const mod = "github.com/scribe-archive/scribe/"
	allowed := map[string][]string{ // package -> what it may import, besides the standard library
		"session":             {},
		"adapters/claude":     {"session"},
		"internal/atomicfile": {},
		"index":               {"modernc.org/sqlite"},
		"inscribe/document":   {"session", "github.com/yuin/goldmark", "gopkg.in/yaml.v3"},
		"inscribe":            {"session", "adapters/claude", "index", "inscribe/document", "internal/atomicfile"},
		"exportclaude":        {"session", "adapters/claude", "inscribe", "inscribe/document", "internal/atomicfile"},
		"check":               {"session", "adapters/claude", "inscribe", "inscribe/document", "exportclaude", "github.com/sergi/go-diff"},
		"internal/web":        {"session", "inscribe/document"},
		"cmd/scribe":          {"adapters/claude", "inscribe", "inscribe/document", "exportclaude", "check", "index", "internal/web", "github.com/spf13/cobra"},
	}
	owner := map[string]string{} // third-party dependency -> the one package that may import it
	for pkg, ok := range allowed {
		for _, a := range ok {
			if !strings.Contains(strings.Split(a, "/")[0], ".") {
				continue // one of scribe's packages
			}
			if other, dup := owner[a]; dup {
				t.Errorf("%s may be imported by %s and by %s: each third-party dependency belongs to one package", a, other, pkg)
			}
			owner[a] = pkg
		}
	}
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list ./%s: %v", pkg, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			if !strings.Contains(strings.Split(imp, "/")[0], ".") {
				continue // standard library
			}
			name := strings.TrimPrefix(imp, mod)
			permitted := false
			for _, a := range ok {
				if name == a || strings.HasPrefix(imp, a) {
					permitted = true
				}
			}
			if !permitted {
				t.Errorf("%s imports %s, which the layering does not allow", pkg, imp)
			}
		}
	}
}
