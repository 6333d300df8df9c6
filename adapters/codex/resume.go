package codex

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// Resume reads a rollout and returns the conversation Codex sends its model
// when it resumes it (source.Resumer), rebuilt as the client rebuilds it:
//
//   - every response item of the conversation, in order (messages,
//     reasoning, tool calls and their outputs, web and tool searches,
//     messages from other agents);
//   - a compacted record replaces the history before it: with its
//     replacement_history (what the client keeps, the person's earlier
//     prompts and the opaque compaction of the server) when it has one,
//     else the person's earlier prompts and the summary in its message;
//   - a thread_rolled_back event takes the last turns off;
//   - a fork starts with its origin's history up to the fork;
//   - a call without an output gets "aborted", as the client sends it,
//     and an output without its call is left out.
//
// The items before a compaction are kept in Resumed.Items (see
// source.Resumed); Sent is what the client sends. Unreadable lines are
// skipped, as the client skips them.
func (a *Adapter) Resume(r io.Reader, origin func(id string) (io.ReadCloser, error)) (*source.Resumed, error) {
	return resume(r, origin, 0)
}

// resumer rebuilds a rollout's history.
type resumer struct {
	items   []session.Item
	out     *source.Resumed
	calls   map[string]*session.Block // call id -> its call, while it has no output
	prompts []session.Item            // the person's prompts so far (for a compaction without replacement history)
}

func resume(r io.Reader, origin func(id string) (io.ReadCloser, error), depth int) (*source.Resumed, error) {
	x := &resumer{out: &source.Resumed{}, calls: map[string]*session.Block{}}
	// A file's long line is read into one buffer of its size, and a
	// record's raw values are left in it (decodeLine): a record is read
	// before the next line.
	lr := source.NewLineReader(r, 1, 0)
	first := true
	for {
		line, err := lr.Next()
		if err == nil && !source.IsBlank(line.Raw) {
			if rec, derr := decodeLine(line.Raw); derr == nil {
				if first && rec.Type == "session_meta" {
					x.fork(rec, origin, depth)
				}
				first = false
				x.record(rec)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	x.abort()
	x.out.Items = x.items
	return x.out, nil
}

// fork puts the origin's history up to the fork first.
func (x *resumer) fork(rec RolloutLine, origin func(id string) (io.ReadCloser, error), depth int) {
	var m SessionMeta
	if json.Unmarshal(rec.Payload, &m) != nil || m.ForkedFromID == "" || depth > 16 {
		return
	}
	if origin == nil {
		x.out.Missing = append(x.out.Missing, m.ForkedFromID)
		return
	}
	f, err := origin(m.ForkedFromID)
	if err != nil {
		x.out.Missing = append(x.out.Missing, m.ForkedFromID)
		return
	}
	defer f.Close()
	// The origin's lines up to the fork's start.
	var cut bytes.Buffer
	br := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		var head struct{ Timestamp string }
		if json.Unmarshal(line, &head) == nil && (m.Timestamp == "" || head.Timestamp == "" || head.Timestamp <= rec.Timestamp) {
			cut.Write(line)
			if len(line) > 0 && line[len(line)-1] != '\n' {
				cut.WriteByte('\n')
			}
		}
		if err != nil {
			break
		}
	}
	o, err := resume(&cut, origin, depth+1)
	if err != nil {
		x.out.Missing = append(x.out.Missing, m.ForkedFromID)
		return
	}
	x.out.Missing = append(x.out.Missing, o.Missing...)
	for _, it := range o.Items {
		x.add(it)
	}
}

func (x *resumer) record(rec RolloutLine) {
	switch rec.Type {
	case "response_item":
		it, err := decodeItem(rec.Payload)
		if err != nil {
			return
		}
		x.responseItem(rec, &it)
	case "compacted":
		x.compacted(rec)
	case "event_msg":
		var ev struct {
			Type     string `json:"type"`
			NumTurns int    `json:"num_turns"`
		}
		if json.Unmarshal(rec.Payload, &ev) == nil && ev.Type == "thread_rolled_back" {
			x.rollback(ev.NumTurns)
		}
	}
}

// add appends an item, joining a reply's parts into the reply before it.
func (x *resumer) add(it session.Item) {
	if n := len(x.items); n > 0 && it.Role == "assistant" && x.items[n-1].Role == "assistant" && it.Note == "" && x.items[n-1].Note == "" {
		x.items[n-1].Blocks = append(x.items[n-1].Blocks, it.Blocks...)
		x.reindex(n - 1)
		return
	}
	x.items = append(x.items, it)
	x.reindex(len(x.items) - 1)
}

// reindex records where the calls of item i are, for their outputs.
func (x *resumer) reindex(i int) {
	for j := range x.items[i].Blocks {
		b := &x.items[i].Blocks[j]
		if b.Kind == session.KindToolUse && b.Result == nil && b.ID != "" {
			x.calls[b.ID] = b
		}
	}
}

func (x *resumer) responseItem(rec RolloutLine, it *ResponseItem) {
	var parts []ContentItem
	var raws []json.RawMessage
	if c := bytes.TrimSpace(it.Content); len(c) > 0 && c[0] == '[' {
		var ok bool
		if raws, ok = elements(c); ok {
			parts = make([]ContentItem, len(raws))
			for i, r := range raws {
				parts[i] = decodePart(r)
			}
		}
	}
	item := session.Item{Time: rec.Timestamp}
	switch it.Type {
	case "message":
		item.Role = it.Role
		switch {
		case it.Role == "user" && (!contextual(it.Meta, parts) || isSummary(parts)):
			item.Blocks = contentBlocks(parts, raws, false)
			x.prompts = append(x.prompts, item)
		case it.Role == "assistant":
			item.Blocks = contentBlocks(parts, raws, false)
		default:
			item.Blocks = contentBlocks(parts, raws, true)
		}
		if rec.Metadata != nil && rec.Metadata.CompactionOutput {
			item.Note = "compaction summary"
		}
	case "agent_message":
		var am struct {
			Author string `json:"author"`
		}
		json.Unmarshal(rec.Payload, &am)
		item.Role, item.Note = "user", "message from "+am.Author
		if am.Author == "" {
			item.Note = "message from another agent"
		}
		item.Blocks = contentBlocks(parts, raws, false)
	case "reasoning":
		item.Role = "assistant"
		for _, raw := range it.Summary {
			var pt ContentItem
			if json.Unmarshal(raw, &pt) == nil && pt.Text != nil {
				item.Blocks = append(item.Blocks, session.Block{Kind: session.KindThinking, Text: *pt.Text})
			}
		}
		for _, pt := range parts {
			if pt.Text != nil {
				item.Blocks = append(item.Blocks, session.Block{Kind: session.KindThinking, Label: "raw", Text: *pt.Text})
			}
		}
	case "function_call":
		item.Role = "assistant"
		item.Blocks = []session.Block{{Kind: session.KindToolUse, Label: it.Name, ID: it.CallID, Input: inputJSON(it.Arguments, true)}}
	case "custom_tool_call":
		item.Role = "assistant"
		item.Blocks = []session.Block{{Kind: session.KindToolUse, Label: it.Name, ID: it.CallID, Input: inputJSON(it.Input, false)}}
	case "local_shell_call":
		item.Role = "assistant"
		item.Blocks = []session.Block{{Kind: session.KindToolUse, Label: "local_shell", ID: it.CallID, Input: inputJSON(it.Action, false)}}
	case "tool_search_call":
		var ts struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(rec.Payload, &ts)
		item.Role = "assistant"
		item.Blocks = []session.Block{{Kind: session.KindToolUse, Label: "tool_search", ID: it.CallID, Input: inputJSON(ts.Arguments, true)}}
	case "web_search_call":
		// The search ran on the server: the model sees its action, and
		// the rollout records its status, not what it found.
		var ws struct {
			Status string `json:"status"`
		}
		json.Unmarshal(rec.Payload, &ws)
		item.Role = "assistant"
		in := inputJSON(it.Action, false)
		if in == "" {
			in = "{}"
		}
		item.Blocks = []session.Block{{Kind: session.KindToolUse, Label: "web_search", Input: in,
			Result: &session.Result{Time: rec.Timestamp, Parts: []session.Part{{Kind: session.KindText, Text: ws.Status}}}}}
	case "function_call_output", "custom_tool_call_output", "tool_search_output":
		x.output(rec, it)
		return
	case "compaction", "compaction_summary":
		// The server's compaction, opaque, outside a compacted record.
		item.Role = "system"
		item.Note = "compaction"
		item.Blocks = []session.Block{{Kind: session.KindCompaction, Label: "encrypted", Compaction: &session.Compaction{}}}
	default:
		item.Role = "assistant"
		item.Blocks = []session.Block{{Kind: session.KindRaw, Label: it.Type, Text: lifecycle.ValidText(rec.Payload)}}
	}
	if len(item.Blocks) == 0 {
		return
	}
	x.add(item)
}

// output joins an output to its call; an output whose call is not in the
// history is left out, as the client leaves it out.
func (x *resumer) output(rec RolloutLine, it *ResponseItem) {
	call := x.calls[it.CallID]
	if call == nil || it.CallID == "" {
		return
	}
	res := &session.Result{Time: rec.Timestamp}
	out := it.Output
	if it.Type == "tool_search_output" {
		var ts struct {
			Tools json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(rec.Payload, &ts) == nil && len(ts.Tools) > 0 {
			res.Parts = []session.Part{{Kind: session.KindText, Text: lifecycle.ValidText(ts.Tools)}}
		}
	} else {
		res.Parts, res.Error = outputParts(out)
	}
	call.Result = res
	delete(x.calls, it.CallID)
}

// outputParts reads a call's output (see roundBuild.outputParts).
func outputParts(raw json.RawMessage) ([]session.Part, bool) {
	out := bytes.TrimSpace(raw)
	if len(out) == 0 || string(out) == "null" {
		return nil, false
	}
	switch out[0] {
	case '"':
		// A string of the line, which decoded.
		return []session.Part{{Kind: session.KindText, Text: jsonpatch.DecodeString(out)}}, false
	case '[':
		if raws, ok := elements(out); ok {
			parts := make([]session.Part, 0, len(raws))
			for _, r := range raws {
				pt := decodePart(r)
				switch {
				case pt.Text != nil && (pt.Type == "input_text" || pt.Type == "output_text" || pt.Type == "text"):
					if *pt.Text != "" { // the client leaves an empty text out
						parts = append(parts, session.Part{Kind: session.KindText, Text: *pt.Text})
					}
				case pt.Type == "input_image" && dataImage(pt.ImageURL, "files/") != nil:
					parts = append(parts, session.Part{Kind: session.KindFile, File: dataImage(pt.ImageURL, "files/")})
				default:
					parts = append(parts, session.Part{Kind: session.KindRaw, Text: lifecycle.ValidText(r)})
				}
			}
			return parts, false
		}
	case '{':
		var o struct {
			Content *string `json:"content"`
			Success *bool   `json:"success"`
		}
		if json.Unmarshal(out, &o) == nil && o.Content != nil {
			return []session.Part{{Kind: session.KindText, Text: *o.Content}}, o.Success != nil && !*o.Success
		}
	}
	return []session.Part{{Kind: session.KindRaw, Text: lifecycle.ValidText(out)}}, false
}

// contentBlocks converts a message's parts: texts (reminders, labelled by
// their tag, when context is set), images, and raw blocks for the rest.
func contentBlocks(parts []ContentItem, raws []json.RawMessage, context bool) []session.Block {
	var out []session.Block
	for i, pt := range parts {
		switch {
		case pt.Text != nil && (pt.Type == "input_text" || pt.Type == "output_text" || pt.Type == "text"):
			b := session.Block{Kind: session.KindText, Text: *pt.Text}
			if context {
				b.Kind, b.Label = session.KindReminder, contextLabel(*pt.Text)
				if b.Label == "" {
					b.Label = tagName(strings.TrimSpace(*pt.Text))
				}
				if b.Label == "" {
					b.Label = "context"
				}
			}
			out = append(out, b)
		case pt.Type == "input_image" && dataImage(pt.ImageURL, "files/") != nil:
			out = append(out, session.Block{Kind: session.KindFile, File: dataImage(pt.ImageURL, "files/")})
		case pt.Type == "input_image" && strings.HasPrefix(pt.ImageURL, "data:"):
			// An image the client cannot decode: it sends this in its
			// place.
			out = append(out, session.Block{Kind: session.KindText, Text: imageOmitted})
		default:
			label := pt.Type
			if label == "" {
				label = "part"
			}
			out = append(out, session.Block{Kind: session.KindRaw, Label: label, Text: lifecycle.ValidText(raws[i])})
		}
	}
	return out
}

// imageOmitted is what Codex sends in place of an image it cannot decode.
const imageOmitted = "image content omitted because it could not be processed"

// summaryPrefix starts the summary of a compaction, as Codex writes it in
// the user message it sends after one.
const summaryPrefix = "Another language model started to solve this problem"

// isSummary reports whether a user message is a compaction's summary,
// which the model receives as a person's text (the client marks it as its
// own, not the person's).
func isSummary(parts []ContentItem) bool {
	return len(parts) > 0 && parts[0].Text != nil && strings.HasPrefix(*parts[0].Text, summaryPrefix)
}

// compacted replaces the history with what the compaction keeps.
func (x *resumer) compacted(rec RolloutLine) {
	var c struct {
		Message            *string           `json:"message"`
		ReplacementHistory []json.RawMessage `json:"replacement_history"`
	}
	if json.Unmarshal(rec.Payload, &c) != nil {
		return
	}
	x.abort()
	comp := session.Block{Kind: session.KindCompaction, Compaction: &session.Compaction{}, Time: rec.Timestamp}
	if c.Message != nil {
		comp.Text = *c.Message
	}
	item := session.Item{Time: rec.Timestamp, Role: "system", Note: "compaction", Blocks: []session.Block{comp}}
	if c.ReplacementHistory != nil {
		// What the client keeps: its replacement history, read as a
		// history of its own.
		sub := &resumer{out: &source.Resumed{}, calls: map[string]*session.Block{}}
		for _, raw := range c.ReplacementHistory {
			sub.record(RolloutLine{Timestamp: rec.Timestamp, Type: "response_item", Payload: raw})
		}
		sub.abort()
		for _, it := range sub.items {
			item.Blocks = append(item.Blocks, kept(it)...)
		}
		x.prompts = sub.prompts
	} else {
		// The person's earlier prompts, then the summary (a user
		// message, the record's message as it is), as the client builds
		// the history of an older compaction.
		for _, p := range x.prompts {
			item.Blocks = append(item.Blocks, kept(p)...)
		}
		if strings.TrimSpace(comp.Text) != "" {
			item.Blocks = append(item.Blocks, session.Block{Kind: session.KindText, Label: "user", Text: comp.Text})
			if !strings.HasPrefix(comp.Text, summaryPrefix) {
				// A summary not in Codex's own words is a person's
				// message to the next compaction, as to the client.
				x.prompts = append(x.prompts, session.Item{Time: rec.Timestamp, Role: "user",
					Blocks: []session.Block{{Kind: session.KindText, Text: comp.Text}}})
			}
		}
	}
	x.calls = map[string]*session.Block{}
	x.items = append(x.items, item)
}

// kept are the blocks of an item a compaction keeps, texts labelled with
// the item's role.
func kept(it session.Item) []session.Block {
	var out []session.Block
	for _, b := range it.Blocks {
		switch b.Kind {
		case session.KindText:
			b.Label = it.Role
			if it.Note != "" {
				b.Label = it.Role + ", " + it.Note
			}
		case session.KindCompaction:
			// The server's opaque compaction: nothing in words, which a
			// conversion reports.
			b = session.Block{Kind: session.KindRaw, Label: "encrypted compaction"}
		}
		out = append(out, b)
	}
	return out
}

// abort gives every call still without an output the one the client
// sends for it.
func (x *resumer) abort() {
	for id, b := range x.calls {
		b.Result = &session.Result{Parts: []session.Part{{Kind: session.KindText, Text: "aborted"}}}
		delete(x.calls, id)
	}
}

// rollback takes the last n turns (a person's prompt and what followed
// it) off the history.
func (x *resumer) rollback(n int) {
	for ; n > 0; n-- {
		i := len(x.items) - 1
		for i >= 0 && !(x.items[i].Role == "user" && x.items[i].Note == "" && hasText(&x.items[i])) {
			i--
		}
		if i < 0 {
			return
		}
		x.items = x.items[:i]
	}
	x.calls = map[string]*session.Block{}
}

func hasText(it *session.Item) bool {
	for _, b := range it.Blocks {
		if b.Kind == session.KindText || b.Kind == session.KindFile {
			return true
		}
	}
	return false
}

var _ source.Resumer = (*Adapter)(nil)

// dataImage decodes a data URL ("data:image/png;base64,...") into a file
// holding its bytes, or returns nil for any other URL.
func dataImage(url, dir string) *session.File {
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
	return &session.File{Type: "image", MediaType: mediaType, Path: dir, Data: bs}
}
