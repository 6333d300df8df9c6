package osfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLikeOS checks that what osfile opens behaves as what os opens:
// reading, writing, appending, listing a folder, and the errors.
func TestLikeOS(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 100_000} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("scribe\n"), size/7+1)[:size]
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadFile of %d bytes: %d bytes, %v", size, len(got), err)
		}
	}

	ents, err := ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != "f" || ents[0].IsDir() {
		t.Fatalf("ReadDir: %v, %v; want the one file f", ents, err)
	}
	if _, err := ReadDir(filepath.Join(dir, "f")); err == nil {
		t.Error("ReadDir of a file: no error")
	}

	p := filepath.Join(dir, "new")
	f, err := OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("one\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL over an existing file: %v, want an fs.ErrExist", err)
	}
	f, err = OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	if got, _ := os.ReadFile(p); string(got) != "one\ntwo\n" {
		t.Errorf("after an append: %q", got)
	}

	_, err = Open(filepath.Join(dir, "missing"))
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || pe.Path != filepath.Join(dir, "missing") {
		t.Errorf("Open of a missing file: %v, want a *fs.PathError naming it, an fs.ErrNotExist", err)
	}

	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"f", "new"}) {
		t.Errorf("a folder's names: %q, %v", names, err)
	}
}

func TestCreateTemp(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for range 20 {
		f, err := CreateTemp(dir, ".doc.md.tmp-*")
		if err != nil {
			t.Fatal(err)
		}
		name := f.Name()
		if filepath.Dir(name) != dir || !strings.HasPrefix(filepath.Base(name), ".doc.md.tmp-") || seen[name] {
			t.Errorf("CreateTemp made %s", name)
		}
		seen[name] = true
		if fi, err := f.Stat(); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, %v: others may read it", name, fi.Mode(), err)
		}
		if _, err := f.WriteString("x"); err != nil {
			t.Error(err)
		}
		f.Close()
	}
	if f, err := CreateTemp(dir+string(os.PathSeparator), "a*b"); err != nil || filepath.Dir(f.Name()) != dir || !strings.HasSuffix(f.Name(), "b") {
		t.Errorf("CreateTemp with a separator after the folder: %v", err)
	} else {
		f.Close()
	}
}
