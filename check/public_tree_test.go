package check_test

import (
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// Every transcript of the public corpus, laid out as its projects were, is
// inscribed and checked, over the sources and in the store: subagents whose
// session is not in the corpus (partial copies) too, in both layouts
// (issue 14: 27 of 29 were checked).
func TestPublicTreeIsCheckedWhole(t *testing.T) {
	tree, n := testenv.PublicTree(t)
	ts, err := storetest.Claude.Discover(tree)
	if skips, rest := source.Skips(err); len(skips) > 0 || rest != nil {
		t.Fatalf("Discover: %v", err)
	}
	lone := 0
	checked := 0
	for _, tr := range ts {
		if tr.Path == "" {
			lone++
		}
		reports, err := check.Session(tr, claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reports {
			checked++
			if !r.OK() {
				t.Errorf("%s: %+v", r.Source, r.Findings)
			}
		}
	}
	if lone < 2 || checked != n {
		t.Errorf("over the sources: %d checked (%d sessions without their file), want all %d", checked, lone, n)
	}

	s, err := inscribe.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		for _, r := range s.Update(tr, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	docs, _ := filepath.Glob(filepath.Join(s.SessionsDir(), "*", "*.md"))
	subs, _ := filepath.Glob(filepath.Join(s.SessionsDir(), "*", "*", "agent-*.md"))
	stored := 0
	for _, md := range append(docs, subs...) {
		rep, err := check.Stored(storetest.Doc(t, md), claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		stored++
		if !rep.OK() {
			t.Errorf("%s: %+v", md, rep.Findings)
		}
	}
	if o, _ := s.LoneSidechains(); stored != n || len(o) != lone {
		t.Errorf("in the store: %d documents checked, %d of them lone sidechains; want %d and %d", stored, len(o), n, lone)
	}
}
