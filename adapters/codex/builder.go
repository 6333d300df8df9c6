package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// format is the Codex rollout: the hooks of the builder every adapter
// shares (package lifecycle), which turns its lines into rounds (see the
// package documentation for how).
type format struct{}

var _ lifecycle.Format[parsed, State] = format{}

// newBuilder starts a builder at the state an earlier run saved (nil for
// a new rollout). Codex's items form a single chain, so the builder looks
// nothing up in graph; when graph is a source.Recorder it keeps the nodes.
func newBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (*lifecycle.Builder[parsed, State], error) {
	return lifecycle.New[parsed, State](format{}, cfg, state, graph)
}

// State is where a rollout stood at the end of its last closed round,
// beside what the lifecycle keeps (the round, the next line, the items).
// It is small and is persisted between runs.
type State struct {
	LastItem string `json:"last_item,omitempty"`

	SessionID     string `json:"session_id,omitempty"`
	ForkedFrom    string `json:"forked_from,omitempty"`
	Started       string `json:"started,omitempty"`
	Ended         string `json:"ended,omitempty"`
	Model         string `json:"model,omitempty"`
	Title         string `json:"title,omitempty"`
	Project       string `json:"project,omitempty"`
	GitBranch     string `json:"git_branch,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
	FirstPrompt   string `json:"first_prompt,omitempty"`
}

// parsed is one line with what scribe decoded from it.
type parsed struct {
	e   session.Entry
	rec *RolloutLine // nil for a line that is not a JSON object
	// item is the payload of a response_item (nil when it does not decode),
	// and parts its content parts, raw and decoded.
	item          *ResponseItem
	raws          []json.RawMessage
	parts         []ContentItem
	contentIsList bool
}

// id is the identity of the line: "L" and its number.
func (p *parsed) id() string { return "L" + strconv.Itoa(p.e.Line) }

// Decode decodes a line: the record, and a response item's content.
func (format) Decode(c *lifecycle.Context, e session.Entry) parsed {
	p := parse(c, e)
	if p.rec != nil && p.rec.Type == "session_meta" {
		checkFork(c, p)
	}
	return p
}

// checkFork warns when a fork's source rollout is not beside it: the
// document records the fork, but codex resume needs the source.
func checkFork(c *lifecycle.Context, p parsed) {
	var m SessionMeta
	file := c.Config().File
	if json.Unmarshal(p.rec.Payload, &m) != nil || m.ForkedFromID == "" || !strings.HasSuffix(file, ".jsonl") {
		return
	}
	if _, err := os.Stat(file); err != nil {
		return
	}
	root, _ := splitDated(file)
	if FindRollout(root, m.ForkedFromID) == "" {
		c.Warnf(p.e.Line, "forked from thread %s, whose rollout is not in %s: recorded as forked_from; codex resume needs that rollout beside this one", m.ForkedFromID, root)
	}
}

func parse(c *lifecycle.Context, e session.Entry) parsed {
	p := parsed{e: e}
	raw := e.Raw
	if source.IsBlank(raw) {
		// Kept so the source comes back byte for byte; not an entry.
		return p
	}
	rec, err := decodeLine(raw)
	if err == nil && bytes.TrimSpace(raw)[0] != '{' {
		err = fmt.Errorf("a JSON value that is not an object")
	}
	if !c.Decoded(e, err) {
		return p
	}
	p.rec = &rec
	switch rec.Type {
	case "response_item":
		it, err := decodeItem(rec.Payload)
		if err != nil {
			c.Warnf(e.Line, "a response item scribe cannot read (%v): shown as recorded", lifecycle.ShortErr(err))
			return p
		}
		p.item = &it
		if content := bytes.TrimSpace(it.Content); len(content) > 0 && content[0] == '[' {
			if raws, ok := elements(content); ok {
				p.raws, p.contentIsList = raws, true
				p.parts = make([]ContentItem, len(p.raws))
				for i, r := range p.raws {
					p.parts[i] = decodePart(r)
				}
			}
		}
		if !knownItem(it.Type) {
			c.Warnf(e.Line, "response item of type %q, which scribe does not know: shown as recorded", it.Type)
		}
	case "session_meta", "turn_context", "world_state", "token_usage_record", "event_msg", "compacted":
	default:
		c.Warnf(e.Line, "record of type %q, which scribe does not know: shown as recorded", rec.Type)
	}
	return p
}

func knownItem(t string) bool {
	switch t {
	case "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
		"custom_tool_call_output", "local_shell_call":
		return true
	}
	return false
}

// Classify: a line is a record when it is a JSON object, and a prompt
// opens a round.
func (format) Classify(_ *lifecycle.Context, p parsed) lifecycle.Class {
	if p.rec == nil {
		return lifecycle.Class{}
	}
	return lifecycle.Class{Record: true, Prompt: isPrompt(p), Time: p.rec.Timestamp}
}

// isPrompt reports whether a line is a person's prompt, which opens a round.
func isPrompt(p parsed) bool {
	it := p.item
	return it != nil && it.Type == "message" && it.Role == "user" && p.contentIsList && !isContext(p)
}

// contextPrefixes start the texts the client injects as user messages, as
// codex-rs recognises them (is_contextual_user_message and its kin):
// compared with the text's start, white space trimmed, ignoring case.
var contextPrefixes = []string{
	"<environment_context", "<user_instructions>", "# agents.md instructions", "<instructions>",
	"<skills_instructions>", "<skill>", "<user_shell_command>", "<turn_aborted>",
	"<subagent_notification>", "<codex_internal_context", "<recommended_plugins>", "<hook_prompt",
	"<context_update>", "<external_", "<permissions instructions>", "<model_switch>",
	"<collaboration_mode>", "<personality_spec>",
}

// isContext reports whether a user message is context the client injected,
// not a person's prompt. Codex 0.169 records each part's provenance ("user"
// for what a person typed or attached, "harness" and others for what the
// client added); without it, the text's opening tag tells, as the client
// itself tells.
func isContext(p parsed) bool { return contextual(p.item.Meta, p.parts) }

// contextual reports whether a user message of these parts, with this
// metadata, is context the client injected (see isContext).
func contextual(meta *MessageMetadata, parts []ContentItem) bool {
	if m := meta; m != nil && len(m.ContentItemMetadata) > 0 {
		known := true
		for _, c := range m.ContentItemMetadata {
			if c.Provenance == nil {
				known = false
				continue
			}
			if c.Provenance.Type == "user" {
				return false
			}
		}
		if known {
			return true
		}
	}
	for _, pt := range parts {
		if pt.Text != nil && contextLabel(*pt.Text) != "" {
			return true
		}
	}
	return false
}

// contextLabel names an injected text by its opening tag
// ("environment_context"), or returns "" when it has none of the client's.
func contextLabel(s string) string {
	t := strings.TrimLeft(s, " \t\r\n")
	low := strings.ToLower(t[:min(len(t), 40)])
	for _, pre := range contextPrefixes {
		if strings.HasPrefix(low, pre) {
			if pre == "# agents.md instructions" {
				return "AGENTS.md"
			}
			return tagName(t)
		}
	}
	return ""
}

// tagName returns the name of the tag that starts s ("<a b>" -> "a b"), or
// "" when s does not start with a short tag.
func tagName(s string) string {
	if !strings.HasPrefix(s, "<") {
		return ""
	}
	end := strings.IndexAny(s, ">\n")
	if end < 2 || end > 64 || s[end] != '>' {
		return ""
	}
	return strings.TrimSuffix(s[1:end], "/")
}

// Finish describes the session from the state after its last round.
func (format) Finish(_ *lifecycle.Context, st State, _ []source.Node) source.Finished {
	return source.Finished{FirstPrompt: st.FirstPrompt, Meta: session.Meta{
		SessionID:     st.SessionID,
		Title:         lifecycle.Opt(st.Title),
		Model:         lifecycle.Opt(st.Model),
		Started:       lifecycle.Opt(st.Started),
		Ended:         lifecycle.Opt(st.Ended),
		Project:       lifecycle.Opt(st.Project),
		GitBranch:     lifecycle.Opt(st.GitBranch),
		ClientVersion: lifecycle.Opt(st.ClientVersion),
		ForkedFrom:    lifecycle.Opt(st.ForkedFrom),
		Leaf:          lifecycle.Opt(st.LastItem),
	}}
}

// toolRef locates a tool call's block within the round's items.
type toolRef struct{ item, block int }

// itemizer itemizes one round's lines as they arrive, from the state at
// the round's start. Everything it decides depends on the round's lines
// only, so a round rebuilt from its first line (an append) comes out the
// same.
type itemizer struct {
	c     *lifecycle.Context
	st    State
	items []session.Item
	// pending are blocks of lines that came before the round's first item
	// (the context the client injects before the first prompt): the first
	// item takes them. pendingIDs are those lines' identities, and
	// pendingTime the first one's time.
	pending     []session.Block
	pendingIDs  []string
	pendingTime string
	// modelOpen reports that the last item is the model's and takes more of
	// its output; a tool's output or any input ends it.
	modelOpen bool
	calls     map[string]toolRef
	nodes     []source.Node
	// Tokens as token_usage_record lines count them, and as token_count
	// events do (older clients write only these).
	usageTokens, eventTokens int64
}

// Open starts itemizing a round from the state at its start.
func (format) Open(c *lifecycle.Context, st State) lifecycle.Itemizer[parsed, State] {
	return &itemizer{c: c, st: st, calls: make(map[string]toolRef)}
}

// Add itemizes one line of the round.
func (rb *itemizer) Add(p parsed) {
	rb.observe(p)
	rb.place(p)
}

// Close returns the round's items, the state after it and its graph nodes.
func (rb *itemizer) Close() lifecycle.Itemized[State] {
	if len(rb.pendingIDs) > 0 {
		// Context with no item to join: an item of its own, named after
		// its first line.
		first := rb.pendingIDs[0]
		var own []session.Block
		for len(rb.pending) > 0 && (rb.pending[0].Entry == first || rb.pending[0].Entry == "") {
			blk := rb.pending[0]
			blk.Entry, blk.Time = "", ""
			own = append(own, blk)
			rb.pending = rb.pending[1:]
		}
		rb.pendingIDs = rb.pendingIDs[1:]
		rb.newItemID(first, rb.pendingTime, "system", "context", own)
	}
	tokens := rb.usageTokens
	if tokens == 0 {
		tokens = rb.eventTokens
	}
	return lifecycle.Itemized[State]{Items: rb.items, State: rb.st, Nodes: rb.nodes, Tokens: tokens}
}

// observe folds a line's metadata into the state.
func (rb *itemizer) observe(p parsed) {
	st := &rb.st
	switch p.rec.Type {
	case "session_meta":
		var m SessionMeta
		if json.Unmarshal(p.rec.Payload, &m) != nil {
			return
		}
		if st.SessionID == "" {
			st.SessionID = m.ID
		}
		if st.Project == "" {
			st.Project = m.CWD
		}
		if m.CLIVersion != "" {
			st.ClientVersion = m.CLIVersion
		}
		if m.Git != nil && m.Git.Branch != "" && st.GitBranch == "" {
			st.GitBranch = m.Git.Branch
		}
		if m.ForkedFromID != "" && st.ForkedFrom == "" {
			st.ForkedFrom = m.ForkedFromID
		}
	case "turn_context":
		var tc TurnContext
		if json.Unmarshal(p.rec.Payload, &tc) != nil {
			return
		}
		if st.Model == "" {
			st.Model = tc.Model
		}
		if st.Project == "" {
			st.Project = tc.CWD
		}
	case "token_usage_record":
		var u tokenUsageRecord
		if json.Unmarshal(p.rec.Payload, &u) == nil && u.Usage != nil {
			rb.usageTokens += u.Usage.TotalTokens
		}
	case "event_msg":
		var ev EventMsg
		if json.Unmarshal(p.rec.Payload, &ev) != nil {
			return
		}
		switch ev.Type {
		case "thread_name_updated":
			if ev.ThreadName != "" {
				st.Title = ev.ThreadName
			}
		case "token_count":
			if ev.Info != nil && ev.Info.LastTokenUsage != nil {
				rb.eventTokens += ev.Info.LastTokenUsage.TotalTokens
			}
		}
	}
}

// place shows a line: as an item, as blocks of an item, or not at all.
func (rb *itemizer) place(p parsed) {
	rec := p.rec
	switch rec.Type {
	case "response_item":
		if p.item == nil {
			rb.fold(p, rb.raw(p, "response_item"))
			return
		}
		rb.responseItem(p)
	case "compacted":
		var c Compacted
		blk := session.Block{Kind: session.KindCompaction, Compaction: &session.Compaction{}}
		if json.Unmarshal(rec.Payload, &c) == nil && c.Message != nil {
			blk.Text, blk.Origin = *c.Message, at(p, "payload.message")
			// The summary names its line, as a folded summary does (and
			// a summary mark without one does not parse back).
			blk.Entry, blk.Time = p.id(), rec.Timestamp
		}
		rb.newItem(p, "system", "compaction", []session.Block{blk})
		rb.modelOpen = false
	case "event_msg":
		var ev EventMsg
		if json.Unmarshal(rec.Payload, &ev) != nil {
			return
		}
		switch ev.Type {
		case "error", "warning", "stream_error":
			if ev.Message != "" {
				rb.fold(p, session.Block{Kind: session.KindReminder, Label: ev.Type, Text: ev.Message, Origin: at(p, "payload.message")})
			}
		}
	case "session_meta", "turn_context", "world_state", "token_usage_record":
		// Bookkeeping: kept in the round files, not shown.
	default:
		rb.fold(p, rb.raw(p, rec.Type))
	}
}

// raw is a line shown as recorded.
func (rb *itemizer) raw(p parsed, label string) session.Block {
	if label == "" {
		label = "entry"
	}
	return session.Block{Kind: session.KindRaw, Label: label, Text: lifecycle.ValidText(p.e.Raw), Origin: at(p, "")}
}

func (rb *itemizer) responseItem(p parsed) {
	it := p.item
	switch it.Type {
	case "message":
		switch {
		case !p.contentIsList:
			blk := session.Block{Kind: session.KindRaw, Label: "message", Text: lifecycle.ValidText(p.e.Raw), Origin: at(p, "")}
			rb.fold(p, blk)
		case it.Role == "user" && !isContext(p):
			rb.prompt(p)
		case it.Role == "user" || it.Role == "developer" || it.Role == "system":
			rb.fold(p, rb.reminders(p)...)
		case it.Role == "assistant":
			blocks := rb.content(p)
			if p.rec.Metadata != nil && p.rec.Metadata.CompactionOutput {
				rb.newItem(p, "assistant", "compaction summary", blocks)
				rb.modelOpen = false
				return
			}
			rb.model(p, blocks...)
		default:
			rb.fold(p, rb.raw(p, it.Role))
		}
	case "reasoning":
		var blocks []session.Block
		for i, raw := range it.Summary {
			var pt ContentItem
			if json.Unmarshal(raw, &pt) == nil && pt.Text != nil {
				blocks = append(blocks, session.Block{Kind: session.KindThinking, Text: *pt.Text, Origin: at(p, fmt.Sprintf("payload.summary.%d.text", i))})
			} else {
				blocks = append(blocks, session.Block{Kind: session.KindRaw, Label: "summary", Text: lifecycle.ValidText(raw), Origin: at(p, fmt.Sprintf("payload.summary.%d", i))})
			}
		}
		for i, pt := range p.parts {
			if pt.Text != nil {
				blocks = append(blocks, session.Block{Kind: session.KindThinking, Label: "raw", Text: *pt.Text, Origin: at(p, fmt.Sprintf("payload.content.%d.text", i))})
			} else {
				blocks = append(blocks, session.Block{Kind: session.KindRaw, Label: "reasoning", Text: lifecycle.ValidText(p.raws[i]), Origin: at(p, fmt.Sprintf("payload.content.%d", i))})
			}
		}
		if len(blocks) > 0 {
			rb.model(p, blocks...)
		}
		// Reasoning with nothing readable (only encrypted content) is
		// kept in the round files and not shown.
	case "function_call":
		rb.call(p, it.Name, inputJSON(it.Arguments, true), "payload.arguments")
	case "custom_tool_call":
		rb.call(p, it.Name, inputJSON(it.Input, false), "payload.input")
	case "local_shell_call":
		rb.call(p, "local_shell", inputJSON(it.Action, false), "payload.action")
	case "function_call_output", "custom_tool_call_output":
		rb.output(p)
	default:
		rb.fold(p, rb.raw(p, it.Type))
	}
}

// inputJSON is a tool call's input as the document shows it: compact JSON.
// A function call's arguments are a JSON document inside a string
// (unwrap): shown as that document, or as the string's text when it is
// not JSON.
func inputJSON(raw json.RawMessage, unwrap bool) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if unwrap && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = []byte(s)
		}
	}
	return lifecycle.CompactJSON(raw)
}

func (rb *itemizer) call(p parsed, name, input, path string) {
	blk := session.Block{Kind: session.KindToolUse, Label: name, ID: p.item.CallID, Input: input, Origin: at(p, path)}
	i, j := rb.model(p, blk)
	if id := p.item.CallID; id != "" {
		if _, dup := rb.calls[id]; !dup {
			rb.calls[id] = toolRef{i, j}
		}
	}
}

// output joins a tool's output to its call, or shows it on its own when
// the call is not in this round (or already has an output).
func (rb *itemizer) output(p parsed) {
	res := &session.Result{Entry: p.id(), Time: p.rec.Timestamp}
	res.Parts, res.Error = rb.outputParts(p)
	id := p.item.CallID
	if ref, ok := rb.calls[id]; ok && id != "" && rb.items[ref.item].Blocks[ref.block].Result == nil {
		rb.items[ref.item].Blocks[ref.block].Result = res
		rb.record(p.id(), rb.items[ref.item].IDs[0], "")
		rb.modelOpen = false
		return
	}
	rb.fold(p, session.Block{Kind: session.KindToolResult, ID: id, Result: res})
}

func (rb *itemizer) outputParts(p parsed) ([]session.Part, bool) {
	out := bytes.TrimSpace(p.item.Output)
	if len(out) == 0 || string(out) == "null" {
		return nil, false
	}
	switch out[0] {
	case '"':
		// A string of the line, which decoded.
		return []session.Part{{Kind: session.KindText, Text: jsonpatch.DecodeString(out), Origin: at(p, "payload.output")}}, false
	case '[':
		if raws, ok := elements(out); ok {
			parts := make([]session.Part, 0, len(raws))
			for i, raw := range raws {
				pt := decodePart(raw)
				path := fmt.Sprintf("payload.output.%d", i)
				switch {
				case pt.Text != nil && (pt.Type == "input_text" || pt.Type == "output_text" || pt.Type == "text"):
					parts = append(parts, session.Part{Kind: session.KindText, Text: *pt.Text, Origin: at(p, path+".text")})
				case pt.Type == "input_image" && rb.image(pt.ImageURL) != nil:
					parts = append(parts, session.Part{Kind: session.KindFile, File: rb.image(pt.ImageURL)})
				default:
					parts = append(parts, session.Part{Kind: session.KindRaw, Text: lifecycle.ValidText(raw), Origin: at(p, path)})
				}
			}
			return parts, false
		}
	case '{':
		// Older clients: {"content": "...", "success": false}.
		var o struct {
			Content *string `json:"content"`
			Success *bool   `json:"success"`
		}
		if json.Unmarshal(out, &o) == nil && o.Content != nil {
			return []session.Part{{Kind: session.KindText, Text: *o.Content, Origin: at(p, "payload.output.content")}}, o.Success != nil && !*o.Success
		}
	}
	return []session.Part{{Kind: session.KindRaw, Text: lifecycle.ValidText(out), Origin: at(p, "payload.output")}}, false
}

// prompt starts the item of a person's prompt.
func (rb *itemizer) prompt(p parsed) {
	rb.newItem(p, "user", "", rb.content(p))
	rb.modelOpen = false
	if rb.st.FirstPrompt == "" {
		var texts []string
		for _, pt := range p.parts {
			if pt.Text != nil && !isImageTag(*pt.Text) {
				texts = append(texts, *pt.Text)
			}
		}
		rb.st.FirstPrompt = lifecycle.FirstLine(strings.Join(texts, "\n"))
	}
}

// isImageTag reports whether a text part is the tag the client puts around
// an attached image ("<image name=[Image #1] path=...>", "</image>").
func isImageTag(s string) bool {
	return strings.HasPrefix(s, "<image ") && strings.HasSuffix(s, ">") && !strings.Contains(s, "\n") || s == "</image>"
}

// content converts the parts of a message.
func (rb *itemizer) content(p parsed) []session.Block {
	out := make([]session.Block, 0, len(p.parts))
	for i, pt := range p.parts {
		path := fmt.Sprintf("payload.content.%d", i)
		switch {
		case pt.Text != nil && (pt.Type == "input_text" || pt.Type == "output_text" || pt.Type == "text"):
			out = append(out, session.Block{Kind: session.KindText, Text: *pt.Text, Origin: at(p, path+".text")})
		case pt.Type == "input_image" && rb.image(pt.ImageURL) != nil:
			out = append(out, session.Block{Kind: session.KindFile, File: rb.image(pt.ImageURL)})
		default:
			label := pt.Type
			if label == "" {
				label = "part"
			}
			out = append(out, session.Block{Kind: session.KindRaw, Label: label, Text: lifecycle.ValidText(p.raws[i]), Origin: at(p, path)})
		}
	}
	return out
}

// reminders converts the parts of a message the client injected, or of a
// developer message: one reminder per text.
func (rb *itemizer) reminders(p parsed) []session.Block {
	blocks := rb.content(p)
	for i := range blocks {
		if blocks[i].Kind != session.KindText {
			continue
		}
		label := contextLabel(blocks[i].Text)
		if label == "" {
			label = tagName(strings.TrimSpace(blocks[i].Text))
		}
		if label == "" {
			label = p.item.Role
		}
		blocks[i].Kind, blocks[i].Label = session.KindReminder, label
	}
	return blocks
}

// image decodes a data URL ("data:image/png;base64,...") into a file
// beside the document, named as every adapter names files: the first 8
// bytes of the SHA-256 of its bytes in hex, and an extension from the
// media type (docs/FORMAT.md §2). It returns nil for any other URL.
func (rb *itemizer) image(url string) *session.File {
	f := dataImage(url, "")
	if f == nil {
		return nil
	}
	return rb.c.File(f.Type, f.MediaType, f.Data)
}

// model adds the model's output to its open item, or starts one. It returns
// where the last block went.
func (rb *itemizer) model(p parsed, blocks ...session.Block) (item, block int) {
	if i := len(rb.items) - 1; rb.modelOpen && i >= 0 {
		it := &rb.items[i]
		it.IDs = append(it.IDs, p.id())
		it.Blocks = append(it.Blocks, blocks...)
		rb.record(p.id(), it.IDs[0], "")
		rb.seen(p.rec.Timestamp)
		return i, len(it.Blocks) - 1
	}
	i := rb.newItem(p, "assistant", "", blocks)
	rb.modelOpen = true
	return i, len(blocks) - 1
}

// fold shows blocks of line p in the round's last item, or keeps them for
// the round's first item.
func (rb *itemizer) fold(p parsed, blocks ...session.Block) {
	for i := range blocks {
		// The kinds whose marks name the line they came from.
		if k := blocks[i].Kind; k == session.KindReminder || k == session.KindRaw {
			blocks[i].Entry, blocks[i].Time = p.id(), p.rec.Timestamp
		}
	}
	rb.modelOpen = false
	i := len(rb.items) - 1
	if i < 0 {
		if len(rb.pendingIDs) == 0 {
			rb.pendingTime = p.rec.Timestamp
		}
		rb.pending = append(rb.pending, blocks...)
		rb.pendingIDs = append(rb.pendingIDs, p.id())
		return
	}
	rb.items[i].Blocks = append(rb.items[i].Blocks, blocks...)
	rb.record(p.id(), rb.items[i].IDs[0], "")
}

// newItem starts an item for line p. The blocks kept for the round's first
// item follow its own.
func (rb *itemizer) newItem(p parsed, role, note string, blocks []session.Block) int {
	return rb.newItemID(p.id(), p.rec.Timestamp, role, note, blocks)
}

func (rb *itemizer) newItemID(id, time, role, note string, blocks []session.Block) int {
	pending, pendingIDs := rb.pending, rb.pendingIDs
	rb.pending, rb.pendingIDs = nil, nil
	rb.items = append(rb.items, session.Item{Time: time, Role: role, Note: note, IDs: []string{id}, Blocks: append(blocks, pending...)})
	rb.record(id, id, rb.st.LastItem)
	rb.st.LastItem = id
	for _, pid := range pendingIDs {
		rb.record(pid, id, "")
	}
	rb.seen(time)
	return len(rb.items) - 1
}

// seen widens the session's time span to t.
func (rb *itemizer) seen(t string) { lifecycle.Widen(&rb.st.Started, &rb.st.Ended, t) }

func (rb *itemizer) record(uuid, anchor, parent string) {
	if n := len(rb.nodes); n > 0 && rb.nodes[n-1].UUID == uuid {
		return
	}
	rb.nodes = append(rb.nodes, source.Node{UUID: uuid, Anchor: anchor, Parent: parent})
}

// at returns the origin of a value at path in line p.
func at(p parsed, path string) *session.Origin {
	return &session.Origin{Line: p.e.Line, Path: path}
}
