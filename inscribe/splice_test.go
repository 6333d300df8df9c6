package inscribe

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSpliceCatalog: a catalog is read line by line whatever their length
// (ScanCatalog), written again with some of its bytes replaced and the rest
// copied (SpliceCatalog), and not written when another hand wrote it since
// it was read.
func TestSpliceCatalog(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.SessionsDir(), "claude"), DirMode); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 200_000) // longer than the buffer lines are read through
	lines := []string{"head\n", "| [a](a.md) | one |\n", long + "\n", "| [b](b.md) | two |\n", "no line end"}
	if _, err := s.WriteCatalog("claude", []byte(strings.Join(lines, ""))); err != nil {
		t.Fatal(err)
	}
	var got []string
	var ats []int64
	was, err := s.ScanCatalog("claude", func(at int64, line []byte) bool {
		got = append(got, string(line))
		ats = append(ats, at)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != strings.Join(lines, "|") {
		t.Fatalf("ScanCatalog read %d lines, not the %d written (lengths %v)", len(got), len(lines), lens(got))
	}
	fi, _ := os.Stat(s.CatalogName("claude"))
	if was != (FileStamp{fi.Size(), fi.ModTime().UnixNano()}) {
		t.Errorf("stamp %+v, the file is %d bytes of %v", was, fi.Size(), fi.ModTime())
	}
	var stopped int
	if _, err := s.ScanCatalog("claude", func(int64, []byte) bool { stopped++; return stopped < 2 }); err != nil || stopped != 2 {
		t.Errorf("a scan told to stop at the second line read %d (%v)", stopped, err)
	}

	// Replace the second row and the head, given out of order.
	edits := []Splice{
		{At: ats[3], End: ats[4], With: []byte("| [b](b.md) | three |\n")},
		{At: 0, End: ats[1], With: []byte("new head\n")},
	}
	now, err := s.SpliceCatalog("claude", was, edits)
	if err != nil {
		t.Fatal(err)
	}
	want := "new head\n" + lines[1] + lines[2] + "| [b](b.md) | three |\n" + lines[4]
	if b, _ := s.Catalog("claude"); string(b) != want {
		t.Errorf("spliced catalog:\n%.200q\nwant\n%.200q", b, want)
	}
	if now.Size != int64(len(want)) {
		t.Errorf("new stamp's size %d, want %d", now.Size, len(want))
	}

	// A version of the same size: another stamp all the same (a later
	// time), however soon it follows, even if the clock has not reached
	// the old one's time (a time within a tick, a clock set back).
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(s.CatalogName("claude"), future, future); err != nil {
		t.Fatal(err)
	}
	now.Mtime = future.UnixNano()
	again, err := s.SpliceCatalog("claude", now, []Splice{{At: 0, End: 3, With: []byte("NEW")}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Size != now.Size || again.Mtime <= now.Mtime {
		t.Errorf("a version of the same size has stamp %+v after %+v", again, now)
	}
	want = "NEW" + want[3:]
	now = again

	// The version read is no longer the catalog: nothing is written.
	if _, err := s.SpliceCatalog("claude", was, edits[1:]); !errors.Is(err, ErrMoved) {
		t.Errorf("splicing a catalog written since it was read: %v, want ErrMoved", err)
	}
	if b, _ := s.Catalog("claude"); string(b) != want {
		t.Errorf("a refused splice changed the catalog")
	}
	// Edits out of the file, or overlapping: refused.
	for _, bad := range [][]Splice{
		{{At: 0, End: now.Size + 1}},
		{{At: 0, End: 10}, {At: 5, End: 12}},
	} {
		if _, err := s.SpliceCatalog("claude", now, bad); err == nil || errors.Is(err, ErrMoved) {
			t.Errorf("splices %v: %v, want an error", bad, err)
		}
	}
	if b, _ := s.Catalog("claude"); !bytes.Equal(b, []byte(want)) {
		t.Errorf("a refused splice changed the catalog")
	}

	// The kept rows, per machine, the same way.
	if err := s.SetCatalogRows("claude", []byte("rows 1\n"), []byte("a\t1\n")); err != nil {
		t.Fatal(err)
	}
	var rows []string
	keptWas, err := s.ScanCatalogRows("claude", func(_ int64, line []byte) bool { rows = append(rows, string(line)); return true })
	if err != nil || len(rows) != 2 {
		t.Fatalf("%q, %v", rows, err)
	}
	if err := s.SpliceCatalogRows("claude", keptWas, []Splice{{At: 7, End: 11, With: []byte("a\t2\n")}}); err != nil {
		t.Fatal(err)
	}
	if got := string(s.CatalogRows("claude")); got != "rows 1\na\t2\n" {
		t.Errorf("spliced kept rows %q", got)
	}
}

func lens(ss []string) []int {
	var n []int
	for _, s := range ss {
		n = append(n, len(s))
	}
	return n
}
