package exportcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A Unit is one thing a model receives when its client resumes a session,
// as the comparison of what two clients send sees it: a person's text, a
// reply's text, an image, a tool call, a tool call's result. Context the
// clients add (each its own), reasoning (each model's own) and how units
// are grouped into messages are not units.
type Unit struct {
	Kind  string   // "user", "assistant", "image", "call", "result"
	Text  string   // user, assistant: the text; image: its media type
	Name  string   // call: the tool's name
	Input string   // call: the input, a JSON object (a value that is not one wrapped as {"input": value}), keys sorted
	Parts []string // result: its parts, texts as they are, images as "[image]"
	// ID is a call's id, or the id of the call a result answers; it is
	// not compared (targets mint their own), only used to order results.
	ID string
	// Kept marks a text a compaction keeps in place of the history before
	// it (Codex's replacement history): the target may send it as its
	// compaction's summary, a person's text that holds it.
	Kept bool
}

func (u Unit) String() string {
	switch u.Kind {
	case "call":
		return fmt.Sprintf("call of %s %s", u.Name, short(u.Input))
	case "result":
		return fmt.Sprintf("result %q", short(strings.Join(u.Parts, "|")))
	case "image":
		return "image (" + u.Text + ")"
	}
	return fmt.Sprintf("%s text %q", u.Kind, short(u.Text))
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// SentUnits are the units of what a client sends: the items of a resumed
// conversation from its last compaction on (source.Resumed.Sent).
func SentUnits(r *source.Resumed) []Unit {
	var out []Unit
	for _, it := range r.Sent() {
		out = append(out, ItemUnits(it)...)
	}
	return Canon(out)
}

// Canon puts units in the order the comparison reads them: within a run
// of calls and results (nothing else between them), the calls first, then
// the results in the order of their calls (a result whose call is not in
// the run last). Clients place results differently (Codex where they came,
// Claude Code after all the calls of a reply); the model pairs them by id.
func Canon(us []Unit) []Unit {
	out := make([]Unit, 0, len(us))
	for i := 0; i < len(us); {
		j := i
		for j < len(us) && (us[j].Kind == "call" || us[j].Kind == "result") {
			j++
		}
		if j == i {
			out = append(out, us[i])
			i++
			continue
		}
		for _, u := range us[i:j] {
			if u.Kind == "call" {
				out = append(out, u)
			}
		}
		var results []Unit
		at := map[string]int{}
		for k, u := range us[i:j] {
			switch u.Kind {
			case "call":
				if _, dup := at[u.ID]; !dup && u.ID != "" {
					at[u.ID] = k
				}
			case "result":
				results = append(results, u)
			}
		}
		slices.SortStableFunc(results, func(a, b Unit) int {
			pa, oka := at[a.ID]
			pb, okb := at[b.ID]
			switch {
			case !oka && !okb:
				return 0
			case !oka:
				return 1
			case !okb:
				return -1
			}
			return pa - pb
		})
		out = append(out, results...)
		i = j
	}
	return out
}

// ItemUnits are the units of one item of a resumed conversation.
func ItemUnits(it session.Item) []Unit {
	var out, results []Unit
	compaction := source.IsCompaction(&it)
	keptTexts := 0
	for _, b := range it.Blocks {
		if b.Kind != session.KindToolUse {
			out, results = append(out, results...), nil
		}
		switch b.Kind {
		case session.KindText:
			role := it.Role
			if compaction {
				role, _, _ = strings.Cut(b.Label, ",")
				keptTexts++
			}
			if (role == "user" || role == "assistant") && b.Text != "" {
				out = append(out, Unit{Kind: role, Text: b.Text, Kept: compaction})
			}
		case session.KindFile:
			if it.Role == "user" || compaction {
				out = append(out, Unit{Kind: "image", Text: b.File.MediaType, Kept: compaction})
			}
		case session.KindToolUse:
			out = append(out, Unit{Kind: "call", Name: b.Label, Input: WrapInput(b.Input), ID: b.ID, Kept: compaction})
			if b.Result != nil {
				results = append(results, Unit{Kind: "result", Parts: ResultParts(b.Result), ID: b.ID, Kept: compaction})
			}
		case session.KindToolResult:
			if b.Result != nil {
				out = append(out, Unit{Kind: "result", Parts: ResultParts(b.Result), ID: b.ID, Kept: compaction})
			}
		}
	}
	if compaction && keptTexts == 0 && strings.TrimSpace(it.Blocks[0].Text) != "" {
		// A summary in words, which the client sends as a person's text.
		out = append([]Unit{{Kind: "user", Text: it.Blocks[0].Text, Kept: true}}, out...)
	}
	return append(out, results...)
}

// WrapInput is a call's input as a unit holds it: a JSON object with its
// keys sorted, or any other value (a custom tool's free text) wrapped as
// {"input": value}, as a conversion to Claude Code wraps it.
func WrapInput(in string) string {
	in = strings.TrimSpace(in)
	if in == "" {
		return "{}"
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(in), &obj) == nil && obj != nil {
		return canonical(in)
	}
	return wrapped(in)
}

// ResultParts are a result's parts as a unit holds them.
func ResultParts(r *session.Result) []string {
	var out []string
	for _, p := range r.Parts {
		switch p.Kind {
		case session.KindText:
			out = append(out, p.Text)
		case session.KindFile:
			out = append(out, "[image]")
		default:
			out = append(out, "[raw]")
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// SameUnit reports whether the model receives a as b: the same kind, texts
// equal but for white space at their ends (a client may end a summary with
// a newline of its own), inputs as JSON values.
func SameUnit(a, b Unit) bool {
	if a.Kind != b.Kind || a.Name != b.Name || !slices.Equal(a.Parts, b.Parts) {
		return false
	}
	switch a.Kind {
	case "call":
		return canonical(a.Input) == canonical(b.Input)
	case "user", "assistant":
		return strings.TrimSpace(a.Text) == strings.TrimSpace(b.Text)
	}
	return a.Text == b.Text
}

// Missing returns the units of want that got does not hold in order: each
// unit of want is looked for after the one found before it; a kept text
// may be held in a person's text of got (the summary of the target's
// compaction). It returns, for each unit not found, its index in want.
func Missing(want, got []Unit) []int {
	var missing []int
	j := 0
	for i, w := range want {
		k := j
		for k < len(got) && !SameUnit(w, got[k]) && !(w.Kept && heldIn(w, got[k])) {
			k++
		}
		if k == len(got) {
			missing = append(missing, i)
			continue
		}
		if SameUnit(w, got[k]) {
			j = k + 1
		} else {
			j = k // a summary holds several kept texts
		}
	}
	return missing
}

// heldIn reports whether a kept text is in a person's text of the target.
func heldIn(w, g Unit) bool {
	return (w.Kind == "user" || w.Kind == "assistant") && g.Kind == "user" && strings.TrimSpace(w.Text) != "" &&
		strings.Contains(g.Text, strings.TrimSpace(w.Text))
}

// DumpUnits lists units one a line, for a failure message.
func DumpUnits(us []Unit) string {
	var b strings.Builder
	for i, u := range us {
		fmt.Fprintf(&b, "%4d %s\n", i+1, u)
	}
	return b.String()
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

// wrapped is a non-object input as a conversion to Claude Code wraps it.
func wrapped(in string) string {
	var v any = in
	if json.Valid([]byte(in)) {
		v = json.RawMessage(in)
	}
	data, _ := json.Marshal(map[string]any{"input": v})
	return canonical(string(data))
}

// allowances are the reported losses that may account for a unit the
// target does not send, by the unit's kind.
var allowances = map[string][]string{
	"image":     {key(Dropped, WhatFile)},
	"result":    {key(Dropped, WhatResultPart), key(Dropped, WhatOrphan), key(Dropped, WhatRepeated), key(Transformed, WhatNoResult)},
	"call":      {key(Transformed, WhatToolID), key(Dropped, WhatRaw)},
	"user":      {key(Dropped, WhatSystem)},
	"assistant": {key(Dropped, WhatSystem)},
}

// Received compares what the source client sends its model on resume
// (want: the units of the original as its client rebuilds it) with what
// the target client sends when it resumes the conversion (got), and says
// every unit of want the target does not send, in order, that no reported
// loss accounts for: a prompt, a reply, an image, a call or a result lost
// silently. Each reported loss accounts for as many units as it counts,
// of the kinds it can take away (a dropped attachment an image, a
// rewritten tool name a call, ...).
func Received(want, got []Unit, losses *Losses, source, target string) []string {
	left := map[string]int{}
	for _, l := range losses.List() {
		left[key(l.Kind, l.What)] = l.Count
	}
	var problems []string
	for _, i := range Missing(want, got) {
		u := want[i]
		accounted := false
		for _, k := range allowances[u.Kind] {
			if left[k] > 0 {
				left[k]--
				accounted = true
				break
			}
		}
		if !accounted {
			problems = append(problems, fmt.Sprintf("%s, resuming the conversion, would not send %s (unit %d of the %d %s sends on resume), and no loss reported accounts for it", target, u, i+1, len(want), source))
		}
	}
	return problems
}
