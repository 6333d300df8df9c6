package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

var _ source.Resumer = (*Adapter)(nil)

// Resume reads a session file and returns the conversation the Gemini CLI
// sends its model when it resumes it (source.Resumer), rebuilt as the
// client rebuilds it (loadConversationRecord, then
// convertSessionToClientHistory in gemini-cli's chatRecordingService):
//
//   - the lines replayed into the client's map of messages: a message
//     line sets its id (a new id at the end, a known one where it was), a
//     $set of messages (or a metadata line that carries them) sets the
//     history anew, a $rewindTo drops its message and all after it (all of
//     them when the history does not hold it); a line that is not JSON is
//     skipped, as the client skips it;
//   - of the messages, info, error and warning ones are left out, and so
//     are user messages whose text is empty, a command or the session
//     context (the client sends a fresh one of its own);
//   - a user message is a person's turn: its texts, its images, its
//     function responses as results;
//   - a gemini message is the model's turn: its thoughts (thinking), its
//     text and its tool calls, then, when its calls hold results, those
//     results as a turn of their own; a message whose content already holds
//     calls or thoughts (a history the client rebuilt) is its parts as
//     they are;
//   - a compression's state snapshot is a compaction: the summary the
//     client sends as a person's text.
//
// The client sends a function response once per place the file holds it
// (the call's result, the user message that recorded it, the message a
// resumed history made of it): Resume gives it as many times. origin is
// not used: a session holds its whole history.
func (a *Adapter) Resume(r io.Reader, _ func(id string) (io.ReadCloser, error)) (*source.Resumed, error) {
	var ids []string
	msgs := map[string]json.RawMessage{}
	set := func(raw json.RawMessage) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(raw, &m) != nil || !isString(m.ID) {
			return
		}
		var id string
		json.Unmarshal(m.ID, &id)
		if _, ok := msgs[id]; !ok {
			ids = append(ids, id)
		}
		msgs[id] = append(json.RawMessage(nil), raw...)
	}
	setAll := func(raw json.RawMessage) bool {
		var elems []json.RawMessage
		if len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '[' || json.Unmarshal(raw, &elems) != nil {
			return false
		}
		for _, el := range elems {
			set(el)
		}
		return true
	}
	lr := source.NewLineReader(r, 1, 0)
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		raw := bytes.TrimSpace(l.Raw)
		var rec line
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		if err := json.Unmarshal(raw, &rec); err != nil && !isTypeError(err) {
			continue
		}
		switch kindOf(&rec) {
		case rewindRecord:
			var id string
			json.Unmarshal(rec.RewindTo, &id)
			at := len(ids)
			for i, x := range ids {
				if x == id {
					at = i
					break
				}
			}
			if at == len(ids) {
				at = 0 // an id the history does not hold drops it all
			}
			for _, x := range ids[at:] {
				delete(msgs, x)
			}
			ids = ids[:at]
		case messageRecord:
			set(raw)
		case setRecord:
			var s Set
			json.Unmarshal(rec.Set, &s)
			var elems []json.RawMessage
			if m := bytes.TrimSpace(s.Messages); len(m) > 0 && m[0] == '[' && json.Unmarshal(m, &elems) == nil {
				ids, msgs = nil, map[string]json.RawMessage{}
				for _, el := range elems {
					set(el)
				}
			}
		case metaRecord:
			setAll(rec.Messages)
		}
	}
	out := &source.Resumed{}
	for _, id := range ids {
		out.Items = append(out.Items, resumedItems(msgs[id])...)
	}
	return out, nil
}

// resumedItems are the turns the client sends for one message.
func resumedItems(raw json.RawMessage) []session.Item {
	var l line
	if err := json.Unmarshal(raw, &l); err != nil && !isTypeError(err) {
		return nil
	}
	m := &message{}
	json.Unmarshal(l.ID, &m.ID)
	m.Type, m.Content, m.ToolCalls, m.Thoughts = l.Type, l.Content, l.ToolCalls, l.Thoughts
	switch m.Type {
	case "user":
		if ignoredUserText(partsString(m.Content)) {
			return nil
		}
		it := session.Item{Role: "user", IDs: []string{m.ID}, Time: l.Timestamp, Blocks: resumedParts(ensureParts(m.Content))}
		if t := strings.TrimSpace(partsString(m.Content)); strings.HasPrefix(t, "<state_snapshot>") {
			it.Role = "system"
			it.Blocks = []session.Block{{Kind: session.KindCompaction, Text: t, Compaction: &session.Compaction{}}}
		}
		return []session.Item{it}
	case "gemini":
		model, response := geminiTurns(m)
		if len(model) == 0 {
			return nil
		}
		out := []session.Item{{Role: "assistant", IDs: []string{m.ID}, Time: l.Timestamp, Blocks: resumedParts(model)}}
		if len(response) > 0 {
			out = append(out, session.Item{Role: "user", IDs: []string{m.ID + "_response"}, Time: l.Timestamp, Blocks: resumedParts(response)})
		}
		return out
	}
	return nil
}

// resumedParts are the blocks of a turn's parts: texts, thoughts, calls,
// function responses (with the images that follow them) as results, and
// images.
func resumedParts(parts []any) []session.Block {
	var out []session.Block
	for _, p := range parts {
		data, _ := json.Marshal(p)
		var pt Part
		json.Unmarshal(data, &pt)
		switch {
		case pt.FunctionResponse != nil:
			r := &session.Result{}
			if text, key, ok := responseText(pt.FunctionResponse.Response); ok {
				r.Parts = []session.Part{{Kind: session.KindText, Text: text}}
				r.Error = key == "error"
			} else {
				r.Parts = []session.Part{{Kind: session.KindRaw, Text: string(pt.FunctionResponse.Response)}}
			}
			out = append(out, session.Block{Kind: session.KindToolResult, ID: pt.FunctionResponse.ID, Result: r})
		case pt.InlineData != nil || pt.FileData != nil:
			f := resumedFile(pt)
			if n := len(out); n > 0 && out[n-1].Kind == session.KindToolResult {
				r := out[n-1].Result
				if len(r.Parts) == 1 && r.Parts[0].Kind == session.KindText && r.Parts[0].Text == "" {
					r.Parts = nil // an empty output before an image is no part
				}
				r.Parts = append(r.Parts, session.Part{Kind: session.KindFile, File: f})
				continue
			}
			out = append(out, session.Block{Kind: session.KindFile, File: f})
		case pt.FunctionCall != nil:
			out = append(out, session.Block{Kind: session.KindToolUse, Label: pt.FunctionCall.Name, ID: pt.FunctionCall.ID, Input: compactOrEmpty(pt.FunctionCall.Args)})
		case pt.Text != nil && pt.Thought:
			out = append(out, session.Block{Kind: session.KindThinking, Text: *pt.Text})
		case pt.Text != nil:
			out = append(out, session.Block{Kind: session.KindText, Text: *pt.Text})
		}
	}
	return out
}

// resumedFile is inline data (or a file by URI) as a file block's file.
func resumedFile(pt Part) *session.File {
	if pt.InlineData != nil {
		data, _ := base64.StdEncoding.DecodeString(pt.InlineData.Data)
		return &session.File{Type: "image", MediaType: pt.InlineData.MimeType, Data: data}
	}
	return &session.File{Type: "document", MediaType: pt.FileData.MimeType}
}

func compactOrEmpty(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
