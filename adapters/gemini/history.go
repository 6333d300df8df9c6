package gemini

import (
	"strconv"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// State is where a session stood at the end of its last closed round: the
// client's history as it would load it then, which item shows each of its
// messages, and what the document's head says. It is persisted between
// runs.
type State struct {
	// Tip is the item the next message continues: the item that shows
	// the last message of the history ("" when the history is empty).
	Tip string `json:"tip,omitempty"`
	// Last is the last item, in document order.
	Last string `json:"last,omitempty"`
	// Live is the client's history, in its order.
	Live []Live `json:"live,omitempty"`
	// Context is the version of the session context the document last
	// showed.
	Context string `json:"context,omitempty"`
	// Forked is set once an item did not continue the item above it.
	Forked bool `json:"forked,omitempty"`

	SessionID   string `json:"session_id,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Started     string `json:"started,omitempty"`
	Ended       string `json:"ended,omitempty"`
	Model       string `json:"model,omitempty"`
	Title       string `json:"title,omitempty"`
	Project     string `json:"project,omitempty"`
	FirstPrompt string `json:"first_prompt,omitempty"`
}

// Live is a message of the client's history.
type Live struct {
	ID string `json:"id"`
	// Item is the item that shows it ("" when it is ID, "-" when no item
	// does: a note, folded into another).
	Item string `json:"item,omitempty"`
	// Hash and Resp name the version the document shows (see versions).
	Hash string `json:"h,omitempty"`
	Resp string `json:"r,omitempty"`
}

// item is the item that shows l, "" for none.
func (l Live) item() string {
	switch l.Item {
	case "":
		return l.ID
	case "-":
		return ""
	}
	return l.Item
}

func liveOf(m *message, item string) Live {
	l := Live{ID: m.ID, Item: item, Hash: m.hash, Resp: m.resp}
	switch item {
	case m.ID:
		l.Item = ""
	case "":
		l.Item = "-"
	}
	return l
}

// The history replayed, message by message, as the client loads a file:
//
//   - a message whose id the history holds replaces it where it is: while
//     its item is in the open round the item is rebuilt (every gemini
//     message that calls tools is written twice, the second time with its
//     calls and their results); once the round is closed, a new version
//     is a new item beside the old one (a revision: the old one stays, off
//     the live branch);
//   - a new message is appended: an item continuing the item of the
//     history's last message (the tip);
//   - $rewindTo drops a message and all after it: the tip goes back, and
//     the next message starts a branch beside the dropped ones;
//   - a $set of messages replaces the history: each message of it that
//     the document shows in the same version, continuing the one before
//     it, is that item again; any other is a new item. So a resume, which
//     writes the history again, adds nothing, and a compression or a
//     rollback starts a branch beside what it replaced, which the document
//     keeps.
//
// The session context the client injects first is an item of its own, the
// root of the others; when the client injects another (every start and
// resume), the document shows it where it came if it differs.

// round itemizes one round (the lifecycle's Itemizer).
type round struct {
	c     *lifecycle.Context
	st    State
	items []session.Item
	// at indexes the round's items by id, parent their parents and own
	// how many of an item's first blocks its own message made (the rest
	// were folded into it).
	at     map[string]int
	parent map[string]string
	own    map[string]int
	// live indexes st.Live by message id.
	live map[string]int
	// calls are the round's tool calls by id.
	calls map[string]callRef
	// vers are the versions of messages the round's items show, as
	// graph nodes (see version), and verAt indexes them.
	vers    []source.Node
	verAt   map[string]int
	pending []session.Block
	// first is the line of the round's first record.
	first  int
	nodes  []source.Node
	tokens lifecycle.Tokens
}

// callRef is where a tool call's block is, and the version of its result.
type callRef struct {
	item, block int
	result      string
}

func newRound(c *lifecycle.Context, st State) *round {
	st.Live = append([]Live(nil), st.Live...) // the closed round's state stays as it was
	r := &round{c: c, st: st, at: map[string]int{}, parent: map[string]string{}, own: map[string]int{},
		calls: map[string]callRef{}, verAt: map[string]int{}}
	r.reindex()
	return r
}

func (r *round) reindex() {
	r.live = make(map[string]int, len(r.st.Live))
	for i, l := range r.st.Live {
		r.live[l.ID] = i
	}
}

// Add itemizes one record.
func (r *round) Add(d entry) {
	if r.first == 0 {
		r.first = d.line
	}
	switch d.kind {
	case messageRecord:
		r.message(d.msg)
	case setRecord:
		r.meta(d.line, d.set.SessionID, d.set.Summary, d.set.Kind, d.set.Directories)
		if d.hasHistory {
			r.replace(d.history)
		}
	case metaRecord:
		m := d.meta
		r.meta(d.line, &m.SessionID, m.Summary, &m.Kind, m.Directories)
		if d.hasHistory {
			r.replace(d.history)
		}
	case rewindRecord:
		r.rewind(d.line, d.rewind)
	case unknownRecord:
		r.fold(session.Block{Kind: session.KindRaw, Label: "record", Text: d.raw, Origin: &session.Origin{Line: d.line}})
	}
}

// meta folds what a metadata line or a $set says of the session.
func (r *round) meta(line int, sessionID, summary, kind *string, dirs []string) {
	st := &r.st
	if sessionID != nil && *sessionID != "" && st.SessionID == "" {
		st.SessionID = *sessionID
	}
	if kind != nil && *kind != "" {
		st.Kind = *kind
	}
	if summary != nil && st.Kind != "subagent" {
		st.Title = *summary
	}
	if len(dirs) > 0 && st.Project == "" {
		st.Project = dirs[0]
	}
}

// message replays a message line.
func (r *round) message(m *message) {
	if t := m.tokens(); t > 0 {
		r.tokens.Set(m.ID, t)
	}
	if m.Model != "" && r.st.Model == "" {
		r.st.Model = m.Model
	}
	i, ok := r.live[m.ID]
	if !ok {
		l := r.show(m, r.st.Tip)
		r.advance(m, l)
		r.append(l)
		return
	}
	old := r.st.Live[i]
	if m.class == noteClass || m.class == contextClass {
		if old.Hash != m.hash {
			r.show(m, r.st.Tip)
		}
		r.st.Live[i].Hash = m.hash
		return
	}
	item := old.item()
	if at, here := r.at[item]; here && item != "" && ownedBy(item, m.ID) {
		// Written again while its round is open: the item shows the
		// new version.
		r.rebuild(at, m)
		r.st.Live[i] = liveOf(m, item)
		return
	}
	if old.Hash == m.hash && old.Resp == m.resp {
		return // the same version again
	}
	if item, ok := r.shows(m); ok {
		r.st.Live[i] = liveOf(m, item)
		return // a version an item shows
	}
	// A new version of a message of a closed round: an item beside the
	// old one, continuing what the old one continued when it was the
	// last message.
	parent := r.st.Tip
	if last := r.lastShown(); last == i {
		parent = r.before(i)
	}
	l := r.show(m, parent)
	r.st.Live[i] = l
	r.advance(m, l)
}

// advance makes the item that shows a new message the tip, unless the
// message is not in the chain of items (a note, function responses joined
// to their calls).
func (r *round) advance(m *message, l Live) {
	if it := l.item(); it != "" && m.class != responseClass && m.class != noteClass {
		r.st.Tip = it
	}
}

// ownedBy reports whether item is one a message of id made (its first
// version's, or a revision's).
func ownedBy(item, id string) bool {
	return item == id || len(item) > len(id) && item[:len(id)] == id && item[len(id)] == '@'
}

// lastShown is the index in the history of its last message shown by an
// item of its own, or -1.
func (r *round) lastShown() int {
	for i := len(r.st.Live) - 1; i >= 0; i-- {
		if r.st.Live[i].item() != "" {
			return i
		}
	}
	return -1
}

// before is the item of the last message before the i-th of the history
// that an item shows, "" for none.
func (r *round) before(i int) string {
	for j := i - 1; j >= 0; j-- {
		if it := r.st.Live[j].item(); it != "" {
			return it
		}
	}
	return ""
}

func (r *round) append(l Live) {
	r.live[l.ID] = len(r.st.Live)
	r.st.Live = append(r.st.Live, l)
}

// rewind replays a $rewindTo: the message and all after it leave the
// history. An id the history does not hold makes the client drop it all.
func (r *round) rewind(line int, id string) {
	i, ok := r.live[id]
	if !ok {
		r.c.Warnf(line, "$rewindTo names message %s, which is not in the history: the client drops the whole history (the document keeps it)", id)
		i = 0
	}
	r.st.Live = r.st.Live[:i]
	r.st.Tip = ""
	if j := r.lastShown(); j >= 0 {
		r.st.Tip = r.st.Live[j].item()
	}
	r.reindex()
}

// replace replays a $set of the history.
func (r *round) replace(msgs []*message) {
	before := r.st.Tip // the last item of the history replaced
	r.st.Live = make([]Live, 0, len(msgs))
	r.live = make(map[string]int, len(msgs))
	tip := ""
	first := true // no message of the conversation yet (the context aside)
	for _, m := range msgs {
		if i, dup := r.live[m.ID]; dup {
			// The client's map keeps the first place of an id and the
			// last version.
			r.st.Live[i] = Live{ID: m.ID, Item: "-", Hash: m.hash, Resp: m.resp}
			continue
		}
		switch m.class {
		case noteClass:
			if !r.noted(m) {
				r.show(m.full(r.c), tip)
			}
			r.append(Live{ID: m.ID, Item: "-", Hash: m.hash})
			continue
		case contextClass:
			// The context the history starts with is the root the
			// conversation continues; it binds no message to it.
			l := r.context(m.full(r.c))
			if it := l.item(); it != "" && first {
				tip = it
			}
			r.append(l)
			continue
		}
		if item, ok := r.shows(m); ok && (first || item == tip || r.parentOf(item) == tip) {
			// The version an item shows, where it continues the one
			// before: the same item.
			tip = item
			first = false
			r.append(liveOf(m, item))
			continue
		}
		full, parent := m.full(r.c), tip
		if first && before != "" && (full.class == promptClass || full.class == snapshotClass) {
			// A history set anew whose first message is a person's the
			// document does not show: a compression, that message its
			// summary, which continues the history it replaced (the
			// document keeps it on the live branch, as a compaction of
			// Claude Code's).
			full.class, parent = snapshotClass, before
		}
		first = false
		l := r.show(full, parent)
		if it := l.item(); it != "" && m.class != responseClass {
			tip = it
		}
		r.append(l)
	}
	r.st.Tip = tip
}

// noted reports whether a note of the same id and text was shown.
func (r *round) noted(m *message) bool {
	_, ok := r.version(m.ID, m.hash)
	return ok
}

// shows returns the item that shows message m in its version (and its
// function responses in theirs), if one does.
func (r *round) shows(m *message) (string, bool) {
	item, ok := r.version(m.ID, m.hash)
	if ok && m.resp != "" {
		resp, has := r.version(m.ID+"_response", m.resp)
		ok = has && resp == item
	}
	return item, ok
}

// version returns the item that shows a version of a message (a hash of
// versions): recorded in the graph as a node of its own, "<id>#<hash>",
// anchored at the item.
func (r *round) version(id, hash string) (string, bool) {
	key := id + "#" + hash
	if i, ok := r.verAt[key]; ok {
		return r.vers[i].Anchor, true
	}
	n, ok := r.c.Lookup(key)
	return n.Anchor, ok
}

// shown records that item shows message m in its version. An item an
// upsert rebuilt shows only its last version.
func (r *round) shown(m *message, item string) {
	if item == "" {
		return
	}
	add := func(key string) {
		if _, ok := r.verAt[key]; ok {
			return
		}
		if _, ok := r.c.Lookup(key); ok {
			return
		}
		r.verAt[key] = len(r.vers)
		r.vers = append(r.vers, source.Node{UUID: key, Anchor: item})
	}
	add(m.ID + "#" + m.hash)
	if m.resp != "" {
		add(m.ID + "_response#" + m.resp)
	}
}

// unshow forgets the versions of item recorded in this round.
func (r *round) unshow(item string) {
	for key, i := range r.verAt {
		if r.vers[i].Anchor == item {
			r.vers[i].UUID = ""
			delete(r.verAt, key)
		}
	}
}

// parentOf is the item an item continues.
func (r *round) parentOf(item string) string {
	if p, ok := r.parent[item]; ok {
		return p
	}
	n, _ := r.c.Lookup(item)
	return n.Parent
}

// exists reports whether an item of that id is in the document.
func (r *round) exists(id string) bool {
	if _, ok := r.at[id]; ok {
		return true
	}
	_, ok := r.c.Lookup(id)
	return ok
}

// itemID is the id of a new item showing message m: the message's id, or,
// when an item already has it (a new version of the message), the id and
// the line it came from.
func (r *round) itemID(m *message) string {
	if !r.exists(m.ID) {
		return m.ID
	}
	id := m.ID + "@" + strconv.Itoa(m.line)
	for n := 2; r.exists(id); n++ {
		id = m.ID + "@" + strconv.Itoa(m.line) + "." + strconv.Itoa(n)
	}
	return id
}

// Close ends the round.
func (r *round) Close() lifecycle.Itemized[State] {
	if len(r.pending) > 0 {
		// What came with no item to join (a round of the client's
		// records only): an item of its own, off the chain.
		blocks := r.pending
		r.pending = nil
		r.newItem("line-"+strconv.Itoa(r.first), blocks[0].Time, "system", "client", blocks, r.st.Tip)
	}
	nodes := r.nodes
	for _, n := range r.vers {
		if n.UUID != "" {
			nodes = append(nodes, n)
		}
	}
	return lifecycle.Itemized[State]{Items: r.items, State: r.st, Nodes: nodes, Tokens: r.tokens.Total()}
}
