package exportclaude

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Losses is what a conversion could not carry as it was.
type Losses = exportcore.Losses

// ClientVersion is the version of Claude Code a converted transcript says
// wrote it: the version whose resume of such transcripts the tests judge.
const ClientVersion = "2.1.328"

// Convert writes a Claude Code transcript of a session document inscribed
// from another client (docs/FORMAT.md, "Cross-agent export"), and returns
// what it could not carry. What it carries is what the source client sends
// its model when it resumes the session (exportcore.Resume: the source file
// written back from the store, a person's edits carried, rebuilt by src's
// Resumer): the prompts, the replies, the tool calls with their full
// results, images, messages from other agents, web searches, the project's
// instructions Claude Code does not load, and compactions with what they
// keep, as Claude Code's own entries chained by uuid and parentUuid, under
// the session's id; the working directory and the title. Every identity it
// mints is derived from the session id and a position, so two conversions
// of a document are identical.
func Convert(d *inscribe.Doc, src exportcore.Source, w io.Writer) (*Losses, error) {
	return exportcore.Convert(d, src, w, func(c *exportcore.Conversation, bw *bufio.Writer, losses *Losses) error {
		x := &converter{c: c, bw: bw, sid: c.Meta.SessionID, losses: losses, long: exportcore.NewLongTexts(true),
			ids: map[string]string{}, consumed: map[string]bool{}, placed: map[string]bool{}, later: map[string]*session.Result{}}
		return x.run()
	})
}

// ConvertSession writes the transcript of Convert into the project
// directory dir, as <session id>.jsonl, where claude --resume finds it. An
// existing identical file is left alone; a different one is an error
// unless opts.Force.
func ConvertSession(d *inscribe.Doc, src exportcore.Source, dir string, opts Options) ([]File, *Losses, error) {
	f, losses, _, err := exportcore.WriteConversion(d, dir, func(m *session.Meta) string { return m.SessionID + ".jsonl" }, opts, func(w io.Writer) (*Losses, error) {
		return Convert(d, src, w)
	})
	if err != nil {
		return nil, losses, err
	}
	return []File{f}, losses, nil
}

// entry is an entry as a conversion writes it: the wire type of
// adapters/claude, with the fields every entry of a chain carries written
// out even when empty (a root's parentUuid is null, not absent), and those
// a compaction's entries add.
type entry struct {
	ParentUUID  *string `json:"parentUuid"`
	IsSidechain bool    `json:"isSidechain"`
	UserType    string  `json:"userType,omitempty"`
	claude.Entry
	Level                     string `json:"level,omitempty"`
	IsVisibleInTranscriptOnly bool   `json:"isVisibleInTranscriptOnly,omitempty"`
}

// message is an assistant message as a conversion writes it.
type message struct {
	claude.Message
	Type string `json:"type"`
}

type converter struct {
	c      *exportcore.Conversation
	bw     *bufio.Writer
	sid    string
	n      int     // entries written
	prev   *string // the uuid of the chain's last entry
	losses *exportcore.Losses
	long   *exportcore.LongTexts // the long texts of the line being encoded
	ids    map[string]string     // tool call id -> the id written, when it had to change
	// later holds results that come after their call's item (a result
	// the source recorded apart from its call), by call id; consumed
	// marks those written with their call.
	later    map[string]*session.Result
	consumed map[string]bool
	placed   map[string]bool // results met after their call wrote them
	// instructions is set once the project's instructions are carried;
	// unnamed counts the calls without an id (web searches), each given
	// one.
	instructions bool
	unnamed      int
}

func (x *converter) run() error {
	for _, it := range x.c.Items {
		for _, b := range it.Blocks {
			if b.Kind == session.KindToolResult && b.Result != nil && b.ID != "" {
				if _, dup := x.later[b.ID]; !dup {
					x.later[b.ID] = b.Result
				}
			}
		}
	}
	for i := range x.c.Items {
		if err := x.item(i, &x.c.Items[i]); err != nil {
			return err
		}
	}
	if t := session.Str(x.c.Meta.Title); t != "" {
		x.write(map[string]any{"type": "custom-title", "customTitle": t, "sessionId": x.sid})
	}
	return nil
}

func (x *converter) write(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("exportclaude: encode an entry: %v", err))
	}
	x.long.Write(x.bw, data)
	x.bw.WriteByte('\n')
}

// chain writes an entry of the chain: it gets its uuid and its parent.
func (x *converter) chain(e *entry, time string) {
	u := exportcore.ID(x.sid, "entry", x.n)
	x.n++
	e.UUID, e.SessionID, e.Timestamp, e.Version = u, x.sid, time, ClientVersion
	e.CWD = session.Str(x.c.Meta.Project)
	e.GitBranch = session.Str(x.c.Meta.GitBranch)
	e.UserType = "external"
	if e.ParentUUID == nil && e.Subtype != "compact_boundary" {
		e.ParentUUID = x.prev
	}
	x.write(e)
	x.prev = &u
}

func (x *converter) item(i int, it *session.Item) error {
	if source.IsCompaction(it) {
		x.compaction(it)
		return nil
	}
	switch {
	case strings.HasPrefix(it.Note, "message from") && it.Role == "user":
		x.losses.AddDetail(exportcore.Transformed, exportcore.WhatAgentMessage, it.Note, "messages",
			"a message another agent sent (a subagent's report) reached the model as a message of its own; Claude Code has no such message, so its text is carried as a person's message, as the model received it")
	case it.Note != "" && (it.Role == "user" || it.Role == "assistant"):
		x.losses.AddDetail(exportcore.Transformed, exportcore.WhatNote, it.Note, "messages",
			"Claude Code's entries have no place for what kind of message the source said it was; the message is carried as a plain "+it.Role+" message")
	}
	var content []claude.Block
	var calls []*session.Block
	seg := 0 // the reply's messages written
	for j := range it.Blocks {
		b := &it.Blocks[j]
		switch b.Kind {
		case session.KindText:
			if it.Role != "user" && it.Role != "assistant" {
				x.losses.AddDetail(exportcore.Dropped, exportcore.WhatSystem, it.Role+" "+it.Note, "blocks",
					"what the source client showed its user is not part of the conversation the model continues")
				continue
			}
			if len(calls) > 0 {
				// A reply's text after its calls came after their
				// results: a message of its own, after them.
				x.assistant(i, seg, it, content, calls)
				content, calls = nil, nil
				seg++
			}
			content = append(content, claude.Block{Type: "text", Text: session.Ptr(x.long.Mark(b.Text))})
		case session.KindToolUse:
			if b.ID == "" {
				x.unnamed++
				b.ID = "toolu_" + strings.ReplaceAll(exportcore.ID(x.sid, "unnamed call", x.unnamed), "-", "")
				if b.Label == "web_search" {
					x.losses.Add(exportcore.Transformed, exportcore.WhatSearch, 1, "searches",
						"a web search the model's server ran: the source records what it asked (its action) and its status, not what it found; it is carried as a call of web_search with the action as its input and the status as its result")
				}
			}
			if it.Role != "assistant" {
				x.losses.AddDetail(exportcore.Dropped, exportcore.WhatRaw, "a tool call in a "+it.Role+" message", "blocks", "Claude Code keeps tool calls in assistant messages only")
				continue
			}
			content = append(content, x.toolUse(b))
			calls = append(calls, b)
		case session.KindFile:
			blk, ok, err := x.file(b.File)
			if err != nil {
				return err
			}
			if !ok || it.Role != "user" {
				x.losses.AddDetail(exportcore.Dropped, exportcore.WhatFile, b.File.MediaType, "files",
					"Claude Code holds images (PNG, JPEG, GIF, WebP) and PDF documents that a person attached; the store keeps the file")
				continue
			}
			content = append(content, blk)
		case session.KindToolResult:
			// Written with its call (see later), or dropped.
			switch {
			case !x.consumed[b.ID]:
				x.consumed[b.ID] = true
				x.losses.Add(exportcore.Dropped, exportcore.WhatOrphan, 1, "results",
					"Claude Code's API needs a result right after its call; the call of this result is not in the live conversation")
			case x.placed[b.ID]:
				x.losses.Add(exportcore.Dropped, exportcore.WhatRepeated, 1, "results", exportcore.Repeated)
			default:
				x.placed[b.ID] = true // the one written with its call
			}
		case session.KindReminder:
			if b.Label == "AGENTS.md" && !x.instructions {
				x.instructions = true
				x.projectInstructions(it, b.Text)
				continue
			}
			x.dropBlock(b)
		default:
			x.dropBlock(b)
		}
	}
	switch {
	case len(content) == 0:
		return nil
	case it.Role == "assistant":
		x.assistant(i, seg, it, content, calls)
	default:
		e := &entry{}
		e.Type = "user"
		e.Message = x.userMessage(content)
		x.chain(e, it.Time)
	}
	return nil
}

// dropBlock counts a block the export does not carry.
func (x *converter) dropBlock(b *session.Block) {
	switch b.Kind {
	case session.KindThinking:
		label := "reasoning summary"
		if b.Label != "" {
			label = "reasoning, " + b.Label
		}
		x.losses.AddDetail(exportcore.Dropped, exportcore.WhatThinking, label, "blocks",
			"Claude Code sends thinking back to the API, which accepts only thinking it signed itself; another model's reasoning cannot be signed, so it is not carried (the store keeps it)")
	case session.KindReminder:
		x.losses.AddDetail(exportcore.Dropped, exportcore.WhatReminder, b.Label, "blocks",
			"context the source client gave its model (instructions, environment, notices); Claude Code gives its own on resume")
	default:
		exportcore.DropBlock(x.losses, b, "Claude Code's entries")
	}
}

func (x *converter) userMessage(content []claude.Block) json.RawMessage {
	var c any = content
	if len(content) == 1 && content[0].Type == "text" {
		c = *content[0].Text // a typed prompt: Claude Code writes it as a string
	}
	data, _ := json.Marshal(claude.Message{Role: "user", Content: mustJSON(c)})
	return data
}

func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("exportclaude: encode: %v", err))
	}
	return data
}

// assistant writes an assistant message and, in one user entry after it,
// the results of its calls.
func (x *converter) assistant(i, seg int, it *session.Item, content []claude.Block, calls []*session.Block) {
	id := exportcore.ID(x.sid, "message", i)
	if seg > 0 {
		id = exportcore.ID(x.sid, "message", i, seg)
	}
	m := message{Type: "message"}
	m.ID = "msg_" + strings.ReplaceAll(id, "-", "")
	m.Role, m.Model = "assistant", session.Str(x.c.Meta.Model)
	m.Content = mustJSON(content)
	e := &entry{}
	e.Type = "assistant"
	e.Message = mustJSON(m)
	x.chain(e, it.Time)
	if len(calls) == 0 {
		return
	}
	var results []claude.Block
	time := it.Time
	for _, b := range calls {
		res := b.Result
		if res == nil {
			if r, ok := x.later[b.ID]; ok && !x.consumed[b.ID] {
				res = r
				x.consumed[b.ID] = true
				x.losses.Add(exportcore.Transformed, exportcore.WhatMoved, 1, "results",
					"Claude Code's API needs a call's result right after the call; the source recorded it later, so it is moved there")
			}
		}
		if res == nil {
			x.losses.Add(exportcore.Transformed, exportcore.WhatNoResult, 1, "",
				`the session ended or was cut before the call's result; Claude Code drops a call without a result, and the reply that made it, so the call is given the result "aborted", as Codex itself sends for it`)
			results = append(results, claude.Block{Type: "tool_result", ToolUseID: x.toolID(b.ID), Content: mustJSON("aborted"), IsError: session.Ptr(true)})
			continue
		}
		if res.Time > time {
			time = res.Time
		}
		results = append(results, x.toolResult(b.ID, res))
	}
	u := &entry{}
	u.Type = "user"
	u.Message = mustJSON(claude.Message{Role: "user", Content: mustJSON(results)})
	x.chain(u, time)
}

// validToolID reports whether s is a call id or a tool name the API
// accepts: 1 to 64 ASCII letters, digits, '_' and '-'. (A loop, not a
// regular expression: {1,64} compiled to 64 copies of the class, at every
// start of scribe.)
func validToolID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// toolID is the id a call is written under: its own, when the API accepts
// it.
func (x *converter) toolID(id string) string {
	if w, ok := x.ids[id]; ok {
		return w
	}
	w := id
	if !validToolID(id) {
		w = "toolu_" + strings.ReplaceAll(exportcore.ID(x.sid, "call", id), "-", "")
		x.losses.Add(exportcore.Transformed, exportcore.WhatToolID, 1, "ids",
			"the API accepts call ids of letters, digits, '_' and '-' only; the call and its result get a derived id")
	}
	x.ids[id] = w
	return w
}

var invalidName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) })

func (x *converter) toolUse(b *session.Block) claude.Block {
	name := b.Label
	if !validToolID(name) {
		name = invalidName().ReplaceAllString(name, "_")
		if len(name) > 64 {
			name = name[:64]
		}
		if name == "" {
			name = "tool"
		}
		x.losses.AddDetail(exportcore.Transformed, exportcore.WhatToolID, "name "+b.Label, "ids",
			"the API accepts tool names of 1 to 64 letters, digits, '_' and '-'; other characters become '_'")
	}
	return claude.Block{Type: "tool_use", ID: x.toolID(b.ID), Name: name, Input: x.input(b)}
}

// input is a call's input as Claude Code holds it: a JSON object. Any
// other input (a custom tool's free text, a JSON value that is not an
// object) is wrapped as {"input": value}.
func (x *converter) input(b *session.Block) json.RawMessage {
	in := strings.TrimSpace(b.Input)
	if in == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(in), &obj) == nil && obj != nil {
		return json.RawMessage(in)
	}
	var v any = in
	if json.Valid([]byte(in)) {
		v = json.RawMessage(in)
	}
	x.losses.AddDetail(exportcore.Transformed, exportcore.WhatToolInput, b.Label, "calls",
		`a tool call's input is a JSON object in Claude Code; this one is not (a custom tool's free text), so it is carried as {"input": …}`)
	return mustJSON(map[string]any{"input": v})
}

// toolResult is a result as a tool_result block: a string when it is one
// text, else a list of text and image blocks. Nothing is cut.
func (x *converter) toolResult(callID string, res *session.Result) claude.Block {
	blk := claude.Block{Type: "tool_result", ToolUseID: x.toolID(callID)}
	if res.Error {
		blk.IsError = session.Ptr(true)
	}
	var parts []claude.Block
	for _, p := range res.Parts {
		switch p.Kind {
		case session.KindText:
			parts = append(parts, claude.Block{Type: "text", Text: session.Ptr(x.long.Mark(p.Text))})
		case session.KindFile:
			b, ok, err := x.file(p.File)
			if err == nil && ok && b.Type == "image" {
				parts = append(parts, b)
				continue
			}
			x.losses.AddDetail(exportcore.Dropped, exportcore.WhatResultPart, p.File.MediaType, "parts",
				"a tool result holds text and images (PNG, JPEG, GIF, WebP) in Claude Code; the store keeps the file")
		default:
			x.losses.AddDetail(exportcore.Dropped, exportcore.WhatResultPart, "unknown part", "parts",
				"a part of a tool result that scribe does not model has no equivalent in Claude Code's results")
		}
	}
	switch {
	case len(parts) == 0:
		blk.Content = mustJSON("")
	case len(parts) == 1 && parts[0].Type == "text":
		blk.Content = mustJSON(*parts[0].Text)
	default:
		blk.Content = mustJSON(parts)
	}
	return blk
}

// file is an image or PDF document as a content block; ok is false for a
// file of another type.
func (x *converter) file(f *session.File) (claude.Block, bool, error) {
	typ := ""
	switch f.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		typ = "image"
	case "application/pdf":
		typ = "document"
	default:
		return claude.Block{}, false, nil
	}
	data, err := exportcore.FileData(x.c.Doc, f)
	if err != nil {
		return claude.Block{}, false, err
	}
	return claude.Block{Type: typ, Source: &claude.Source{Type: "base64", MediaType: f.MediaType, Data: base64.StdEncoding.EncodeToString(data)}}, true, nil
}

// compaction writes a compaction as Claude Code writes its own: a
// compact_boundary, which starts a new chain (its logical parent is the
// entry before it), and the summary the conversation continues from. What
// the source client re-sends with its compaction in place of the history
// before it (Codex's replacement history: the person's earlier prompts,
// messages from other agents, the project's instructions) is carried in
// the summary, after the source's own summary when it has one in words.
func (x *converter) compaction(it *session.Item) {
	b := &it.Blocks[0]
	summary, n := exportcore.Kept(it, x.c.Meta.AgentName, x.losses, "Claude Code", x.dropBlock)
	if n > 0 {
		x.losses.Add(exportcore.Transformed, exportcore.WhatKept, n, "messages",
			"what the source client sends in place of the history before its compaction (Codex's replacement history: the person's earlier prompts) is carried as the text of Claude Code's summary, each message as it was")
	}
	x.losses.Add(exportcore.Transformed, exportcore.WhatCompaction, 1, "",
		"carried as Claude Code's own compaction (a compact_boundary and the summary after it): Claude Code resumes from the summary and what follows, as the source client did")
	e := &entry{Level: "info"}
	e.Type, e.Subtype = "system", "compact_boundary"
	e.Content = mustJSON("Conversation compacted")
	e.LogicalParentUUID = x.prev
	e.CompactMetadata = &claude.CompactMeta{Trigger: "auto"}
	if c := b.Compaction; c != nil && c.Trigger != "" {
		e.CompactMetadata.Trigger = c.Trigger
	}
	x.chain(e, it.Time)
	if summary == "" {
		return
	}
	s := &entry{IsVisibleInTranscriptOnly: true}
	s.Type = "user"
	s.IsCompactSummary = true
	s.Message = mustJSON(claude.Message{Role: "user", Content: mustJSON(x.long.Mark(summary))})
	time := it.Time
	if b.Time != "" {
		time = b.Time
	}
	x.chain(s, time)
}

// projectInstructions carries the project's instructions (AGENTS.md),
// which Claude Code does not load, once, as context: a meta message in a
// system-reminder, as Claude Code gives its model a project's CLAUDE.md.
func (x *converter) projectInstructions(it *session.Item, text string) {
	x.losses.Add(exportcore.Transformed, exportcore.WhatInstructions, 1, "",
		"Claude Code does not load a project's AGENTS.md, which the source client sent its model: the instructions are carried once, as context (a meta message) where the source sent them first; later copies are dropped as reminders")
	e := &entry{}
	e.Type = "user"
	e.IsMeta = true
	text = "<system-reminder>\nThe project's instructions (AGENTS.md), which " + x.c.Meta.AgentName + " gave the model:\n\n" + text + "\n</system-reminder>"
	e.Message = x.userMessage([]claude.Block{{Type: "text", Text: session.Ptr(x.long.Mark(text))}})
	x.chain(e, it.Time)
}
