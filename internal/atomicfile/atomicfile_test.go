package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWritePiecesIfChanged writes a file of pieces unless it holds them,
// whatever their sizes and wherever they differ, and keeps the file's
// modification time when it does.
func TestWritePiecesIfChanged(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // past the comparison's buffer
	cases := []struct {
		name   string
		pieces [][]byte
	}{
		{"one piece", [][]byte{big}},
		{"split across the buffer", [][]byte{big[:70000], big[70000:70001], nil, big[70001:]}},
		{"first byte differs", [][]byte{[]byte("X"), big[1:]}},
		{"the same again", [][]byte{big}},
		{"last byte differs", [][]byte{big[:len(big)-1], []byte("X")}},
		{"one byte shorter", [][]byte{big[:len(big)-1]}},
		{"one byte longer", [][]byte{big, []byte("!")}},
		{"empty", nil},
		{"small", [][]byte{[]byte("a"), []byte("bc")}},
	}
	for _, c := range cases {
		// Each case is written over the one before: the same bytes in
		// other pieces, or bytes that differ in one place.
		want := bytes.Join(c.pieces, nil)
		old, err := os.ReadFile(name)
		change := err != nil || !bytes.Equal(old, want)
		wrote, err := WritePiecesIfChanged(name, 0o600, c.pieces...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := os.ReadFile(name)
		if wrote != change || !bytes.Equal(got, want) {
			t.Fatalf("%s: wrote %v, %d bytes; want %d bytes, written: %v", c.name, wrote, len(got), len(want), change)
		}
		before, _ := os.Stat(name)
		again, err := WritePiecesIfChanged(name, 0o600, c.pieces...)
		after, _ := os.Stat(name)
		if err != nil || again || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("%s again: wrote %v (%v), modified %v → %v; want no write", c.name, again, err, before.ModTime(), after.ModTime())
		}
		if same, err := Equal(name, bytes.Clone(want)); !same || err != nil {
			t.Fatalf("%s: Equal of the whole = %v, %v", c.name, same, err)
		}
	}
}

// A new version written with After(the old one's time) has a later time,
// whatever the clock's tick: a stamp of size and time tells them apart.
func TestAfter(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	future := time.Now().Add(time.Hour) // a time the clock has not reached
	for _, was := range []time.Time{{}, future} {
		p, err := Create(name)
		if err != nil {
			t.Fatal(err)
		}
		p.Write([]byte("abc"))
		if err := p.After(was); err != nil {
			t.Fatal(err)
		}
		if err := p.Commit(0o600); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().After(was) {
			t.Errorf("After(%v) left the time at %v", was, fi.ModTime())
		}
		if was.IsZero() && fi.ModTime().After(time.Now().Add(time.Minute)) {
			t.Errorf("After(zero) moved the time to %v", fi.ModTime())
		}
	}
}

// CopyRange copies exactly what it is asked, or fails: a file shorter than
// the range is an error, not a short copy.
func TestCopyRangeShort(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if err := CopyRange(&b, f, 2, 3); err != nil || b.String() != "cde" {
		t.Errorf("CopyRange(2, 3) = %q, %v", b.String(), err)
	}
	b.Reset()
	if err := CopyRange(&b, f, 4, 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("CopyRange past the end: %q, %v; want io.ErrUnexpectedEOF", b.String(), err)
	}
}
