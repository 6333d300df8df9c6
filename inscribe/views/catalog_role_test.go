package views

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/scribe-archive/scribe/inscribe"
)

// A role's name from roles.yaml is text in both catalogs: markup in it
// (HTML, links, emphasis) shows as itself, in sessions/index.md as in the
// agent's own index (issue 14).
func TestRoleNameEscapedInCatalogs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	const name = `<script>alert(1)</script> [x](javascript:alert(1)) *a|b*`
	roles := "roles:\n  - id: evil\n    name: '" + name + "'\n"
	if err := os.MkdirAll(filepath.Join(root, "sessions", "evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "roles.yaml"), []byte(roles), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := inscribe.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	v := Open(s)
	if err := v.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	for _, p := range []string{filepath.Join(root, "sessions", "index.md"), filepath.Join(root, "sessions", "evil", "index.md")} {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := md.Convert(src, &out); err != nil {
			t.Fatal(err)
		}
		html := out.String()
		shown := false
		for _, line := range strings.Split(html, "\n") {
			if !strings.Contains(line, "alert(1)") {
				continue
			}
			for _, bad := range []string{"<script", "raw HTML omitted", "<a href", "<em>"} {
				if strings.Contains(line, bad) {
					t.Errorf("%s: the role's name is markup (%s):\n%s\nrendered:\n%s", p, bad, src, line)
				}
			}
			shown = shown || strings.Contains(line, "&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1)) *a|b*")
		}
		if !shown {
			t.Errorf("%s: the role's name is not shown as text:\n%s", p, html)
		}
	}
}
