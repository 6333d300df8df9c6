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

// TestSpliceCatalog: a catalog's lines are read by place whatever their
// length (OpenCatalog), it is written again with some of its bytes replaced and the rest
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
	got, ats, was := readLines(t, s.OpenCatalog, "claude")
	if strings.Join(got, "|") != strings.Join(lines, "|") {
		t.Fatalf("OpenCatalog read %d lines, not the %d written (lengths %v)", len(got), len(lines), lens(got))
	}
	fi, _ := os.Stat(s.CatalogName("claude"))
	if was != (FileStamp{fi.Size(), fi.ModTime().UnixNano()}) {
		t.Errorf("stamp %+v, the file is %d bytes of %v", was, fi.Size(), fi.ModTime())
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
	if rows, _, _ := readLines(t, s.OpenCatalogRows, "claude"); len(rows) != 2 {
		t.Fatalf("kept rows read as %q", rows)
	}
	_, _, keptWas := readLines(t, s.OpenCatalogRows, "claude")
	if err := s.SpliceCatalogRows("claude", keptWas, []Splice{{At: 7, End: 11, With: []byte("a\t2\n")}}); err != nil {
		t.Fatal(err)
	}
	if got := string(s.CatalogRows("claude")); got != "rows 1\na\t2\n" {
		t.Errorf("spliced kept rows %q", got)
	}
}

// readLines reads every line of what open opens, one after another, and
// the version's stamp.
func readLines(t *testing.T, open func(string) (*CatalogLines, error), agent string) (lines []string, ats []int64, was FileStamp) {
	t.Helper()
	c, err := open(agent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for at := int64(0); ; {
		line, err := c.Line(at)
		if err != nil {
			t.Fatal(err)
		}
		if line == nil {
			return lines, ats, c.Stamp
		}
		lines, ats = append(lines, string(line)), append(ats, at)
		at += int64(len(line))
	}
}

func lens(ss []string) []int {
	var n []int
	for _, s := range ss {
		n = append(n, len(s))
	}
	return n
}
