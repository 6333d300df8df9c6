package claude

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// format is the Claude Code transcript: the hooks of the builder every
// adapter shares (package lifecycle), which turns its lines into rounds.
// Its State at the last closed round is all a builder needs to continue
// later from the open round's entries plus whatever the source has added
// since (see package inscribe's append).
type format struct{}

var _ lifecycle.Format[parsed, State] = format{}

// newBuilder starts a builder at the state an earlier run saved (nil for a
// new transcript). graph answers for identities of rounds closed in
// earlier runs; it may be nil when state is.
func newBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (*lifecycle.Builder[parsed, State], error) {
	return lifecycle.New[parsed, State](format{}, cfg, state, graph)
}

// State is where a transcript stood at the end of its last closed round,
// beside what the lifecycle keeps (the round, the next line, the items).
// It is small and is persisted between runs.
type State struct {
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
	// Summaries are the client's summary entries seen, by the entry each
	// sums up to (the last summaryMax): the session's summary is the last
	// of them whose leaf is in it (Finish). Claude Code writes them in the
	// transcript of a later session too; those name entries elsewhere.
	Summaries []LeafSummary `json:"summaries,omitempty"`
	// AITitle is the last title the client gave the session (ai-title).
	AITitle string `json:"ai_title,omitempty"`
}

// LeafSummary is a summary entry: the client's summary of a conversation
// up to the entry Leaf.
type LeafSummary struct {
	Leaf string `json:"leaf"`
	Text string `json:"text"`
}

// summaryMax is how many summary entries the state keeps.
const summaryMax = 32

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

// Decode decodes a line's envelope, and the content of its message.
func (format) Decode(c *lifecycle.Context, e session.Entry) parsed {
	p := parsed{e: e}
	raw := e.Raw
	if source.IsBlank(raw) {
		// A blank line is kept so the source comes back byte for byte; it is
		// not an entry.
		return p
	}
	env, err := decodeEntry(raw)
	if !c.Decoded(e, err) {
		return p
	}
	p.env = env
	if len(env.Message) > 0 && (env.Type == "user" || env.Type == "assistant") {
		if m, ok := decodeMessage(env.Message); ok {
			p.msg = m
			switch content := m.Content; {
			case len(content) > 0 && content[0] == '"':
				p.str = session.Ptr(unquote(content, span{0, len(content)}))
			case len(content) > 0 && content[0] == '[':
				raws, err := splitArray(content)
				if err != nil {
					c.Warnf(e.Line, "message content is not a list of blocks (%v): shown as JSON", lifecycle.ShortErr(err))
					break
				}
				p.raws = raws
				p.blocks = make([]Block, len(raws))
				for i, r := range raws {
					p.blocks[i], _ = decodeBlock(r)
				}
			}
		} else {
			c.Warnf(e.Line, "message is not an object: shown as JSON")
		}
	}
	return p
}

// Classify: an entry is a record when it is a JSON object, and a prompt
// opens a round.
func (format) Classify(c *lifecycle.Context, p parsed) lifecycle.Class {
	if p.env == nil {
		return lifecycle.Class{}
	}
	return lifecycle.Class{Record: true, Prompt: isPrompt(c.Config(), p), Time: p.env.Timestamp}
}

// isPrompt reports whether an entry is a person's prompt, which opens a round.
func isPrompt(cfg source.Config, p parsed) bool {
	env := p.env
	if env == nil || env.Type != "user" || env.UUID == "" || p.msg == nil {
		return false
	}
	if env.IsMeta || env.IsCompactSummary || (env.IsSidechain && !cfg.Sidechain) {
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

// Open starts itemizing a round from the state at its start.
func (format) Open(c *lifecycle.Context, st State) lifecycle.Itemizer[parsed, State] {
	it := &itemizer{c: c, st: st, recent: make(map[string]bool), local: make(map[string]source.Node),
		msgItem: make(map[string]int), toolUse: make(map[string]toolRef), boundary: make(map[string]int)}
	it.st.Recent = append([]string(nil), st.Recent...)
	for _, u := range it.st.Recent {
		it.recent[u] = true
		it.recentOrder = append(it.recentOrder, u)
	}
	return it
}

// Add itemizes one entry of the round as it arrives: a long round is held
// as items, not also as decoded entries.
func (it *itemizer) Add(p parsed) {
	it.observe(p)
	if p.msg != nil && p.msg.Usage != nil {
		it.tokens.Once(p.msg.ID, p.msg.Usage.Total())
	}
	it.entry(p)
}

// Close returns the round's items, the state after it and its graph nodes.
func (it *itemizer) Close() lifecycle.Itemized[State] {
	it.settle()
	st := it.st
	st.Recent = append([]string(nil), it.recentOrder...)
	return lifecycle.Itemized[State]{Items: it.items, State: st, Nodes: it.nodes, Tokens: it.tokens.Total()}
}

// toolRef locates a tool_use block within the round's items.
type toolRef struct{ item, block int }

// itemizer itemizes one round's entries as they arrive, from the state at
// the round's start.
type itemizer struct {
	c      *lifecycle.Context
	st     State
	items  []session.Item
	tokens lifecycle.Tokens
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
	// early holds the notes of bookkeeping entries that came before the
	// round's first item (a file that opens with a bridge's status, or
	// with the stop hooks of a turn in another file): they go at the top
	// of that item, as the others go where they happened, rather than
	// under a heading of their own.
	early []earlyNote
}

// earlyNote is a note waiting for its round's first item.
type earlyNote struct {
	p     parsed
	label string
	blk   session.Block
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
	if env.AITitle != nil && strings.TrimSpace(*env.AITitle) != "" {
		st.AITitle = *env.AITitle
	}
	if env.Type == "summary" && env.Summary != nil && env.LeafUUID != "" {
		st.Summaries = slices.DeleteFunc(st.Summaries, func(l LeafSummary) bool { return l.Leaf == env.LeafUUID })
		st.Summaries = append(st.Summaries, LeafSummary{Leaf: env.LeafUUID, Text: *env.Summary})
		if n := len(st.Summaries); n > summaryMax {
			st.Summaries = slices.Delete(st.Summaries, 0, n-summaryMax)
		}
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

// lookup resolves an identity to its node: this round first, then the
// rounds closed before it.
func (it *itemizer) lookup(u string) (source.Node, bool) {
	if n, ok := it.local[u]; ok {
		return n, true
	}
	return it.c.Lookup(u)
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

// lineID names the item of an entry without an identity after its line.
func lineID(p parsed) string { return fmt.Sprintf("line-%d", p.e.Line) }

// last returns the index of the last item of the round, or -1.
func (it *itemizer) last() int { return len(it.items) - 1 }

// newItem starts an item for entry p and works out its parent.
func (it *itemizer) newItem(p parsed, role, note string, blocks []session.Block) int {
	env := p.env
	if len(it.early) > 0 {
		// The notes that came first are shown by this item: a parent
		// among them is the item above, as for any note folded into one.
		id := env.UUID
		if id == "" {
			id = lineID(p)
		}
		var first []session.Block
		for _, n := range it.early {
			first = append(first, n.blk)
			if u := n.p.env.UUID; u != "" {
				it.record(source.Node{UUID: u, Anchor: id})
			}
		}
		blocks = append(first, blocks...)
		it.early = nil
	}
	if env.UUID == "" {
		// An entry without an identity still gets an item, named after its
		// line; nothing can continue it, so it leaves the chain alone.
		it.items = append(it.items, session.Item{Time: env.Timestamp, Role: role, Note: note,
			IDs: []string{lineID(p)}, Blocks: blocks})
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
		if it.c.Items()+len(it.items) > 0 {
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
	lifecycle.Widen(&it.st.Started, &it.st.Ended, env.Timestamp)
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
		blk := session.Block{Kind: session.KindRaw, Label: rawLabel(env.Type), Text: lifecycle.ValidText(p.e.Raw), Entry: env.UUID, Time: env.Timestamp, Origin: at(p, "")}
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
	if env.IsSidechain && !it.c.Config().Sidechain {
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
			c := compactionBlock(it.items[i].Blocks)
			if c != nil && c.Text == "" && c.Entry == "" {
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
	case env.IsSidechain && !it.c.Config().Sidechain:
		note = "sidechain"
	}
	i := it.newItem(p, "user", note, it.contentBlocks(p, true))
	if it.st.FirstPrompt == "" && note == "" && isPrompt(it.c.Config(), p) {
		it.st.FirstPrompt = lifecycle.FirstLine(it.plainText(p))
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
				// The store says where the subagent's document lies.
				if sp := it.c.Config().SidechainPath; sp != nil {
					call.Sidechain = sp(ar.AgentID)
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
		return []session.Part{{Kind: session.KindRaw, Text: lifecycle.ValidText(c), Origin: at(p, path)}}
	}
	var parts []session.Part
	for j, raw := range list {
		sub := fmt.Sprintf("%s.%d", path, j)
		blk, ok := decodeBlock(raw)
		if !ok {
			parts = append(parts, session.Part{Kind: session.KindRaw, Text: lifecycle.ValidText(raw), Origin: at(p, sub)})
			continue
		}
		switch {
		case blk.Type == "text" && blk.Text != nil:
			parts = append(parts, session.Part{Kind: session.KindText, Text: *blk.Text, Origin: at(p, sub+".text")})
		case it.isFile(blk):
			parts = append(parts, session.Part{Kind: session.KindFile, File: it.file(blk)})
		default:
			parts = append(parts, session.Part{Kind: session.KindRaw, Text: lifecycle.ValidText(raw), Origin: at(p, sub)})
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
	return it.c.File(blk.Type, blk.Source.MediaType, data)
}

// contentBlocks converts the content of a user or assistant message.
func (it *itemizer) contentBlocks(p parsed, user bool) []session.Block {
	if p.str != nil {
		return []session.Block{{Kind: session.KindText, Text: *p.str, Origin: at(p, "message.content")}}
	}
	if p.raws == nil {
		// Content that is neither a string nor a list: show the message.
		return []session.Block{{Kind: session.KindRaw, Label: "message", Text: lifecycle.ValidText(p.env.Message), Origin: at(p, "message")}}
	}
	var out []session.Block
	for i, blk := range p.blocks {
		raw := p.raws[i]
		path := fmt.Sprintf("message.content.%d", i)
		switch {
		case blk.Type == "":
			out = append(out, session.Block{Kind: session.KindRaw, Label: "block", Text: lifecycle.ValidText(raw), Origin: at(p, path)})
		case blk.Type == "text" && blk.Text != nil:
			out = append(out, session.Block{Kind: session.KindText, Text: *blk.Text, Origin: at(p, path+".text")})
		case blk.Type == "thinking" && blk.Thinking != nil:
			out = append(out, session.Block{Kind: session.KindThinking, Text: *blk.Thinking, Origin: at(p, path+".thinking")})
		case blk.Type == "tool_use" && !user:
			out = append(out, session.Block{Kind: session.KindToolUse, Label: blk.Name, ID: blk.ID, Input: lifecycle.CompactJSON(blk.Input), Origin: at(p, path+".input")})
		case blk.Type == "tool_result":
			out = append(out, session.Block{Kind: session.KindToolResult, ID: blk.ToolUseID, Result: it.result(blk, p, path+".content")})
		case it.isFile(blk):
			out = append(out, session.Block{Kind: session.KindFile, File: it.file(blk)})
		default:
			out = append(out, session.Block{Kind: session.KindRaw, Label: rawLabel(blk.Type), Text: lifecycle.ValidText(raw), Origin: at(p, path)})
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
// round's last item, or, when the round has none yet, at the top of its
// first (see itemizer.early). Only a round that ends with notes alone
// makes an item of them (finish).
func (it *itemizer) note(p parsed, label, text string) {
	env := p.env
	blk := session.Block{Kind: session.KindNote, Label: label, Text: lifecycle.ValidText([]byte(text)), Entry: env.UUID, Time: env.Timestamp}
	if i := it.last(); i >= 0 {
		it.fold(i, p, blk)
		return
	}
	it.early = append(it.early, earlyNote{p: p, label: label, blk: blk})
}

// settle gives the notes of a round that has no item an item of their
// own, the first note's, so that they are shown all the same.
func (it *itemizer) settle() {
	if len(it.early) == 0 {
		return
	}
	first := it.early[0]
	rest := it.early[1:]
	it.early = nil
	blk := first.blk
	blk.Entry, blk.Time = "", ""
	i := it.newItem(first.p, "system", first.label, []session.Block{blk})
	for _, n := range rest {
		it.fold(i, n.p, n.blk)
	}
}

// compactionBlock returns the compaction block of an item's blocks.
func compactionBlock(bs []session.Block) *session.Block {
	for i := range bs {
		if bs[i].Kind == session.KindCompaction {
			return &bs[i]
		}
	}
	return nil
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
		blk.Text, blk.Origin = lifecycle.ValidText(env.Rendered), at(p, "rendered")
	}
	if i := it.last(); i >= 0 {
		it.fold(i, p, blk)
		return
	}
	blk.Entry, blk.Time = "", ""
	it.newItem(p, "system", "reminder", []session.Block{blk})
}

// Finish describes the session from the state after its last round.
func (format) Finish(c *lifecycle.Context, st State, open []source.Node) source.Finished {
	m := session.Meta{
		SessionID:     st.SessionID,
		Title:         lifecycle.Opt(st.Title),
		Model:         lifecycle.Opt(st.Model),
		Started:       lifecycle.Opt(st.Started),
		Ended:         lifecycle.Opt(st.Ended),
		Project:       lifecycle.Opt(st.Project),
		GitBranch:     lifecycle.Opt(st.GitBranch),
		ClientVersion: lifecycle.Opt(st.ClientVersion),
		Leaf:          lifecycle.Opt(st.LastItem),
	}
	if st.Forked {
		m.Branches = c.Branches(open, st.LastItem)
	}
	// The client's summary: the title it gave the session, else the last
	// summary entry whose leaf is an entry of this session.
	if st.AITitle != "" {
		m.ClientSummary = lifecycle.Opt(st.AITitle)
	}
	for i := len(st.Summaries) - 1; i >= 0 && m.ClientSummary == nil; i-- {
		leaf := st.Summaries[i].Leaf
		_, ok := c.Lookup(leaf)
		for _, n := range open {
			ok = ok || n.UUID == leaf
		}
		if ok && strings.TrimSpace(st.Summaries[i].Text) != "" {
			m.ClientSummary = lifecycle.Opt(st.Summaries[i].Text)
		}
	}
	return source.Finished{Meta: m, FirstPrompt: st.FirstPrompt}
}
