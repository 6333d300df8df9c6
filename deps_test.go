package scribe_test

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	_ "github.com/scribe-archive/scribe/internal/testenv" // understands -update (go test ./... -update)
)

const module = "github.com/scribe-archive/scribe"

// policy is the import policy, in the manner of go/build's deps_test.go:
// every package of the module, and what it may import besides the standard
// library: packages of the module (by their path in it) and third-party
// modules (by path prefix). A package missing here fails the test: a new
// package states its place when it is added. Do not change this to make a
// build pass.
//
// Data flows one way: adapters -> the canonical model (session) and the
// seam (session/source) -> the store and its indexes -> exporters -> check
// -> the command. Each third-party dependency is imported by one package.
var policy = map[string][]string{
	"":                    {}, // the module root holds only this test
	"bench/floor":         {}, // issue 18's floor, a measuring tool
	"session":             {},
	"session/source":      {"session"},
	"adapters/claude":     {"session", "session/source", "internal/jsonpatch", "internal/osfile"},
	"adapters/codex":      {"session", "session/source", "internal/jsonpatch", "internal/osfile"},
	"internal/atomicfile": {"internal/osfile"},
	// Opening files without the poller's system calls (the hot paths).
	"internal/osfile":    {},
	"internal/jsonpatch": {},
	// What the exporters share; it knows no source format.
	"internal/exportcore": {"session", "session/source", "inscribe", "inscribe/document", "internal/atomicfile", "internal/jsonpatch"},
	"index":               {"modernc.org/sqlite"},
	"inscribe/document":   {"session", "internal/jsonpatch", "internal/osfile", "github.com/yuin/goldmark", "gopkg.in/yaml.v3"},
	"inscribe":            {"session", "session/source", "inscribe/document", "internal/atomicfile", "internal/jsonpatch", "internal/osfile", "golang.org/x/sys/windows"},
	"inscribe/views":      {"session", "index", "inscribe", "inscribe/document", "internal/atomicfile", "internal/osfile"},
	// Secrets: gitleaks (and viper, zerolog, through which it is
	// configured and logs) are imported here and nowhere else.
	"internal/redact": {"session/source", "internal/jsonpatch", "internal/atomicfile",
		"github.com/zricethezav/gitleaks/v8", "github.com/spf13/viper", "github.com/rs/zerolog"},
	// Exporters may import the wire types of the format they write.
	"exportclaude": {"session", "session/source", "adapters/claude", "inscribe", "inscribe/document", "internal/exportcore", "internal/jsonpatch"},
	"exportcodex":  {"session", "session/source", "adapters/codex", "inscribe", "inscribe/document", "internal/exportcore", "internal/jsonpatch"},
	"check":        {"session", "session/source", "inscribe", "inscribe/document", "internal/exportcore", "github.com/sergi/go-diff"},
	// The web archive reads documents; the command gives it the store.
	"internal/web": {"session", "inscribe/document", "index"},
	// The command is the one place that names the concrete adapters.
	"cmd/scribe": {"session", "session/source", "adapters/", "inscribe", "inscribe/document", "inscribe/views", "index", "exportclaude", "exportcodex", "check", "internal/web", "internal/exportcore", "internal/redact",
		"github.com/spf13/cobra", "github.com/vbauerster/mpb/v8", "golang.org/x/term"},
	// Test helpers.
	"internal/testenv":    {},
	"internal/storetest":  {"adapters/", "session/source", "inscribe", "inscribe/views", "internal/testenv"},
	"internal/realclient": {},
	"internal/crosstest":  {"session", "session/source", "inscribe", "inscribe/document", "internal/exportcore"},
}

// mayImportAdapters reports whether a package may depend on a source
// adapter at all: the adapters, the command, the exporters and test
// helpers. Nothing on the store side knows a source format.
func mayImportAdapters(pkg string) bool {
	return strings.HasPrefix(pkg, "adapters/") || strings.HasPrefix(pkg, "cmd/") ||
		strings.HasPrefix(pkg, "export") ||
		pkg == "internal/storetest" || pkg == "internal/testenv" || pkg == "internal/realclient"
}

// TestLayering checks the policy for every operating system scribe builds
// on.
func TestLayering(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			imports := goList(t, goos, "{{.ImportPath}} {{join .Imports \" \"}}")
			deps := goList(t, goos, "{{.ImportPath}} {{join .Deps \" \"}}")
			var pkgs []string
			for pkg := range imports {
				pkgs = append(pkgs, pkg)
			}
			sort.Strings(pkgs)
			for _, pkg := range pkgs {
				allowed, listed := policy[pkg]
				if !listed {
					t.Errorf("package %q is not in deps_test.go's policy: add it, with what it may import", pkg)
					continue
				}
				for _, imp := range imports[pkg] {
					if !permitted(imp, allowed) {
						t.Errorf("%s imports %s, which the policy does not allow", name(pkg), imp)
					}
				}
				if !mayImportAdapters(pkg) {
					for _, d := range deps[pkg] {
						if strings.HasPrefix(d, module+"/adapters/") {
							t.Errorf("%s depends on %s: only adapters, exporters and cmd may know a source format", name(pkg), d)
						}
					}
				}
			}
			for pkg := range policy {
				if _, ok := imports[pkg]; !ok {
					t.Errorf("deps_test.go's policy lists %q, which is not a package of the module", pkg)
				}
			}
		})
	}
}

func name(pkg string) string {
	if pkg == "" {
		return module
	}
	return pkg
}

// goList runs go list over the module for goos and returns, per package
// (its path in the module), the list the template's second field names,
// with the standard library left out.
func goList(t *testing.T, goos, format string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", format, "./...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=%s go list: %v", goos, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		m[pkg] = []string{}
		for _, imp := range fields[1:] {
			if strings.Contains(strings.Split(imp, "/")[0], ".") {
				m[pkg] = append(m[pkg], imp)
			}
		}
	}
	return m
}

// permitted reports whether imp is among allowed: a package of the module
// by its path in the module (or a prefix ending in "/"), or a third-party
// module by path prefix.
func permitted(imp string, allowed []string) bool {
	rel, inModule := strings.CutPrefix(imp, module+"/")
	for _, a := range allowed {
		switch {
		case inModule && (rel == a || strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a)):
			return true
		case !inModule && (imp == a || strings.HasPrefix(imp, a+"/")):
			return true
		}
	}
	return false
}
