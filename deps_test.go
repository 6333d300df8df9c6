package scribe_test

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	_ "github.com/scribe-archive/scribe/internal/testkit/testenv" // understands -update (go test ./... -update)
)

const module = "github.com/scribe-archive/scribe"

// depsRules is the import policy of the module, in the manner of
// go/build's deps_test.go. It is a statement of policy: do not change it
// to make a build pass.
//
// A rule "a, b < c, d" says that c and d may import a and b, and
// everything a and b may import. Names in capitals are layers: pseudo
// packages that stand for what is listed before them. "NONE" is the
// standard library alone. Every package of the module must appear on the
// right of a rule exactly once, so a new package states its place when it
// is added.
//
// A rule "a !< b" forbids b from depending on a, directly or through
// other packages; such negative assertions should almost never be
// removed.
//
// Data flows one way: adapters -> the canonical model (session) and the
// seam (session/source) -> the store and its views -> exporters -> check
// -> the servers -> the command. Each third-party module is imported by
// one package (thirdParty).
const depsRules = `
	# BASE: helpers that know nothing of sessions.
	# room: what allocates a long buffer asks the collector for room.
	NONE < internal/room;
	internal/room < internal/osfile, internal/jsonpatch;
	internal/osfile < internal/atomicfile;
	internal/room, internal/osfile, internal/atomicfile, internal/jsonpatch < BASE;

	# MODEL: the canonical session, plain data.
	NONE < session;
	session < MODEL;

	# SEAM: what a source adapter implements, the values that cross the
	# seam, and what every adapter shares.
	MODEL, internal/room < session/source;
	session/source < session/source/lifecycle;
	session/source, session/source/lifecycle < SEAM;

	# ADAPTERS: one package per client's format.
	SEAM, BASE < adapters/claude, adapters/codex, adapters/gemini;
	adapters/claude, adapters/codex, adapters/gemini < ADAPTERS;

	# STORE: the store (the only package that touches its files), its
	# document format, its redaction, its SQLite indexes and the views
	# derived from it.
	NONE < inscribe/document/internal/gfm;
	MODEL, BASE, inscribe/document/internal/gfm < inscribe/document;
	NONE < index;
	SEAM, BASE < inscribe/redact;
	SEAM, inscribe/document < inscribe;
	inscribe, index < inscribe/views;
	inscribe/document, inscribe/redact, inscribe, index, inscribe/views < STORE;

	# EXPORT: from the store back to a client's file. An exporter may
	# import the wire types of the format it writes.
	SEAM, inscribe < exportcore;
	exportcore, adapters/claude < exportclaude;
	exportcore, adapters/codex < exportcodex;
	exportcore, adapters/gemini < exportgemini;
	exportcore, exportclaude, exportcodex, exportgemini < EXPORT;

	# VERIFY: the round trip, findings as data.
	exportcore < check;

	# SERVE: what reads the archive for people and agents.
	# What keeps a local server to requests addressed to it.
	NONE < serve/guard;
	inscribe, index < serve/web;
	# The MCP server reads and writes the store through the Store and
	# Writer interfaces it declares, which the command implements.
	serve/guard, inscribe/document < serve/mcp;

	# CLI: the one place that names the concrete adapters and exporters.
	# Huge pages for the start of the heap: the command's alone.
	NONE < internal/hugeheap;
	ADAPTERS, STORE, EXPORT, check, serve/web, serve/mcp, internal/hugeheap < cmd/scribe;

	# Tools and test helpers.
	NONE < bench/floor, internal/testkit/testenv, internal/testkit/realclient;
	ADAPTERS, inscribe/views, internal/testkit/testenv < internal/testkit/storetest;
	exportcore, internal/testkit/realclient < internal/testkit/crosstest;
	SEAM, BASE < internal/testkit/sourcetest;
	internal/testkit/testenv < ROOT;

	# Forbidden: nothing on the store side knows a source format, and
	# nothing below the exporters knows them.
	ADAPTERS !< STORE;
	ADAPTERS !< exportcore, check, serve/web, serve/mcp;
	STORE !< ADAPTERS;
	EXPORT !< STORE;
	check, serve/web, serve/mcp !< STORE;
	inscribe, inscribe/views, inscribe/redact, index !< serve/mcp;
`

// thirdParty names, for every package that imports a module from outside
// the standard library, the modules it may import (by path prefix). Each
// module is imported by one package, but goldmark: by inscribe/document,
// and by the copy of goldmark's GFM extensions it uses (internal/gfm,
// whose package doc says why).
var thirdParty = map[string][]string{
	"index":                          {"modernc.org/sqlite"},
	"inscribe/document":              {"github.com/yuin/goldmark", "gopkg.in/yaml.v3"},
	"inscribe/document/internal/gfm": {"github.com/yuin/goldmark"},
	"inscribe":                       {"golang.org/x/sys/windows"},
	// go-toml reads redact.toml, in gitleaks' configuration form.
	"inscribe/redact": {"github.com/pelletier/go-toml/v2"},
	"check":           {"github.com/sergi/go-diff"},
	"cmd/scribe":      {"github.com/spf13/cobra", "github.com/vbauerster/mpb/v8", "golang.org/x/term"},
	"serve/mcp":       {"github.com/modelcontextprotocol/go-sdk"},
}

// testOnly are modules that only tests import: no package links them.
// gitleaks (with viper, through which it reads its configuration) is the
// judge of inscribe/redact's port of its detection (gitleaks_test.go):
// linked, it cost every command of scribe 2 to 3 ms of start-up, and
// inscription 6 to 9 MB of heap for its compiled rules.
var testOnly = []string{"github.com/zricethezav/gitleaks/v8", "github.com/spf13/viper"}

// notLinked are packages (by exact path) of linked modules that no package
// may link: goldmark's package extension compiles two long patterns when
// the program starts, 2 to 4 ms of every command's start; inscribe/document
// uses its copy of the GFM extensions, internal/gfm, which compiles them
// on first use.
var notLinked = []string{"github.com/yuin/goldmark/extension"}

// policy is depsRules read: for each package (its path in the module,
// "ROOT" for the module's root), what it may import of the module.
type policy struct {
	allowed   map[string]map[string]bool
	forbidden [][2]string // {a, b}: b must not depend on a
	layers    map[string]bool
	direct    map[string][]string // a layer's own packages: those named before it in its rule
}

func parseRules(t *testing.T, rules string) *policy {
	t.Helper()
	p := &policy{allowed: map[string]map[string]bool{"NONE": {}}, layers: map[string]bool{"NONE": true}, direct: map[string][]string{}}
	for i, stmt := range strings.Split(rules, ";") {
		var lines []string
		for _, l := range strings.Split(stmt, "\n") {
			if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		stmt = strings.Join(lines, " ")
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if a, b, ok := strings.Cut(stmt, "!<"); ok {
			for _, x := range list(a) {
				for _, y := range list(b) {
					p.forbidden = append(p.forbidden, [2]string{x, y})
				}
			}
			continue
		}
		a, b, ok := strings.Cut(stmt, "<")
		if !ok {
			t.Fatalf("depsRules, rule %d: no < in %q", i+1, stmt)
		}
		for _, pkg := range list(b) {
			if _, dup := p.allowed[pkg]; dup {
				t.Fatalf("depsRules: %s is on the right of two rules", pkg)
			}
			set := map[string]bool{}
			for _, dep := range list(a) {
				if _, known := p.allowed[dep]; !known {
					t.Fatalf("depsRules: %s is used before it is defined", dep)
				}
				set[dep] = true
				for d := range p.allowed[dep] {
					set[d] = true
				}
			}
			if strings.ToUpper(pkg) == pkg && !strings.Contains(pkg, "/") {
				p.layers[pkg] = true
				p.direct[pkg] = list(a)
			}
			p.allowed[pkg] = set
		}
	}
	return p
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// members returns the packages a name stands for: a layer's own packages
// (not those of the layers below it), or the package itself.
func (p *policy) members(name string) []string {
	if !p.layers[name] {
		return []string{name}
	}
	var out []string
	for _, m := range p.direct[name] {
		out = append(out, p.members(m)...)
	}
	return out
}

// TestDepsRules checks the policy for every operating system scribe builds
// on.
func TestDepsRules(t *testing.T) {
	p := parseRules(t, depsRules)
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
				allowed, listed := p.allowed[pkg]
				if !listed {
					t.Errorf("package %s is not in deps_test.go's rules: add it, with what it may import", pkg)
					continue
				}
				for _, imp := range imports[pkg] {
					rel, inModule := strings.CutPrefix(imp, module+"/")
					switch {
					case inModule && !allowed[rel]:
						t.Errorf("%s imports %s, which the rules do not allow", pkg, rel)
					case !inModule && !mayImportModule(pkg, imp):
						t.Errorf("%s imports %s, which thirdParty does not allow it", pkg, imp)
					}
				}
			}
			for _, rule := range p.forbidden {
				for _, b := range p.members(rule[1]) {
					for _, a := range p.members(rule[0]) {
						if contains(deps[b], module+"/"+a) {
							t.Errorf("%s depends on %s, which the rule %s !< %s forbids", b, a, rule[0], rule[1])
						}
					}
				}
			}
			for _, pkg := range pkgs {
				for _, d := range deps[pkg] {
					for _, m := range testOnly {
						if d == m || strings.HasPrefix(d, m+"/") {
							t.Errorf("%s links %s, which only tests may import (testOnly)", pkg, d)
						}
					}
					if contains(notLinked, d) {
						t.Errorf("%s links %s, which no package may link (notLinked)", pkg, d)
					}
				}
			}
			for pkg := range p.allowed {
				if _, ok := imports[pkg]; !ok && !p.layers[pkg] {
					t.Errorf("deps_test.go's rules list %s, which is not a package of the module", pkg)
				}
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func mayImportModule(pkg, imp string) bool {
	for _, m := range thirdParty[pkg] {
		if imp == m || strings.HasPrefix(imp, m+"/") {
			return true
		}
	}
	return false
}

// TestDepsRulesCatch holds the test to what it checks: a rule it reads
// must refuse an import the rules do not allow.
func TestDepsRulesCatch(t *testing.T) {
	p := parseRules(t, depsRules)
	for _, c := range []struct{ pkg, imp string }{
		{"inscribe", "adapters/claude"},
		{"session", "inscribe"},
		{"index", "inscribe"},
		{"exportcore", "cmd/scribe"},
	} {
		if p.allowed[c.pkg][c.imp] {
			t.Errorf("the rules let %s import %s", c.pkg, c.imp)
		}
	}
	for _, c := range []struct{ pkg, imp string }{
		{"inscribe", "session/source"},
		{"exportclaude", "adapters/claude"},
		{"cmd/scribe", "inscribe/views"},
	} {
		if !p.allowed[c.pkg][c.imp] {
			t.Errorf("the rules do not let %s import %s", c.pkg, c.imp)
		}
	}
}

// goList runs go list over the module for goos and returns, per package
// (its path in the module, ROOT for the root), the list the template's
// second field names, with the standard library left out.
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
		if pkg == "" {
			pkg = "ROOT"
		}
		m[pkg] = []string{}
		for _, imp := range fields[1:] {
			if strings.Contains(strings.Split(imp, "/")[0], ".") {
				m[pkg] = append(m[pkg], imp)
			}
		}
	}
	return m
}
