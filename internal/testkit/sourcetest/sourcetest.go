// Package sourcetest holds checks every source adapter's tests make of
// what it hands the store.
package sourcetest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// TextFields checks a source file's text fields (what redaction scans and
// replaces) against the items its adapter built from it: every span
// decodes to its text; no field is at a key notText refuses (an identity,
// a signature, an image's bytes); the text of every block the document
// shows, and of every result part, is a text field of its line, at its
// origin; a tool input is, or holds, one.
func TextFields(t testing.TB, file string, data []byte, finder source.TextFinder, notText func(path string) bool, items []session.Item) {
	t.Helper()
	fields := map[int]map[string]string{}
	for i, l := range bytes.Split(data, []byte("\n")) {
		fields[i+1] = map[string]string{}
		for _, tf := range finder.TextFields(l) {
			if got := jsonpatch.DecodeString(l[tf.Start:tf.End]); got != tf.Text {
				t.Errorf("%s:%d: %s: span decodes to %q, not %q", file, i+1, tf.Path, got, tf.Text)
			}
			if notText(tf.Path) {
				t.Errorf("%s:%d: %s is a text field", file, i+1, tf.Path)
			}
			fields[i+1][tf.Path] = tf.Text
		}
	}
	check := func(kind session.BlockKind, text string, o *session.Origin) {
		if o == nil || text == "" || kind == session.KindRaw || kind == session.KindToolUse {
			return
		}
		if got, ok := fields[o.Line][o.Path]; !ok || got != text {
			t.Errorf("%s:%d: the %s block at %s is not a text field", file, o.Line, kind, o.Path)
		}
	}
	for _, it := range items {
		for _, blk := range it.Blocks {
			check(blk.Kind, blk.Text, blk.Origin)
			if blk.Kind == session.KindToolUse && blk.Origin != nil && strings.Contains(blk.Input, `"`) {
				found := false
				for p := range fields[blk.Origin.Line] {
					found = found || p == blk.Origin.Path || strings.HasPrefix(p, blk.Origin.Path+".")
				}
				if !found {
					t.Errorf("%s:%d: tool input %s has no text field", file, blk.Origin.Line, blk.Origin.Path)
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
