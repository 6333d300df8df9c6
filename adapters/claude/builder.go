package claude

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A Builder turns the lines of one Claude Code transcript into rounds.
//
// Lines go in with [Builder.Add]; a round is handed back as soon as the next
// prompt closes it. [Builder.Finish] returns the last round, which stays open:
// a live session may still add to it. The builder's [State] at the last
// closed round is all it needs to continue later from the open round's
// entries plus whatever the source has added since (see package inscribe's
// append).
type Builder struct {
	cfg   source.Config
	st    State
	graph source.Graph
	// cur is the open round, itemized as its entries arrive (nil before
	// its first entry): a long round is held as items, not also as decoded
	// entries.
	cur *roundBuild
	// curPrompt reports whether the open round already has its prompt.
	curPrompt bool
	nodes     []source.Node // graph nodes of rounds closed by this builder
	warnings  []error
}

// State is where a transcript stood at the end of its last closed round.
// It is small and is persisted between runs.
type State struct {
	Round    int    `json:"round"`     // last closed round (0: none)
	NextLine int    `json:"next_line"` // first line of the open round
	Items    int    `json:"items"`     // items in closed rounds
	LastItem string `json:"last_item,omitempty"`
	// Recent holds the identities seen since the last item started: a new
	// item whose parent is among them continues the item above.
	Recent []string `json:"recent,omitempty"`
	// Forked is set once any item's parent is not the item above.
	Forked bool `json:"forked,omitempty"`

	SessionID     string `json:"session_id,omitempty"`
	Started       string `json:"started,omitempty"`
	Ended         string `json:"ended,omitempty"`
	Model         string `json:"model,omitempty"`
	Title         string `json:"title,omitempty"`
	AgentName     string `json:"agent_name,omitempty"`
	Project       string `json:"project,omitempty"`
	GitBranch     string `json:"git_branch,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
	FirstPrompt   string `json:"first_prompt,omitempty"`
}

// NewBuilder starts a builder at state st (the zero State for a new
// transcript). graph answers for identities of rounds closed in earlier runs;
// it may be nil when st is the zero State.
func NewBuilder(cfg source.Config, st State, graph source.Graph) *Builder {
	if st.NextLine == 0 {
		st.NextLine = 1
	}
	st.Recent = append([]string(nil), st.Recent...)
	return &Builder{cfg: cfg, st: st, graph: graph}
}

// Warnings returns the problems found in the input so far, each naming the
// file and line. Bad input is kept (in the backing store) and reported; it
// never stops the builder.
func (b *Builder) Warnings() []error { return b.warnings }

// Nodes returns the graph nodes of the rounds closed so far by this builder
// (none when its graph is a source.Recorder, which keeps them instead).
func (b *Builder) Nodes() []source.Node { return b.nodes }

// State returns the state at the last closed round.
func (b *Builder) State() (json.RawMessage, error) { return json.Marshal(b.st) }

// Rounds is the number of rounds closed so far.
func (b *Builder) Rounds() int { return b.st.Round }

func (b *Builder) warnf(line int, format string, args ...any) {
	b.warnings = append(b.warnings, &source.LineError{File: b.cfg.File, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// parsed is one source line with what scribe decoded from it.
type parsed struct {
	e   session.Entry
	env *Entry // nil for a line that is not a JSON object
	msg *Message
	// raws are the content blocks of msg as raw JSON, and blocks the same
	// decoded (Type is "" where a block would not decode); str is set
	// instead when the content is a string.
	raws   []json.RawMessage
	blocks []Block
	str    *string
}

// Add feeds one line. It returns the round the line closed, if any.
func (b *Builder) Add(l source.Line) *session.Round {
	e := session.Entry{Line: l.No, Raw: l.Raw, NoNewline: !l.Terminated, Offset: l.Offset, Len: len(l.Raw)}
	if !b.cfg.RawInSource {
		e.Raw = append([]byte(nil), l.Raw...)
	}
	closed := b.add(b.parse(e))
	if b.cfg.RawInSource {
		// The line is itemized: its round keeps where it lies, not the
		// reader's buffer.
		es := b.cur.r.Entries
		es[len(es)-1].Raw = nil
	}
	return closed
}

// AddEntry feeds an entry kept by an earlier run (read back from a round
// file).
func (b *Builder) AddEntry(e session.Entry) *session.Round {
	return b.add(b.parse(e))
}

func (b *Builder) add(p parsed) *session.Round {
	var closed *session.Round
	if b.isPrompt(p) {
		if b.curPrompt {
			closed = b.close()
		}
		b.curPrompt = true
	}
	if b.cur == nil {
		b.cur = b.startRound()
	}
	b.cur.add(p)
	return closed
}

func (b *Builder) parse(e session.Entry) parsed {
	p := parsed{e: e}
	raw := e.Raw
	if source.IsBlank(raw) {
		// A blank line is kept so the source comes back byte for byte; it is
		// not an entry.
		p.e.Invalid = true
		return p
	}
	env, err := decodeEntry(raw)
	if err != nil {
		p.e.Invalid = true
		b.warnf(e.Line, "not a JSON object (%v): kept in the backing store, not shown", shortErr(err))
		return p
	}
	if !utf8.Valid(raw) {
		b.warnf(e.Line, "invalid UTF-8: kept byte for byte in the backing store, shown with U+FFFD")
	}
	p.env = env
	if len(env.Message) > 0 && (env.Type == "user" || env.Type == "assistant") {
		if m, ok := decodeMessage(env.Message); ok {
			p.msg = m
			switch c := m.Content; {
			case len(c) > 0 && c[0] == '"':
				p.str = session.Ptr(unquote(c, span{0, len(c)}))
			case len(c) > 0 && c[0] == '[':
				raws, err := splitArray(c)
				if err != nil {
					b.warnf(e.Line, "message content is not a list of blocks (%v): shown as JSON", shortErr(err))
					break
				}
				p.raws = raws
				p.blocks = make([]Block, len(raws))
				for i, r := range raws {
					p.blocks[i], _ = decodeBlock(r)
				}
			}
		} else {
			b.warnf(e.Line, "message is not an object: shown as JSON")
		}
	}
	return p
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// isPrompt reports whether an entry is a person's prompt, which opens a round.
func (b *Builder) isPrompt(p parsed) bool {
	env := p.env
	if env == nil || env.Type != "user" || env.UUID == "" || p.msg == nil {
		return false
	}
	if env.IsMeta || env.IsCompactSummary || (env.IsSidechain && !b.cfg.Sidechain) {
		return false
	}
	if p.str != nil {
		return !isClientOutput(*p.str)
	}
	if len(p.blocks) == 0 {
		return false
	}
	for _, blk := range p.blocks {
		switch blk.Type {
		case "":
			return false
		case "tool_result":
			return false
		case "text":
			if blk.Text != nil && isClientOutput(*blk.Text) {
				return false
			}
		}
	}
	return true
}

// isClientOutput reports whether a user-role text was written by the client,
// not typed by a person: output of a local command or of shell mode, or an
// interruption notice.
func isClientOutput(s string) bool {
	for _, p := range []string{"<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
		"<bash-stdout>", "<bash-stderr>", "[Request interrupted by user"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// close ends the open round as closed and advances the state.
func (b *Builder) close() *session.Round {
	r, st, nodes := b.cur.finish()
	r.Open = false
	b.st = st
	if rec, ok := b.graph.(source.Recorder); ok {
		rec.Record(nodes)
	} else {
		b.nodes = append(b.nodes, nodes...)
	}
	b.st.NextLine = b.cur.lastLine + 1
	b.cur = nil
	b.curPrompt = false
	return r
}

// Flush closes the current round, if any, as if a prompt had followed it.
func (b *Builder) Flush() *session.Round {
	if b.cur == nil {
		return nil
	}
	return b.close()
}

// Finish returns the open round and what the builder learned. The builder's
// State stays that of the last closed round. Nothing may be added after.
func (b *Builder) Finish() source.Finished {
	var open *session.Round
	st := b.st
	var nodes []source.Node
	if b.cur != nil {
		open, st, nodes = b.cur.finish()
		open.Open = true
		b.cur = nil
	}
	return source.Finished{Open: open, Meta: b.meta(st, nodes), FirstPrompt: st.FirstPrompt}
}

// roundBuild itemizes one round's entries as they arrive, from the state
// at the round's start.
type roundBuild struct {
	it        *itemizer
	r         *session.Round
	msgTokens map[string]bool
	lastLine  int
	stamp     string // the first timestamp, for a round without items
}

func (b *Builder) startRound() *roundBuild {
	it := &itemizer{b: b, st: b.st, recent: make(map[string]bool), local: make(map[string]source.Node),
		msgItem: make(map[string]int), toolUse: make(map[string]toolRef), boundary: make(map[string]int)}
	it.st.Recent = append([]string(nil), b.st.Recent...)
	for _, u := range it.st.Recent {
		it.recent[u] = true
		it.recentOrder = append(it.recentOrder, u)
	}
	return &roundBuild{it: it, r: &session.Round{N: b.st.Round + 1}, msgTokens: make(map[string]bool)}
}

func (rb *roundBuild) add(p parsed) {
	rb.r.Entries = append(rb.r.Entries, p.e)
	rb.lastLine = p.e.Line
	if p.env == nil {
		return
	}
	if rb.stamp == "" {
		rb.stamp = p.env.Timestamp
	}
	rb.it.observe(p)
	if p.msg != nil && p.msg.Usage != nil {
		if p.msg.ID == "" || !rb.msgTokens[p.msg.ID] {
			rb.r.TokenCount += p.msg.Usage.Total()
			if p.msg.ID != "" {
				rb.msgTokens[p.msg.ID] = true
			}
		}
	}
	rb.it.entry(p)
}

// finish returns the round, the state after it and its graph nodes.
func (rb *roundBuild) finish() (*session.Round, State, []source.Node) {
	r, it := rb.r, rb.it
	r.Items = it.items
	if len(r.Items) > 0 {
		r.Items[0].Round = r.N
		r.Started = r.Items[0].Time
	} else {
		r.Started = rb.stamp
	}
	st := it.st
	st.Round = r.N
	st.Items += len(r.Items)
	st.Recent = append([]string(nil), it.recentOrder...)
	return r, st, it.nodes
}

// toolRef locates a tool_use block within the round's items.
type toolRef struct{ item, block int }

type itemizer struct {
	b     *Builder
	st    State
	items []session.Item
	// recent holds identities seen since the last item started; recentOrder
	// the same in order, for the state.
	recent      map[string]bool
	recentOrder []string
	// local holds the nodes of this round.
	local    map[string]source.Node
	nodes    []source.Node
	msgItem  map[string]int     // assistant message id -> item index
	toolUse  map[string]toolRef // tool_use id -> block
	boundary map[string]int     // compact_boundary uuid -> item index
}

// observe folds an entry's metadata into the state.
func (it *itemizer) observe(p parsed) {
	env := p.env
	st := &it.st
	if env.SessionID != "" && st.SessionID == "" {
		st.SessionID = env.SessionID
	}
	if env.CustomTitle != nil {
		st.Title = *env.CustomTitle
	}
	if env.AgentName != nil {
		st.AgentName = *env.AgentName
	}
	if env.CWD != "" && st.Project == "" {
		st.Project = env.CWD
	}
	if env.GitBranch != "" && st.GitBranch == "" {
		st.GitBranch = env.GitBranch
	}
	if env.Version != "" {
		st.ClientVersion = env.Version
	}
	if p.msg != nil && env.Type == "assistant" && st.Model == "" && p.msg.Model != "" && p.msg.Model != "<synthetic>" {
		st.Model = p.msg.Model
	}
}

// lookup resolves an identity to its node: this round first, then rounds
// closed earlier by this builder, then earlier runs.
func (it *itemizer) lookup(u string) (source.Node, bool) {
	if n, ok := it.local[u]; ok {
		return n, true
	}
	if g := it.b.graph; g != nil {
		if n, ok := g.Lookup(u); ok {
			return n, true
		}
	}
	for i := len(it.b.nodes) - 1; i >= 0; i-- {
		if it.b.nodes[i].UUID == u {
			return it.b.nodes[i], true
		}
	}
	return source.Node{}, false
}

func (it *itemizer) record(n source.Node) {
	if n.UUID == "" {
		return
	}
	if _, dup := it.local[n.UUID]; dup {
		return
	}
	it.local[n.UUID] = n
	it.nodes = append(it.nodes, n)
	if !it.recent[n.UUID] {
		it.recent[n.UUID] = true
		it.recentOrder = append(it.recentOrder, n.UUID)
	}
}

// last returns the index of the last item of the round, or -1.
func (it *itemizer) last() int { return len(it.items) - 1 }

// newItem starts an item for entry p and works out its parent.
func (it *itemizer) newItem(p parsed, role, note string, blocks []session.Block) int {
	env := p.env
	if env.UUID == "" {
		// An entry without an identity still gets an item, named after its
		// line; nothing can continue it, so it leaves the chain alone.
		it.items = append(it.items, session.Item{Time: env.Timestamp, Role: role, Note: note,
			IDs: []string{fmt.Sprintf("line-%d", p.e.Line)}, Blocks: blocks})
		return len(it.items) - 1
	}
	item := session.Item{Time: env.Timestamp, Role: role, Note: note, IDs: []string{env.UUID}, Blocks: blocks}
	var parent string
	if env.ParentUUID != nil {
		parent = *env.ParentUUID
	} else if env.LogicalParentUUID != nil {
		parent = *env.LogicalParentUUID
	}
	itemParent := it.st.LastItem
	switch {
	case parent == "":
		if it.st.Items+len(it.items) > 0 {
			item.Parent = "root"
			it.st.Forked = true
		}
		itemParent = ""
	case it.recent[parent]:
		// The item above.
	default:
		anchor := parent
		n, found := it.lookup(parent)
		if found {
			anchor = n.Anchor
		}
		if anchor != it.st.LastItem {
			item.Parent = anchor
			item.ParentMissing = !found
			itemParent = anchor
			it.st.Forked = true
		}
	}
	anchor := env.UUID
	it.items = append(it.items, item)
	it.recent = map[string]bool{}
	it.recentOrder = it.recentOrder[:0]
	it.record(source.Node{UUID: env.UUID, Anchor: anchor, Parent: itemParent})
	it.st.LastItem = anchor
	if env.Timestamp != "" {
		if it.st.Started == "" || env.Timestamp < it.st.Started {
			it.st.Started = env.Timestamp
		}
		if env.Timestamp > it.st.Ended {
			it.st.Ended = env.Timestamp
		}
	}
	return len(it.items) - 1
}

// fold adds blocks to item i on behalf of entry p (which the item now shows).
func (it *itemizer) fold(i int, p parsed, blocks ...session.Block) {
	it.items[i].Blocks = append(it.items[i].Blocks, blocks...)
	it.attach(i, p)
}

// attach records that item i shows entry p.
func (it *itemizer) attach(i int, p parsed) {
	u := p.env.UUID
	if u == "" {
		return
	}
	anchor := it.items[i].IDs[0]
	it.record(source.Node{UUID: u, Anchor: anchor})
}

// hide records an entry that is not shown: it belongs with the item it
// descends from.
func (it *itemizer) hide(p parsed) {
	u := p.env.UUID
	if u == "" {
		return
	}
	anchor := it.st.LastItem
	if p.env.ParentUUID != nil {
		if n, ok := it.lookup(*p.env.ParentUUID); ok {
			anchor = n.Anchor
		}
	}
	if anchor == "" {
		anchor = u // nothing shown yet: the entry anchors itself, unshown
	}
	it.record(source.Node{UUID: u, Anchor: anchor})
}

// entry places one decoded entry.
func (it *itemizer) entry(p parsed) {
	env := p.env
	switch {
	case env.Type == "assistant" && p.msg != nil:
		it.assistant(p)
	case env.Type == "user" && p.msg != nil:
		it.user(p)
	case env.Type == "system":
		it.system(p)
	case env.Type == "attachment":
		it.attachment(p)
	case IsBookkeeping(env.Type):
		it.hide(p)
	case noteTypes[env.Type]:
		it.note(p, env.Type, entryNote(p.e.Raw, env.Type))
	default:
		// A type scribe does not know (or a message entry it cannot read):
		// kept, and shown as JSON.
		blk := session.Block{Kind: session.KindRaw, Label: rawLabel(env.Type), Text: validText(p.e.Raw), Entry: env.UUID, Time: env.Timestamp, Origin: at(p, "")}
		if i := it.last(); i >= 0 && env.UUID == "" {
			it.fold(i, p, blk)
			return
		}
		blk.Entry, blk.Time = "", ""
		it.newItem(p, rawLabel(env.Type), "", []session.Block{blk})
	}
}

func rawLabel(t string) string {
	if t == "" {
		return "entry"
	}
	return t
}

func (it *itemizer) assistant(p parsed) {
	env := p.env
	blocks := it.contentBlocks(p, false)
	if id := p.msg.ID; id != "" {
		if i, ok := it.msgItem[id]; ok {
			it.items[i].IDs = append(it.items[i].IDs, env.UUID)
			base := len(it.items[i].Blocks)
			it.items[i].Blocks = append(it.items[i].Blocks, blocks...)
			it.noteTools(i, base)
			it.attach(i, p)
			return
		}
	}
	note := ""
	if env.IsSidechain && !it.b.cfg.Sidechain {
		note = "sidechain"
	}
	i := it.newItem(p, "assistant", note, blocks)
	if p.msg.ID != "" {
		it.msgItem[p.msg.ID] = i
	}
	it.noteTools(i, 0)
}

// noteTools indexes the tool_use blocks of item i from block base on.
func (it *itemizer) noteTools(i, base int) {
	for j := base; j < len(it.items[i].Blocks); j++ {
		if blk := it.items[i].Blocks[j]; blk.Kind == session.KindToolUse && blk.ID != "" {
			it.toolUse[blk.ID] = toolRef{i, j}
		}
	}
}

func (it *itemizer) user(p parsed) {
	env := p.env
	// A compaction summary continues its boundary.
	if env.IsCompactSummary && env.ParentUUID != nil && p.str != nil {
		if i, ok := it.boundary[*env.ParentUUID]; ok {
			c := &it.items[i].Blocks[0]
			if c.Text == "" && c.Entry == "" {
				c.Text, c.Entry, c.Time, c.Origin = *p.str, env.UUID, env.Timestamp, at(p, "message.content")
				it.attach(i, p)
				return
			}
		}
	}
	// Tool results go with their calls.
	if results, ok := it.toolResults(p); ok {
		target := -1
		for _, r := range results {
			ref := it.toolUse[r.id]
			it.items[ref.item].Blocks[ref.block].Result = r.res
			target = ref.item
		}
		it.attach(target, p)
		return
	}
	if env.IsMeta {
		if p.str != nil || (len(p.blocks) == 1 && p.blocks[0].Type == "text" && p.blocks[0].Text != nil) {
			if i := it.last(); i >= 0 {
				path := "message.content"
				if p.str == nil {
					path = "message.content.0.text"
				}
				it.fold(i, p, session.Block{Kind: session.KindReminder, Label: "meta", Text: it.plainText(p), Entry: env.UUID, Time: env.Timestamp, Origin: at(p, path)})
				return
			}
		}
	}
	note := ""
	switch {
	case env.IsMeta:
		note = "meta"
	case env.IsCompactSummary:
		note = "compaction summary"
	case env.IsSidechain && !it.b.cfg.Sidechain:
		note = "sidechain"
	}
	i := it.newItem(p, "user", note, it.contentBlocks(p, true))
	if it.st.FirstPrompt == "" && note == "" && it.b.isPrompt(p) {
		it.st.FirstPrompt = firstLine(it.plainText(p))
	}
	_ = i
}

// plainText is the text of a user entry whose content is a string or text.
func (it *itemizer) plainText(p parsed) string {
	if p.str != nil {
		return *p.str
	}
	var sb strings.Builder
	for _, blk := range p.blocks {
		if blk.Type == "text" && blk.Text != nil {
			if sb.Len() > 0 {
				sb.WriteString("\n")
			}
			sb.WriteString(*blk.Text)
		}
	}
	return sb.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

type foldedResult struct {
	id  string
	res *session.Result
}

// toolResults returns the results of a user entry made only of tool_result
// blocks whose calls are all in this round and still without a result.
func (it *itemizer) toolResults(p parsed) ([]foldedResult, bool) {
	if p.str != nil || len(p.blocks) == 0 {
		return nil, false
	}
	var out []foldedResult
	for i, blk := range p.blocks {
		if blk.Type != "tool_result" {
			return nil, false
		}
		ref, ok := it.toolUse[blk.ToolUseID]
		if !ok || it.items[ref.item].Blocks[ref.block].Result != nil {
			return nil, false
		}
		for _, o := range out {
			if o.id == blk.ToolUseID {
				return nil, false
			}
		}
		res := it.result(blk, p, fmt.Sprintf("message.content.%d.content", i))
		out = append(out, foldedResult{blk.ToolUseID, res})
	}
	// Link an Agent call to the sidechain it started.
	if len(out) == 1 && len(p.env.ToolUseResult) > 0 {
		ref := it.toolUse[out[0].id]
		call := &it.items[ref.item].Blocks[ref.block]
		if call.Label == "Agent" || call.Label == "Task" {
			var ar AgentToolResult
			if json.Unmarshal(p.env.ToolUseResult, &ar) == nil && ar.AgentID != "" && isSafeName(ar.AgentID) {
				// Every sidechain document of a session sits in the session's
				// folder, beside the sidechains that spawn subagents of their
				// own.
				call.Sidechain = "agent-" + ar.AgentID + ".md"
				if !it.b.cfg.Sidechain {
					call.Sidechain = it.b.cfg.DocBase + "/" + call.Sidechain
				}
			}
		}
	}
	return out, true
}

// isSafeName reports whether s can be used as a file name component.
func isSafeName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// result converts a tool_result block of entry p found at path.
func (it *itemizer) result(blk Block, p parsed, path string) *session.Result {
	res := &session.Result{Entry: p.env.UUID, Time: p.env.Timestamp, Error: blk.IsError != nil && *blk.IsError}
	res.Parts = it.resultParts(blk.Content, p, path)
	return res
}

// at returns the origin of a value at path in entry p.
func at(p parsed, path string) *session.Origin {
	return &session.Origin{Line: p.e.Line, Path: path}
}

func (it *itemizer) resultParts(content json.RawMessage, p parsed, path string) []session.Part {
	c := bytes.TrimSpace(content)
	if len(c) == 0 || string(c) == "null" {
		return nil
	}
	if c[0] == '"' {
		return []session.Part{{Kind: session.KindText, Text: unquote(c, span{0, len(c)}), Origin: at(p, path)}}
	}
	var list []json.RawMessage
	var err error
	if c[0] == '[' {
		list, err = splitArray(c)
	}
	if c[0] != '[' || err != nil {
		return []session.Part{{Kind: session.KindRaw, Text: validText(c), Origin: at(p, path)}}
	}
	var parts []session.Part
	for j, raw := range list {
		sub := fmt.Sprintf("%s.%d", path, j)
		blk, ok := decodeBlock(raw)
		if !ok {
			parts = append(parts, session.Part{Kind: session.KindRaw, Text: validText(raw), Origin: at(p, sub)})
			continue
		}
		switch {
		case blk.Type == "text" && blk.Text != nil:
			parts = append(parts, session.Part{Kind: session.KindText, Text: *blk.Text, Origin: at(p, sub+".text")})
		case it.isFile(blk):
			parts = append(parts, session.Part{Kind: session.KindFile, File: it.file(blk)})
		default:
			parts = append(parts, session.Part{Kind: session.KindRaw, Text: validText(raw), Origin: at(p, sub)})
		}
	}
	return parts
}

func (it *itemizer) isFile(blk Block) bool {
	if blk.Source == nil || blk.Source.Type != "base64" || (blk.Type != "image" && blk.Type != "document") {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(blk.Source.Data)
	return err == nil
}

func (it *itemizer) file(blk Block) *session.File {
	data, _ := base64.StdEncoding.DecodeString(blk.Source.Data)
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:8]) + "." + extension(blk.Source.MediaType)
	return &session.File{Type: blk.Type, MediaType: blk.Source.MediaType, Path: it.b.cfg.DocBase + "/files/" + name, Data: data}
}

func extension(mediaType string) string {
	switch mediaType {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	case "application/pdf":
		return "pdf"
	case "text/plain":
		return "txt"
	}
	return "bin"
}

// contentBlocks converts the content of a user or assistant message.
func (it *itemizer) contentBlocks(p parsed, user bool) []session.Block {
	if p.str != nil {
		return []session.Block{{Kind: session.KindText, Text: *p.str, Origin: at(p, "message.content")}}
	}
	if p.raws == nil {
		// Content that is neither a string nor a list: show the message.
		return []session.Block{{Kind: session.KindRaw, Label: "message", Text: validText(p.env.Message), Origin: at(p, "message")}}
	}
	var out []session.Block
	for i, blk := range p.blocks {
		raw := p.raws[i]
		path := fmt.Sprintf("message.content.%d", i)
		switch {
		case blk.Type == "":
			out = append(out, session.Block{Kind: session.KindRaw, Label: "block", Text: validText(raw), Origin: at(p, path)})
		case blk.Type == "text" && blk.Text != nil:
			out = append(out, session.Block{Kind: session.KindText, Text: *blk.Text, Origin: at(p, path+".text")})
		case blk.Type == "thinking" && blk.Thinking != nil:
			out = append(out, session.Block{Kind: session.KindThinking, Text: *blk.Thinking, Origin: at(p, path+".thinking")})
		case blk.Type == "tool_use" && !user:
			out = append(out, session.Block{Kind: session.KindToolUse, Label: blk.Name, ID: blk.ID, Input: compactJSON(blk.Input), Origin: at(p, path+".input")})
		case blk.Type == "tool_result":
			out = append(out, session.Block{Kind: session.KindToolResult, ID: blk.ToolUseID, Result: it.result(blk, p, path+".content")})
		case it.isFile(blk):
			out = append(out, session.Block{Kind: session.KindFile, File: it.file(blk)})
		default:
			out = append(out, session.Block{Kind: session.KindRaw, Label: rawLabel(blk.Type), Text: validText(raw), Origin: at(p, path)})
		}
	}
	return out
}

func (it *itemizer) system(p parsed) {
	env := p.env
	if env.Subtype == "compact_boundary" {
		c := &session.Compaction{}
		if m := env.CompactMetadata; m != nil {
			c.Trigger, c.PreTokens = m.Trigger, m.PreTokens
			if s := m.PreservedSegment; s != nil {
				c.Head, c.Anchor, c.Tail = s.HeadUUID, s.AnchorUUID, s.TailUUID
			}
		}
		if env.LogicalParentUUID != nil {
			c.LogicalParent = *env.LogicalParentUUID
		}
		i := it.newItem(p, "system", "compaction", []session.Block{{Kind: session.KindCompaction, Compaction: c}})
		if env.UUID != "" {
			it.boundary[env.UUID] = i
		}
		return
	}
	// The client's own notices (a turn's duration, hooks that ran, an API
	// error retried, a recap): a line where they happened.
	label := env.Subtype
	if label == "" {
		label = "system"
	}
	it.note(p, label, systemNote(p.e.Raw, env.Subtype, env.Content))
}

// note shows an entry of the client's bookkeeping as a one-line note in the
// round's last item, or, when the round has none yet, as an item of its
// own.
func (it *itemizer) note(p parsed, label, text string) {
	env := p.env
	blk := session.Block{Kind: session.KindNote, Label: label, Text: validText([]byte(text)), Entry: env.UUID, Time: env.Timestamp}
	if i := it.last(); i >= 0 {
		it.fold(i, p, blk)
		return
	}
	blk.Entry, blk.Time = "", ""
	it.newItem(p, "system", label, []session.Block{blk})
}

func (it *itemizer) attachment(p parsed) {
	env := p.env
	if len(env.Rendered) == 0 {
		it.hide(p)
		return
	}
	label := ""
	if st, en, err := locate(env.Attachment, []string{"type"}); err == nil {
		label = unquote(env.Attachment, span{st, en})
	}
	if label == "" {
		label = "attachment"
	}
	blk := session.Block{Kind: session.KindReminder, Label: label, Entry: env.UUID, Time: env.Timestamp}
	if s, ok := renderedText(env.Rendered); ok {
		blk.Text, blk.Origin = s, at(p, "rendered.0.content")
	} else {
		blk.Kind = session.KindRaw
		blk.Text, blk.Origin = validText(env.Rendered), at(p, "rendered")
	}
	if i := it.last(); i >= 0 {
		it.fold(i, p, blk)
		return
	}
	blk.Entry, blk.Time = "", ""
	it.newItem(p, "system", "reminder", []session.Block{blk})
}

// validText returns raw bytes as a string, with invalid UTF-8 replaced: the
// document is always valid UTF-8; the exact bytes stay in the backing store.
func validText(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}

// compactJSON returns a tool input as compact JSON, valid UTF-8.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return validText(raw)
	}
	return validText(buf.Bytes())
}

// meta builds the document metadata from a state.
func (b *Builder) meta(st State, nodes []source.Node) session.Meta {
	m := session.Meta{
		SessionID: st.SessionID,
		Messages:  st.Items,
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return session.Ptr(s)
	}
	m.Title = opt(st.Title)
	m.Model = opt(st.Model)
	m.Started = opt(st.Started)
	m.Ended = opt(st.Ended)
	m.Project = opt(st.Project)
	m.GitBranch = opt(st.GitBranch)
	m.ClientVersion = opt(st.ClientVersion)
	m.Leaf = opt(st.LastItem)
	if st.Forked {
		m.Branches = b.branches(nodes, st.LastItem)
	}
	return m
}

// branches computes the fork points of the item graph and, for each, which
// child leads to the live leaf.
func (b *Builder) branches(extra []source.Node, leaf string) []session.Branch {
	var items []source.Node
	if b.graph != nil {
		items = append(items, b.graph.Items()...)
	}
	seen := make(map[string]bool, len(items))
	for _, n := range items {
		seen[n.UUID] = true
	}
	for _, list := range [][]source.Node{b.nodes, extra} {
		for _, n := range list {
			if n.IsItem() && !seen[n.UUID] {
				seen[n.UUID] = true
				items = append(items, n)
			}
		}
	}
	parent := make(map[string]string, len(items))
	children := make(map[string][]string)
	var order []string
	for _, n := range items {
		parent[n.UUID] = n.Parent
		if n.Parent == "" {
			continue
		}
		if len(children[n.Parent]) == 1 {
			order = append(order, n.Parent)
		}
		children[n.Parent] = append(children[n.Parent], n.UUID)
	}
	live := make(map[string]bool)
	for u, steps := leaf, 0; u != "" && !live[u] && steps <= len(items); u, steps = parent[u], steps+1 {
		live[u] = true
	}
	var out []session.Branch
	for _, at := range order {
		br := session.Branch{At: at, Children: children[at]}
		for _, c := range br.Children {
			if live[c] {
				br.Live = c
			}
		}
		out = append(out, br)
	}
	return out
}
