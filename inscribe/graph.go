package inscribe

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session/source"
)

// graphFile is a document's identity graph, <folder>/graph.tsv: one line
// per source entry identity of the closed rounds, "uuid TAB anchor TAB
// parent", where anchor is the item that shows (or stands for) the entry and
// parent, on an item's own line, the item it continues. Lines are only ever
// appended; a torn last line is ignored; it is rebuilt from the round files
// if lost.

// fileGraph is a document's graph during an update: the nodes earlier
// updates recorded (the file's first size bytes) and those of the rounds
// this update closes, which the builder hands over as each round closes
// (Record) and which are appended to the file at once, so that neither the
// builder nor the update holds the nodes of the whole session. In memory it
// keeps only where each identity's line is (lineIndex); a lookup reads the
// line back. The lines it appends are durable once the batch commits; a
// stopped update leaves lines past the recorded size, which the next one
// cuts off.
type fileGraph struct {
	path  string
	size  int64 // bytes recorded by earlier updates
	batch *atomicfile.Batch

	loaded bool
	// earlier indexes the first size bytes, the first line of an
	// identity winning; run indexes this update's lines, the last one
	// winning (as the builder's own lookup did), behind earlier.
	earlier, run lineIndex
	// odd are this update's nodes that a line cannot hold (a tab or a
	// newline in a field): they are not written, as before, but still
	// found; at is the file's end when each was recorded.
	odd []oddNode

	f     *os.File      // open once a line is read or appended
	end   int64         // the file's end (size, then what this update appended)
	lines *osfile.Lines // f's, to read a line back
	wbuf  []byte        // the lines of a round, appended
	err   error         // the first error; Lookup then finds nothing new
	// created says open made the file, which close then removes; cut
	// that it cut off lines past size.
	created, cut bool
}

type oddNode struct {
	at int64
	n  source.Node
}

// lineIndex maps an identity to its line's offset in the graph file, or
// for an odd node to -(its index in odd)-1, in about 10 bytes an identity
// (a 315 MB session has 174,000 of them, a session of a million tiny lines
// a million): byHash keys a 32-bit hash of the identity (a hashTable),
// checked against the line it points to. An identity whose hash another
// already holds, or whose value does not fit in 32 bits, is kept by name
// in over.
type lineIndex struct {
	byHash hashTable
	over   map[string]int64
}

var graphSeed = maphash.MakeSeed()

var _ source.Recorder = (*fileGraph)(nil)

func newFileGraph(b *atomicfile.Batch, path string, size int64) *fileGraph {
	return &fileGraph{path: path, size: size, end: size, batch: b}
}

// ScratchGraph returns a graph that keeps the nodes a builder records
// (a source.Recorder) in a file of its own in a new folder under dir (""
// is the system's temporary folder), as an update keeps graph.tsv, and
// holds in memory only where each identity's line is: a builder of a whole
// session (an export reads every round again) holds about 10 bytes an
// identity, not its nodes (189 MB for a million lines). done removes the
// folder and returns the first error the graph met writing or reading
// its file (it then answers for fewer nodes than it was given); it may be
// called again.
func ScratchGraph(dir string) (g source.Recorder, done func() error, err error) {
	folder, err := os.MkdirTemp(dir, "scribe-graph-")
	if err != nil {
		return nil, nil, err
	}
	fg := &fileGraph{path: filepath.Join(folder, graphFile)}
	return fg, sync.OnceValue(func() error {
		fg.close()
		os.RemoveAll(folder)
		return fg.err
	}), nil
}

// graphInFile is how many rounds a session has past which a builder of
// the whole session (an export, check --store's graph check) keeps the
// closed rounds' nodes in a scratch file (BuilderGraph): a short
// session's nodes cost less than making the file.
var graphInFile = defaultGraphInFile

const defaultGraphInFile = 4096

// BuilderGraph returns what keeps the closed rounds' nodes for a builder
// of a whole session of n rounds: nil (the builder itself) for a short
// session, else a ScratchGraph. done (which may be called again) removes
// its file and returns its first error.
func BuilderGraph(n int) (g source.Recorder, done func() error, err error) {
	if n <= graphInFile {
		return nil, func() error { return nil }, nil
	}
	return ScratchGraph("")
}

// SetGraphInFileForTest makes a builder of more than n rounds keep its
// graph nodes in a file (0: every one), so that tests build through it;
// it returns what undoes it.
func SetGraphInFileForTest(n int) (restore func()) {
	old := graphInFile
	graphInFile = n
	return func() { graphInFile = old }
}

// open opens the file for reading and appending, cut at the recorded size.
func (g *fileGraph) open() error {
	if g.f != nil || g.err != nil {
		return g.err
	}
	_, err := os.Stat(g.path)
	g.created = errors.Is(err, os.ErrNotExist)
	f, err := os.OpenFile(g.path, os.O_RDWR|os.O_CREATE, FileMode)
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil && fi.Size() > g.size {
			err = f.Truncate(g.size)
			g.cut = true
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		g.err = err
		return err
	}
	g.f, g.lines = f, osfile.LinesOf(f)
	return nil
}

// graphLineMin is about the shortest line of a graph file (75 bytes where
// the identities are UUIDs and the parent is empty, 111 with a parent; 87
// on average over the corpus), for the count of lines its size gives;
// graphReserveMax bounds the room made for them at once (about 750 KB).
const (
	graphLineMin    = 80
	graphReserveMax = 1 << 16
)

// load indexes the lines of earlier updates, once.
func (g *fileGraph) load() {
	if g.loaded {
		return
	}
	g.loaded = true
	if g.size == 0 {
		return
	}
	f, err := os.Open(g.path)
	if err != nil {
		return
	}
	defer f.Close()
	g.earlier.byHash.Reserve(int(min(g.size/graphLineMin, graphReserveMax)))
	g.scanLines(f, 0, g.size, func(line []byte, at int64) {
		if f, ok := nodeFields(line); ok {
			g.earlier.add(g, f[0], at, false)
		}
	})
}

// scan calls fn for each whole line of the three fields in [from, to).
func (g *fileGraph) scan(f io.ReaderAt, from, to int64, fn func(n source.Node, at int64)) {
	g.scanLines(f, from, to, func(line []byte, at int64) {
		if n, ok := parseNode(line); ok {
			fn(n, at)
		}
	})
}

// scanLines calls fn for each whole line in [from, to), without its line
// end, lent for the call (source.LineReader's): an index of the lines
// (load) copies none of them.
func (g *fileGraph) scanLines(f io.ReaderAt, from, to int64, fn func(line []byte, at int64)) {
	lr := source.NewLineReader(io.NewSectionReader(f, from, to-from), 1, from)
	for {
		l, err := lr.Next()
		if err != nil || !l.Terminated {
			return // EOF, or a torn last line
		}
		fn(l.Raw, l.Offset)
	}
}

// nodeFields splits a line of the file (its line end, if there, aside)
// into its three fields.
func nodeFields(line []byte) (f [3][]byte, ok bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	for i := range 2 {
		var found bool
		if f[i], line, found = bytes.Cut(line, []byte("\t")); !found {
			return f, false
		}
	}
	f[2] = line
	return f, bytes.IndexByte(line, '\t') < 0
}

func parseNode(line []byte) (source.Node, bool) {
	f, ok := nodeFields(line)
	if !ok {
		return source.Node{}, false
	}
	return source.Node{UUID: string(f[0]), Anchor: string(f[1]), Parent: string(f[2])}, true
}

// nodeAt reads back the node at v (lineIndex's value).
func (g *fileGraph) nodeAt(v int64) (source.Node, bool) {
	if v < 0 {
		return g.odd[-v-1].n, true
	}
	if g.open() != nil {
		return source.Node{}, false
	}
	line, err := g.lines.Line(v)
	if err != nil || len(line) == 0 {
		return source.Node{}, false
	}
	return parseNode(line)
}

func (x *lineIndex) add(g *fileGraph, uuid []byte, v int64, replace bool) {
	if _, ok := x.over[string(uuid)]; ok {
		if replace {
			x.over[string(uuid)] = v
		}
		return
	}
	h := graphHash(uuid)
	fits := v >= 0 && v <= math.MaxUint32 // and Put takes it
	old, ok := x.byHash.Get(h)
	switch {
	case !ok && fits && x.byHash.Put(h, uint32(v)):
		return
	case ok:
		if n, _ := g.nodeAt(int64(old)); n.UUID == string(uuid) {
			if !replace {
				return
			}
			if fits && x.byHash.Put(h, uint32(v)) {
				return
			}
			x.byHash.Delete(h)
		}
	}
	if x.over == nil {
		x.over = make(map[string]int64)
	}
	x.over[string(uuid)] = v
}

func (x *lineIndex) find(g *fileGraph, uuid string) (source.Node, bool) {
	if v, ok := x.over[uuid]; ok {
		return g.nodeAt(v)
	}
	v, ok := x.byHash.Get(graphHash([]byte(uuid)))
	if !ok {
		return source.Node{}, false
	}
	if n, ok := g.nodeAt(int64(v)); ok && n.UUID == uuid {
		return n, true
	}
	return source.Node{}, false
}

// graphHash is the hash lineIndex keys; tests make it collide.
var graphHash = func(uuid []byte) uint32 { return uint32(maphash.Bytes(graphSeed, uuid)) }

// Lookup finds a node of an earlier update, else the last one of this
// update with that identity.
func (g *fileGraph) Lookup(uuid string) (source.Node, bool) {
	g.load()
	if n, ok := g.earlier.find(g, uuid); ok {
		return n, true
	}
	return g.run.find(g, uuid)
}

// Record appends the nodes of a round the builder closed
// (source.Recorder).
func (g *fileGraph) Record(nodes []source.Node) {
	if len(nodes) == 0 || g.err != nil {
		return
	}
	buf := g.wbuf[:0]
	at := make([]int64, 0, len(nodes))
	for _, n := range nodes {
		if strings.ContainsAny(n.UUID+n.Anchor+n.Parent, "\t\n") {
			g.odd = append(g.odd, oddNode{at: g.end + int64(len(buf)), n: n})
			at = append(at, int64(-len(g.odd)))
			continue
		}
		at = append(at, g.end+int64(len(buf)))
		buf = append(buf, n.UUID...)
		buf = append(buf, '\t')
		buf = append(buf, n.Anchor...)
		buf = append(buf, '\t')
		buf = append(buf, n.Parent...)
		buf = append(buf, '\n')
	}
	g.wbuf = buf
	if len(buf) > 0 {
		if g.open() != nil {
			return
		}
		if _, err := g.f.WriteAt(buf, g.end); err != nil {
			g.err = err
			return
		}
		g.end += int64(len(buf))
	}
	for i, n := range nodes {
		g.run.add(g, []byte(n.UUID), at[i], true)
	}
}

// Items returns the item nodes, in document order, each identity once
// (its first item, as a builder of the whole session lists them: a node
// of an identity that is no item does not hide a later item of it): those
// of earlier updates, then this update's.
func (g *fileGraph) Items() []source.Node {
	var items []source.Node
	seen := make(map[string]bool)
	f, err := os.Open(g.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if f != nil {
		defer f.Close()
		g.scan(f, 0, g.size, func(n source.Node, _ int64) {
			if n.IsItem() && !seen[n.UUID] {
				seen[n.UUID] = true
				items = append(items, n)
			}
		})
	}
	done := make(map[string]bool)
	for _, it := range items {
		done[it.UUID] = true
	}
	odd := g.odd
	add := func(n source.Node) {
		if n.IsItem() && !done[n.UUID] {
			done[n.UUID] = true
			items = append(items, n)
		}
	}
	if f != nil && g.end > g.size {
		g.scan(f, g.size, g.end, func(n source.Node, at int64) {
			for len(odd) > 0 && odd[0].at <= at {
				add(odd[0].n)
				odd = odd[1:]
			}
			add(n)
		})
	}
	for _, o := range odd {
		add(o.n)
	}
	return items
}

// close ends an update that did not finish: the lines it appended are cut
// off (a stopped process leaves them, and the next update cuts them).
func (g *fileGraph) close() {
	if g.f != nil {
		if g.end > g.size {
			g.f.Truncate(g.size)
		}
		g.f.Close()
		g.f, g.lines = nil, nil
		if g.created {
			os.Remove(g.path)
		}
	}
}

// finish closes the file and returns its new size, what the read note
// records. With nothing appended the file is cut at the recorded size, as
// appendGraph does.
func (g *fileGraph) finish() (int64, error) {
	if g.f == nil {
		if g.err != nil {
			return 0, g.err
		}
		return appendGraph(g.batch, g.path, g.size, nil)
	}
	err := g.f.Close()
	g.f, g.lines = nil, nil
	if g.err != nil {
		return 0, g.err
	}
	if err != nil {
		return 0, err
	}
	if g.cut || g.end > g.size {
		g.batch.SyncFirst(g.path)
	}
	return g.end, nil
}
