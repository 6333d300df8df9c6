package exportcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/scribe-archive/scribe/session"
)

// unit is one thing a conversation holds, as Reconcile compares it: a
// text (of a role), a reasoning block, a reminder, a file, a call, a
// call's result, a compaction.
type unit struct {
	kind  string // text, thinking, reminder, raw, file, call, result, compaction
	role  string // text: the item's role
	label string // reminder, raw: the label; call: the tool's name; file: the file's name
	text  string // text, thinking, reminder, compaction: the text; call: the input
	parts []string
	err   bool
	media string
	// id is a call's id, or the id of the call a result answers; apart
	// marks a result recorded apart from its call. Neither is compared.
	id    string
	apart bool
}

func (u unit) String() string {
	s := u.kind
	switch u.kind {
	case "text":
		s = u.role + " text"
	case "call":
		s = "call of " + u.label
	case "file":
		s = "file " + u.label
	}
	t := u.text
	if u.kind == "result" {
		t = strings.Join(u.parts, "|")
	}
	if len(t) > 60 {
		t = t[:60] + "…"
	}
	if t != "" {
		s += fmt.Sprintf(" %q", t)
	}
	return s
}

func units(items []session.Item) []unit {
	var out []unit
	for _, it := range items {
		for _, b := range it.Blocks {
			switch b.Kind {
			case session.KindText:
				out = append(out, unit{kind: "text", role: it.Role, text: b.Text})
			case session.KindThinking:
				out = append(out, unit{kind: "thinking", text: b.Text})
			case session.KindReminder:
				out = append(out, unit{kind: "reminder", label: b.Label, text: b.Text})
			case session.KindFile:
				out = append(out, unit{kind: "file", role: it.Role, label: path.Base(b.File.Path), media: b.File.MediaType})
			case session.KindToolUse:
				out = append(out, unit{kind: "call", label: b.Label, text: canonical(b.Input), id: b.ID})
				if b.Result != nil {
					r := result(b.Result)
					r.id = b.ID
					out = append(out, r)
				}
			case session.KindToolResult:
				if b.Result != nil {
					r := result(b.Result)
					r.id, r.apart = b.ID, true
					out = append(out, r)
				}
			case session.KindCompaction:
				out = append(out, unit{kind: "compaction", text: b.Text})
			case session.KindNote:
				out = append(out, unit{kind: "note", label: b.Label})
			default:
				out = append(out, unit{kind: "raw", label: b.Label})
			}
		}
	}
	return out
}

func result(r *session.Result) unit {
	u := unit{kind: "result", err: r.Error}
	for _, p := range r.Parts {
		switch p.Kind {
		case session.KindText:
			if p.Text != "" {
				u.parts = append(u.parts, p.Text)
			}
		case session.KindFile:
			u.parts = append(u.parts, "file "+path.Base(p.File.Path))
		default:
			u.parts = append(u.parts, "raw")
		}
	}
	return u
}

// canonical is a tool input with its object keys sorted, so that inputs
// that are the same JSON value compare equal.
func canonical(in string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return in
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// dropped is the category a dropped unit is counted in, or "" for a unit
// no export drops whole.
func dropped(u unit) string {
	switch u.kind {
	case "thinking":
		return WhatThinking
	case "reminder":
		return WhatReminder
	case "raw":
		return WhatRaw
	case "note":
		return WhatSystem
	case "text":
		if u.role != "user" && u.role != "assistant" {
			return WhatSystem
		}
	}
	return ""
}

// Reconcile compares a conversation with the same conversation read back
// from its conversion to another client (the conversion inscribed with
// that client's adapter), and says every difference that losses does not
// account for: a unit missing without a reported drop, one changed
// without a reported transformation, or counts that disagree. Identities,
// timestamps, rounds and how units are grouped into messages are not
// compared: the target mints its own identities and groups messages as
// its client does.
func Reconcile(orig, back []session.Item, losses *Losses) []string {
	var problems []string
	seen := map[string]int{} // key(kind, what) -> count observed
	o, b := units(orig), units(back)
	// What the conversion drops whole.
	kept := o[:0:0]
	for _, u := range o {
		if what := dropped(u); what != "" {
			seen[key(Dropped, what)]++
			continue
		}
		kept = append(kept, u)
	}
	o = kept
	if losses.Count(Transformed, WhatMoved) > 0 {
		// The conversion moved results recorded apart from their call to
		// right after it: so does the comparison.
		o = moveResults(o, func() { seen[key(Transformed, WhatMoved)]++ })
	}
	// Compactions are compared apart: a conversion may put one before
	// the messages it kept verbatim.
	var oc, bc []unit
	o, oc = split(o, "compaction")
	b, bc = split(b, "compaction")
	if len(oc) != len(bc) {
		problems = append(problems, fmt.Sprintf("the original has %d compactions, the conversation read back %d", len(oc), len(bc)))
	}
	for k := 0; k < len(oc) && k < len(bc); k++ {
		if strings.TrimSpace(oc[k].text) != strings.TrimSpace(bc[k].text) {
			problems = append(problems, fmt.Sprintf("compaction %d has another summary in the conversation read back", k+1))
		}
		seen[key(Transformed, WhatCompaction)]++
	}
	i, j := 0, 0
	for i < len(o) || j < len(b) {
		switch {
		case i < len(o) && j < len(b) && sameUnit(o[i], b[j]):
			i, j = i+1, j+1
		case i < len(o) && j < len(b) && transform(o[i], b[j]) != nil:
			for _, k := range transform(o[i], b[j]) {
				seen[k]++
			}
			i, j = i+1, j+1
		case i < len(o) && o[i].kind == "file":
			// A file the target cannot hold (the count says whether it
			// was reported).
			seen[key(Dropped, WhatFile)]++
			i++
		case j < len(b) && b[j].kind == "result" && j > 0 && b[j-1].kind == "call" && (i >= len(o) || o[i].kind != "result"):
			// A result the conversion gave a call that had none.
			seen[key(Transformed, WhatNoResult)]++
			j++
		case i < len(o):
			problems = append(problems, fmt.Sprintf("the conversation read back lacks %s (unit %d), and no loss reported accounts for it", o[i], i+1))
			i++
		default:
			problems = append(problems, fmt.Sprintf("the conversation read back has %s (unit %d), which the original does not", b[j], j+1))
			j++
		}
	}
	// Every category Reconcile recognises must count what was reported.
	for _, k := range []string{
		key(Dropped, WhatThinking), key(Dropped, WhatReminder), key(Dropped, WhatRaw), key(Dropped, WhatSystem),
		key(Transformed, WhatToolInput), key(Transformed, WhatErrorFlag), key(Transformed, WhatNoResult),
		key(Transformed, WhatCompaction), key(Dropped, WhatResultPart), key(Dropped, WhatFile), key(Transformed, WhatMoved),
	} {
		kind, what, _ := strings.Cut(k, "\x00")
		reported := losses.Count(LossKind(kind), what)
		if seen[k] != reported {
			problems = append(problems, fmt.Sprintf("%s %s: the conversion reports %d, the conversation read back shows %d", kind, what, reported, seen[k]))
		}
	}
	return problems
}

func sameUnit(a, b unit) bool {
	a.id, b.id, a.apart, b.apart = "", "", false, false
	return reflect.DeepEqual(a, b)
}

// moveResults moves each result recorded apart from its call to right
// after the call, when the call is earlier and has no result of its own.
func moveResults(us []unit, moved func()) []unit {
	out := make([]unit, 0, len(us))
	for _, u := range us {
		if u.kind == "result" && u.apart && u.id != "" {
			at := -1
			for k := len(out) - 1; k >= 0; k-- {
				if out[k].kind == "call" && out[k].id == u.id {
					if k+1 >= len(out) || out[k+1].kind != "result" || out[k+1].id != u.id {
						at = k + 1
					}
					break
				}
			}
			if at >= 0 {
				out = append(out[:at], append([]unit{u}, out[at:]...)...)
				moved()
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// transform says which reported transformation turns a into b, or nil
// when none does.
func transform(a, b unit) []string {
	if a.kind != b.kind {
		return nil
	}
	switch a.kind {
	case "call":
		if a.label != b.label {
			if b.text == a.text || b.text == wrapped(a.text) {
				return []string{key(Transformed, WhatToolID)}
			}
			return nil
		}
		if b.text == wrapped(a.text) {
			return []string{key(Transformed, WhatToolInput)}
		}
	case "result":
		var ks []string
		if a.err && !b.err {
			ks = append(ks, key(Transformed, WhatErrorFlag))
		}
		if !reflect.DeepEqual(a.parts, b.parts) {
			// Parts the target cannot hold are dropped, the others kept in order.
			k, n := 0, 0
			for _, p := range a.parts {
				if k < len(b.parts) && p == b.parts[k] {
					k++
				} else {
					n++
				}
			}
			if k != len(b.parts) {
				return nil
			}
			for ; n > 0; n-- {
				ks = append(ks, key(Dropped, WhatResultPart))
			}
		}
		if a.err != b.err && len(ks) == 0 {
			return nil
		}
		return ks
	}
	return nil
}

// split takes the units of a kind out of us.
func split(us []unit, kind string) (rest, taken []unit) {
	for _, u := range us {
		if u.kind == kind {
			taken = append(taken, u)
		} else {
			rest = append(rest, u)
		}
	}
	return rest, taken
}

// wrapped is a non-object input as a conversion to Claude Code wraps it.
func wrapped(in string) string {
	var v any = in
	if json.Valid([]byte(in)) {
		v = json.RawMessage(in)
	}
	data, _ := json.Marshal(map[string]any{"input": v})
	return canonical(string(data))
}
