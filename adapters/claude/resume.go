package claude

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Resume reads a transcript and returns the conversation Claude Code sends
// its model when it resumes it (source.Resumer), rebuilt as the client
// rebuilds it: the chain of entries from the last message of the
// conversation back to its root by parentUuid (a rewind's other branches
// are not on it; sidechains neither); a compaction boundary ends the chain
// the client sends (its logicalParentUuid leads on to the history before
// it, which Resumed.Items keeps), the summary after it is sent as a
// person's text, and the segment the compaction preserved is sent after
// the summary. A call of the last reply without a result is not sent. Unreadable lines are skipped, as the client skips them.
// origin is not used: a fork's transcript holds its history.
func (a *Adapter) Resume(r io.Reader, origin func(id string) (io.ReadCloser, error)) (*source.Resumed, error) {
	byID := map[string]*resumeEntry{}
	var all []*resumeEntry
	var leaf *resumeEntry
	lr := source.NewLineReader(r, 1, 0) // a file's long line read into one buffer of its size
	for {
		line, err := lr.Next()
		if err == nil && !source.IsBlank(line.Raw) {
			var w resumeWire
			if json.Unmarshal(line.Raw, &w) == nil && w.UUID != "" && !w.IsSidechain {
				e := &resumeEntry{Type: w.Type, Subtype: w.Subtype, UUID: w.UUID, ParentUUID: w.ParentUUID,
					LogicalParentUUID: w.LogicalParentUUID, Timestamp: w.Timestamp, IsCompactSummary: w.IsCompactSummary,
					Message: w.Message, Attachment: w.Attachment, CompactMetadata: w.CompactMetadata}
				// Every entry with an identity is a link of the chain
				// (progress entries too).
				if _, dup := byID[e.UUID]; !dup {
					byID[e.UUID] = e
					all = append(all, e)
				}
				if e.Type == "user" || e.Type == "assistant" {
					leaf = e
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	// The chain, leaf first.
	var chain []*resumeEntry
	seen := map[string]bool{}
	for e := leaf; e != nil && !seen[e.UUID]; {
		seen[e.UUID] = true
		chain = append(chain, e)
		next := e.ParentUUID
		if next == nil && e.Subtype == "compact_boundary" {
			next = e.LogicalParentUUID
		}
		if next == nil {
			break
		}
		e = byID[*next]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	chain = preserve(rejoin(chain, all))
	x := &claudeResumer{calls: map[string]*session.Block{}}
	for _, e := range chain {
		x.entry(e)
	}
	x.dropUnanswered()
	return &source.Resumed{Items: x.items}, nil
}

// rejoin puts back on the chain the entries of a reply (one message id)
// that the chain left off, with the results that answer them: the client
// writes each parallel call of a reply as an entry of its own, and a
// result can hang off any of them, which leaves the others on branches;
// the client gathers them again when it sends the conversation.
func rejoin(chain, all []*resumeEntry) []*resumeEntry {
	on := map[string]bool{}
	for _, e := range chain {
		on[e.UUID] = true
	}
	msgID := func(e *resumeEntry) string {
		if e.Type == "assistant" {
			return e.Message.id
		}
		return ""
	}
	children := map[string][]*resumeEntry{}
	byMsg := map[string][]*resumeEntry{}
	for _, e := range all {
		if e.ParentUUID != nil {
			children[*e.ParentUUID] = append(children[*e.ParentUUID], e)
		}
		if id := msgID(e); id != "" {
			byMsg[id] = append(byMsg[id], e)
		}
	}
	out := append([]*resumeEntry(nil), chain...)
	for _, e := range chain {
		id := msgID(e)
		if id == "" {
			continue
		}
		for _, o := range byMsg[id] {
			if on[o.UUID] {
				continue
			}
			on[o.UUID] = true
			out = append(out, o)
			for _, c := range children[o.UUID] {
				if c.Type == "user" && !on[c.UUID] {
					on[c.UUID] = true
					out = append(out, c)
				}
			}
		}
	}
	// In the order they were written.
	pos := make(map[*resumeEntry]int, len(all))
	for i, e := range all {
		pos[e] = i
	}
	slices.SortStableFunc(out, func(a, b *resumeEntry) int { return pos[a] - pos[b] })
	return out
}

// preserve moves the segment a compaction preserved (from its head to its
// tail, before the boundary in the chain) to after the summary (its
// anchor), where the client sends it.
func preserve(chain []*resumeEntry) []*resumeEntry {
	for b, e := range chain {
		if e.Subtype != "compact_boundary" || e.CompactMetadata == nil || e.CompactMetadata.PreservedSegment == nil {
			continue
		}
		ps := e.CompactMetadata.PreservedSegment
		head, tail, anchor := -1, -1, -1
		for i, c := range chain {
			switch c.UUID {
			case ps.HeadUUID:
				head = i
			case ps.TailUUID:
				tail = i
			case ps.AnchorUUID:
				anchor = i
			}
		}
		if ps.HeadUUID == ps.TailUUID {
			tail = head
		}
		if head < 0 || tail < head || tail >= b || anchor <= b {
			continue
		}
		seg := append([]*resumeEntry(nil), chain[head:tail+1]...)
		out := append([]*resumeEntry(nil), chain[:head]...)
		out = append(out, chain[tail+1:anchor+1]...)
		out = append(out, seg...)
		out = append(out, chain[anchor+1:]...)
		chain = out
	}
	return chain
}

type claudeResumer struct {
	items []session.Item
	calls map[string]*session.Block // call id -> its call, while it has no result
}

func (x *claudeResumer) entry(e *resumeEntry) {
	switch e.Type {
	case "system":
		if e.Subtype == "compact_boundary" {
			c := &session.Compaction{}
			if e.CompactMetadata != nil {
				c.Trigger = e.CompactMetadata.Trigger
			}
			x.items = append(x.items, session.Item{Time: e.Timestamp, Role: "system", Note: "compaction",
				Blocks: []session.Block{{Kind: session.KindCompaction, Compaction: c}}})
			x.calls = map[string]*session.Block{}
		}
	case "attachment":
		var a struct{ Type string }
		if json.Unmarshal(e.Attachment, &a) != nil || a.Type == "" {
			a.Type = "attachment"
		}
		x.add(session.Item{Time: e.Timestamp, Role: "user", Blocks: []session.Block{{Kind: session.KindReminder, Label: a.Type, Text: string(e.Attachment)}}})
	case "user", "assistant":
		m := &e.Message
		if !m.ok {
			return
		}
		if e.Type == "user" && e.IsCompactSummary {
			if n := len(x.items); n > 0 && source.IsCompaction(&x.items[n-1]) && x.items[n-1].Blocks[0].Text == "" {
				x.items[n-1].Blocks[0].Text = m.content.text()
				return
			}
			x.items = append(x.items, session.Item{Time: e.Timestamp, Role: "system", Note: "compaction",
				Blocks: []session.Block{{Kind: session.KindCompaction, Text: m.content.text(), Compaction: &session.Compaction{}}}})
			return
		}
		it := session.Item{Time: e.Timestamp, Role: e.Type}
		if m.content.str != nil {
			it.Blocks = []session.Block{x.text(e, *m.content.str)}
		} else {
			for _, b := range m.content.blocks {
				x.block(e, &it, b)
			}
		}
		if len(it.Blocks) > 0 {
			x.add(it)
		}
	}
}

// text is a text of an entry: a person's, a reply's, or context the client
// added (a meta message, a text in one of its tags).
func (x *claudeResumer) text(e *resumeEntry, s string) session.Block {
	if e.Type == "user" && clientTag(s) != "" {
		return session.Block{Kind: session.KindReminder, Label: clientTag(s), Text: s}
	}
	return session.Block{Kind: session.KindText, Text: s}
}

func (x *claudeResumer) block(e *resumeEntry, it *session.Item, b resumeBlock) {
	switch b.Type {
	case "text":
		// The client leaves out a reply's text of white space alone.
		if b.Text != nil && *b.Text != "" && !(e.Type == "assistant" && strings.TrimSpace(*b.Text) == "") {
			it.Blocks = append(it.Blocks, x.text(e, *b.Text))
		}
	case "thinking":
		if b.Thinking != nil {
			it.Blocks = append(it.Blocks, session.Block{Kind: session.KindThinking, Text: *b.Thinking})
		}
	case "image", "document":
		if f := sourceFile(b.Block); f != nil {
			it.Blocks = append(it.Blocks, session.Block{Kind: session.KindFile, File: f})
		}
	case "tool_use":
		in := "{}"
		var buf bytes.Buffer
		if json.Compact(&buf, b.Input) == nil {
			in = buf.String()
		}
		name := b.Name
		if n, ok := renamed[name]; ok {
			name = n // the client sends an old tool name as the tool's new one
		}
		it.Blocks = append(it.Blocks, session.Block{Kind: session.KindToolUse, Label: name, ID: b.ID, Input: in})
	case "tool_result":
		res := &session.Result{Time: e.Timestamp, Error: b.IsError != nil && *b.IsError}
		if b.Content.str != nil {
			res.Parts = []session.Part{{Kind: session.KindText, Text: *b.Content.str}}
		} else {
			parts := b.Content.blocks
			refs := 0
			for _, p := range parts {
				if p.Type == "tool_reference" {
					refs++
				}
			}
			if refs > 0 && refs == len(parts) {
				// What the client sends for a tool search's references
				// when it does not search tools itself.
				parts = []resumeBlock{{Block: Block{Type: "text", Text: &toolRefsRemoved}}}
			}
			for _, p := range parts {
				switch {
				case p.Type == "text" && p.Text != nil:
					res.Parts = append(res.Parts, session.Part{Kind: session.KindText, Text: *p.Text})
				case p.Type == "image" && sourceFile(p.Block) != nil:
					res.Parts = append(res.Parts, session.Part{Kind: session.KindFile, File: sourceFile(p.Block)})
				default:
					res.Parts = append(res.Parts, session.Part{Kind: session.KindRaw, Text: p.Type})
				}
			}
		}
		if call := x.calls[b.ToolUseID]; call != nil {
			call.Result = res
			delete(x.calls, b.ToolUseID)
		} else {
			it.Blocks = append(it.Blocks, session.Block{Kind: session.KindToolResult, ID: b.ToolUseID, Result: res})
		}
	}
}

// add appends an item, joining the parts of one reply (entries of one
// message) and consecutive messages of a person into one.
func (x *claudeResumer) add(it session.Item) {
	if n := len(x.items); n > 0 && x.items[n-1].Role == it.Role && !source.IsCompaction(&x.items[n-1]) {
		x.items[n-1].Blocks = append(x.items[n-1].Blocks, it.Blocks...)
	} else {
		x.items = append(x.items, it)
	}
	last := &x.items[len(x.items)-1]
	for j := range last.Blocks {
		if b := &last.Blocks[j]; b.Kind == session.KindToolUse && b.Result == nil && b.ID != "" {
			x.calls[b.ID] = b
		}
	}
}

// dropUnanswered takes off the calls of the last reply that never got
// their result (the session ended in the middle of them): the client does
// not send them.
func (x *claudeResumer) dropUnanswered() {
	for i := len(x.items) - 1; i >= 0 && i >= len(x.items)-2; i-- {
		if x.items[i].Role != "assistant" {
			continue
		}
		kept := x.items[i].Blocks[:0]
		for _, b := range x.items[i].Blocks {
			if b.Kind == session.KindToolUse && b.Result == nil && x.calls[b.ID] != nil {
				continue
			}
			kept = append(kept, b)
		}
		x.items[i].Blocks = kept
		break
	}
}

// renamed are the tools Claude Code renamed, by their old names.
var renamed = map[string]string{"Task": "Agent", "BashOutput": "TaskOutput", "KillShell": "TaskStop"}

var toolRefsRemoved = "[Tool references removed - tool search not enabled]"

// clientTag names the tag a text the client added starts with
// ("system-reminder", "command-name"), or returns "".
func clientTag(s string) string {
	t := strings.TrimLeft(s, " \t\r\n")
	if strings.HasPrefix(t, "Caveat: The messages below were generated by the user while running local commands") {
		return "local-command-caveat"
	}
	for _, tag := range clientTags {
		if strings.HasPrefix(t, "<"+tag+">") || strings.HasPrefix(t, "<"+tag+" ") {
			return tag
		}
	}
	return ""
}

var clientTags = []string{"system-reminder", "local-command-caveat", "local-command-stdout", "local-command-stderr",
	"command-name", "command-message", "command-args", "bash-input", "bash-stdout", "bash-stderr", "user-memory-input"}

// sourceFile is an image or document block's bytes as a file.
func sourceFile(b Block) *session.File {
	if b.Source == nil || b.Source.Type != "base64" {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(b.Source.Data)
	if err != nil {
		return nil
	}
	return &session.File{Type: b.Type, MediaType: b.Source.MediaType, Data: data}
}

// resumeWire is what Resume reads of an entry: its links, and its message
// decoded where the line is read, not kept as raw bytes to decode later: a
// line of 100 MB is held as the texts it holds, once, and the raw fields
// Resume does not read (a tool result's toolUseResult) are not held at
// all. An entry that Entry does not decode is skipped, as it was.
type resumeWire struct {
	Entry
	Message       resumeMessage `json:"message,omitempty"`
	Content       skipped       `json:"content,omitempty"`
	Rendered      skipped       `json:"rendered,omitempty"`
	ToolUseResult skipped       `json:"toolUseResult,omitempty"`
}

// resumeEntry is what Resume keeps of an entry until the chain is known:
// not the fields every entry repeats (the working directory, the session,
// the version), which a session of a million entries would hold each time.
type resumeEntry struct {
	Type, Subtype, UUID           string
	ParentUUID, LogicalParentUUID *string
	Timestamp                     string
	IsCompactSummary              bool
	Message                       resumeMessage
	Attachment                    json.RawMessage
	CompactMetadata               *CompactMeta
}

// skipped is a value Resume does not read: not copied, as the RawMessage
// it stands for would be.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// resumeMessage is an entry's message as Resume reads it: ok when it
// decodes as a Message, and its id (read even when it does not).
type resumeMessage struct {
	ok      bool
	id      string
	content resumeContent
}

// UnmarshalJSON never fails: a message that does not decode leaves its
// entry a link of the chain that sends nothing, as it is for the client.
func (m *resumeMessage) UnmarshalJSON(data []byte) error {
	var w struct {
		ID      string        `json:"id,omitempty"`
		Role    string        `json:"role"`
		Model   string        `json:"model,omitempty"`
		Content resumeContent `json:"content"`
		Usage   *Usage        `json:"usage,omitempty"`
	}
	if json.Unmarshal(data, &w) == nil {
		*m = resumeMessage{ok: true, id: w.ID, content: w.Content}
		return nil
	}
	var id struct{ ID string }
	if json.Unmarshal(data, &id) == nil {
		m.id = id.ID
	}
	return nil
}

// resumeContent is a message's content or a tool result's: a string, else
// the blocks it holds (none when it is neither).
type resumeContent struct {
	str    *string
	blocks []resumeBlock
}

// UnmarshalJSON never fails, as a content that is neither is none.
func (c *resumeContent) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		// A string of a line that decoded: decoded once from its bytes,
		// where json.Unmarshal unquotes it and then copies it.
		s := jsonpatch.DecodeString(data)
		c.str = &s
		return nil
	}
	if len(data) > 0 && data[0] != '[' {
		var s string
		if json.Unmarshal(data, &s) == nil {
			c.str = &s
			return nil
		}
	}
	json.Unmarshal(data, &c.blocks)
	return nil
}

// text is the text of a content: its string, or its text blocks joined.
func (c *resumeContent) text() string {
	if c.str != nil {
		return *c.str
	}
	var texts []string
	for _, b := range c.blocks {
		if b.Type == "text" && b.Text != nil {
			texts = append(texts, *b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// resumeBlock is a content block as Resume reads it: a tool result's
// content decoded, not kept raw.
type resumeBlock struct {
	Block
	Content resumeContent `json:"content,omitempty"`
}

var _ source.Resumer = (*Adapter)(nil)
