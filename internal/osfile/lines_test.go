package osfile

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// starts are where the lines of data start (naively).
func starts(data []byte) []int64 {
	var s []int64
	for at := 0; at < len(data); {
		s = append(s, int64(at))
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			break
		}
		at += i + 1
	}
	return s
}

func openData(t testing.TB, data []byte) *Lines {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lines")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l, fi, err := OpenLines(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(data)) || l.Size() != int64(len(data)) {
		t.Fatalf("size %d, %d, want %d", fi.Size(), l.Size(), len(data))
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// checkLines compares Line, Next and Last with a naive reading of data.
func checkLines(t testing.TB, l *Lines, data []byte) {
	t.Helper()
	st := starts(data)
	for i, at := range st {
		end := int64(len(data))
		if i+1 < len(st) {
			end = st[i+1]
		}
		got, err := l.Line(at)
		if err != nil || !bytes.Equal(got, data[at:end]) {
			t.Fatalf("Line(%d) = %q, %v; want %q", at, got, err, data[at:end])
		}
	}
	if got, err := l.Line(int64(len(data))); got != nil || err != nil {
		t.Fatalf("Line(size) = %q, %v", got, err)
	}
	// Every offset near a line's start, and some others.
	var offsets []int64
	for _, at := range st {
		offsets = append(offsets, at-1, at, at+1, at+2)
	}
	for i := int64(0); i < int64(len(data)); i += 1 + int64(len(data))/64 {
		offsets = append(offsets, i)
	}
	offsets = append(offsets, int64(len(data))-1, int64(len(data)))
	for _, at := range offsets {
		if at < 0 || at > int64(len(data)) {
			continue
		}
		want := int64(len(data))
		if k, ok := slices.BinarySearch(st, at); ok {
			want = st[k]
		} else if k < len(st) {
			want = st[k]
		}
		if got, err := l.Next(at); err != nil || got != want {
			t.Fatalf("Next(%d) = %d, %v; want %d", at, got, err, want)
		}
	}
	at, line, err := l.Last()
	if len(st) == 0 {
		if at != 0 || line != nil || err != nil {
			t.Fatalf("Last() of an empty file = %d, %q, %v", at, line, err)
		}
		return
	}
	if last := st[len(st)-1]; err != nil || at != last || !bytes.Equal(line, data[last:]) {
		t.Fatalf("Last() = %d, %q, %v; want %d, %q", at, line, err, last, data[last:])
	}
}

// TestLines: Line, Next, Last and Search agree with a naive reading, over
// files of short lines, of lines longer than a read (and than several), with
// and without a last line end; Search finds the first line not before a
// key, over every range of line starts.
func TestLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		n := r.IntN(40)
		keys := make([]int, n)
		for i := range keys {
			keys[i] = r.IntN(30) // repeats: a key may have several lines
		}
		slices.Sort(keys)
		var data []byte
		for _, k := range keys {
			pad := r.IntN(40)
			switch r.IntN(10) {
			case 0:
				pad = linesChunk + r.IntN(3*linesChunk)
			case 1:
				pad = linesChunk - 8 + r.IntN(16) // about one read
			}
			data = fmt.Appendf(data, "%04d %s\n", k, bytes.Repeat([]byte("x"), pad))
		}
		if n > 0 && trial%3 == 0 {
			data = data[:len(data)-1] // no last line end
		}
		l := openData(t, data)
		checkLines(t, l, data)
		st := starts(data)
		bounds := append(slices.Clone(st), int64(len(data)))
		for want := -1; want <= 31; want += 1 + r.IntN(3) {
			before := func(line []byte) bool {
				var k int
				fmt.Sscanf(string(line), "%d", &k)
				return k < want
			}
			for a := range bounds {
				for _, b := range []int{a, a + 1, a + r.IntN(len(bounds)-a), len(bounds) - 1} {
					if b >= len(bounds) {
						continue
					}
					from, to := bounds[a], bounds[b]
					exp := to
					for _, s := range st {
						if s >= from && s < to {
							if line, _ := l.Line(s); !before(bytes.Clone(line)) {
								exp = s
								break
							}
						}
					}
					got, err := l.Search(from, to, before)
					if err != nil || got != exp {
						t.Fatalf("trial %d: Search(%d, %d) for %d = %d, %v; want %d", trial, from, to, want, got, err, exp)
					}
				}
			}
		}
	}
}

// TestLinesCutShort: a file cut after it was opened reads as far as it
// holds, with an error for a line it no longer has, not a panic.
func TestLinesCutShort(t *testing.T) {
	l := openData(t, bytes.Repeat([]byte("0123456789abcdef\n"), 1000))
	if err := os.Truncate(l.f.Name(), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Line(17 * 500); err == nil {
		t.Error("Line past the cut: no error")
	}
	if line, err := l.Line(17); err != nil || string(line) != "0123456789abcdef\n" {
		t.Errorf("Line(17) = %q, %v", line, err)
	}
}

func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"))
	f.Add([]byte("\n\n\n"))
	f.Add(bytes.Repeat([]byte("y"), 3*linesChunk))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLines(t, openData(t, data), data)
	})
}

// TestLinesFind: Find finds a line where a line starts, not as the end of
// another, across the boundaries of its reads, and not at all when the
// file has no such line.
func TestLinesFind(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 30 {
		var data []byte
		var lines [][]byte
		for len(data) < 3*findChunk {
			n := 1 + r.IntN(300)
			if r.IntN(50) == 0 {
				n = findChunk/2 + r.IntN(findChunk)
			}
			line := fmt.Appendf(nil, "%s%d\n", bytes.Repeat([]byte{byte('a' + r.IntN(3))}, n), r.IntN(5))
			lines = append(lines, line)
			data = append(data, line...)
		}
		l := openData(t, data)
		st := starts(data)
		var wants [][]byte
		for range 20 {
			line := lines[r.IntN(len(lines))]
			wants = append(wants, line, line[r.IntN(len(line)):]) // a line, and the end of one
		}
		wants = append(wants, []byte("no such line\n"), []byte("a"), nil)
		for _, want := range wants {
			for _, from := range []int64{0, st[r.IntN(len(st))], st[len(st)-1]} {
				exp := int64(-1)
				for i, s := range st {
					end := int64(len(data))
					if i+1 < len(st) {
						end = st[i+1]
					}
					if s >= from && len(want) > 0 && want[len(want)-1] == '\n' && bytes.Equal(data[s:end], want) {
						exp = s
						break
					}
				}
				if got, err := l.Find(from, l.Size(), want); err != nil || got != exp {
					t.Fatalf("trial %d: Find(%d, %.40q) = %d, %v; want %d", trial, from, want, got, err, exp)
				}
				// Bounded: a line that starts at to or after is not
				// looked at.
				if exp >= 0 {
					if got, err := l.Find(from, exp, want); err != nil || got != -1 {
						t.Fatalf("trial %d: Find(%d, %d, %.40q) = %d, %v; want -1", trial, from, exp, want, got, err)
					}
					if got, err := l.Find(from, exp+1, want); err != nil || got != exp {
						t.Fatalf("trial %d: Find(%d, %d, %.40q) = %d, %v; want %d", trial, from, exp+1, want, got, err, exp)
					}
				}
			}
		}
	}
}

// TestLinesFindAtBoundary: a line sought that starts anywhere near the
// end of Find's first read is found, once.
func TestLinesFindAtBoundary(t *testing.T) {
	want := []byte("the line sought\n")
	for off := -2 * len(want); off <= 2*len(want); off++ {
		pre := findChunk + len(want) + off // where it starts
		data := slices.Concat(bytes.Repeat([]byte("x"), pre-1), []byte("\n"), want, []byte("after\n"))
		if got, err := openData(t, data).Find(0, int64(len(data)), want); err != nil || got != int64(pre) {
			t.Fatalf("at %d: Find = %d, %v", pre, got, err)
		}
		// The same bytes ending a longer line: not a line of their own.
		data[pre-1] = 'y'
		if got, err := openData(t, data).Find(0, int64(len(data)), want); err != nil || got != -1 {
			t.Fatalf("inside a line at %d: Find = %d, %v", pre, got, err)
		}
	}
}

// TestLinesSearchLongLast: a search over many short lines followed by one
// of a megabyte still halves its range at each step: it reads a few dozen
// lines, not each short one in turn.
func TestLinesSearchLongLast(t *testing.T) {
	var data []byte
	for i := range 2000 {
		data = fmt.Appendf(data, "%06d\n", i)
	}
	data = append(data, bytes.Repeat([]byte("9"), 1<<20)...)
	data = append(data, '\n')
	l := openData(t, data)
	calls := 0
	at, err := l.Search(0, l.Size(), func(line []byte) bool {
		calls++
		return string(line[:6]) < "001234"
	})
	if err != nil || at != 1234*7 {
		t.Fatalf("Search = %d, %v; want %d", at, err, 1234*7)
	}
	if calls > 40 {
		t.Errorf("Search read %d lines", calls)
	}
}

// TestLinesOf: the lines of a file appended to after LinesOf are read as
// far as it goes, a long one in several reads; a last line cut short of
// its line end is an error, not a line.
func TestLinesOf(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "graph"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := LinesOf(f)
	long := append(bytes.Repeat([]byte("x"), 3*linesChunk), '\n')
	for _, add := range [][]byte{[]byte("a\tb\tc\n"), long} {
		at, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(add); err != nil {
			t.Fatal(err)
		}
		if line, err := l.Line(at); err != nil || !bytes.Equal(line, add) {
			t.Errorf("Line(%d) = %.20q, %v; want %.20q", at, line, err, add)
		}
	}
	at, _ := f.Seek(0, io.SeekEnd)
	f.Write([]byte("cut\tshort"))
	if line, err := l.Line(at); err == nil {
		t.Errorf("Line(%d) of a line without its end = %q, want an error", at, line)
	}
}
