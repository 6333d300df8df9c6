package inscribe

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLeftoverTempsRemoved: the temporary files a kill leaves in a
// document's folder are removed by the next update of the document, which
// holds its lock; a sidechain's (its own lock) only once it is old
// (issue 14: a kill -9 campaign left 664 of them, 41 MB of a 79 MB store).
func TestLeftoverTempsRemoved(t *testing.T) {
	l := newLive(t)
	l.put("-home-me-app/s1.jsonl", []byte(line(prompt1)+line(reply1)))
	l.update(true)
	folder := folderOf(filepath.Join(l.root, "data", "sessions", "claude", "s1.md"))
	old := time.Now().Add(-2 * tempAge)
	leftovers := []string{
		".body.tmp-123",
		".s1.md.tmp-456",
		".state.json.tmp-1",
		".session.db.tmp-2",
		"rounds/.001.json.tmp-3",
		"files/.0123456789abcdef.png.tmp-4",
		"source-files/tool-results/.x.txt.tmp-5",
		".agent-old.md.tmp-6",
	}
	for _, rel := range leftovers {
		put(t, filepath.Join(folder, rel), "partial")
	}
	os.Chtimes(filepath.Join(folder, ".agent-old.md.tmp-6"), old, old)
	put(t, filepath.Join(folder, ".agent-young.md.tmp-7"), "being written")
	put(t, filepath.Join(folder, "agent-x", ".state.json.tmp-8"), "the sidechain's own")
	put(t, filepath.Join(folder, ".repair.tmp-9", "s1.jsonl"), "scratch")

	l.put("-home-me-app/s1.jsonl", []byte(line(prompt1)+line(reply1)+line(prompt1)))
	l.update(true) // inscribe: the rounds folder too
	for _, rel := range append(leftovers, ".repair.tmp-9") {
		if _, err := os.Stat(filepath.Join(folder, rel)); err == nil {
			t.Errorf("%s was left behind", rel)
		}
	}
	for _, rel := range []string{".agent-young.md.tmp-7", "agent-x/.state.json.tmp-8"} {
		if _, err := os.Stat(filepath.Join(folder, rel)); err != nil {
			t.Errorf("%s (not this document's, or too young) was removed", rel)
		}
	}
	// The catalog's, by the catalog's refresh (under its lock).
	s := l.store()
	sessions := s.SessionsDir()
	put(t, filepath.Join(sessions, ".index.md.tmp-1"), "x")
	put(t, filepath.Join(sessions, "claude", ".index.md.tmp-2"), "x")
	put(t, filepath.Join(sessions, "..index-stamp.json.tmp-3"), "x")
	put(t, filepath.Join(sessions, ".sessions.db.tmp-4"), "x")
	put(t, filepath.Join(sessions, "claude", ".s2.md.tmp-5"), "x")
	put(t, filepath.Join(sessions, "claude", ".s3.md.tmp-6"), "x")
	os.Chtimes(filepath.Join(sessions, "claude", ".s3.md.tmp-6"), old, old)
	s.RemoveStaleTemps("claude")
	for rel, want := range map[string]bool{
		".index.md.tmp-1": false, "claude/.index.md.tmp-2": false, "..index-stamp.json.tmp-3": false,
		".sessions.db.tmp-4": true, "claude/.s2.md.tmp-5": true, "claude/.s3.md.tmp-6": false,
	} {
		if _, err := os.Stat(filepath.Join(sessions, rel)); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", rel, err == nil, want)
		}
	}
	// A new store index's, in the machine's folder, once the index is
	// there (the temporary file is linked into place); before, only once
	// it is old.
	local := s.localRoot()
	db := filepath.Join(local, storeDB)
	put(t, filepath.Join(local, "."+storeDB+".tmp-1"), "x")
	os.Rename(db, db+".away")
	s.RemoveStaleTemps()
	if _, err := os.Stat(filepath.Join(local, "."+storeDB+".tmp-1")); err != nil {
		t.Errorf("a young temporary file of a missing index was removed: %v", err)
	}
	put(t, db, "the index")
	s.RemoveStaleTemps()
	if _, err := os.Stat(filepath.Join(local, "."+storeDB+".tmp-1")); err == nil {
		t.Errorf("the temporary file of an index in place was left behind")
	}
	os.Remove(db)
	os.Rename(db+".away", db)
	// The root's: .gitignore's and .gitattributes', which a kill while a
	// new store's first run wrote them leaves, once the file is there or
	// they are old; a temporary file of a missing file is young: its
	// writer may be about to rename it.
	os.Remove(filepath.Join(s.Root, gitattributesFile))
	put(t, filepath.Join(s.Root, "..gitignore.tmp-1"), "x")
	put(t, filepath.Join(s.Root, "..gitattributes.tmp-2"), "x")
	put(t, filepath.Join(s.Root, "..gitattributes.tmp-3"), "x")
	os.Chtimes(filepath.Join(s.Root, "..gitattributes.tmp-3"), old, old)
	put(t, filepath.Join(s.Root, ".notes.txt.tmp-4"), "a person's, not scribe's")
	// And redact.toml's, which a kill while a first run wrote it leaves.
	put(t, filepath.Join(s.Root, redactFile), "[scribe]\n")
	put(t, filepath.Join(s.Root, ".redact.toml.tmp-5"), "x")
	s.RemoveStaleTemps()
	for rel, want := range map[string]bool{
		"..gitignore.tmp-1": false, "..gitattributes.tmp-2": true, "..gitattributes.tmp-3": false, ".notes.txt.tmp-4": true,
		".redact.toml.tmp-5": false,
	} {
		if _, err := os.Stat(filepath.Join(s.Root, rel)); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", rel, err == nil, want)
		}
	}
}

func put(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
