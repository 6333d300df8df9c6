package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// newDirBatch starts a batch of a new directory dir/rounds holding two
// files, and a file dir/state.json after it.
func newDirBatch(t *testing.T, dir string) *Batch {
	t.Helper()
	b := &Batch{}
	d, err := b.NewDir(dir, filepath.Join(dir, "rounds"), 0o700)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"001.json", "002.json"} {
		p, err := d.Create(name, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		p.Uncache()
		if _, err := p.Write([]byte(name)); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.WriteIfChanged(filepath.Join(dir, "state.json"), []byte("note"), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// list names what dir holds.
func list(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestNewDirCommit: a new directory's files are at their final names in a
// temporary directory until the batch commits, which puts the directory in
// place whole, then the batch's other files.
func TestNewDirCommit(t *testing.T) {
	dir := t.TempDir()
	b := newDirBatch(t, dir)
	if got := list(t, dir); len(got) != 2 || got[0][:len(".rounds.tmp-")] != ".rounds.tmp-" {
		t.Fatalf("before the commit the folder holds %q, want the new directory's temporary one and the note's temporary file", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "rounds")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the new directory is in place before the commit: %v", err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := list(t, dir); len(got) != 2 || got[0] != "rounds" || got[1] != "state.json" {
		t.Fatalf("after the commit the folder holds %q, want rounds and state.json", got)
	}
	for _, name := range []string{"001.json", "002.json"} {
		p := filepath.Join(dir, "rounds", name)
		if b, err := os.ReadFile(p); err != nil || string(b) != name {
			t.Errorf("%s holds %q (%v), want %q", p, b, err, name)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "rounds")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the new directory's mode is %v (%v), want 0700", fi.Mode(), err)
	}
}

// TestNewDirAbort: a batch that does not commit leaves nothing of its new
// directory, and a failure to put it in place leaves its target alone.
func TestNewDirAbort(t *testing.T) {
	dir := t.TempDir()
	newDirBatch(t, dir).Abort()
	if got := list(t, dir); len(got) != 0 {
		t.Fatalf("an aborted batch left %q", got)
	}
	TestOnlyFault = func(op, name string) error {
		if op == "rename" {
			return fs.ErrPermission
		}
		return nil
	}
	defer func() { TestOnlyFault = nil }()
	if err := newDirBatch(t, dir).Commit(); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("commit: %v, want the fault's error", err)
	}
	if got := list(t, dir); len(got) != 0 {
		t.Fatalf("a commit that could not put the directory in place left %q", got)
	}
}
