// Package crosstest holds what the judges of the cross-agent exports share:
// the sessions inscribed into a scratch store, and what the real clients
// send their model on resume, read as units (exportcore.Unit) to compare:
// what the source client sends resuming the original against what the
// target client sends resuming the conversion.
package crosstest

import (
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session/source"
)

// Inscribe inscribes every session a adapter finds under root into a
// fresh store, and returns each session's document by session id.
func Inscribe(t testing.TB, a source.Adapter, root string) map[string]string {
	t.Helper()
	docs := map[string]string{}
	for _, s := range InscribeAll(t, a, root) {
		docs[s.ID] = s.Doc
	}
	return docs
}

// Inscribed is a session inscribed by InscribeAll: its id, its source
// file and its document.
type Inscribed struct{ ID, Source, Doc string }

// InscribeAll inscribes every session a finds under each root (a folder
// or a file) into one fresh store, and returns them in the order found.
func InscribeAll(t testing.TB, a source.Adapter, roots ...string) []Inscribed {
	t.Helper()
	s, err := inscribe.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	var ss []source.Session
	for _, root := range roots {
		found, err := a.Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, found...)
	}
	var out []Inscribed
	for _, src := range ss {
		for _, r := range s.Update(src, inscribe.Options{Agent: a.Agent()}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Source, r.Err)
			}
		}
		d, ok := s.Find(src.ID)
		if !ok {
			t.Fatalf("no document for %s", src.ID)
		}
		out = append(out, Inscribed{ID: src.ID, Source: src.Path, Doc: d.Path()})
	}
	return out
}
