package scribe_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// storeNames are the names of the store's files and folders, and the
// patterns that glob them. Only the store (package inscribe) may name
// them: every other package reaches the store through its API (the read
// face, inscribe.Doc, and the write face). This is a statement of policy,
// like depsRules: do not add exceptions to make a build pass.
var storeNames = []string{
	"rounds.tsv", "state.json", "graph.tsv", "tags.tsv", "agent-*", "index.md",
	"rounds/", ".lock", "session.db", "sessions.db", "*.md", "meta.json",
	"source-files", ".index-stamp", "roles.yaml", "redact.toml",
}

// storePackages may name the store's files: the store itself.
var storePackages = map[string]bool{"inscribe": true}

// allowedNames are names a package outside the store may use for another
// reason than the store's files: the client's own layout of its files
// (Claude Code keeps subagents as agent-<id>.jsonl, with a .meta.json).
var allowedNames = map[string][]string{
	"adapters/claude": {"agent-*", "meta.json"},
	"exportclaude":    {"meta.json"},
	// The redaction settings' file is read by the package that parses it,
	// given the store's root by the command (inscribe/redact: store layer).
	"inscribe/redact": {"redact.toml"},
}

// TestOnlyTheStoreNamesItsFiles reads every package's non-test source for
// string literals that name a file of the store.
func TestOnlyTheStoreNamesItsFiles(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		if storePackages[pkg] || strings.HasPrefix(pkg, "internal/testkit/") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, msg := range storeNamesIn(fset, f, pkg) {
			t.Error(msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storeNamesIn returns a message for each string literal of f that names
// a file of the store.
func storeNamesIn(fset *token.FileSet, f *ast.File, pkg string) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || strings.ContainsAny(s, " \n") {
			return true // not a name: prose (a help text naming a file to a person)
		}
		for _, name := range storeNames {
			if strings.Contains(s, name) && !allowed(pkg, name) {
				out = append(out, fmt.Sprintf("%s: %q names the store's %q: only the store (inscribe) names its files; use its API", fset.Position(lit.Pos()), s, name))
			}
		}
		return true
	})
	return out
}

// TestStoreNamesCaught holds the test to what it checks.
func TestStoreNamesCaught(t *testing.T) {
	fset := token.NewFileSet()
	src := `package p
var a = filepath.Join(folder, "rounds.tsv")
var b, _ = filepath.Glob(filepath.Join(dir, "agent-*.md"))
var c = "help: the store keeps tags.tsv"
`
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := storeNamesIn(fset, f, "views"); len(got) != 3 { // rounds.tsv; agent-* and *.md
		t.Errorf("caught %d, want 3:\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := storeNamesIn(fset, f, "adapters/claude"); len(got) != 2 {
		t.Errorf("in adapters/claude, caught %d, want 2 (agent-* is the client's own layout there)", len(got))
	}
}

func allowed(pkg, name string) bool {
	for _, a := range allowedNames[pkg] {
		if a == name {
			return true
		}
	}
	return false
}
