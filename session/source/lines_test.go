package source

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLineReaderLongLines reads a file with lines shorter and longer than
// the read buffer, from an offset into it, as a file and as a plain
// reader: the lines, offsets and ends are the same, and a long line read
// from a file is read into a buffer of its own size, its length told
// first.
func TestLineReaderLongLines(t *testing.T) {
	lens := []int{10, 1 << 17, 0, 5, 3<<20 + 7, 70000, 1, 200001}
	var src bytes.Buffer
	src.WriteString("skipped\n")
	for i, n := range lens {
		src.WriteString(strings.Repeat(string(rune('a'+i)), n))
		if i < len(lens)-1 {
			src.WriteByte('\n') // the last line is unterminated
		}
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var told []int64
	OnLongerLine(func(n int64) { told = append(told, n) })
	defer OnLongerLine(nil)

	read := func(r io.Reader) {
		t.Helper()
		lr := NewLineReader(r, 2, 8)
		off := int64(8)
		prevCap := 0
		for i, n := range lens {
			l, err := lr.Next()
			if err != nil {
				t.Fatalf("line %d: %v", i+2, err)
			}
			if l.No != i+2 || l.Offset != off || len(l.Raw) != n || l.Terminated != (i < len(lens)-1) {
				t.Fatalf("line %d: got no %d, offset %d, %d bytes, terminated %v", i+2, l.No, l.Offset, len(l.Raw), l.Terminated)
			}
			if n > 0 && (l.Raw[0] != byte('a'+i) || l.Raw[n-1] != byte('a'+i)) {
				t.Fatalf("line %d: wrong bytes", i+2)
			}
			if _, ok := r.(*os.File); ok && n > 1<<16 && cap(lr.buf) > max(prevCap, n+1) {
				t.Errorf("line %d of %d bytes was read into a buffer of %d", i+2, n, cap(lr.buf))
			}
			prevCap = cap(lr.buf)
			off = l.End()
		}
		if _, err := lr.Next(); err != io.EOF {
			t.Fatalf("after the last line: %v", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(8, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	read(f)
	want := []int64{1<<17 + 1, 3<<20 + 8}
	if len(told) != len(want) || told[0] != want[0] || told[1] != want[1] {
		t.Errorf("told %v, want %v", told, want)
	}
	read(bytes.NewReader(src.Bytes()[8:]))
}
