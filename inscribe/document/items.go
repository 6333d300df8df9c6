package document

import (
	"bytes"
	"fmt"
	"io"

	"github.com/scribe-archive/scribe/internal/room"
	"github.com/scribe-archive/scribe/session"
)

// ItemReader reads a document's messages a window at a time, so that a
// long document is never whole in memory. Each window is tokenized as Parse
// tokenizes the whole body: the renderer keeps every item a self-contained
// run of top-level blocks, and a block's meaning depends only on what comes
// before it, so every item start found in a window, but the last, closes
// a complete item.
type ItemReader struct {
	Meta    *session.Meta
	Summary string

	f       io.ReadCloser // the document from its first item on
	ra      io.ReaderAt   // the same file, to look ahead
	off     int64         // the offset in f of what f gives next
	name    string
	buf     []byte // the file from the next item on (buf[0] is the '\n' before its "---")
	line    int    // the line number of buf[0]
	eof     bool
	pending []session.Item // parsed, not yet returned
	places  []Place        // where each of pending starts
	chunk   int            // the least to read at a time (tests make it small)
	look    []byte         // toBreak's buffer
}

// ReadItems reads a document's head from f, which holds the document's
// size bytes and is read from its start, and returns a reader of its
// messages, which closes f when it is closed. name names the document in
// errors.
func ReadItems(f io.ReadCloser, size int64, name string) (*ItemReader, error) {
	return readItems(f, size, name, nil)
}

// Place is where a message starts in a document: its offset (of the line
// end before its "---") and the line number there. A reader's Place,
// given to ReadItemsAt with the same document, reads on from that
// message; a Place of other bytes is an error when read.
type Place struct {
	Off  int64
	Line int
}

// ReadItemsAt is ReadItems of the messages from the one at a Place that
// an ItemReader of the same document gave, on: it reads the document's
// head and then from there, not the messages before it. f must be an
// io.ReaderAt.
func ReadItemsAt(f io.ReadCloser, size int64, name string, at Place) (*ItemReader, error) {
	return readItems(f, size, name, &at)
}

func readItems(f io.ReadCloser, size int64, name string, at *Place) (*ItemReader, error) {
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("%s: the document cannot be read at an offset", name)
	}
	h, err := ReadHead(ra, size, name)
	if err != nil {
		return nil, err
	}
	if at != nil {
		if at.Off < h.BodyAt || at.Off > size || at.Line < 1 {
			return nil, fmt.Errorf("%s: no message starts at offset %d", name, at.Off)
		}
		return &ItemReader{Meta: h.Meta, Summary: h.Summary, f: sectionFile{io.NewSectionReader(ra, at.Off, size-at.Off), f},
			ra: ra, off: at.Off, name: name, line: at.Line, chunk: 256 << 10}, nil
	}
	head := make([]byte, h.BodyAt)
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, err
	}
	return &ItemReader{Meta: h.Meta, Summary: h.Summary, f: f, ra: ra, off: h.BodyAt, name: name,
		line: bytes.Count(head, []byte("\n")) + 1, chunk: 256 << 10}, nil
}

// sectionFile reads a section of a file, and closes the file.
type sectionFile struct {
	*io.SectionReader
	io.Closer
}

// Place is where the message Next returns next starts (at the end, the
// document's end).
func (r *ItemReader) Place() Place {
	if len(r.places) > 0 {
		return r.places[0]
	}
	return Place{Off: r.off - int64(len(r.buf)), Line: r.line}
}

// Close closes the document.
func (r *ItemReader) Close() error { return r.f.Close() }

// Next returns the next item, or io.EOF after the last.
func (r *ItemReader) Next() (*session.Item, error) {
	for len(r.pending) == 0 {
		if r.eof && len(r.buf) == 0 {
			return nil, io.EOF
		}
		if err := r.window(); err != nil {
			return nil, err
		}
	}
	it := r.pending[0]
	// Not kept in the array: a long message's texts are its window,
	// which the caller may be done with before the array is.
	r.pending[0] = session.Item{}
	r.pending = r.pending[1:]
	r.places = r.places[1:]
	return &it, nil
}

// window reads more of the file and parses the items it completes.
func (r *ItemReader) window() error {
	if !r.eof {
		if err := r.fill(); err != nil {
			return err
		}
		if len(r.buf) == 0 {
			return nil
		}
	}
	p := &docParser{src: r.buf[1:], name: r.name, lineBase: r.line, share: true}
	p.tokenize()
	if !p.isItemStart(0) {
		if !r.eof {
			return nil // the first item's heading is not whole yet
		}
		return p.errorf(0, "expected a message (\"---\", a \"### \" heading and scribe's identity comment)")
	}
	starts := []int{0}
	for i := 1; i < len(p.toks); i++ {
		if p.isItemStart(i) {
			starts = append(starts, i)
		}
	}
	complete := len(starts) - 1 // the last may go on past the window
	if r.eof {
		complete = len(starts)
	}
	// What is parsed now: up to the '\n' before the next item's "---".
	used := len(r.buf)
	if complete < len(starts) {
		used = p.toks[starts[complete]].start
	}
	if i := invalidUTF8(r.buf[:used]); i >= 0 {
		return p.errorf(i-1, invalidText)
	}
	base, line, counted := r.off-int64(len(r.buf)), r.line, 0
	for k := 0; k < complete; k++ {
		stop := len(p.toks)
		if k+1 < len(starts) {
			stop = starts[k+1]
		}
		it, err := p.item(starts[k], stop)
		if err != nil {
			return err
		}
		at := p.toks[starts[k]].start // the '\n' before its "---", in buf
		line += bytes.Count(r.buf[counted:at], []byte("\n"))
		counted = at
		r.pending = append(r.pending, it)
		r.places = append(r.places, Place{Off: base + int64(at), Line: line})
	}
	r.line = line + bytes.Count(r.buf[counted:used], []byte("\n"))
	if p.shared {
		// The items' long texts are the window's bytes: what is left
		// goes to a buffer of its own.
		r.buf = append(make([]byte, 0, max(r.chunk, len(r.buf)-used)), r.buf[used:]...)
		return nil
	}
	r.buf = r.buf[:copy(r.buf, r.buf[used:])]
	return nil
}

// fill reads more of the file into buf: at least a chunk, half as much
// as buf holds, so that an item much longer than a chunk is tokenized a
// logarithmic number of times, and on to the next thematic break past a
// chunk (where the next item may start), so that a long item is read into
// one buffer of about its size, not one that doubled to it (a 100 MB
// message took 256 MB; issue 33).
func (r *ItemReader) fill() error {
	want := max(r.chunk, len(r.buf)/2)
	if len(r.buf) > 0 && r.ra != nil {
		want = max(want, r.toBreak()+r.chunk)
	}
	if cap(r.buf)-len(r.buf) < want {
		room.Make(len(r.buf) + want)
		nb := make([]byte, len(r.buf), len(r.buf)+want)
		copy(nb, r.buf)
		r.buf = nb
	}
	n, err := io.ReadFull(r.f, r.buf[len(r.buf):len(r.buf)+want])
	r.off += int64(n)
	r.buf = r.buf[:len(r.buf)+n]
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.eof = true
		return nil
	}
	return err
}

// toBreak returns how far from r.off the next line "---" ends (the
// file's end when there is none).
func (r *ItemReader) toBreak() int {
	const rule = "\n---\n"
	if r.look == nil {
		r.look = make([]byte, 16<<10)
	}
	buf := r.look
	at := max(r.off-int64(len(rule)-1), 0)
	for {
		n, err := r.ra.ReadAt(buf, at)
		if i := bytes.Index(buf[:n], []byte(rule)); i >= 0 {
			return int(at + int64(i+len(rule)) - r.off)
		}
		if err != nil || n < len(rule) {
			return int(at + int64(n) - r.off)
		}
		at += int64(n - len(rule) + 1)
	}
}
