package lifecycle_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// toy is a format of the tests: a line "KIND ID TIME TOKENS TEXT", KIND
// "p" for a prompt, "r" for a reply, "u" for a message written again by
// id (it replaces the message, as Gemini CLI's upserts do), "t" for a
// rewind to ID (the next item continues it, and it is the leaf, as Gemini
// CLI's $rewindTo), "n" for a node of identity ID that is no item (a line
// folded into the item above). An item continues the one above it, unless
// ID is "ID<PARENT" (PARENT empty: a root). A line of
// other words is a record the toy does not know; a blank line or one
// starting with "!" is no record.
type toy struct{}

type toyEntry struct {
	e                      session.Entry
	kind, id, time, text   string
	tokens                 int64
	record, known, isValid bool
}

type toyState struct {
	Last  string `json:"last,omitempty"`
	First string `json:"first,omitempty"`
}

func (toy) Decode(c *lifecycle.Context, e session.Entry) toyEntry {
	d := toyEntry{e: e}
	if source.IsBlank(e.Raw) {
		return d
	}
	var err error
	if e.Raw[0] == '!' {
		err = errors.New("a line of noise")
	}
	if !c.Decoded(e, err) {
		return d
	}
	d.record = true
	f := strings.SplitN(string(e.Raw), " ", 5)
	if len(f) < 5 || !strings.Contains("prutn", f[0]) || len(f[0]) != 1 {
		c.Warnf(e.Line, "a record the toy does not know")
		return d
	}
	d.known = true
	d.kind, d.id, d.time, d.text = f[0], f[1], f[2], f[4]
	d.tokens, _ = strconv.ParseInt(f[3], 10, 64)
	return d
}

func (toy) Classify(c *lifecycle.Context, d toyEntry) lifecycle.Class {
	return lifecycle.Class{Record: d.record, Prompt: d.kind == "p", Time: d.time}
}

func (toy) Open(c *lifecycle.Context, st toyState) lifecycle.Itemizer[toyEntry, toyState] {
	return &toyRound{c: c, st: st, at: map[string]int{}}
}

func (toy) Finish(c *lifecycle.Context, st toyState, open []source.Node) source.Finished {
	return source.Finished{Meta: session.Meta{Leaf: lifecycle.Opt(st.Last), Branches: c.Branches(open, st.Last)}, FirstPrompt: st.First}
}

type toyRound struct {
	c      *lifecycle.Context
	st     toyState
	items  []session.Item
	at     map[string]int // message id -> item
	nodes  []source.Node
	tokens lifecycle.Tokens
}

func (r *toyRound) Add(d toyEntry) {
	if !d.known {
		r.items = append(r.items, session.Item{Role: "raw", IDs: []string{fmt.Sprintf("line-%d", d.e.Line)},
			Blocks: []session.Block{{Kind: session.KindRaw, Text: lifecycle.ValidText(d.e.Raw)}}})
		return
	}
	switch d.kind {
	case "t":
		r.st.Last = d.id
		return
	case "n":
		r.nodes = append(r.nodes, source.Node{UUID: d.id, Anchor: r.st.Last})
		return
	}
	parent := r.st.Last
	if id, p, ok := strings.Cut(d.id, "<"); ok {
		d.id, parent = id, p
	}
	r.tokens.Set(d.id, d.tokens)
	item := session.Item{Time: d.time, Role: "user", IDs: []string{d.id}, Blocks: []session.Block{{Kind: session.KindText, Text: d.text}}}
	if d.kind != "p" {
		item.Role = "assistant"
	}
	if i, ok := r.at[d.id]; ok && d.kind == "u" {
		r.items[i] = item // the message written again replaces its item
		return
	}
	if d.kind == "u" {
		if _, ok := r.c.Lookup(d.id); ok {
			item.Note = "revised" // a message of a closed round, written again
		}
	}
	if d.kind == "p" && r.st.First == "" {
		r.st.First = lifecycle.FirstLine(d.text)
	}
	r.at[d.id] = len(r.items)
	r.items = append(r.items, item)
	r.nodes = append(r.nodes, source.Node{UUID: d.id, Anchor: d.id, Parent: parent})
	r.st.Last = d.id
}

func (r *toyRound) Close() lifecycle.Itemized[toyState] {
	return lifecycle.Itemized[toyState]{Items: r.items, State: r.st, Nodes: r.nodes, Tokens: r.tokens.Total()}
}

// recorder is a source.Recorder in memory. Like the store's graph, it
// lists an identity's first item.
type recorder struct {
	byID   map[string]source.Node
	items  []source.Node
	listed map[string]bool
}

func newRecorder() *recorder {
	return &recorder{byID: map[string]source.Node{}, listed: map[string]bool{}}
}
func (g *recorder) Lookup(u string) (source.Node, bool) { n, ok := g.byID[u]; return n, ok }
func (g *recorder) Items() []source.Node                { return g.items }
func (g *recorder) Record(nodes []source.Node) {
	for _, n := range nodes {
		if n.IsItem() && !g.listed[n.UUID] {
			g.listed[n.UUID] = true
			g.items = append(g.items, n)
		}
		g.byID[n.UUID] = n
	}
}

// run feeds lines (numbered from first) to b, returns the rounds closed,
// and then, after Finish, the open round (nil when none) and what Finish
// said.
func run(b source.Builder, first int, offset int64, input string) (closed []*session.Round, fin source.Finished) {
	lr := source.NewLineReader(strings.NewReader(input), first, offset)
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		if r := b.Add(l); r != nil {
			closed = append(closed, r)
		}
	}
	return closed, b.Finish()
}

func newToy(t *testing.T, cfg source.Config, state json.RawMessage, g source.Graph) *lifecycle.Builder[toyEntry, toyState] {
	t.Helper()
	b, err := lifecycle.New[toyEntry, toyState](toy{}, cfg, state, g)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const session1 = `r meta 2026-01-01T00:00:00Z 0 context before the first prompt
p a 2026-01-01T00:00:01Z 0 first prompt
r b 2026-01-01T00:00:02Z 5 a reply

!noise
u b 2026-01-01T00:00:03Z 7 the reply, whole
p c 2026-01-01T00:00:04Z 0 second prompt
r d 2026-01-01T00:00:05Z 3 another reply
p e 2026-01-01T00:00:06Z 0 third prompt
u b 2026-01-01T00:00:07Z 9 the first reply, revised later
`

// TestLifecycle: rounds open at prompts (what comes before the first
// prompt joins the first round), close at the next prompt, and the last
// stays open; every line is kept in its round, the blank and the noise
// marked Invalid and never itemized; a message written again replaces its
// item in the open round.
func TestLifecycle(t *testing.T) {
	b := newToy(t, source.Config{File: "s.toy"}, nil, nil)
	closed, fin := run(b, 1, 0, session1)
	if len(closed) != 2 || fin.Open == nil || !fin.Open.Open {
		t.Fatalf("%d rounds closed, open %v", len(closed), fin.Open)
	}
	r1, r2, r3 := closed[0], closed[1], fin.Open
	if r1.N != 1 || r2.N != 2 || r3.N != 3 || r1.Open || r2.Open {
		t.Errorf("rounds %d %d %d, open %v %v", r1.N, r2.N, r3.N, r1.Open, r2.Open)
	}
	var lines []int
	for _, r := range []*session.Round{r1, r2, r3} {
		for _, e := range r.Entries {
			lines = append(lines, e.Line)
			if want := e.Line == 4 || e.Line == 5; e.Invalid != want {
				t.Errorf("line %d: Invalid %v", e.Line, e.Invalid)
			}
			if e.Len != len(e.Raw) || e.Raw == nil && e.Line != 4 {
				t.Errorf("line %d: Raw %q, Len %d", e.Line, e.Raw, e.Len)
			}
		}
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
	if got := string(r1.Entries[1].Raw); got != "p a 2026-01-01T00:00:01Z 0 first prompt" {
		t.Errorf("line 2 kept as %q: a copy of the line, not the reader's buffer", got)
	}
	if got := itemIDs(r1); got != "meta a b" || r1.Items[2].Blocks[0].Text != "the reply, whole" {
		t.Errorf("round 1: items %s, reply %q", got, r1.Items[2].Blocks[0].Text)
	}
	if r1.Items[0].Round != 1 || r1.Started != "2026-01-01T00:00:00Z" || r1.TokenCount != 7 {
		t.Errorf("round 1: Round %d, Started %s, tokens %d", r1.Items[0].Round, r1.Started, r1.TokenCount)
	}
	if got := itemIDs(r3); got != "e b" || r3.Items[1].Note != "revised" || r3.TokenCount != 9 {
		t.Errorf("round 3: items %s, note %q, tokens %d", got, r3.Items[1].Note, r3.TokenCount)
	}
	if fin.Meta.Messages != 7 || session.Str(fin.Meta.Leaf) != "b" || fin.FirstPrompt != "first prompt" {
		t.Errorf("finished: %d messages, leaf %s, first prompt %q", fin.Meta.Messages, session.Str(fin.Meta.Leaf), fin.FirstPrompt)
	}
	if b.Rounds() != 2 || len(b.Nodes()) != 5 {
		t.Errorf("%d rounds, %d nodes", b.Rounds(), len(b.Nodes()))
	}
	var msgs []string
	for _, w := range b.Warnings() {
		msgs = append(msgs, w.Error())
	}
	if want := []string{"s.toy:5: not a JSON object (a line of noise): kept in the backing store, not shown"}; !reflect.DeepEqual(msgs, want) {
		t.Errorf("warnings %q, want %q", msgs, want)
	}
}

func itemIDs(r *session.Round) string {
	var ids []string
	for _, it := range r.Items {
		ids = append(ids, it.IDs[0])
	}
	return strings.Join(ids, " ")
}

// TestState: the persisted state is the lifecycle's fields, then the
// format's, in one object; a later run continues from it and the graph
// exactly where one run would be.
func TestState(t *testing.T) {
	g := newRecorder()
	b := newToy(t, source.Config{File: "s.toy", RawInSource: true}, nil, g)
	lines := strings.SplitAfter(session1, "\n")
	head := strings.Join(lines[:7], "") // through the second prompt: round 1 closes
	closed, _ := run(b, 1, 0, head)
	if len(closed) != 1 || len(b.Nodes()) != 0 || len(g.byID) != 3 {
		t.Fatalf("%d rounds closed, %d nodes kept, %d recorded", len(closed), len(b.Nodes()), len(g.byID))
	}
	for _, e := range closed[0].Entries {
		if e.Raw != nil || e.Len == 0 && e.Line != 4 {
			t.Errorf("line %d: Raw %q, Offset %d, Len %d: the line's bytes stay in the source", e.Line, e.Raw, e.Offset, e.Len)
		}
	}
	st, err := b.State()
	if want := `{"round":1,"next_line":7,"items":3,"forks":{"tip":"b"},"last":"b","first":"first prompt"}`; err != nil || string(st) != want {
		t.Fatalf("state %s, %v; want %s", st, err, want)
	}
	// A later run reads from the open round's first line on.
	var offset int64
	for _, l := range lines[:6] {
		offset += int64(len(l))
	}
	b2 := newToy(t, source.Config{File: "s.toy"}, st, g)
	closed2, fin2 := run(b2, 7, offset, strings.Join(lines[6:], ""))

	// (An update builds over the store's graph, a recorder, as the first
	// run did: a builder of no graph keeps no fork points.)
	one := newToy(t, source.Config{File: "s.toy"}, nil, newRecorder())
	closedOne, finOne := run(one, 1, 0, session1)
	if !reflect.DeepEqual(closed2, closedOne[1:]) || !reflect.DeepEqual(fin2, finOne) {
		t.Errorf("two runs and one differ:\n%+v %+v\n%+v %+v", closed2, fin2, closedOne[1:], finOne)
	}
	st2, _ := b2.State()
	stOne, _ := one.State()
	if !bytes.Equal(st2, stOne) {
		t.Errorf("state after two runs %s, after one %s", st2, stOne)
	}

	// A new builder's state, and one whose format keeps nothing.
	if st, _ := newToy(t, source.Config{}, nil, nil).State(); string(st) != `{"round":0,"next_line":1,"items":0}` {
		t.Errorf("a new builder's state: %s", st)
	}
	if _, err := lifecycle.New[toyEntry, toyState](toy{}, source.Config{File: "s.toy"}, json.RawMessage(`{"round":"x"`), nil); err == nil || !strings.HasPrefix(err.Error(), "s.toy: the saved builder state is unreadable") {
		t.Errorf("an unreadable state: %v", err)
	}
}

// TestFlush: Flush closes the open round as a prompt would; AddEntry
// takes entries kept by an earlier run.
func TestFlush(t *testing.T) {
	b := newToy(t, source.Config{File: "s.toy"}, nil, nil)
	if b.Flush() != nil {
		t.Error("Flush of no round returned one")
	}
	b.AddEntry(session.Entry{Line: 1, Raw: []byte("p a 2026-01-01T00:00:01Z 0 hi")})
	b.AddEntry(session.Entry{Line: 2, Raw: []byte("what is this")})
	r := b.Flush()
	if r == nil || r.Open || len(r.Entries) != 2 || len(r.Items) != 2 || r.Items[1].Role != "raw" {
		t.Fatalf("flushed %+v", r)
	}
	if fin := b.Finish(); fin.Open != nil || fin.Meta.Messages != 2 {
		t.Errorf("after the flush: open %v, %d messages", fin.Open, fin.Meta.Messages)
	}
	if w := b.Warnings(); len(w) != 1 || w[0].Error() != "s.toy:2: a record the toy does not know" {
		t.Errorf("warnings %v", w)
	}
}

// TestBranches: the fork points of the items recorded by earlier runs,
// closed by this one and open, with the child that leads to the leaf.
func TestBranches(t *testing.T) {
	g := newRecorder()
	g.Record([]source.Node{{UUID: "a", Anchor: "a"}, {UUID: "a2", Anchor: "a"}, {UUID: "b", Anchor: "b", Parent: "a"}, {UUID: "c", Anchor: "c", Parent: "a"}})
	b := newToy(t, source.Config{}, json.RawMessage(`{"round":1,"next_line":5,"items":3,"last":"b"}`), g)
	b.AddEntry(session.Entry{Line: 5, Raw: []byte("p d 2026-01-01T00:00:01Z 0 hi")}) // d continues b
	b.Flush()
	b.AddEntry(session.Entry{Line: 6, Raw: []byte("p e 2026-01-01T00:00:02Z 0 hi")})
	want := []session.Branch{{At: "a", Children: []string{"b", "c"}, Live: "b"}}
	if got := b.Finish().Meta.Branches; !reflect.DeepEqual(got, want) {
		t.Errorf("branches %+v, want %+v", got, want)
	}
	var c lifecycle.Context
	if got := c.ItemNodes([]source.Node{{UUID: "x", Anchor: "x"}, {UUID: "y", Anchor: "x"}}); len(got) != 1 || got[0].UUID != "x" {
		t.Errorf("the item nodes of an open round alone: %+v", got)
	}
}

// TestTokens: Once counts a message's first report, Set its last.
func TestTokens(t *testing.T) {
	var once, set lifecycle.Tokens
	for _, r := range []struct {
		id string
		n  int64
	}{{"a", 5}, {"", 1}, {"a", 7}, {"b", 2}, {"", 1}} {
		once.Once(r.id, r.n)
		set.Set(r.id, r.n)
	}
	if once.Total() != 9 || set.Total() != 11 {
		t.Errorf("Once %d (want 9), Set %d (want 11)", once.Total(), set.Total())
	}
}

// countingGraph is a recorder that counts the reads of its items.
type countingGraph struct {
	*recorder
	reads int
}

func (g *countingGraph) Items() []source.Node { g.reads++; return g.recorder.Items() }

// TestBranchesByRuns: a session built in runs, each resuming the state and
// the graph of the one before, has at the end of each run the branches of
// the same lines built whole, over random graphs: forks, roots, parents
// not (or not yet) in the transcript, identities written again. Runs that
// only continue the last branch answer from the state, without reading
// the graph.
func TestBranchesByRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 48))
	finishes, reads := 0, 0
	for iter := range 600 {
		lines := toyGraphLines(rng, 4+rng.IntN(40))
		g := &countingGraph{recorder: newRecorder()}
		var state json.RawMessage
		next, cut := 1, 0
		for cut < len(lines) {
			cut = min(len(lines), cut+1+rng.IntN(6))
			b := newToy(t, source.Config{}, state, g)
			_, fin := run(b, next, 0, strings.Join(lines[next-1:cut], ""))
			finishes++
			whole := newToy(t, source.Config{}, nil, nil)
			_, want := run(whole, 1, 0, strings.Join(lines[:cut], ""))
			if !reflect.DeepEqual(fin.Meta.Branches, want.Meta.Branches) {
				t.Fatalf("case %d, lines 1-%d (this run from %d):\n%s\nbranches %+v\nwhole    %+v",
					iter, cut, next, strings.Join(lines[:cut], ""), fin.Meta.Branches, want.Meta.Branches)
			}
			var err error
			if state, err = b.State(); err != nil {
				t.Fatal(err)
			}
			var pos struct {
				NextLine int `json:"next_line"`
			}
			if err := json.Unmarshal(state, &pos); err != nil {
				t.Fatal(err)
			}
			next = pos.NextLine
		}
		reads += g.reads
	}
	if reads > finishes/2 {
		t.Errorf("%d runs read the graph %d times: the state answered too few", finishes, reads)
	}
}

// toyGraphLines is a toy session of n lines over a few identities: most
// items continue the one above, some name another parent (one that may
// come later, or never), start a new root, write an identity again or
// none, rewind to an item (or to none), or are a node that is no item.
func toyGraphLines(rng *rand.Rand, n int) []string {
	id := func(i int) string { return "n" + strconv.Itoa(i) }
	var lines []string
	for i := range n {
		kind, me := "r", id(i)
		if i == 0 || rng.IntN(3) == 0 {
			kind = "p"
		}
		switch k := rng.IntN(80); {
		case k == 0:
			me = id(rng.IntN(i + 3)) // again, or ahead
		case k == 1:
			kind, me = "u", id(rng.IntN(i+1))
		case k == 2:
			me += "<" // a root
		case k < 5:
			me += "<" + id(rng.IntN(i+3))
		case k == 5:
			me = "" // no identity
		case k == 6:
			kind, me = "t", id(rng.IntN(i+2)) // a rewind
		case k == 7:
			kind, me = "n", id(rng.IntN(i+3)) // a node that is no item
		}
		lines = append(lines, fmt.Sprintf("%s %s 2026-01-01T00:00:%02dZ 0 line %d\n", kind, me, i%60, i))
	}
	return lines
}
