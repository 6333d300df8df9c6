package osfile

import (
	"bytes"
	"io"
	"math"
	"os"
)

// Lines reads the lines of a file by place: the line that starts at an
// offset, the first line at or after one, a search over lines in order.
// A search over the lines of a file of ten thousand rows reads some
// fifteen of them. Each read goes to the file (a pread): nothing else of
// it is held but the line last returned.
type Lines struct {
	f    *os.File
	size int64
	buf  []byte
}

// OpenLines opens name to read its lines. size is its size when opened:
// a line is read only up to it.
func OpenLines(name string) (*Lines, os.FileInfo, error) {
	f, err := Open(name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &Lines{f: f, size: fi.Size()}, fi, nil
}

// LinesOf reads the lines of f, a file its holder may append to, each as
// far as the file goes when it is read (a line without its line end, cut
// short, is an error). Only Line is for it; f stays its holder's to close.
func LinesOf(f *os.File) *Lines { return &Lines{f: f, size: math.MaxInt64} }

// Close closes the file.
func (l *Lines) Close() error { return l.f.Close() }

// Size is the file's size when opened.
func (l *Lines) Size() int64 { return l.size }

// linesChunk is what one read takes: a few rows of a catalog.
const linesChunk = 4 << 10

// Line returns the line that starts at at, its line end included (the
// last line of a file that does not end in one has none), or nil at the
// file's end. Its bytes are valid until the next call.
func (l *Lines) Line(at int64) ([]byte, error) {
	if at >= l.size {
		return nil, nil
	}
	for n := 0; ; {
		// Each read asks for as much again as was read: a long line
		// costs a few reads, not one a chunk.
		want := int(min(int64(n+max(linesChunk, n)), l.size-at))
		if cap(l.buf) < want {
			l.buf = append(l.buf[:n], make([]byte, want-n)...)
		}
		l.buf = l.buf[:want]
		k, err := l.f.ReadAt(l.buf[n:], at+int64(n))
		if i := bytes.IndexByte(l.buf[n:n+k], '\n'); i >= 0 {
			return l.buf[:n+i+1], nil
		}
		n += k
		switch {
		case at+int64(n) >= l.size:
			return l.buf[:n], nil
		case err != nil && err != io.EOF:
			return nil, err
		case k == 0:
			return nil, io.ErrUnexpectedEOF // cut short since it was opened
		}
	}
}

// Next returns where the first line that starts at or after at begins: at
// itself when the byte before it ends a line (or at is 0), else the place
// after the next line end; the file's size if there is none.
func (l *Lines) Next(at int64) (int64, error) {
	if at <= 0 {
		return 0, nil
	}
	if at >= l.size {
		return l.size, nil
	}
	// The line that holds the byte before at ends where the next begins.
	line, err := l.Line(at - 1)
	if err != nil {
		return 0, err
	}
	return at - 1 + int64(len(line)), nil
}

// Search returns where the first line that starts in [from, to) and of
// which before is false begins, or to if there is none. from is where a
// line starts, and the lines there are in an order in which before is true
// of the lines before some line and false of it and of those after (a
// sorted file, and before comparing a line with the one sought). It reads
// about two lines for each halving of [from, to).
func (l *Lines) Search(from, to int64, before func(line []byte) bool) (int64, error) {
	// Every line that starts before lo is before; none starts in
	// [hi, found) but found, the first known not to be (or to).
	lo, hi := from, min(to, l.size)
	found := hi
	for lo < hi {
		mid := lo + (hi-lo)/2
		s, err := l.Next(mid)
		if err != nil {
			return 0, err
		}
		if s >= hi {
			hi = mid // no line starts in [mid, hi)
			continue
		}
		line, err := l.Line(s)
		if err != nil {
			return 0, err
		}
		if before(line) {
			lo = s + int64(len(line))
		} else {
			found, hi = s, s
		}
	}
	return found, nil
}

// findChunk is what one read of Find takes.
const findChunk = 64 << 10

// findHead is how much of a line Find looks for at once, with the line end
// before it: on amd64 with AVX2, bytes.Index compares a pattern of up to
// 63 bytes in vector registers; elsewhere it finds the pattern's first
// byte, a line end, and compares from there. 48 bytes hold a row's link
// to its session's id.
const findHead = 48

// Find returns where the first line that starts in [from, to) (from where
// a line starts) and is want (line end included) begins, or -1 if there
// is none. It reads the file from there in large reads and looks for
// want's first bytes after a line end as fast as it compares bytes: for a
// line a search can only bring near.
func (l *Lines) Find(from, to int64, want []byte) (int64, error) {
	if len(want) == 0 || want[len(want)-1] != '\n' {
		return -1, nil
	}
	to = min(to, l.size)
	pat := append([]byte{'\n'}, want[:min(len(want), findHead)]...)
	buf := make([]byte, findChunk+len(pat))
	// buf holds the file from at, after the line end before from (a
	// line end of its own at the file's start).
	at := from - 1
	for at+1 < to {
		lo := 0
		if at < 0 {
			buf[0], lo = '\n', 1
		}
		n := min(int64(len(buf)), l.size-at)
		if err := l.readFull(buf[lo:n], at+int64(lo)); err != nil {
			return -1, err
		}
		chunk := buf[:n]
		for i := 0; ; {
			j := bytes.Index(chunk[i:], pat)
			start := at + int64(i+j) + 1
			if j < 0 || start >= to {
				break
			}
			line, err := l.Line(start)
			if err != nil {
				return -1, err
			}
			if bytes.Equal(line, want) {
				return start, nil
			}
			i += j + 1
		}
		if at+n >= l.size {
			break
		}
		// The next read takes again the bytes a match could have begun in.
		at += n - int64(len(pat)-1)
	}
	return -1, nil
}

// Last returns where the file's last line starts and the line (nil in an
// empty file).
func (l *Lines) Last() (int64, []byte, error) {
	if l.size == 0 {
		return 0, nil, nil
	}
	// The last line ends at the file's end; it starts after the line end
	// before that, read back a chunk at a time.
	end := l.size - 1 // its own line end, if it has one, is not sought
	for at := end; ; {
		from := max(at-linesChunk, 0)
		if cap(l.buf) < int(at-from) {
			l.buf = make([]byte, at-from)
		}
		buf := l.buf[:at-from]
		if err := l.readFull(buf, from); err != nil {
			return 0, nil, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			start := from + int64(i) + 1
			line, err := l.Line(start)
			return start, line, err
		}
		if from == 0 {
			line, err := l.Line(0)
			return 0, line, err
		}
		at = from
	}
}

// readFull reads len(buf) bytes at off, which the file held when opened.
func (l *Lines) readFull(buf []byte, off int64) error {
	if k, err := l.f.ReadAt(buf, off); k < len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // cut short since it was opened
		}
		return err
	}
	return nil
}
