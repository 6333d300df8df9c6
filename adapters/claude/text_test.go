package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/sourcetest"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// TestTextFields checks, over the bundled transcripts, that the text of
// every block the document shows is a text field of its line, and that no
// identity, signature or image bytes are.
func TestTextFields(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude", "projects", "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude", "projects", "*", "*", "subagents", "*.jsonl"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no sample transcripts")
	}
	a := New()
	notText := func(path string) bool {
		return identityKey(path[strings.LastIndexByte(path, '.')+1:]) || strings.HasSuffix(path, "source.data")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b := testBuilder(source.Config{File: f, Sidechain: strings.Contains(f, "subagents")})
		lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
		var items []session.Item
		for {
			l, err := lr.Next()
			if err != nil {
				break
			}
			if r := b.Add(l); r != nil {
				items = append(items, r.Items...)
			}
		}
		if fin := b.Finish(); fin.Open != nil {
			items = append(items, fin.Open.Items...)
		}
		sourcetest.TextFields(t, f, data, a, notText, items)
	}
}
