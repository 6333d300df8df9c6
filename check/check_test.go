package check_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestCorpusRoundTrips: every sample session round-trips; the only finding
// is the torn last line of the crashed session, which is explained.
func TestCorpusRoundTrips(t *testing.T) {
	ts, err := storetest.Claude.Discover(testenv.Projects(t))
	if err != nil {
		t.Fatal(err)
	}
	torn := 0
	for _, tr := range ts {
		reports, err := check.Session(tr, claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reports {
			if !r.OK() {
				t.Errorf("%s: %+v", r.Source, r.Findings)
			}
			for _, f := range r.Findings {
				if f.Kind == check.Torn {
					torn++
				}
			}
		}
	}
	if torn != 1 {
		t.Errorf("%d torn lines reported, want 1 (named-crash)", torn)
	}
}

// TestPublicCorpusRoundTrips: the same over the public corpus.
func TestPublicCorpusRoundTrips(t *testing.T) {
	for _, p := range testenv.PublicTranscripts(t) {
		tr := storetest.ClaudeAt(p, strings.TrimSuffix(filepath.Base(p), ".jsonl"), filepath.Dir(p))
		reports, err := check.Session(tr, claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reports {
			if !r.OK() {
				t.Errorf("%s: %+v", filepath.Base(r.Source), r.Findings)
			}
		}
	}
}

// TestDamagedStore: check --store reports exactly what was damaged, where.
func TestDamagedStore(t *testing.T) {
	s, _ := storetest.Samples(t)
	sess := filepath.Join(s.SessionsDir(), "claude")

	// 1. A round file's entry changed: a bookkeeping line (not shown in the
	// markdown, so the round file is its only record).
	r2 := filepath.Join(sess, "22222222-2222-4222-8222-222222222222", "rounds", "002.json")
	damage(t, r2, `"lastPrompt":"second question"`, `"lastPrompt":"second questioN"`)
	// 2. A message edited in the markdown: the export carries it, and check
	// shows the edit as a transformed entry.
	damage(t, filepath.Join(sess, "11111111-1111-4111-8111-111111111111.md"), "Done. I created `hello.py`.", "Done!")
	// 3. A round file lost.
	if err := os.Remove(filepath.Join(sess, "99999999-9999-4999-8999-999999999999", "rounds", "001.json")); err != nil {
		t.Fatal(err)
	}
	// 4. A message's time edited in its identity comment: the export cannot carry it (it comes
	// from the round files), so the document inscribed again differs from
	// the stored one.
	damage(t, filepath.Join(sess, "55555555-5555-4555-8555-555555555555.md"), `"time":"2026-11-22T09:26:30.394Z"`, `"time":"2026-11-22T09:26:30.999Z"`)
	// 5. A source gone.
	gone := filepath.Join(s.Root, "..", "testdata", "claude", "projects", "-home-dev-src-image", "88888888-8888-4888-8888-888888888888.jsonl")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}

	got := map[string][]check.Finding{}
	var torn []string // the crashed session's torn last line, its 42nd
	docs, _ := filepath.Glob(filepath.Join(sess, "*.md"))
	for _, md := range docs {
		if filepath.Base(md) == "index.md" {
			continue
		}
		rep, err := check.Stored(storetest.Doc(t, md), claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Kind == check.Torn {
				torn = append(torn, fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line))
			}
			if f.Kind != check.Torn {
				got[filepath.Base(md)] = append(got[filepath.Base(md)], f)
			}
		}
	}
	if fmt.Sprint(torn) != "[aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa.jsonl:42]" {
		t.Errorf("torn lines found: %v, want the crashed session's 42nd", torn)
	}
	want := map[string]struct {
		kind    check.Kind
		line    int
		field   string
		damaged string // a round file named as damaged first, with what mends it
	}{
		"22222222-2222-4222-8222-222222222222.md": {check.Transformed, 28, "lastPrompt", "22222222-2222-4222-8222-222222222222/rounds/002.json"},
		"11111111-1111-4111-8111-111111111111.md": {check.Transformed, 41, "message.content.0.text", ""},
		"99999999-9999-4999-8999-999999999999.md": {check.Damaged, 0, "", ""}, // the export fails: the damage says why
		"88888888-8888-4888-8888-888888888888.md": {check.Gone, 0, "", ""},
		"55555555-5555-4555-8555-555555555555.md": {check.Document, 0, "", ""},
	}
	for doc, w := range want {
		fs := got[doc]
		if w.damaged != "" {
			id := strings.TrimSuffix(doc, ".md")
			if len(fs) == 0 || fs[0].Kind != check.Damaged || fs[0].File != filepath.Join(sess, w.damaged) || !strings.HasSuffix(fs[0].Msg, "; run scribe repair "+id) {
				t.Errorf("%s: findings %+v, want %s damaged first", doc, fs, w.damaged)
				continue
			}
			fs = fs[1:]
		}
		if len(fs) != 1 || fs[0].Kind != w.kind || fs[0].Line != w.line || fs[0].Field != w.field {
			t.Errorf("%s: findings %+v, want one %s at line %d in %q", doc, fs, w.kind, w.line, w.field)
		}
	}
	if fs := got["55555555-5555-4555-8555-555555555555.md"]; len(fs) == 1 && (!strings.Contains(fs[0].Diff, "09:26:30.999Z") || !strings.Contains(fs[0].Diff, "09:26:30.394Z")) {
		t.Errorf("the document finding's diff does not show the edited message:\n%s", fs[0].Diff)
	}
	for doc, fs := range got {
		if _, ok := want[doc]; !ok {
			t.Errorf("%s: unexpected findings %+v", doc, fs)
		}
	}
}

func damage(t *testing.T, p, old, new string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), old) != 1 {
		t.Fatalf("%s: %q is not there exactly once", p, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// claudeFormat is Claude Code's format as cmd/scribe registers it.
var claudeFormat = check.Format{
	Source: storetest.Claude,
	Export: func(d *inscribe.Doc, dir string) error {
		_, _, err := exportclaude.Session(d, storetest.Claude, dir, exportclaude.Options{})
		return err
	},
	Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
		return exportclaude.Transcript(d, storetest.Claude, w)
	},
}
