package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A Builder turns the lines of one rollout into rounds (see the package
// documentation for how). It is a [source.Builder].
type Builder struct {
	cfg source.Config
	st  State
	// cur is the open round (nil before its first line).
	cur *roundBuild
	// curPrompt reports whether the open round already has its prompt.
	curPrompt bool
	nodes     []source.Node
	// rec, when set, takes each closed round's nodes instead of nodes.
	rec      source.Recorder
	warnings []error
}

var _ source.Builder = (*Builder)(nil)

// State is where a rollout stood at the end of its last closed round. It is
// small and is persisted between runs.
type State struct {
	Round    int    `json:"round"`     // last closed round (0: none)
	NextLine int    `json:"next_line"` // first line of the open round
	Items    int    `json:"items"`     // items in closed rounds
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

// NewBuilder starts a builder at state st (the zero State for a new
// rollout). Codex's items form a single chain, so the builder needs no
// graph of earlier runs.
func NewBuilder(cfg source.Config, st State) *Builder {
	if st.NextLine == 0 {
		st.NextLine = 1
	}
	return &Builder{cfg: cfg, st: st}
}

// Warnings returns the problems found in the input so far, each naming the
// file and line.
func (b *Builder) Warnings() []error { return b.warnings }

// Nodes returns the graph nodes of the rounds closed so far by this builder:
// one per line an item shows (none when they went to a source.Recorder).
func (b *Builder) Nodes() []source.Node { return b.nodes }

// State returns the state at the last closed round.
func (b *Builder) State() (json.RawMessage, error) { return json.Marshal(b.st) }

// Rounds is the number of rounds closed so far.
func (b *Builder) Rounds() int { return b.st.Round }

func (b *Builder) warnf(line int, format string, args ...any) {
	b.warnings = append(b.warnings, &source.LineError{File: b.cfg.File, Line: line, Msg: fmt.Sprintf(format, args...)})
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

// Add feeds one line. It returns the round the line closed, if any.
func (b *Builder) Add(l source.Line) *session.Round {
	e := session.Entry{Line: l.No, Raw: l.Raw, NoNewline: !l.Terminated, Offset: l.Offset, Len: len(l.Raw)}
	if !b.cfg.RawInSource {
		e.Raw = append([]byte(nil), l.Raw...)
	}
	p := b.parse(e)
	if p.rec != nil && p.rec.Type == "session_meta" {
		b.checkFork(p)
	}
	closed := b.add(p)
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
func (b *Builder) AddEntry(e session.Entry) *session.Round { return b.add(b.parse(e)) }

// checkFork warns when a fork's source rollout is not beside it: the
// document records the fork, but codex resume needs the source.
func (b *Builder) checkFork(p parsed) {
	var m SessionMeta
	if json.Unmarshal(p.rec.Payload, &m) != nil || m.ForkedFromID == "" || !strings.HasSuffix(b.cfg.File, ".jsonl") {
		return
	}
	if _, err := os.Stat(b.cfg.File); err != nil {
		return
	}
	root, _ := splitDated(b.cfg.File)
	if FindRollout(root, m.ForkedFromID) == "" {
		b.warnf(p.e.Line, "forked from thread %s, whose rollout is not in %s: recorded as forked_from; codex resume needs that rollout beside this one", m.ForkedFromID, root)
	}
}

func (b *Builder) add(p parsed) *session.Round {
	var closed *session.Round
	if isPrompt(p) {
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
		// Kept so the source comes back byte for byte; not an entry.
		p.e.Invalid = true
		return p
	}
	var rec RolloutLine
	err := json.Unmarshal(raw, &rec)
	if err == nil && bytes.TrimSpace(raw)[0] != '{' {
		err = fmt.Errorf("a JSON value that is not an object")
	}
	if err != nil {
		p.e.Invalid = true
		b.warnf(e.Line, "not a JSON object (%v): kept in the backing store, not shown", shortErr(err))
		return p
	}
	if !utf8.Valid(raw) {
		b.warnf(e.Line, "invalid UTF-8: kept byte for byte in the backing store, shown with U+FFFD")
	}
	p.rec = &rec
	switch rec.Type {
	case "response_item":
		var it ResponseItem
		if err := json.Unmarshal(rec.Payload, &it); err != nil {
			b.warnf(e.Line, "a response item scribe cannot read (%v): shown as recorded", shortErr(err))
			return p
		}
		p.item = &it
		if c := bytes.TrimSpace(it.Content); len(c) > 0 && c[0] == '[' {
			if json.Unmarshal(c, &p.raws) == nil {
				p.contentIsList = true
				p.parts = make([]ContentItem, len(p.raws))
				for i, r := range p.raws {
					json.Unmarshal(r, &p.parts[i])
				}
			}
		}
		if !knownItem(it.Type) {
			b.warnf(e.Line, "response item of type %q, which scribe does not know: shown as recorded", it.Type)
		}
	case "session_meta", "turn_context", "world_state", "token_usage_record", "event_msg", "compacted":
	default:
		b.warnf(e.Line, "record of type %q, which scribe does not know: shown as recorded", rec.Type)
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

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
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
func isContext(p parsed) bool {
	if m := p.item.Meta; m != nil && len(m.ContentItemMetadata) > 0 {
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
	for _, pt := range p.parts {
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

// close ends the open round as closed and advances the state.
func (b *Builder) close() *session.Round {
	r, st, nodes := b.cur.finish()
	r.Open = false
	b.st = st
	b.st.NextLine = b.cur.lastLine + 1
	if b.rec != nil {
		b.rec.Record(nodes)
	} else {
		b.nodes = append(b.nodes, nodes...)
	}
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
// State stays that of the last closed round.
func (b *Builder) Finish() source.Finished {
	var open *session.Round
	st := b.st
	if b.cur != nil {
		open, st, _ = b.cur.finish()
		open.Open = true
		b.cur = nil
	}
	return source.Finished{Open: open, Meta: meta(st), FirstPrompt: st.FirstPrompt}
}

func meta(st State) session.Meta {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return session.Ptr(s)
	}
	return session.Meta{
		SessionID:     st.SessionID,
		Messages:      st.Items,
		Title:         opt(st.Title),
		Model:         opt(st.Model),
		Started:       opt(st.Started),
		Ended:         opt(st.Ended),
		Project:       opt(st.Project),
		GitBranch:     opt(st.GitBranch),
		ClientVersion: opt(st.ClientVersion),
		ForkedFrom:    opt(st.ForkedFrom),
		Leaf:          opt(st.LastItem),
	}
}

// toolRef locates a tool call's block within the round's items.
type toolRef struct{ item, block int }

// roundBuild itemizes one round's lines as they arrive, from the state at
// the round's start. Everything it decides depends on the round's lines
// only, so a round rebuilt from its first line (an append) comes out the
// same.
type roundBuild struct {
	b     *Builder
	r     *session.Round
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
	lastLine  int
	stamp     string // the first timestamp, for a round without items
	// Tokens as token_usage_record lines count them, and as token_count
	// events do (older clients write only these).
	usageTokens, eventTokens int64
}

func (b *Builder) startRound() *roundBuild {
	return &roundBuild{b: b, r: &session.Round{N: b.st.Round + 1}, st: b.st, calls: make(map[string]toolRef)}
}

func (rb *roundBuild) add(p parsed) {
	rb.r.Entries = append(rb.r.Entries, p.e)
	rb.lastLine = p.e.Line
	if p.rec == nil {
		return
	}
	if rb.stamp == "" {
		rb.stamp = p.rec.Timestamp
	}
	rb.observe(p)
	rb.place(p)
}

// finish returns the round, the state after it and its graph nodes.
func (rb *roundBuild) finish() (*session.Round, State, []source.Node) {
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
	r := rb.r
	r.Items = rb.items
	if len(r.Items) > 0 {
		r.Items[0].Round = r.N
		r.Started = r.Items[0].Time
	} else {
		r.Started = rb.stamp
	}
	r.TokenCount = rb.usageTokens
	if r.TokenCount == 0 {
		r.TokenCount = rb.eventTokens
	}
	st := rb.st
	st.Round = r.N
	st.Items += len(r.Items)
	return r, st, rb.nodes
}

// observe folds a line's metadata into the state.
func (rb *roundBuild) observe(p parsed) {
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
func (rb *roundBuild) place(p parsed) {
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
func (rb *roundBuild) raw(p parsed, label string) session.Block {
	if label == "" {
		label = "entry"
	}
	return session.Block{Kind: session.KindRaw, Label: label, Text: validText(p.e.Raw), Origin: at(p, "")}
}

func (rb *roundBuild) responseItem(p parsed) {
	it := p.item
	switch it.Type {
	case "message":
		switch {
		case !p.contentIsList:
			blk := session.Block{Kind: session.KindRaw, Label: "message", Text: validText(p.e.Raw), Origin: at(p, "")}
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
				blocks = append(blocks, session.Block{Kind: session.KindRaw, Label: "summary", Text: validText(raw), Origin: at(p, fmt.Sprintf("payload.summary.%d", i))})
			}
		}
		for i, pt := range p.parts {
			if pt.Text != nil {
				blocks = append(blocks, session.Block{Kind: session.KindThinking, Label: "raw", Text: *pt.Text, Origin: at(p, fmt.Sprintf("payload.content.%d.text", i))})
			} else {
				blocks = append(blocks, session.Block{Kind: session.KindRaw, Label: "reasoning", Text: validText(p.raws[i]), Origin: at(p, fmt.Sprintf("payload.content.%d", i))})
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
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return validText(raw)
	}
	return validText(buf.Bytes())
}

func (rb *roundBuild) call(p parsed, name, input, path string) {
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
func (rb *roundBuild) output(p parsed) {
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

func (rb *roundBuild) outputParts(p parsed) ([]session.Part, bool) {
	out := bytes.TrimSpace(p.item.Output)
	if len(out) == 0 || string(out) == "null" {
		return nil, false
	}
	switch out[0] {
	case '"':
		var s string
		if json.Unmarshal(out, &s) == nil {
			return []session.Part{{Kind: session.KindText, Text: s, Origin: at(p, "payload.output")}}, false
		}
	case '[':
		var raws []json.RawMessage
		if json.Unmarshal(out, &raws) == nil {
			parts := make([]session.Part, 0, len(raws))
			for i, raw := range raws {
				var pt ContentItem
				json.Unmarshal(raw, &pt)
				path := fmt.Sprintf("payload.output.%d", i)
				switch {
				case pt.Text != nil && (pt.Type == "input_text" || pt.Type == "output_text" || pt.Type == "text"):
					parts = append(parts, session.Part{Kind: session.KindText, Text: *pt.Text, Origin: at(p, path+".text")})
				case pt.Type == "input_image" && rb.image(pt.ImageURL) != nil:
					parts = append(parts, session.Part{Kind: session.KindFile, File: rb.image(pt.ImageURL)})
				default:
					parts = append(parts, session.Part{Kind: session.KindRaw, Text: validText(raw), Origin: at(p, path)})
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
	return []session.Part{{Kind: session.KindRaw, Text: validText(out), Origin: at(p, "payload.output")}}, false
}

// prompt starts the item of a person's prompt.
func (rb *roundBuild) prompt(p parsed) {
	rb.newItem(p, "user", "", rb.content(p))
	rb.modelOpen = false
	if rb.st.FirstPrompt == "" {
		var texts []string
		for _, pt := range p.parts {
			if pt.Text != nil && !isImageTag(*pt.Text) {
				texts = append(texts, *pt.Text)
			}
		}
		rb.st.FirstPrompt = firstLine(strings.Join(texts, "\n"))
	}
}

// isImageTag reports whether a text part is the tag the client puts around
// an attached image ("<image name=[Image #1] path=...>", "</image>").
func isImageTag(s string) bool {
	return strings.HasPrefix(s, "<image ") && strings.HasSuffix(s, ">") && !strings.Contains(s, "\n") || s == "</image>"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// content converts the parts of a message.
func (rb *roundBuild) content(p parsed) []session.Block {
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
			out = append(out, session.Block{Kind: session.KindRaw, Label: label, Text: validText(p.raws[i]), Origin: at(p, path)})
		}
	}
	return out
}

// reminders converts the parts of a message the client injected, or of a
// developer message: one reminder per text.
func (rb *roundBuild) reminders(p parsed) []session.Block {
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
func (rb *roundBuild) image(url string) *session.File {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return nil
	}
	head, data, ok := strings.Cut(rest, ",")
	mediaType, isB64 := strings.CutSuffix(head, ";base64")
	if !ok || !isB64 {
		return nil
	}
	bs, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(bs)
	name := hex.EncodeToString(sum[:8]) + "." + extension(mediaType)
	return &session.File{Type: "image", MediaType: mediaType, Path: rb.b.cfg.DocBase + "/files/" + name, Data: bs}
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

// model adds the model's output to its open item, or starts one. It returns
// where the last block went.
func (rb *roundBuild) model(p parsed, blocks ...session.Block) (item, block int) {
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
func (rb *roundBuild) fold(p parsed, blocks ...session.Block) {
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
func (rb *roundBuild) newItem(p parsed, role, note string, blocks []session.Block) int {
	return rb.newItemID(p.id(), p.rec.Timestamp, role, note, blocks)
}

func (rb *roundBuild) newItemID(id, time, role, note string, blocks []session.Block) int {
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
func (rb *roundBuild) seen(t string) {
	if t == "" {
		return
	}
	if rb.st.Started == "" || t < rb.st.Started {
		rb.st.Started = t
	}
	if t > rb.st.Ended {
		rb.st.Ended = t
	}
}

func (rb *roundBuild) record(uuid, anchor, parent string) {
	if n := len(rb.nodes); n > 0 && rb.nodes[n-1].UUID == uuid {
		return
	}
	rb.nodes = append(rb.nodes, source.Node{UUID: uuid, Anchor: anchor, Parent: parent})
}

// at returns the origin of a value at path in line p.
func at(p parsed, path string) *session.Origin {
	return &session.Origin{Line: p.e.Line, Path: path}
}

// validText returns raw bytes as a string, with invalid UTF-8 replaced: the
// document is always valid UTF-8; the exact bytes stay in the round files.
func validText(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}
