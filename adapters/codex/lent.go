package codex

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
)

// A line of a rollout can be 100 MB (a tool's output, a pasted prompt).
// Decoded into the wire types, each json.RawMessage on the way to its
// text is a copy of it (the payload, then the output), and a string is
// decoded twice (unquoted, then converted): a 100 MB output was held five
// times (bench/README.md, issue 33). The parse below decodes into the same
// types with encoding/json, which still checks the line and matches the
// keys, but the raw values are the line's own bytes and a text is decoded
// once, from them.

// lent is a raw JSON value, as json.RawMessage holds it, left in the bytes
// it was decoded from (in) rather than copied. encoding/json hands a
// value's decoder the value's bytes within what json.Unmarshal was given;
// should those bytes ever be elsewhere, they are copied.
type lent struct {
	in  []byte
	raw json.RawMessage
}

func (l *lent) UnmarshalJSON(b []byte) error {
	if within(b, l.in) {
		l.raw = b
	} else {
		l.raw = bytes.Clone(b)
	}
	return nil
}

// within reports whether b lies in the bytes of in.
func within(b, in []byte) bool {
	if len(b) == 0 || len(in) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(in)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(in))
}

// lentText is a *string decoded once, from its quoted bytes, as
// encoding/json decodes it (jsonpatch.DecodeString). odd is set when the
// value is neither a string nor null: the caller decodes the value as
// encoding/json does, whose partial result it then takes.
type lentText struct {
	s   *string
	odd bool
}

func (t *lentText) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		t.s = nil
	case len(b) >= 2 && b[0] == '"':
		s := jsonpatch.DecodeString(b)
		t.s = &s
	default:
		t.odd = true
	}
	return nil
}

// decodeLine decodes a line as json.Unmarshal into a RolloutLine does,
// its payload left in the line.
func decodeLine(raw []byte) (RolloutLine, error) {
	l := struct {
		RolloutLine
		Payload lent `json:"payload"`
	}{Payload: lent{in: raw}}
	if err := json.Unmarshal(raw, &l); err != nil {
		// The error encoding/json gives of the wire type, which names it.
		var rec RolloutLine
		if err2 := json.Unmarshal(raw, &rec); err2 != nil {
			err = err2
		}
		return RolloutLine{}, err
	}
	rec := l.RolloutLine
	rec.Payload = l.Payload.raw
	return rec, nil
}

// decodeItem decodes a response item's payload as json.Unmarshal into a
// ResponseItem does, its raw values left in the payload.
func decodeItem(payload []byte) (ResponseItem, error) {
	l := struct {
		ResponseItem
		Content   lent `json:"content,omitempty"`
		Arguments lent `json:"arguments,omitempty"`
		Input     lent `json:"input,omitempty"`
		Action    lent `json:"action,omitempty"`
		Output    lent `json:"output,omitempty"`
	}{Content: lent{in: payload}, Arguments: lent{in: payload}, Input: lent{in: payload},
		Action: lent{in: payload}, Output: lent{in: payload}}
	if err := json.Unmarshal(payload, &l); err != nil {
		var it ResponseItem
		if err2 := json.Unmarshal(payload, &it); err2 != nil {
			err = err2
		}
		return ResponseItem{}, err
	}
	it := l.ResponseItem
	it.Content, it.Arguments, it.Input, it.Action, it.Output = l.Content.raw, l.Arguments.raw, l.Input.raw, l.Action.raw, l.Output.raw
	return it, nil
}

// decodePart decodes a part as json.Unmarshal into a ContentItem does
// (its error ignored, as parse ignores it), its text decoded once.
func decodePart(raw []byte) ContentItem {
	l := struct {
		ContentItem
		Text lentText `json:"text,omitempty"`
	}{}
	json.Unmarshal(raw, &l)
	if l.Text.odd {
		var pt ContentItem
		json.Unmarshal(raw, &pt)
		return pt
	}
	pt := l.ContentItem
	pt.Text = l.Text.s
	return pt
}

// elements returns the elements of a JSON array as json.Unmarshal into a
// []json.RawMessage does, left in raw (a value of a line already decoded,
// so valid JSON); ok is false when raw is no array.
func elements(raw []byte) (out []json.RawMessage, ok bool) {
	if out, ok = split(bytes.TrimSpace(raw)); !ok {
		out = nil
		ok = json.Unmarshal(raw, &out) == nil
	}
	return out, ok
}

// split splits a JSON array into its elements, or reports that it cannot.
func split(b []byte) ([]json.RawMessage, bool) {
	if len(b) < 2 || b[0] != '[' {
		return nil, false
	}
	out := []json.RawMessage{}
	i := space(b, 1)
	if i < len(b) && b[i] == ']' {
		return out, i == len(b)-1
	}
	for {
		end := jsonpatch.ValueEnd(b, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, b[i:end:end])
		i = space(b, end)
		switch {
		case i < len(b) && b[i] == ']':
			return out, i == len(b)-1
		case i < len(b) && b[i] == ',':
			i = space(b, i+1)
		default:
			return nil, false
		}
	}
}

func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
