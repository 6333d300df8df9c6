package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/scribe-archive/scribe/internal/room"
)

// Line is one line of a JSONL source.
type Line struct {
	No     int   // 1-based line number
	Offset int64 // byte offset of the line's first byte
	// Raw is the line without its "\n". It is valid until the next call to
	// [LineReader.Next].
	Raw []byte
	// Terminated reports whether the line ended in "\n". Only the last line
	// of a source can be unterminated: a crash mid-write (a torn line) or a
	// file whose writer never added the final newline.
	Terminated bool
}

// End is the offset just past the line and its newline.
func (l Line) End() int64 {
	n := l.Offset + int64(len(l.Raw))
	if l.Terminated {
		n++
	}
	return n
}

// LineReader reads a source line by line without a limit on line length and
// without reading more than one line into memory. Claude Code writes lines of
// 15 MB and more (pasted images, large tool results), so a bufio.Scanner with
// its 64 KiB default would fail on real files.
type LineReader struct {
	r   *bufio.Reader
	no  int
	off int64
	buf []byte
	// file is r when it is a file, and fileAt minus off its position
	// there: a long line's length is then found before the line is read,
	// so that it is read into one buffer of its size (growing a buffer
	// by appending would allocate five times the line, and hold nearly
	// twice it at the last copy).
	file   *os.File
	fileAt int64
	scan   []byte
}

// NewLineReader reads r, numbering lines from firstLine and offsets from
// offset (both describe where r starts within the source).
func NewLineReader(r io.Reader, firstLine int, offset int64) *LineReader {
	lr := &LineReader{r: bufio.NewReaderSize(r, 1<<16), no: firstLine - 1, off: offset}
	if f, ok := r.(*os.File); ok {
		if at, err := f.Seek(0, io.SeekCurrent); err == nil {
			lr.file, lr.fileAt = f, at-offset
		}
	}
	return lr
}

// longestLine is the length of the longest line read in this process, and
// onLongerLine what is told of a longer one.
var (
	longestLine  atomic.Int64
	onLongerLine atomic.Pointer[func(n int64)]
)

// OnLongerLine has f told the length of every line longer than any read
// before it (from this call on) by a LineReader of this process, when the
// reader learns it: for a file, before the line is read into memory. f
// may be called from several goroutines at once. The command uses it to
// bound its memory by the longest line (cmd/scribe).
func OnLongerLine(f func(n int64)) {
	onLongerLine.Store(&f)
	longestLine.Store(0)
}

// NoteLine records, for [OnLongerLine], that a line of n bytes is about to
// be read into memory, or a file of n bytes that holds lines.
func NoteLine(n int64) {
	for {
		old := longestLine.Load()
		if n <= old {
			return
		}
		if longestLine.CompareAndSwap(old, n) {
			if f := onLongerLine.Load(); f != nil && *f != nil {
				(*f)(n)
			}
			return
		}
	}
}

// reserve makes room in lr.buf for the rest of a line longer than the read
// buffer, of which have bytes are read: it finds the line's end in the
// file (or the file's end) and grows the buffer once to hold it.
func (lr *LineReader) reserve(have int) {
	if lr.file == nil {
		return
	}
	if lr.scan == nil {
		lr.scan = make([]byte, 1<<18)
	}
	at := lr.fileAt + lr.off + int64(have)
	for {
		n, err := lr.file.ReadAt(lr.scan, at)
		if i := bytes.IndexByte(lr.scan[:n], '\n'); i >= 0 {
			at += int64(i) + 1
			break
		}
		at += int64(n)
		if err != nil {
			break
		}
	}
	size := at - lr.fileAt - lr.off
	NoteLine(size)
	if size > int64(cap(lr.buf)) && size < 1<<40 {
		lr.buf = nil
		room.Make(int(size))
		lr.buf = make([]byte, 0, size)
	}
}

// Next returns the next line, or io.EOF when the source is exhausted.
func (lr *LineReader) Next() (Line, error) {
	// Do not let one huge line pin a huge buffer for the rest of the file.
	if cap(lr.buf) > 64<<20 {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf) == 0 && errors.Is(err, bufio.ErrBufferFull) {
			lr.reserve(len(chunk))
		}
		lr.buf = append(lr.buf, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			if len(lr.buf) == 0 {
				return Line{}, io.EOF
			}
			break
		}
		return Line{}, err
	}
	if len(lr.buf) > 1<<16 {
		NoteLine(int64(len(lr.buf)))
	}
	lr.no++
	line := Line{No: lr.no, Offset: lr.off, Raw: lr.buf}
	lr.off += int64(len(lr.buf))
	if n := len(line.Raw); n > 0 && line.Raw[n-1] == '\n' {
		line.Raw = line.Raw[:n-1]
		line.Terminated = true
	}
	return line, nil
}

// IsBlank reports whether a line holds only white space.
func IsBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// Torn reports whether l is a torn last line: unterminated and not a
// complete JSON value, as a writer killed mid-line leaves it. A later read
// finds it complete once the writer (or a resumed client) finishes it.
func (l Line) Torn() bool { return !l.Terminated && !json.Valid(l.Raw) }

// LineError is a problem with one line of a source. Bad input is reported
// this way and never stops a read: the line is kept and the rest goes on.
type LineError struct {
	File string
	Line int
	Msg  string
	// Torn marks a torn last line (see [Line.Torn]): not inscribed yet,
	// not damage.
	Torn bool
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }
