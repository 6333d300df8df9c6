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

// FuzzLineReader: from a file (where a long line is measured before it is
// read) and from a plain reader, starting at any line, the lines read are
// the source split at "\n", with their numbers, offsets and whether they
// ended in one. Repeating the input makes lines longer than the read
// buffer.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint16(0), uint8(1))
	f.Add([]byte("{\"x\":1}\n"), uint16(299), uint8(0))
	f.Add([]byte("no newline at all"), uint16(5000), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, repeat uint16, start uint8) {
		src := bytes.Repeat(data, 1+int(repeat)%300)
		type want struct {
			off        int64
			raw        []byte
			terminated bool
		}
		var lines []want
		for off := 0; off < len(src); {
			n := bytes.IndexByte(src[off:], '\n')
			if n < 0 {
				lines = append(lines, want{int64(off), src[off:], false})
				break
			}
			lines = append(lines, want{int64(off), src[off : off+n], true})
			off += n + 1
		}
		k := int(start) % (len(lines) + 1)
		from := int64(len(src))
		if k < len(lines) {
			from = lines[k].off
		}
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, src, 0o600); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		if _, err := file.Seek(from, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		for _, r := range []io.Reader{file, bytes.NewReader(src[from:])} {
			lr := NewLineReader(r, k+1, from)
			for i := k; i < len(lines); i++ {
				l, err := lr.Next()
				if err != nil {
					t.Fatalf("%T: line %d: %v", r, i+1, err)
				}
				w := lines[i]
				if l.No != i+1 || l.Offset != w.off || !bytes.Equal(l.Raw, w.raw) || l.Terminated != w.terminated {
					t.Fatalf("%T: line %d: got no %d offset %d terminated %v, %d bytes; want offset %d terminated %v, %d bytes",
						r, i+1, l.No, l.Offset, l.Terminated, len(l.Raw), w.off, w.terminated, len(w.raw))
				}
			}
			if _, err := lr.Next(); err != io.EOF {
				t.Fatalf("%T: after the last line: %v", r, err)
			}
		}
	})
}
