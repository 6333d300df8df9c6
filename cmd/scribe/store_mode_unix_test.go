//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestStoreModes: the store is its owner's alone, as Claude Code keeps its
// transcripts: folders 0700 and files 0600, whatever the umask lets
// through, indexes and tags included (issue 14).
func TestStoreModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	root := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{
		{"inscribe", testenv.Projects(t)},
		{"tag", "22222222-2222-4222-8222-222222222222", "1", "eng-1"},
		{"search", "question"},
	} {
		if out, err := scribeCmd(append([]string{"--root", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("scribe %v: %v\n%s", args, err, out)
		}
	}
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %#o, want %#o", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d files in the store", files)
	}
	if _, err := os.Stat(filepath.Join(root, "sessions", "claude", "22222222-2222-4222-8222-222222222222", "tags.tsv")); err != nil {
		t.Fatal(err)
	}
}
