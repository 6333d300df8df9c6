package inscribe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// A session file with no entry yet (Claude Code creates it before it
// writes; a writer stopped mid-way through its first line) makes no
// document: an empty one would fail the store's own check. Once it holds an
// entry, it is inscribed (issue 14).
func TestNoEntryYetIsSkipped(t *testing.T) {
	const id = "22222222-2222-4222-8222-222222222222"
	sample, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	sess := source.Session{Adapter: claudeSrc, Path: src, ID: id, Dir: filepath.Dir(src), Rel: id + ".jsonl"}
	for _, c := range []struct {
		name    string
		content string
		torn    bool
	}{
		{"empty", "", false},
		{"a torn first line", `{"type":"queue-operation","oper`, true},
	} {
		if err := os.WriteFile(src, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []Options{{Verify: true}, {}} {
			rs := s.Update(sess, opts)
			if len(rs) != 1 || rs[0].Outcome != Skipped || rs[0].Err != nil || rs[0].Doc != "" {
				t.Fatalf("%s: %+v, want one result, skipped", c.name, rs)
			}
			if got := len(rs[0].Warnings) == 1; got != c.torn {
				t.Errorf("%s: warnings %v", c.name, rs[0].Warnings)
			}
			if _, err := os.Stat(filepath.Join(s.SessionsDir(), "claude")); !os.IsNotExist(err) {
				t.Fatalf("%s: the store holds something: %v", c.name, err)
			}
		}
	}
	if err := os.WriteFile(src, sample, 0o644); err != nil {
		t.Fatal(err)
	}
	rs := s.Update(sess, Options{})
	if len(rs) != 1 || rs[0].Outcome != Inscribed {
		t.Fatalf("once it holds entries: %+v, want inscribed", rs)
	}
	// A document's source that becomes empty is not skipped: it shrank,
	// and the store keeps what was inscribed, saying so.
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rs = s.Update(sess, Options{Verify: true})
	if len(rs) != 1 || rs[0].Err != nil || rs[0].Outcome != Unchanged ||
		len(rs[0].Warnings) != 1 || !strings.Contains(rs[0].Warnings[0].Error(), "shrank to 0 bytes") {
		t.Fatalf("a source emptied under its document: %+v, want unchanged with a warning that it shrank", rs)
	}
}
