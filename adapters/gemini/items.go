package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// show makes message m part of the document, continuing item parent, and
// returns its place in the history. A message the document shows already
// in another version (or elsewhere in the chain) is a new item, a
// revision, beside the old.
func (r *round) show(m *message, parent string) Live {
	switch m.class {
	case noteClass:
		r.fold(r.note(m))
		r.shown(m, r.lastItem())
		return liveOf(m, "")
	case contextClass:
		return r.context(m)
	case responseClass:
		item := r.respond(m)
		r.shown(m, item)
		return liveOf(m, item)
	}
	revision := r.exists(m.ID)
	role, note := "user", ""
	var blocks []session.Block
	switch m.class {
	case promptClass:
		blocks = r.userBlocks(m)
		if r.st.FirstPrompt == "" && m.path == "" {
			r.st.FirstPrompt = lifecycle.FirstLine(m.text())
		}
	case snapshotClass:
		role, note = "system", "compaction"
		blocks = r.userBlocks(m)
		for i := range blocks {
			if blocks[i].Kind == session.KindText {
				blocks[i].Kind = session.KindCompaction
				blocks[i].Compaction = &session.Compaction{}
				blocks[i].Entry, blocks[i].Time = m.ID, m.Timestamp
				break
			}
		}
	case replyClass:
		role = "assistant"
		blocks = r.modelBlocks(m)
	default:
		role = m.Type
		if role == "" {
			role = "entry"
		}
		blocks = []session.Block{{Kind: session.KindRaw, Label: role, Text: lifecycle.ValidText(m.Content), Origin: m.at("")}}
	}
	id := r.itemID(m)
	if revision && note == "" {
		note = "revised"
	}
	at := r.newItem(id, m.Timestamp, role, note, blocks, parent)
	r.own[id] = len(blocks)
	r.register(at, m)
	r.shown(m, id)
	return liveOf(m, id)
}

// lastItem is the id of the round's last item, "" when it has none.
func (r *round) lastItem() string {
	if n := len(r.items); n > 0 {
		return r.items[n-1].IDs[0]
	}
	return ""
}

// context shows the session context the client injected: the first time,
// an item of its own, which the conversation continues; later, when it
// differs from the one shown last, a reminder where it came.
func (r *round) context(m *message) Live {
	blocks := r.userBlocks(m)
	for i := range blocks {
		if blocks[i].Kind == session.KindText {
			blocks[i].Kind, blocks[i].Label = session.KindReminder, tagName(blocks[i].Text)
		}
	}
	if r.st.Project == "" {
		r.st.Project = projectOf(m.text())
	}
	if !r.exists(m.ID) {
		r.newItem(m.ID, m.Timestamp, "system", "context", blocks, r.st.Tip)
		r.own[m.ID] = len(blocks)
		r.st.Context = m.hash
		return liveOf(m, m.ID)
	}
	if m.hash != r.st.Context {
		for i := range blocks {
			blocks[i].Entry, blocks[i].Time = m.ID, m.Timestamp
		}
		r.fold(blocks...)
		r.st.Context = m.hash
	}
	return liveOf(m, m.ID)
}

// tagName is the name of the tag a text starts with ("session_context").
func tagName(s string) string {
	t := strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(t, "<") {
		return "context"
	}
	end := strings.IndexAny(t, ">\n ")
	if end < 2 || end > 64 || t[end] != '>' {
		return "context"
	}
	return t[1:end]
}

// note is what the client told its user, as a one-line note.
func (r *round) note(m *message) session.Block {
	text := lifecycle.FirstLine(m.text())
	if r := []rune(text); len(r) > 200 {
		text = string(r[:200]) + " …"
	}
	if text == "" {
		text = m.Type + " (empty)"
	}
	return session.Block{Kind: session.KindNote, Label: m.Type, Text: text, Entry: m.ID, Time: m.Timestamp}
}

// newItem adds an item continuing parent; the blocks kept for the round's
// first item follow its own.
func (r *round) newItem(id, time, role, note string, blocks []session.Block, parent string) int {
	above := r.st.Last
	it := session.Item{Time: time, Role: role, Note: note, IDs: []string{id}, Blocks: append(blocks, r.pending...)}
	r.pending = nil
	switch {
	case parent == above:
	case parent == "":
		it.Parent = "root"
		r.st.Forked = true
	default:
		it.Parent = parent
		r.st.Forked = true
	}
	r.at[id] = len(r.items)
	r.parent[id] = parent
	r.items = append(r.items, it)
	r.nodes = append(r.nodes, source.Node{UUID: id, Anchor: id, Parent: parent})
	r.st.Last = id
	lifecycle.Widen(&r.st.Started, &r.st.Ended, time)
	return len(r.items) - 1
}

// fold adds blocks to the round's last item, or keeps them for its first.
func (r *round) fold(blocks ...session.Block) {
	if i := len(r.items) - 1; i >= 0 {
		r.items[i].Blocks = append(r.items[i].Blocks, blocks...)
		return
	}
	r.pending = append(r.pending, blocks...)
}

// rebuild shows a new version of the message an item of the open round
// shows: its own blocks are replaced, what was folded into it stays.
func (r *round) rebuild(at int, m *message) {
	it := &r.items[at]
	id := it.IDs[0]
	var blocks []session.Block
	switch m.class {
	case replyClass:
		blocks = r.modelBlocks(m)
	case promptClass, snapshotClass:
		blocks = r.userBlocks(m)
	default:
		return
	}
	n := min(r.own[id], len(it.Blocks))
	for k, ref := range r.calls {
		if ref.item == at && ref.block < n {
			delete(r.calls, k)
		}
	}
	rest := it.Blocks[n:]
	it.Blocks = append(blocks, rest...)
	for k, ref := range r.calls {
		if ref.item == at {
			ref.block += len(blocks) - n
			r.calls[k] = ref
		}
	}
	r.own[id] = len(blocks)
	r.register(at, m)
	r.unshow(id)
	r.shown(m, id)
}

// register indexes the tool calls of item at, which message m made.
func (r *round) register(at int, m *message) {
	for b, blk := range r.items[at].Blocks[:r.own[r.items[at].IDs[0]]] {
		if blk.Kind == session.KindToolUse && blk.ID != "" {
			ref := callRef{item: at, block: b}
			if blk.Result != nil {
				ref.result = resultVersion(m, blk.ID)
			}
			r.calls[blk.ID] = ref
		}
	}
}

// resultVersion names the result a message's tool call holds, for telling
// a function response the client recorded again from a new one.
func resultVersion(m *message, id string) string {
	for _, tc := range m.ToolCalls {
		if tc.ID == id {
			return hashOf("result", ensureParts(tc.Result))
		}
	}
	return ""
}

// modelBlocks shows a gemini message: its thoughts, its content, its tool
// calls with their results.
func (r *round) modelBlocks(m *message) []session.Block {
	var out []session.Block
	for i, t := range m.Thoughts {
		p := "thoughts." + strconv.Itoa(i) + "."
		out = append(out, session.Block{Kind: session.KindThinking, Label: t.Subject, Text: t.Description, Origin: m.at(p + "description")})
	}
	if s := bytes.TrimSpace(m.Content); !(len(s) == 2 && s[0] == '"') { // "" shows nothing
		out = append(out, r.partBlocks(m, "assistant")...)
	}
	for i, tc := range m.ToolCalls {
		p := "toolCalls." + strconv.Itoa(i) + "."
		blk := session.Block{Kind: session.KindToolUse, Label: tc.Name, ID: tc.ID, Input: lifecycle.CompactJSON(tc.Args), Origin: m.at(p + "args")}
		if sp := r.c.Config().SidechainPath; tc.AgentID != "" && sp != nil {
			blk.Sidechain = sp(tc.AgentID)
		}
		if truthy(tc.Result) {
			parts, isErr := r.resultParts(m, tc.Result, func(sub string) string { return join(p+"result", sub) })
			blk.Result = &session.Result{Entry: m.ID, Time: tc.Timestamp, Error: isErr || tc.Status == "error", Parts: parts}
		}
		out = append(out, blk)
	}
	return out
}

// userBlocks shows a user message's content.
func (r *round) userBlocks(m *message) []session.Block { return r.partBlocks(m, "user") }

// partBlocks shows a message's content parts.
func (r *round) partBlocks(m *message, role string) []session.Block {
	var out []session.Block
	for i, p := range m.parts {
		path := "content"
		if m.partPaths[i] != "" {
			path += "." + m.partPaths[i]
		}
		textPath := path
		if bytes.TrimSpace(m.raws[i])[0] == '{' {
			textPath += ".text"
		}
		switch {
		case p.Text != nil && p.Thought:
			out = append(out, session.Block{Kind: session.KindThinking, Text: *p.Text, Origin: m.at(textPath)})
		case p.Text != nil:
			out = append(out, session.Block{Kind: session.KindText, Text: *p.Text, Origin: m.at(textPath)})
		case p.FunctionCall != nil && role == "assistant":
			fc := p.FunctionCall
			out = append(out, session.Block{Kind: session.KindToolUse, Label: fc.Name, ID: fc.ID, Input: lifecycle.CompactJSON(fc.Args), Origin: m.at(path + ".functionCall.args")})
		case p.InlineData != nil && r.file(p.InlineData) != nil:
			out = append(out, session.Block{Kind: session.KindFile, File: r.file(p.InlineData)})
		default:
			out = append(out, session.Block{Kind: session.KindRaw, Label: partLabel(m.raws[i]), Text: lifecycle.ValidText(m.raws[i]), Origin: m.at(path)})
		}
	}
	return out
}

// partLabel names a part shown as recorded by its first key
// ("functionResponse").
func partLabel(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		best := ""
		for k := range m {
			if k != "thoughtSignature" && (best == "" || k < best) {
				best = k
			}
		}
		if best != "" {
			return best
		}
	}
	return "part"
}

// file is inline data as a file beside the document, or nil when its
// data is not base64.
func (r *round) file(b *Blob) *session.File {
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return nil
	}
	typ := "document"
	if strings.HasPrefix(b.MimeType, "image/") {
		typ = "image"
	}
	return r.c.File(typ, b.MimeType, data)
}

// resultParts shows a tool result (a PartListUnion): a function
// response's output or error as text, inline data as a file, anything else
// as recorded. pathOf gives the place of a part in the message from its
// place under the result ("", "0", ...). isErr reports an error response.
func (r *round) resultParts(m *message, raw json.RawMessage, pathOf func(sub string) string) (parts []session.Part, isErr bool) {
	ps, raws, paths, _ := Parts(raw)
	for i, p := range ps {
		pp := pathOf(paths[i])
		switch {
		case p.FunctionResponse != nil:
			text, key, ok := responseText(p.FunctionResponse.Response)
			if ok {
				parts = append(parts, session.Part{Kind: session.KindText, Text: text, Origin: m.at(pp + ".functionResponse.response." + key)})
				isErr = isErr || key == "error"
				continue
			}
		case p.Text != nil:
			origin := pp
			if bytes.TrimSpace(raws[i])[0] == '{' {
				origin += ".text"
			}
			parts = append(parts, session.Part{Kind: session.KindText, Text: *p.Text, Origin: m.at(origin)})
			continue
		case p.InlineData != nil && r.file(p.InlineData) != nil:
			parts = append(parts, session.Part{Kind: session.KindFile, File: r.file(p.InlineData)})
			continue
		}
		parts = append(parts, session.Part{Kind: session.KindRaw, Text: lifecycle.ValidText(raws[i]), Origin: m.at(pp)})
	}
	return parts, isErr
}

// join is a path and a place under it.
func join(path, sub string) string {
	if sub == "" {
		return path
	}
	return path + "." + sub
}

// responseText is the text of a function response that holds only an
// output or only an error, and its key.
func responseText(raw json.RawMessage) (text, key string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) != 1 {
		return "", "", false
	}
	for _, k := range []string{"output", "error"} {
		if v, has := m[k]; has && isString(bytes.TrimSpace(v)) && json.Unmarshal(v, &text) == nil {
			return text, k, true
		}
	}
	return "", "", false
}

// respond joins the function responses a user message records to their
// calls in this round: a call without a result takes it; one that holds
// the same result already needs nothing more (the client records each
// result twice: in the call and as this message); any other is shown as
// a result of its own. It returns the item that shows them.
func (r *round) respond(m *message) string {
	var standalone []session.Block
	shownAt := -1
	for _, g := range responseGroups(m) {
		ref, ok := r.calls[g.id]
		if ok {
			blk := &r.items[ref.item].Blocks[ref.block]
			version := hashOf("result", g.parts)
			switch {
			case blk.Result == nil:
				parts, isErr := r.resultParts(m, g.raw, g.pathOf(m))
				blk.Result = &session.Result{Entry: m.ID, Time: m.Timestamp, Error: isErr, Parts: parts}
				ref.result = version
				r.calls[g.id] = ref
				shownAt = ref.item
				continue
			case ref.result == version:
				shownAt = ref.item
				continue
			}
		}
		parts, isErr := r.resultParts(m, g.raw, g.pathOf(m))
		standalone = append(standalone, session.Block{Kind: session.KindToolResult, ID: g.id,
			Result: &session.Result{Entry: m.ID, Time: m.Timestamp, Error: isErr, Parts: parts}})
	}
	if len(standalone) > 0 {
		r.fold(standalone...)
		if n := len(r.items); n > 0 {
			shownAt = n - 1
		}
	}
	if shownAt < 0 {
		if n := len(r.items); n > 0 {
			shownAt = n - 1
		} else if r.st.Tip != "" {
			return r.st.Tip
		} else {
			return ""
		}
	}
	return r.items[shownAt].IDs[0]
}

// responseGroup is a function response and the parts after it that
// belong to it (an image a tool read), as a result.
type responseGroup struct {
	id    string
	first int // index of its first part in the content
	parts []any
	raw   json.RawMessage // the group as a list of parts
}

// pathOf places a part of the group in the message's content.
func (g responseGroup) pathOf(m *message) func(sub string) string {
	return func(sub string) string {
		i, _ := strconv.Atoi(sub)
		return join("content", m.partPaths[g.first+i])
	}
}

func responseGroups(m *message) []responseGroup {
	var out []responseGroup
	for i, p := range m.parts {
		if p.FunctionResponse != nil || len(out) == 0 {
			g := responseGroup{first: i}
			if p.FunctionResponse != nil {
				g.id = p.FunctionResponse.ID
			}
			out = append(out, g)
		}
		g := &out[len(out)-1]
		g.parts = append(g.parts, anyOf(m.raws[i]))
	}
	for i := range out {
		g := &out[i]
		var b bytes.Buffer
		b.WriteByte('[')
		for j := range g.parts {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(m.raws[g.first+j])
		}
		b.WriteByte(']')
		g.raw = b.Bytes()
	}
	return out
}
