package gfm_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/scribe-archive/scribe/inscribe/document/internal/gfm"
)

// The copy renders what goldmark's package extension renders, on every
// case of goldmark's own tests of the four extensions (testdata, copied
// from goldmark v1.8.7's extension/_test) and on the repository's
// markdown, with the default renderer and with raw HTML and XHTML on.
func TestSameAsGoldmark(t *testing.T) {
	// One of each construct, besides goldmark's cases.
	inputs := []string{
		"| left | center | right | none |\n| :--- | :---: | ---: | --- |\n| a `x|y` | b \\| c | ~~d~~ | e |\n| f |",
		"- [ ] to do\n- [x] done\n  - [X] nested\n\n1. [x] ordered",
		"~strike~ ~~strike~~ ~~~not~~~ a~~b~~c",
		"www.example.com https://example.com/a_(b)?c=d&e, ftp://x.org/f. mail me@example.com! (http://x.io/y)).",
	}
	specs, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(specs) != 4 {
		t.Fatalf("goldmark's test cases: %v, %v", specs, err)
	}
	for _, f := range specs {
		inputs = append(inputs, specCases(t, f)...)
	}
	// The repository's markdown: its docs (FORMAT.md's many tables) and the
	// documents of its tests' stores.
	root := filepath.Join("..", "..", "..", "..")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			b, err := os.ReadFile(path)
			inputs = append(inputs, string(b))
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) < 70 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for _, in := range inputs {
		same(t, in)
	}
}

// specCases returns the markdown of each case of a goldmark test file: the
// part between a case's first two separator lines.
func specCases(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const sep, end = "//- - - - - - - - -//\n", "//= = = = = = = = = = = = = = = = = = = = = = = =//\n"
	var out []string
	for _, c := range strings.Split(string(b), end) {
		parts := strings.Split(c, sep)
		if len(parts) == 3 {
			out = append(out, parts[1])
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return out
}

// same fails unless the copy and goldmark's extension render in the same
// HTML.
func same(t *testing.T, in string) {
	t.Helper()
	for _, opts := range [][]goldmark.Option{nil, {goldmark.WithRendererOptions(html.WithUnsafe(), html.WithXHTML())}} {
		render := func(ext goldmark.Extender) string {
			var out bytes.Buffer
			if err := goldmark.New(append([]goldmark.Option{goldmark.WithExtensions(ext)}, opts...)...).Convert([]byte(in), &out); err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			return out.String()
		}
		if got, want := render(gfm.GFM), render(extension.GFM); got != want {
			t.Fatalf("%q:\nthe copy renders\n%s\ngoldmark's extension renders\n%s", in, got, want)
		}
	}
}

func FuzzSameAsGoldmark(f *testing.F) {
	for _, s := range []string{"| a | b |\n| - | :-: |\n| 1 | ~~2~~ |", "- [x] done\n- [ ] www.example.com/x?y=(z)", "see https://example.com/a_b. and x@y.z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { same(t, in) })
}

// copied is the goldmark whose extension files the package copies.
const copied = "v1.8.7"

// The copy is of the goldmark the module requires: an upgrade of goldmark
// in go.mod fails here until the files are copied again from it (with the
// patterns made lazy again, and the test cases of testdata) and copied
// names the new version.
func TestCopyOfRequiredGoldmark(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/yuin/goldmark" {
			if f[1] != copied {
				t.Fatalf("go.mod requires goldmark %s; internal/gfm is a copy of %s's extension files: copy them from %s", f[1], copied, f[1])
			}
			return
		}
	}
	t.Fatal("go.mod does not require github.com/yuin/goldmark")
}
