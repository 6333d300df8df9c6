package exportcodex

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

// Losses is what a conversion could not carry as it was.
type Losses = exportcore.Losses

// ClientVersion is the version of Codex a converted rollout says wrote it:
// the version whose resume of such rollouts the tests judge.
const ClientVersion = "0.169.0"

// Originator is what a converted rollout names as the program that started
// the thread (session_meta's originator).
const Originator = "scribe"

// Convert writes a Codex rollout of a session document inscribed from
// another client (docs/FORMAT.md, "Cross-agent export"), and returns what
// it could not carry. What it carries is what the source client sends its
// model when it resumes the session (exportcore.Resume: the source file
// written back from the store, a person's edits carried, rebuilt by src's
// Resumer): the prompts, the replies, the tool calls with their full
// results, images and compactions, as Codex's own records, under the
// session's id, with the working directory, the model and the title. Every
// identity it mints is derived from the session id and a position, so two
// conversions of a document are identical.
func Convert(d *inscribe.Doc, src exportcore.Source, w io.Writer) (*Losses, error) {
	return exportcore.Convert(d, src, w, func(c *exportcore.Conversation, bw *bufio.Writer, losses *Losses) error {
		x := &converter{c: c, bw: bw, sid: c.Meta.SessionID, losses: losses, long: exportcore.NewLongTexts(true),
			answered: map[string]bool{}, resultsApart: map[string]bool{}}
		return x.run()
	})
}

// ConvertSession writes the rollout of Convert into sessions folder dir, at
// [Rel]: where codex resume finds it. An existing identical file is left
// alone; a different one is an error unless opts.Force.
func ConvertSession(d *inscribe.Doc, src exportcore.Source, dir string, opts Options) ([]File, *Losses, error) {
	f, losses, _, err := exportcore.WriteConversion(d, dir, Rel, opts, func(w io.Writer) (*Losses, error) {
		return Convert(d, src, w)
	})
	if err != nil {
		return nil, losses, err
	}
	return []File{f}, losses, nil
}

type converter struct {
	c      *exportcore.Conversation
	bw     *bufio.Writer
	sid    string
	turns  int // turn contexts written
	losses *exportcore.Losses
	long   *exportcore.LongTexts // the long texts of the line being encoded
	// answered marks the calls whose output is written; resultsApart
	// the calls whose results are items of their own.
	answered, resultsApart map[string]bool
}

func (x *converter) line(time, typ string, payload any) {
	data, err := json.Marshal(codex.RolloutLine{Timestamp: time, Type: typ, Payload: mustJSON(payload)})
	if err != nil {
		panic(fmt.Sprintf("exportcodex: encode a line: %v", err))
	}
	x.long.Write(x.bw, data)
	x.bw.WriteByte('\n')
}

func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("exportcodex: encode: %v", err))
	}
	return data
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
	meta := codex.SessionMeta{ID: x.sid, Timestamp: started, CWD: session.Str(m.Project), Originator: Originator,
		CLIVersion: ClientVersion, Source: mustJSON("cli")}
	if b := session.Str(m.GitBranch); b != "" {
		meta.Git = &codex.GitInfo{Branch: b}
	}
	x.line(started, "session_meta", meta)
	if t := session.Str(m.Title); t != "" {
		x.line(started, "event_msg", codex.EventMsg{Type: "thread_name_updated", ThreadID: x.sid, ThreadName: t})
	}
	for _, i := range exportcore.Order(x.c.Items) {
		if err := x.item(&x.c.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// turn writes the context of a turn: Codex reads the last one back on
// resume (a model other than its own makes it tell its model so). The
// policies are the most careful ones; Codex applies its own settings to
// the turns it runs.
func (x *converter) turn(time string) {
	x.line(time, "turn_context", codex.TurnContext{
		TurnID:         exportcore.ID(x.sid, "turn", x.turns),
		CWD:            session.Str(x.c.Meta.Project),
		ApprovalPolicy: "on-request",
		SandboxPolicy:  mustJSON(map[string]string{"type": "read-only"}),
		Model:          session.Str(x.c.Meta.Model),
		Summary:        "auto",
	})
	x.turns++
}

func (x *converter) item(it *session.Item) error {
	if it.Role == "user" || x.turns == 0 {
		x.turn(it.Time)
	}
	if it.Note != "" && (it.Role == "user" || it.Role == "assistant") {
		x.losses.AddDetail(exportcore.Transformed, exportcore.WhatNote, it.Note, "messages",
			"a rollout has no place for what kind of message the source said it was; the message is carried as a plain "+it.Role+" message")
	}
	var content []codex.ContentItem // the message being gathered
	var results []*session.Block    // calls whose results follow the item
	flush := func() {
		if len(content) == 0 {
			return
		}
		x.message(it, content)
		content = nil
	}
	for j := range it.Blocks {
		b := &it.Blocks[j]
		switch b.Kind {
		case session.KindText:
			if it.Role != "user" && it.Role != "assistant" {
				x.losses.AddDetail(exportcore.Dropped, exportcore.WhatSystem, strings.TrimSpace(it.Role+" "+it.Note), "blocks",
					"what the source client showed its user is not part of the conversation the model continues")
				continue
			}
			if len(results) > 0 {
				// A reply's text after its calls came after their
				// results: their outputs go before it.
				flush()
				for _, c := range results {
					x.output(c.ID, c.Result)
				}
				results = nil
			}
			typ := "output_text"
			if it.Role == "user" {
				typ = "input_text"
			}
			content = append(content, codex.ContentItem{Type: typ, Text: session.Ptr(x.long.Mark(b.Text))})
		case session.KindFile:
			if it.Role != "user" || !isImage(b.File.MediaType) {
				x.losses.AddDetail(exportcore.Dropped, exportcore.WhatFile, b.File.MediaType, "files",
					"a Codex message holds images that a person attached, and no other files; the store keeps the file")
				continue
			}
			url, err := x.dataURL(b.File)
			if err != nil {
				return err
			}
			content = append(content, codex.ContentItem{Type: "input_image", ImageURL: url})
		case session.KindToolUse:
			if it.Role != "assistant" {
				x.dropBlock(b)
				continue
			}
			flush()
			in := strings.TrimSpace(b.Input)
			if in == "" {
				in = "{}"
			}
			x.line(it.Time, "response_item", codex.ResponseItem{Type: "function_call", Name: b.Label,
				Arguments: mustJSON(in), CallID: b.ID})
			switch {
			case b.Result != nil:
				results = append(results, b)
			case !x.resultsApart[b.ID]:
				x.losses.Add(exportcore.Transformed, exportcore.WhatNoResult, 1, "",
					`no result of the call is in the conversation the source client resends (the session ended or was cut before it, or the client gathers it by a rule scribe does not know): Codex sends "aborted" in its place`)
			}
		case session.KindToolResult:
			flush()
			switch {
			case b.Result == nil:
			case x.answered[b.ID] && b.ID != "":
				x.losses.Add(exportcore.Dropped, exportcore.WhatRepeated, 1, "results", exportcore.Repeated)
			default:
				x.output(b.ID, b.Result)
			}
		case session.KindCompaction:
			flush()
			x.compaction(it, b)
		default:
			x.dropBlock(b)
		}
	}
	flush()
	for _, b := range results {
		x.output(b.ID, b.Result)
	}
	return nil
}

// message writes a message of the item's role.
func (x *converter) message(it *session.Item, content []codex.ContentItem) {
	ri := codex.ResponseItem{Type: "message", Role: it.Role, Content: mustJSON(content)}
	if it.Role == "user" {
		// A person's message: Codex records who wrote each part.
		meta := &codex.MessageMetadata{}
		for range content {
			meta.ContentItemMetadata = append(meta.ContentItemMetadata, codex.ItemMetadata{Provenance: &codex.Provenance{Type: "user"}})
		}
		ri.Meta = meta
	}
	x.line(it.Time, "response_item", ri)
}

// output writes a call's result: a string when it is one text, else a list
// of text and image parts. Nothing is cut.
func (x *converter) output(callID string, res *session.Result) {
	x.answered[callID] = true
	if res.Error {
		x.losses.Add(exportcore.Transformed, exportcore.WhatErrorFlag, 1, "results",
			"a Codex call output has no error flag; the result's text, which says what failed, is carried as it is")
	}
	var parts []codex.ContentItem
	for _, p := range res.Parts {
		switch {
		case p.Kind == session.KindText:
			parts = append(parts, codex.ContentItem{Type: "input_text", Text: session.Ptr(x.long.Mark(p.Text))})
		case p.Kind == session.KindFile && isImage(p.File.MediaType):
			url, err := x.dataURL(p.File)
			if err == nil {
				parts = append(parts, codex.ContentItem{Type: "input_image", ImageURL: url})
				continue
			}
			fallthrough
		case p.Kind == session.KindFile:
			x.losses.AddDetail(exportcore.Dropped, exportcore.WhatResultPart, p.File.MediaType, "parts",
				"a Codex call output holds text and images; the store keeps the file")
		default:
			x.losses.AddDetail(exportcore.Dropped, exportcore.WhatResultPart, "unknown part", "parts",
				"a part of a tool result that scribe does not model has no equivalent in a Codex call output")
		}
	}
	var out json.RawMessage
	switch {
	case len(parts) == 0:
		out = mustJSON("")
	case len(parts) == 1 && parts[0].Type == "input_text":
		out = mustJSON(*parts[0].Text)
	default:
		out = mustJSON(parts)
	}
	x.line(res.Time, "response_item", codex.ResponseItem{Type: "function_call_output", CallID: callID, Output: out})
}

// compaction writes a compaction as Codex writes its own: a compacted line
// holding the message the conversation continues from.
func (x *converter) compaction(it *session.Item, b *session.Block) {
	x.losses.Add(exportcore.Transformed, exportcore.WhatCompaction, 1, "",
		"carried as Codex's own compaction (a compacted line with the summary), put before the messages Claude Code kept verbatim after its summary (its preserved segment): Codex resumes from the earlier prompts, the summary and what follows it; the compaction's chain fields are not carried")
	time := it.Time
	if b.Time != "" {
		time = b.Time
	}
	x.line(time, "compacted", codex.Compacted{Message: session.Ptr(x.long.Mark(b.Text))})
}

// dropBlock counts a block the export does not carry.
func (x *converter) dropBlock(b *session.Block) {
	switch b.Kind {
	case session.KindThinking:
		x.losses.Add(exportcore.Dropped, exportcore.WhatThinking, 1, "blocks",
			"Claude's thinking is signed by Anthropic for Claude; OpenAI's API takes back only reasoning it encrypted itself and refuses other reasoning items, so thinking is not carried (the store keeps it)")
	case session.KindReminder:
		x.losses.AddDetail(exportcore.Dropped, exportcore.WhatReminder, b.Label, "blocks",
			"context the source client gave its model (system reminders, hook output, attachments); Codex gives its own on resume")
	case session.KindToolUse:
		x.losses.AddDetail(exportcore.Dropped, exportcore.WhatRaw, "a tool call outside a reply", "blocks", "Codex keeps tool calls among the model's output only")
	default:
		exportcore.DropBlock(x.losses, b, "a rollout")
	}
}

func isImage(mediaType string) bool { return strings.HasPrefix(mediaType, "image/") }

// dataURL is a file as Codex holds an image: a data URL.
func (x *converter) dataURL(f *session.File) (string, error) {
	data, err := exportcore.FileData(x.c.Doc, f)
	if err != nil {
		return "", err
	}
	return "data:" + f.MediaType + ";base64," + base64.StdEncoding.EncodeToString(data), nil
}
