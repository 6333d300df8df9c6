package inscribe

import (
	"encoding/binary"
	"encoding/json"
	"os"
)

// Written holds the headers of the round files an update wrote, by number,
// until the indexer takes them (Update.Rounds). An update holds one per
// round it wrote, so for a whole session when it inscribes one: the texts
// (the prompt, the agent's text, thinking and tool calls) are kept in a
// temporary file of the document's folder, and only the other fields in
// memory; the tool calls' results, which the indexes do not hold, are not
// kept. (Held as RoundFile values, results included, they were most of the
// 86 MB live at the end of a 315 MB session of 0.9 MB rounds; without the
// results, 19 MB; packed in memory, 4.7 MB.)
type Written struct {
	dir  string // the document's folder, where the file goes
	m    map[int]*packedHeader
	f    *os.File
	end  int64
	err  error
	pack []byte
}

// packedHeader is a round file's header but for the prompt and the
// agent's blocks, which lie packed (packBlocks) in the file at [at, at+n).
type packedHeader struct {
	rf      RoundFile
	hasUser bool
	at, n   int64
}

// add keeps rf's header. An error is kept for Take, which then finds
// nothing (the indexer reads the round file back instead).
func (w *Written) add(rf *RoundFile) {
	if w.m == nil {
		w.m = make(map[int]*packedHeader)
	}
	p := &packedHeader{rf: *rf, hasUser: rf.User != nil}
	p.rf.User, p.rf.Agent, p.rf.Entries = nil, nil, nil
	w.m[rf.Round] = p
	if w.err != nil {
		return
	}
	if w.f == nil {
		if w.f, w.err = os.CreateTemp(w.dir, ".headers.tmp-*"); w.err != nil {
			return
		}
	}
	w.pack = w.pack[:0]
	if rf.User != nil {
		w.pack = packBlocks(w.pack, []RoundBlock{*rf.User})
	}
	w.pack = packBlocks(w.pack, rf.Agent)
	if _, w.err = w.f.WriteAt(w.pack, w.end); w.err != nil {
		return
	}
	p.at, p.n = w.end, int64(len(w.pack))
	w.end += p.n
	if cap(w.pack) > 1<<20 {
		w.pack = nil // not held after a long text
	}
}

// open reports whether round n was written open.
func (w *Written) open(n int) bool {
	p := w.m[n]
	return p != nil && p.rf.Open
}

// Take returns the header of round n, if this update wrote it, and forgets
// it: the indexer's row takes its place. Its agent blocks have no Result.
func (w *Written) Take(n int) (*RoundFile, bool) {
	if w == nil || w.err != nil {
		return nil, false
	}
	p, ok := w.m[n]
	if !ok {
		return nil, false
	}
	delete(w.m, n)
	data := make([]byte, p.n)
	if _, err := w.f.ReadAt(data, p.at); err != nil {
		w.err = err
		return nil, false
	}
	rf := p.rf
	blocks := unpackBlocks(data)
	if p.hasUser {
		rf.User = &blocks[0]
		blocks = blocks[1:]
	}
	if len(blocks) > 0 {
		rf.Agent = blocks
	}
	return &rf, true
}

// close removes the file.
func (w *Written) close() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
		w.f = nil
	}
}

// packBlocks appends each block's Type, Text, Name, ID and Input to out,
// each as its length and bytes (Result, Path and MediaType are left out:
// an agent's blocks and a prompt have none the indexes use).
func packBlocks(out []byte, bs []RoundBlock) []byte {
	for _, b := range bs {
		for _, s := range []string{b.Type, b.Text, b.Name, b.ID} {
			out = binary.AppendUvarint(out, uint64(len(s)))
			out = append(out, s...)
		}
		out = binary.AppendUvarint(out, uint64(len(b.Input)))
		out = append(out, b.Input...)
	}
	return out
}

// unpackBlocks is the inverse of packBlocks. The inputs share data's bytes.
func unpackBlocks(data []byte) []RoundBlock {
	var out []RoundBlock
	field := func() []byte {
		n, k := binary.Uvarint(data)
		b := data[k : k+int(n) : k+int(n)]
		data = data[k+int(n):]
		return b
	}
	str := func() string {
		b := field()
		return string(b)
	}
	for len(data) > 0 {
		b := RoundBlock{Type: str(), Text: str(), Name: str(), ID: str()}
		if in := field(); len(in) > 0 {
			b.Input = json.RawMessage(in)
		}
		out = append(out, b)
	}
	return out
}
