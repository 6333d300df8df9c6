package views_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// TestTitleEscapedInCatalog: a session's title (a client records one, a
// person or a model sets one) is text in the agent's index.md: markup in
// it shows as itself, even where the markdown is rendered with raw HTML
// allowed (issue 32, 7).
func TestTitleEscapedInCatalog(t *testing.T) {
	v, _ := sampleStore(t)
	md, ok := v.FindDoc("22222222-2222-4222-8222-222222222222")
	if !ok {
		t.Fatal("the session's document is not in the store")
	}
	const title = `<img src=x onerror=alert(1)> [x](javascript:alert(1)) *a|b*`
	if _, err := v.SetTitle(md, title); err != nil {
		t.Fatal(err)
	}
	if err := v.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(v.Root, "sessions", "claude", "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(html.WithUnsafe())).Convert(src, &out); err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, "alert(1)") {
			continue
		}
		for _, bad := range []string{"<img", "<a href", "<em>"} {
			if strings.Contains(line, bad) {
				t.Errorf("the title is markup (%s):\n%s", bad, line)
			}
		}
		shown = shown || strings.Contains(line, "&lt;img src=x onerror=alert(1)&gt; [x](javascript:alert(1)) *a|b*")
	}
	if !shown {
		t.Errorf("the title is not shown as text:\n%s", out.String())
	}
}
