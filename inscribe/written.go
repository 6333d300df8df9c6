package inscribe

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/scribe-archive/scribe/internal/room"
)

// Written holds the headers of the round files an update wrote, by number,
// until the indexer takes them (Update.Rounds). An update holds one per
// round it wrote, so for a whole session when it inscribes one: each
// header (the prompt, the agent's text, thinking and tool calls, and of
// the calls' results what the index holds: ResultText, and the other
// fields) is kept in a scratch file (scratchFiles), and in memory only
// where it lies, 5 bytes a round. (Held as RoundFile values, results
// included, they were most of the 86 MB live at the end of a 315 MB
// session of 0.9 MB rounds; without the results, 19 MB; packed in memory,
// 4.7 MB, but 60 bytes a round, 30 MB for a session of a million tiny
// lines.) A long text is written and read back without a copy beside it.
type Written struct {
	dir string // the document's folder, where a new one is made
	// at is where the header of each round from round first on lies in
	// f, atBytes bytes a round (atNone for none: not written, or taken):
	// 2.5 MB for the 500,000 rounds of a million tiny lines, where an
	// []int64 held 4 MB and, growing, 9 MB at once.
	first int
	at    []byte
	f     *os.File
	end   int64
	err   error
	buf   []byte
	// rd reads sr, the file from some offset to its end as it was
	// (srEnd): the headers are taken in the order they were written, so
	// one is read on from where the last ended, not by a read of rd's
	// buffer each.
	rd    *bufio.Reader
	sr    *io.SectionReader
	srAt  int64
	srEnd int64
}

// longField is the length from which a text is written to the file and
// read back as it is, not through a buffer (a 100 MB prompt is not copied
// on the way).
const longField = 64 << 10

// add keeps rf's header. An error is kept for Take, which then finds
// nothing (the indexer reads the round file back instead).
func (w *Written) add(rf *RoundFile) {
	if w.err == nil && w.f == nil {
		w.f, w.err = scratch.get(w.dir)
	}
	if w.err != nil {
		return
	}
	w.place(rf.Round, w.end)
	w.buf = binary.AppendVarint(w.buf, int64(rf.Round))
	w.packString(rf.Started)
	if rf.EngagementID == nil {
		w.buf = binary.AppendUvarint(w.buf, 0)
	} else {
		w.buf = binary.AppendUvarint(w.buf, 1)
		w.packString(*rf.EngagementID)
	}
	blocks := len(rf.Agent)
	if rf.User != nil {
		blocks++
	}
	for _, v := range [...]int64{bit(rf.Open), rf.TokenCount, int64(rf.Lines[0]), int64(rf.Lines[1]), bit(rf.User != nil), int64(blocks)} {
		w.buf = binary.AppendVarint(w.buf, v)
	}
	if rf.User != nil {
		w.packBlock(*rf.User)
	}
	for _, b := range rf.Agent {
		w.packBlock(b)
	}
	w.flush()
}

// bit is 1 for true, 0 for false.
func bit(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// atBytes is the size of an offset in Written.at, little-endian: up to
// 1 TiB of headers.
const atBytes = 5

// atNone is the offset of no header.
const atNone = 1<<(8*atBytes) - 1

var noneAt = bytes.Repeat([]byte{0xff}, atBytes)

// errHeadersSize is Written's error once its file outgrows at's offsets.
var errHeadersSize = errors.New("the round headers' scratch file outgrew 1 TiB")

// place records that round n's header lies at offset at.
func (w *Written) place(n int, at int64) {
	if at >= atNone {
		w.err = errHeadersSize
		return
	}
	if len(w.at) == 0 {
		w.first = n
	}
	if n < w.first { // a round before the first written: seldom
		w.at = append(bytes.Repeat(noneAt, w.first-n), w.at...)
		w.first = n
	}
	for (n-w.first)*atBytes >= len(w.at) {
		w.at = append(w.at, noneAt...)
	}
	w.setAt(n-w.first, at)
}

// atOf returns the offset of the header of round first+i, -1 for none.
func (w *Written) atOf(i int) int64 {
	if i < 0 || i >= len(w.at)/atBytes {
		return -1
	}
	b := w.at[i*atBytes : (i+1)*atBytes]
	v := int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16 | int64(b[3])<<24 | int64(b[4])<<32
	if v == atNone {
		return -1
	}
	return v
}

// setAt sets the offset of the header of round first+i.
func (w *Written) setAt(i int, at int64) {
	b := w.at[i*atBytes : (i+1)*atBytes]
	b[0], b[1], b[2], b[3], b[4] = byte(at), byte(at>>8), byte(at>>16), byte(at>>24), byte(at>>32)
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
	w.buf = binary.AppendUvarint(w.buf, uint64(bit(r.IsError)))
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

// Take returns the header of round n, if this update wrote it, and forgets
// it: the indexer's row takes its place. Its agent blocks' results hold
// their parts' Type and Text only, a text part's as ResultText has it.
func (w *Written) Take(n int) (*RoundFile, bool) { return w.read(n, true) }

// Peek is Take but for forgetting the header: the indexer reads it again
// for another index.
func (w *Written) Peek(n int) (*RoundFile, bool) { return w.read(n, false) }

func (w *Written) read(n int, forget bool) (*RoundFile, bool) {
	if w == nil || w.err != nil {
		return nil, false
	}
	i := n - w.first
	at := w.atOf(i)
	if at < 0 {
		return nil, false
	}
	if forget {
		w.setAt(i, atNone)
	}
	w.seek(at)
	rf := RoundFile{Round: int(w.readInt())}
	rf.Started = w.readString()
	if w.readLen() == 1 {
		e := w.readString()
		rf.EngagementID = &e
	}
	rf.Open = w.readInt() == 1
	rf.TokenCount = w.readInt()
	rf.Lines = [2]int{int(w.readInt()), int(w.readInt())}
	hasUser := w.readInt() == 1
	blocks := make([]RoundBlock, max(w.readInt(), 0))
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
	if w.err != nil || rf.Round != n {
		return nil, false
	}
	if hasUser && len(blocks) > 0 {
		rf.User = &blocks[0]
		blocks = blocks[1:]
	}
	if len(blocks) > 0 {
		rf.Agent = blocks
	}
	return &rf, true
}

// seek has rd read on from offset at.
func (w *Written) seek(at int64) {
	if w.rd != nil && w.srEnd == w.end {
		if pos, err := w.sr.Seek(0, io.SeekCurrent); err == nil && w.srAt+pos-int64(w.rd.Buffered()) == at {
			return
		}
	}
	if w.rd == nil {
		w.rd = bufio.NewReaderSize(nil, 16<<10)
	}
	w.sr, w.srAt, w.srEnd = io.NewSectionReader(w.f, at, w.end-at), at, w.end
	w.rd.Reset(w.sr)
}

func (w *Written) readInt() int64 {
	n, err := binary.ReadVarint(w.rd)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n
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
