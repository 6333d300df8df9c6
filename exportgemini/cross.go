package exportgemini

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Losses is what a conversion could not carry as it was.
type Losses = exportcore.Losses

// Convert writes a Gemini CLI session file of a session document inscribed
// from another client (docs/FORMAT.md, "Cross-agent export"), and returns
// what it could not carry. What it carries is what the source client sends
// its model when it resumes the session (exportcore.Resume: the source file
// written back from the store, a person's edits carried, rebuilt by src's
// Resumer), written as the client writes its own file: a metadata line,
// the session context naming the working directory (which the client
// replaces with its own on resume), a user message for each person's
// message (texts, images; a message from another agent as its text; the
// project's AGENTS.md, which the client does not load, once), a gemini
// message for each reply (its texts, its tool calls with their full
// results), a compaction as the client's own compression (a $set of the
// history to the summary, which holds what the source client re-sends in
// place of the history before it), the title as its summary. Every
// identity it mints is derived from the session id and a position, so two
// conversions of a document are identical.
func Convert(d *inscribe.Doc, src exportcore.Source, w io.Writer) (*Losses, error) {
	return exportcore.Convert(d, src, w, func(c *exportcore.Conversation, bw *bufio.Writer, losses *Losses) error {
		x := &converter{c: c, bw: bw, sid: c.Meta.SessionID, losses: losses, long: exportcore.NewLongTexts(false),
			calls: map[string]*written{}, resultsApart: map[string]bool{}, answered: map[string]bool{}}
		return x.run()
	})
}

// ConvertSession writes the session file of Convert into dir, a chats
// folder (see [Dir]), under the client's name for it ([Name]), with the
// project's .project_root when dir is a project's chats folder without
// one. An existing identical file is left alone; a different one is an
// error unless opts.Force.
func ConvertSession(d *inscribe.Doc, src exportcore.Source, dir string, opts Options) ([]File, *Losses, error) {
	name := func(meta *session.Meta) string {
		m := *meta
		m.Source = "" // the client's name, not the source's
		return Name(&m)
	}
	f, losses, meta, err := exportcore.WriteConversion(d, dir, name, opts, func(w io.Writer) (*Losses, error) {
		return Convert(d, src, w)
	})
	if err != nil {
		return nil, losses, err
	}
	files := []File{f}
	if marker, err := projectRoot(dir, session.Str(meta.Project), opts); err != nil {
		return files, losses, err
	} else if marker != nil {
		files = append(files, *marker)
	}
	return files, losses, nil
}

type converter struct {
	c      *exportcore.Conversation
	bw     *bufio.Writer
	sid    string
	n      int // messages written
	losses *exportcore.Losses
	long   *exportcore.LongTexts // the long texts of the line being encoded
	// calls are the gemini messages written by the id of their calls,
	// to give a result recorded apart from its call to it; resultsApart
	// the calls whose results are items of their own; answered the calls
	// a result was given to.
	calls                  map[string]*written
	resultsApart, answered map[string]bool
	// instructions is set once the project's instructions are carried;
	// unnamed counts the calls without an id (web searches), each given
	// one.
	instructions bool
	unnamed      int
}

// written is a gemini message written, and which of its calls is which.
type written struct {
	msg  *gemini.Message
	call int
}

func (x *converter) line(v any) {
	x.long.Write(x.bw, mustJSON(v))
	x.bw.WriteByte('\n')
}

// mustJSON encodes v as the client writes JSON: compact, and <, > and &
// as they are.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("exportgemini: encode: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// id mints the id of the n-th message.
func (x *converter) id() string {
	x.n++
	return exportcore.ID(x.sid, "message", x.n)
}

func (x *converter) run() error {
	for _, it := range x.c.Items {
		for _, b := range it.Blocks {
			if b.Kind == session.KindToolResult {
				x.resultsApart[b.ID] = true
			}
		}
	}
	m := x.c.Meta
	started := session.Str(m.Started)
	if started == "" && len(x.c.Items) > 0 {
		started = x.c.Items[0].Time
	}
	project := session.Str(m.Project)
	sum := sha256.Sum256([]byte(project))
	x.line(map[string]any{"sessionId": x.sid, "projectHash": hex.EncodeToString(sum[:]), "startTime": started,
		"lastUpdated": started, "kind": "main"})
	ctx := gemini.Message{ID: exportcore.ID(x.sid, "context", 0), Timestamp: started, Type: "user",
		Content: mustJSON([]map[string]string{{"text": "<session_context>\nThis session was converted by scribe from " +
			x.c.Meta.AgentName + ".\n- **Workspace Directories:**\n  - " + project + "\n</session_context>"}})}
	x.line(map[string]any{"$set": map[string]any{"messages": []gemini.Message{ctx}}})
	for _, i := range exportcore.Order(x.c.Items) {
		if err := x.item(&x.c.Items[i]); err != nil {
			return err
		}
	}
	if t := session.Str(m.Title); t != "" {
		x.line(map[string]any{"$set": map[string]any{"summary": t}})
	}
	return nil
}

func (x *converter) item(it *session.Item) error {
	if source.IsCompaction(it) {
		return x.compaction(it)
	}
	switch {
	case strings.HasPrefix(it.Note, "message from") && it.Role == "user":
		x.losses.AddDetail(exportcore.Transformed, exportcore.WhatAgentMessage, it.Note, "messages",
			"a message another agent sent (a subagent's report) reached the model as a message of its own; the Gemini CLI has no such message, so its text is carried as a person's message, as the model received it")
	case it.Note != "" && (it.Role == "user" || it.Role == "assistant"):
		x.losses.AddDetail(exportcore.Transformed, exportcore.WhatNote, it.Note, "messages",
			"a Gemini CLI session has no place for what kind of message the source said it was; the message is carried as a plain "+it.Role+" message")
	}
	switch it.Role {
	case "user":
		return x.user(it)
	case "assistant":
		return x.model(it)
	}
	for j := range it.Blocks {
		b := &it.Blocks[j]
		if b.Kind == session.KindText {
			x.losses.AddDetail(exportcore.Dropped, exportcore.WhatSystem, strings.TrimSpace(it.Role+" "+it.Note), "blocks",
				"what the source client showed its user is not part of the conversation the model continues")
			continue
		}
		x.dropBlock(b)
	}
	return nil
}

// user writes a person's message: its texts and files as parts; a result
// recorded apart from its call goes to its call.
func (x *converter) user(it *session.Item) error {
	var parts []map[string]any
	for j := range it.Blocks {
		b := &it.Blocks[j]
		switch b.Kind {
		case session.KindText:
			if b.Text != "" {
				parts = append(parts, map[string]any{"text": x.long.Mark(b.Text)})
			}
		case session.KindFile:
			p, err := x.inline(b.File)
			if err != nil {
				return err
			}
			parts = append(parts, p)
		case session.KindToolResult:
			x.lateResult(b)
		case session.KindReminder:
			if b.Label == "AGENTS.md" && !x.instructions {
				x.instructions = true
				x.losses.Add(exportcore.Transformed, exportcore.WhatInstructions, 1, "",
					"the Gemini CLI does not load a project's AGENTS.md (it reads GEMINI.md), which the source client sent its model: the instructions are carried once, as a person's message where the source sent them first; later copies are dropped as reminders")
				parts = append(parts, map[string]any{"text": x.long.Mark("The project's instructions (AGENTS.md), which " + x.c.Meta.AgentName + " gave the model:\n\n" + b.Text)})
				continue
			}
			x.dropBlock(b)
		default:
			x.dropBlock(b)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	msg := &gemini.Message{ID: x.id(), Timestamp: it.Time, Type: "user", Content: mustJSON(parts)}
	x.write(it, msg)
	return nil
}

// model writes a reply: its texts, then its tool calls with their results.
// Text after a call starts another message: the client sends a reply's
// texts before its calls.
func (x *converter) model(it *session.Item) error {
	var texts []map[string]any
	var calls []gemini.ToolCall
	flush := func() {
		if len(texts) == 0 && len(calls) == 0 {
			return
		}
		msg := &gemini.Message{ID: x.id(), Timestamp: it.Time, Type: "gemini", Model: session.Str(x.c.Meta.Model), ToolCalls: calls}
		switch len(texts) {
		case 0:
			msg.Content = mustJSON("")
		case 1:
			msg.Content = mustJSON(texts[0]["text"])
		default:
			msg.Content = mustJSON(texts)
		}
		for k := range calls {
			x.calls[calls[k].ID] = &written{msg: msg, call: k}
		}
		x.write(it, msg)
		texts, calls = nil, nil
	}
	for j := range it.Blocks {
		b := &it.Blocks[j]
		switch b.Kind {
		case session.KindText:
			if len(calls) > 0 {
				flush()
			}
			// An empty text is nothing the model receives; the client
			// leaves a reply out of the history it sends, and the
			// prompt before it, when one of its parts is an empty text.
			if b.Text != "" {
				texts = append(texts, map[string]any{"text": x.long.Mark(b.Text)})
			}
		case session.KindToolUse:
			if b.ID == "" {
				x.unnamed++
				b.ID = exportcore.ID(x.sid, "unnamed call", x.unnamed)
				if b.Label == "web_search" {
					x.losses.Add(exportcore.Transformed, exportcore.WhatSearch, 1, "searches",
						"a web search the model's server ran: the source records what it asked (its action) and its status, not what it found; it is carried as a call of web_search with the action as its args and the status as its result")
				}
			}
			tc, err := x.call(b)
			if err != nil {
				return err
			}
			calls = append(calls, tc)
		case session.KindToolResult:
			flush()
			x.lateResult(b)
		default:
			x.dropBlock(b)
		}
	}
	flush()
	return nil
}

// call is a tool call as the client records it once its tool ran: its
// args (a JSON object), its result, its status.
func (x *converter) call(b *session.Block) (gemini.ToolCall, error) {
	tc := gemini.ToolCall{ID: b.ID, Name: b.Label, Args: args(b, x.losses), Status: "success", Timestamp: ""}
	if b.Result == nil && x.resultsApart[b.ID] {
		// Its result is an item of its own, given to it where it
		// comes (lateResult); until then the client's own placeholder.
		tc.Result, _ = x.responseOf(b, &session.Result{Error: true, Parts: []session.Part{{Kind: session.KindText, Text: "aborted"}}})
		tc.Status = "error"
		return tc, nil
	}
	if b.Result == nil {
		x.losses.Add(exportcore.Transformed, exportcore.WhatNoResult, 1, "calls",
			"a call without a result is given the result \"aborted\", an error: the Gemini API wants a response to every call")
		tc.Result, _ = x.responseOf(b, &session.Result{Error: true, Parts: []session.Part{{Kind: session.KindText, Text: "aborted"}}})
		tc.Status = "error"
		return tc, nil
	}
	tc.Timestamp = b.Result.Time
	x.answered[b.ID] = true
	res, err := x.responseOf(b, b.Result)
	if err != nil {
		return tc, err
	}
	tc.Result = res
	if b.Result.Error {
		tc.Status = "error"
	}
	return tc, nil
}

// args is a call's input as the client holds it: a JSON object; any other
// value is wrapped as {"input": value}.
func args(b *session.Block, losses *exportcore.Losses) json.RawMessage {
	in := strings.TrimSpace(b.Input)
	if in == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(in), &obj) == nil && obj != nil {
		return json.RawMessage(in)
	}
	losses.AddDetail(exportcore.Transformed, exportcore.WhatToolInput, b.Label, "calls",
		"a tool call's args are a JSON object in Gemini CLI; this one is not (a custom tool's free text), so it is carried as {\"input\": …}")
	var v any = in
	if json.Valid([]byte(in)) {
		v = json.RawMessage(in)
	}
	return mustJSON(map[string]any{"input": v})
}

// responseOf is a call's result as the client records it: a function
// response holding its first text as output (error when the result is
// one), then its other parts, images as inline data.
func (x *converter) responseOf(b *session.Block, r *session.Result) (json.RawMessage, error) {
	key := "output"
	if r.Error {
		key = "error"
	}
	first := ""
	var rest []map[string]any
	text := false
	for _, p := range r.Parts {
		switch {
		case p.Kind == session.KindText && !text:
			first, text = x.long.Mark(p.Text), true
		case p.Kind == session.KindText:
			rest = append(rest, map[string]any{"text": x.long.Mark(p.Text)})
		case p.Kind == session.KindFile:
			part, err := x.inline(p.File)
			if err != nil {
				return nil, err
			}
			rest = append(rest, part)
		default:
			x.losses.AddDetail(exportcore.Dropped, exportcore.WhatResultPart, "unknown part", "parts",
				"a part of a tool result that scribe does not model has no equivalent in a function response")
		}
	}
	parts := []any{map[string]any{"functionResponse": map[string]any{"id": b.ID, "name": b.Label,
		"response": map[string]string{key: first}}}}
	for _, p := range rest {
		parts = append(parts, p)
	}
	return mustJSON(parts), nil
}

// lateResult gives a result recorded apart from its call to the call: the
// client's message that holds the call is written again, whole, with it
// (a message written again replaces the one of its id).
func (x *converter) lateResult(b *session.Block) {
	w, ok := x.calls[b.ID]
	if ok && x.answered[b.ID] {
		x.losses.Add(exportcore.Dropped, exportcore.WhatRepeated, 1, "results", exportcore.Repeated)
		return
	}
	if !ok || b.Result == nil {
		x.losses.Add(exportcore.Dropped, exportcore.WhatOrphan, 1, "results",
			"a tool result whose call is not before it in the live conversation has no call to answer in Gemini CLI")
		return
	}
	x.losses.Add(exportcore.Transformed, exportcore.WhatMoved, 1, "results",
		"the result is given to its call, whose message is written again with it (a Gemini CLI message holds its calls' results)")
	x.answered[b.ID] = true
	tc := &w.msg.ToolCalls[w.call]
	res, err := x.responseOf(&session.Block{ID: tc.ID, Label: tc.Name}, b.Result)
	if err != nil {
		return
	}
	tc.Result, tc.Status = res, "success"
	if b.Result.Error {
		tc.Status = "error"
	}
	x.line(w.msg)
}

// compaction writes a compaction as the client's own compression: the
// history set to the summary, a person's message; what the source client
// re-sends with its compaction in place of the history before it (Codex's
// replacement history: the person's earlier prompts, messages from other
// agents, the project's instructions) is carried in the summary, after
// the source's own summary when it has one in words; what the source kept
// verbatim after its summary (Claude Code's preserved segment) follows it
// (Order).
func (x *converter) compaction(it *session.Item) error {
	b := &it.Blocks[0]
	summary, n := exportcore.Kept(it, x.c.Meta.AgentName, x.losses, "the Gemini CLI", x.dropBlock)
	if n > 0 {
		x.losses.Add(exportcore.Transformed, exportcore.WhatKept, n, "messages",
			"what the source client sends in place of the history before its compaction (Codex's replacement history: the person's earlier prompts) is carried as the text of the Gemini CLI's summary, each message as it was")
	}
	x.losses.Add(exportcore.Transformed, exportcore.WhatCompaction, 1, "",
		"carried as Gemini CLI's own compression (the history set to the summary, then what follows): the client resumes from the summary and what follows it, as the source client did; the compaction's chain fields are not carried")
	time := it.Time
	if b.Time != "" {
		time = b.Time
	}
	var msgs []gemini.Message
	if summary != "" {
		msgs = append(msgs, gemini.Message{ID: x.id(), Timestamp: time, Type: "user", Content: mustJSON([]map[string]string{{"text": x.long.Mark(summary)}})})
	}
	x.line(map[string]any{"$set": map[string]any{"messages": msgs}})
	return nil
}

// write writes a message of an item.
func (x *converter) write(_ *session.Item, msg *gemini.Message) { x.line(msg) }

// inline is a file as a part of inline data.
func (x *converter) inline(f *session.File) (map[string]any, error) {
	data, err := exportcore.FileData(x.c.Doc, f)
	if err != nil {
		return nil, err
	}
	return map[string]any{"inlineData": map[string]string{"mimeType": f.MediaType, "data": base64.StdEncoding.EncodeToString(data)}}, nil
}

// dropBlock counts a block the conversion does not carry.
func (x *converter) dropBlock(b *session.Block) {
	switch b.Kind {
	case session.KindThinking:
		x.losses.Add(exportcore.Dropped, exportcore.WhatThinking, 1, "blocks",
			"another model's reasoning is not Gemini's thoughts: the client sends thoughts back to its model as the model's own, so they are not carried (the store keeps them)")
	case session.KindReminder:
		x.losses.AddDetail(exportcore.Dropped, exportcore.WhatReminder, b.Label, "blocks",
			"context the source client gave its model (system reminders, hook output, attachments); Gemini CLI gives its own on resume")
	case session.KindToolUse:
		x.losses.AddDetail(exportcore.Dropped, exportcore.WhatRaw, "a tool call outside a reply", "blocks", "Gemini CLI keeps tool calls among the model's replies only")
	default:
		exportcore.DropBlock(x.losses, b, "a Gemini CLI session")
	}
}
