package inscribe

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/scribe-archive/scribe/internal/room"
)

// Written holds the headers of the round files an update wrote, by number,
// until the indexer takes them (Update.Rounds). An update holds one per
// round it wrote, so for a whole session when it inscribes one: the texts
// (the prompt, the agent's text, thinking and tool calls, and of the
// calls' results what the index holds: ResultText) are kept in a scratch
// file (scratchFiles), and only the other fields in memory. (Held as
// RoundFile values, results included, they were most of the 86 MB live at
// the end of a 315 MB session of 0.9 MB rounds; without the results,
// 19 MB; packed in memory, 4.7 MB.) A long text is written and read back
// without a copy beside it.
type Written struct {
	dir string // the document's folder, where a new one is made
	m   map[int]*packedHeader
	f   *os.File
	end int64
	err error
	buf []byte
	rd  *bufio.Reader
}

// packedHeader is a round file's header but for the prompt and the
// agent's blocks, which lie in the file at [at, at+n) (packBlocks).
type packedHeader struct {
	rf      RoundFile
	hasUser bool
	blocks  int
	at, n   int64
}

// longField is the length from which a text is written to the file and
// read back as it is, not through a buffer (a 100 MB prompt is not copied
// on the way).
const longField = 64 << 10

// add keeps rf's header. An error is kept for Take, which then finds
// nothing (the indexer reads the round file back instead).
func (w *Written) add(rf *RoundFile) {
	if w.m == nil {
		w.m = make(map[int]*packedHeader)
	}
	p := &packedHeader{rf: *rf, hasUser: rf.User != nil, at: w.end}
	p.rf.User, p.rf.Agent, p.rf.Entries = nil, nil, nil
	w.m[rf.Round] = p
	if w.err == nil && w.f == nil {
		w.f, w.err = scratch.get(w.dir)
	}
	if w.err != nil {
		return
	}
	if rf.User != nil {
		w.packBlock(*rf.User)
		p.blocks++
	}
	for _, b := range rf.Agent {
		w.packBlock(b)
		p.blocks++
	}
	w.flush()
	p.n = w.end - p.at
}

// packBlock writes a block's Type, Text, Name, ID and Input, then its
// result (packResult), each as its
// length and bytes (Result, Path and MediaType are left out: an agent's
// blocks and a prompt have none the indexes use).
func (w *Written) packBlock(b RoundBlock) {
	for _, s := range []string{b.Type, b.Text, b.Name, b.ID, string(b.Input)} {
		w.packString(s)
	}
	w.packResult(b.Result)
}

// packString writes a field's length and bytes: a long one straight to
// the file.
func (w *Written) packString(s string) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(s)))
	if len(s) < longField {
		w.buf = append(w.buf, s...)
		if len(w.buf) >= longField {
			w.flush()
		}
		return
	}
	w.flush()
	w.write(func() (int, error) { return w.f.WriteString(s) })
}

// packResult writes a block's result: 0 for none, else 1 + its number of
// parts, whether it is an error, and each part's Type and Text (a text
// part's as the index holds it: ResultText).
func (w *Written) packResult(r *RoundResult) {
	if r == nil {
		w.buf = binary.AppendUvarint(w.buf, 0)
		return
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(len(r.Content))+1)
	w.buf = binary.AppendUvarint(w.buf, map[bool]uint64{false: 0, true: 1}[r.IsError])
	for _, c := range r.Content {
		text := c.Text
		if c.Type == "text" {
			text = ResultText(text)
		}
		w.packString(c.Type)
		w.packString(text)
	}
}

func (w *Written) flush() {
	if len(w.buf) > 0 {
		w.write(func() (int, error) { return w.f.Write(w.buf) })
		w.buf = w.buf[:0]
	}
}

func (w *Written) write(f func() (int, error)) {
	if w.err != nil {
		return
	}
	n, err := f()
	w.end += int64(n)
	w.err = err
}

// open reports whether round n was written open.
func (w *Written) open(n int) bool {
	p := w.m[n]
	return p != nil && p.rf.Open
}

// Take returns the header of round n, if this update wrote it, and forgets
// it: the indexer's row takes its place. Its agent blocks' results hold
// their parts' Type and Text only, a text part's as ResultText has it.
func (w *Written) Take(n int) (*RoundFile, bool) {
	if w == nil || w.err != nil {
		return nil, false
	}
	p, ok := w.m[n]
	if !ok {
		return nil, false
	}
	delete(w.m, n)
	if w.rd == nil {
		w.rd = bufio.NewReaderSize(nil, 16<<10)
	}
	w.rd.Reset(io.NewSectionReader(w.f, p.at, p.n))
	blocks := make([]RoundBlock, p.blocks)
	for i := range blocks {
		b := &blocks[i]
		for _, s := range []*string{&b.Type, &b.Text, &b.Name, &b.ID} {
			*s = w.readString()
		}
		if in := w.readBytes(); len(in) > 0 {
			b.Input = in
		}
		if n := w.readLen(); n > 0 {
			b.Result = &RoundResult{IsError: w.readLen() == 1, Content: make([]RoundBlock, n-1)}
			for j := range b.Result.Content {
				b.Result.Content[j].Type = w.readString()
				b.Result.Content[j].Text = w.readString()
			}
		}
	}
	if w.err != nil {
		return nil, false
	}
	rf := p.rf
	if p.hasUser {
		rf.User = &blocks[0]
		blocks = blocks[1:]
	}
	if len(blocks) > 0 {
		rf.Agent = blocks
	}
	return &rf, true
}

func (w *Written) readLen() int {
	n, err := binary.ReadUvarint(w.rd)
	if err != nil && w.err == nil {
		w.err = err
	}
	return int(n)
}

// readString reads a field as one string: a long one straight into it.
func (w *Written) readString() string {
	n := w.readLen()
	if n < longField {
		w.buf = slices.Grow(w.buf[:0], n)[:n]
		w.readFull(w.buf)
		return string(w.buf)
	}
	var sb strings.Builder
	room.Make(n)
	sb.Grow(n)
	if _, err := io.CopyN(&sb, w.rd, int64(n)); err != nil && w.err == nil {
		w.err = err
	}
	return sb.String()
}

func (w *Written) readBytes() []byte {
	n := w.readLen()
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	w.readFull(b)
	return b
}

func (w *Written) readFull(b []byte) {
	if _, err := io.ReadFull(w.rd, b); err != nil && w.err == nil {
		w.err = err
	}
}

// close gives the file back.
func (w *Written) close() {
	if w.f != nil {
		scratch.put(w.f)
		w.f = nil
	}
}
