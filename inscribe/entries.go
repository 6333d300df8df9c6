package inscribe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/internal/room"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// EntryReader reads a round file's entries one at a time, for an export
// that writes a session's lines as it reads them: the round's header (the
// prompt and the agent's text, as long as the lines that hold them) is
// skipped, not read into memory, and each entry is read into a buffer of
// its size. A round file laid out otherwise than scribe writes it (one
// entry a line after "entries") is read whole instead.
type EntryReader struct {
	f     *os.File
	br    *bufio.Reader
	pos   int64 // the file's offset of what br gives next
	round int
	name  string
	whole []RoundEntry // the entries of a file read whole
	done  bool
}

// EntryAt is where an entry's JSON lies in its round file, for
// [Doc.CopyEntry] to copy it later without holding it; Len is 0 for an
// entry that is not embedded as JSON.
type EntryAt struct {
	Round       int
	Offset, Len int64
}

// RoundEntries returns a reader of round n's entries.
func (d *Doc) RoundEntries(n int) (*EntryReader, error) {
	return openEntries(d.open, roundPath(d.folder(), n), n)
}

// openEntries returns a reader of the entries of round n's file p, opened
// with open.
func openEntries(open opener, p string, n int) (*EntryReader, error) {
	f, err := open(p)
	if err != nil {
		return nil, err
	}
	r := &EntryReader{f: f, br: roundReader(f), round: n, name: p}
	ok, err := r.skipHeader()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if !ok {
		rf, err := readRoundVia(open, p)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.whole, r.done = rf.Entries, true
		putRoundReader(r.br) // read whole: the reader is done with
		r.br = nil
		if r.whole == nil {
			r.whole = []RoundEntry{}
		}
	}
	return r, nil
}

// eachEntry calls f with the bytes of each line round file p holds, read
// an entry at a time (the round's header, its texts, skipped).
func eachEntry(p string, f func(RoundEntry, []byte) error) error {
	r, err := openEntries(osfile.Open, p, 0)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		e, _, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		b, err := e.Bytes()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := f(e, b); err != nil {
			return err
		}
	}
}

// addRounds adds to b the lines of the folder's first n round files, an
// entry at a time, and flushes it.
func addRounds(b source.Builder, folder string, n int) error {
	for i := 1; i <= n; i++ {
		err := eachEntry(roundPath(folder, i), func(e RoundEntry, raw []byte) error {
			b.AddEntry(session.Entry{Line: e.Line, Raw: raw, NoNewline: e.NoNewline})
			return nil
		})
		if err != nil {
			return err
		}
	}
	b.Flush()
	return nil
}

// roundReaders are the buffered readers of round files (an EntryReader's,
// readHeaderLines'), kept for the next round file once one is done with:
// an export reads every round file's entries and the indexing every
// round's header, and 64 KiB allocated for each (32 GB for the 500,000
// rounds of a million tiny lines) kept the heap at the collector's goal.
// What is read is copied out, never kept in the buffer.
var roundReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// roundReader returns a reader of f from roundReaders; putRoundReader
// gives it back.
func roundReader(f io.Reader) *bufio.Reader {
	br := roundReaders.Get().(*bufio.Reader)
	br.Reset(f)
	return br
}

func putRoundReader(br *bufio.Reader) {
	br.Reset(nil)
	roundReaders.Put(br)
}

// Close closes the round file.
func (r *EntryReader) Close() error {
	if r.br != nil {
		putRoundReader(r.br)
		r.br = nil
	}
	return r.f.Close()
}

// skipHeader reads past the round's fields to the line that opens its
// entries, and reports whether it found it.
func (r *EntryReader) skipHeader() (bool, error) {
	for {
		line, full, err := r.readLine()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil // not laid out as scribe writes it
		}
		if err != nil {
			return false, err
		}
		if !full {
			continue
		}
		switch string(line) {
		case "  \"entries\": [\n":
			return true, nil
		case "  \"entries\": []\n":
			r.done = true
			return true, r.end()
		}
	}
}

// readLine reads the next line; full is false when it was too long for
// the buffer, and line then holds only its end.
func (r *EntryReader) readLine() (line []byte, full bool, err error) {
	full = true
	for {
		line, err = r.br.ReadSlice('\n')
		r.pos += int64(len(line))
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return line, full, err
		}
		full = false
	}
}

// end reads what follows the entries: the file's last line.
func (r *EntryReader) end() error {
	line, _, err := r.readLine()
	if err != nil || string(line) != "}\n" {
		return errors.New("the round file does not end where its entries do: the backing store is damaged")
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		return errors.New("the round file goes on past its end: the backing store is damaged")
	}
	return nil
}

// Next returns the next entry and where its JSON lies, or io.EOF after
// the last.
func (r *EntryReader) Next() (RoundEntry, EntryAt, error) {
	if r.whole != nil {
		if len(r.whole) == 0 {
			return RoundEntry{}, EntryAt{}, io.EOF
		}
		e := r.whole[0]
		r.whole = r.whole[1:]
		return e, EntryAt{Round: r.round}, nil
	}
	if r.done {
		return RoundEntry{}, EntryAt{}, io.EOF
	}
	fail := func(err error) (RoundEntry, EntryAt, error) {
		return RoundEntry{}, EntryAt{}, fmt.Errorf("%s: %w", r.name, err)
	}
	start := r.pos
	line, full, err := r.readLine()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fail(err)
	}
	if full && string(line) == "  ]\n" {
		r.done = true
		if err := r.end(); err != nil {
			return fail(err)
		}
		return RoundEntry{}, EntryAt{}, io.EOF
	}
	if full {
		line = bytes.Clone(line)
	} else {
		// A long line: read again at its size, the memory limit told
		// first.
		n := r.pos - start
		source.NoteLine(n)
		room.Make(int(n))
		line = make([]byte, n)
		if _, err := r.f.ReadAt(line, start); err != nil {
			return fail(err)
		}
	}
	body := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte(","))
	var e struct {
		RoundEntry
		JSON inPlace `json:"json,omitempty"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fail(fmt.Errorf("an entry: %w", err))
	}
	out := e.RoundEntry
	out.JSON = json.RawMessage(e.JSON)
	at := EntryAt{Round: r.round}
	if e.JSON != nil {
		at.Offset = start + int64(cap(line)-cap(e.JSON))
		at.Len = int64(len(e.JSON))
	}
	return out, at, nil
}

// CopyEntry copies the JSON of an entry that at locates (from
// [EntryReader.Next]) to w.
func (d *Doc) CopyEntry(w io.Writer, at EntryAt) error {
	p := roundPath(d.folder(), at.Round)
	f, err := d.open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(w, io.NewSectionReader(f, at.Offset, at.Len)); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// ReadEntry reads the JSON of an entry that at locates.
func (d *Doc) ReadEntry(at EntryAt) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(at.Len))
	err := d.CopyEntry(&buf, at)
	return buf.Bytes(), err
}
