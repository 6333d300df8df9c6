package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
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
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(data, []byte("\n"))
		fields := map[int]map[string]string{}
		for i, l := range lines {
			fields[i+1] = map[string]string{}
			for _, tf := range a.TextFields(l) {
				if got := jsonpatch.DecodeString(l[tf.Start:tf.End]); got != tf.Text {
					t.Errorf("%s:%d: %s: span decodes to %q, not %q", f, i+1, tf.Path, got, tf.Text)
				}
				last := tf.Path[strings.LastIndexByte(tf.Path, '.')+1:]
				if identityKey(last) || strings.HasSuffix(tf.Path, "source.data") {
					t.Errorf("%s:%d: %s is a text field", f, i+1, tf.Path)
				}
				fields[i+1][tf.Path] = tf.Text
			}
		}
		b := testBuilder(source.Config{File: f, DocBase: "x", Sidechain: strings.Contains(f, "subagents")})
		lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
		var rounds []*session.Round
		for {
			l, err := lr.Next()
			if err != nil {
				break
			}
			if r := b.Add(l); r != nil {
				rounds = append(rounds, r)
			}
		}
		if fin := b.Finish(); fin.Open != nil {
			rounds = append(rounds, fin.Open)
		}
		check := func(kind session.BlockKind, text string, o *session.Origin) {
			if o == nil || text == "" || kind == session.KindRaw || kind == session.KindToolUse {
				return
			}
			if got, ok := fields[o.Line][o.Path]; !ok || got != text {
				t.Errorf("%s:%d: the %s block at %s is not a text field", f, o.Line, kind, o.Path)
			}
		}
		for _, r := range rounds {
			for _, it := range r.Items {
				for _, blk := range it.Blocks {
					check(blk.Kind, blk.Text, blk.Origin)
					if blk.Kind == session.KindToolUse && blk.Origin != nil && strings.Contains(blk.Input, `"`) {
						found := false
						for p := range fields[blk.Origin.Line] {
							found = found || p == blk.Origin.Path || strings.HasPrefix(p, blk.Origin.Path+".")
						}
						if !found {
							t.Errorf("%s:%d: tool input %s has no text field", f, blk.Origin.Line, blk.Origin.Path)
						}
					}
					if blk.Result != nil {
						for _, p := range blk.Result.Parts {
							check(p.Kind, p.Text, p.Origin)
						}
					}
				}
			}
		}
	}
}
