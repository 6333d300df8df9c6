// Package crosstest holds what the judges of the cross-agent exports share:
// what a target client must send its model when it resumes a converted
// session, derived from the session's document, and the comparison with
// what it did send.
package crosstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Unit is one structured thing the model receives: a text of a person's
// or a reply, a tool call, or a tool call's result.
type Unit struct {
	Kind  string // "user", "assistant" (a text), "call", "result"; "summary" (a compaction's, as a person's text)
	Text  string
	Name  string          // call
	Input json.RawMessage // call: the input object
	Parts []string        // result: its parts, texts as they are, images as "[image]"
}

func (u Unit) String() string {
	switch u.Kind {
	case "call":
		return fmt.Sprintf("call %s %s", u.Name, short(string(u.Input)))
	case "result":
		return fmt.Sprintf("result %q", short(strings.Join(u.Parts, "|")))
	}
	return fmt.Sprintf("%s %q", u.Kind, short(u.Text))
}

func short(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// Inscribe inscribes every session a adapter finds under root into a
// fresh store, and returns each session's document by session id.
func Inscribe(t testing.TB, a source.Adapter, root string) map[string]string {
	t.Helper()
	s, err := inscribe.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := a.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, src := range ss {
		for _, r := range s.Update(src, inscribe.Options{Agent: a.Agent()}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Source, r.Err)
			}
		}
		d, ok := s.Find(src.ID)
		if !ok {
			t.Fatalf("no document for %s", src.ID)
		}
		docs[src.ID] = d.Path()
	}
	return docs
}

// Expect is what the target must send its model, in order, when it resumes
// the conversion of document md: every prompt and reply text, and every
// tool call with its full result, of the live conversation (an empty text
// aside). Before a
// compaction the target sends what its own compaction keeps, which
// differs between clients: there only the summary is required (as a
// person's text), and what follows it.
//
// A call's input is the source's when it is a JSON object, else
// {"input": value}; a call without a result gets wantAborted when it is
// not nil (the target sends that in its place).
func Expect(t testing.TB, d *inscribe.Doc, aborted []string) []Unit {
	t.Helper()
	c, err := exportcore.Live(d)
	if err != nil {
		t.Fatal(err)
	}
	items := c.Items
	var out []Unit
	for i := len(items) - 1; i >= 0; i-- {
		if b := compaction(&items[i]); b != nil {
			out = append(out, Unit{Kind: "summary", Text: b.Text})
			items = items[i+1:]
			break
		}
	}
	for _, it := range items {
		if it.Role != "user" && it.Role != "assistant" {
			continue
		}
		var results []Unit
		for _, b := range it.Blocks {
			switch b.Kind {
			case session.KindText:
				// An empty text is nothing to receive: Claude's API refuses
				// one, and Claude Code leaves it out, its own included.
				if b.Text != "" {
					out = append(out, Unit{Kind: it.Role, Text: b.Text})
				}
			case session.KindToolUse:
				out = append(out, Unit{Kind: "call", Name: b.Label, Input: input(b.Input)})
				switch {
				case b.Result != nil:
					results = append(results, Unit{Kind: "result", Parts: parts(b.Result)})
				case aborted != nil:
					results = append(results, Unit{Kind: "result", Parts: aborted})
				}
			case session.KindToolResult:
				if b.Result != nil {
					out = append(out, Unit{Kind: "result", Parts: parts(b.Result)})
				}
			}
		}
		out = append(out, results...)
	}
	return out
}

func compaction(it *session.Item) *session.Block {
	for j := range it.Blocks {
		if it.Blocks[j].Kind == session.KindCompaction {
			return &it.Blocks[j]
		}
	}
	return nil
}

// input is a call's input as the target holds it: an object, or the
// value wrapped as {"input": value}.
func input(in string) json.RawMessage {
	in = strings.TrimSpace(in)
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
	data, _ := json.Marshal(map[string]any{"input": v})
	return data
}

func parts(r *session.Result) []string {
	var out []string
	for _, p := range r.Parts {
		switch p.Kind {
		case session.KindText:
			out = append(out, p.Text)
		case session.KindFile:
			out = append(out, "[image]")
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// Match reports whether want is a subsequence of got: every unit, in
// order, equal (inputs as JSON values). It returns the first unit it could
// not find, and where it looked.
func Match(want, got []Unit) error {
	j := 0
	for i, w := range want {
		for j < len(got) && !equal(w, got[j]) {
			j++
		}
		if j == len(got) {
			return fmt.Errorf("the model does not receive unit %d of %d, %s, in order (after what it received before it)", i+1, len(want), w)
		}
		j++
	}
	return nil
}

func equal(a, b Unit) bool {
	if a.Kind == "summary" {
		// A client may end the summary with a newline of its own.
		return b.Kind == "user" && strings.TrimSpace(a.Text) == strings.TrimSpace(b.Text)
	}
	if a.Kind != b.Kind || a.Text != b.Text || a.Name != b.Name || !reflect.DeepEqual(a.Parts, b.Parts) {
		return false
	}
	if a.Kind != "call" {
		return true
	}
	var x, y any
	if json.Unmarshal(a.Input, &x) != nil || json.Unmarshal(b.Input, &y) != nil {
		return bytes.Equal(a.Input, b.Input)
	}
	return reflect.DeepEqual(x, y)
}

// Dump lists units one a line, for a failure message.
func Dump(us []Unit) string {
	var b strings.Builder
	for i, u := range us {
		fmt.Fprintf(&b, "%3d %s\n", i+1, u)
	}
	return b.String()
}

// Abandoned is what the target must not receive: the texts of the
// document's items that are not on its live branch (a rewind's abandoned
// branch), except those the live branch says too.
func Abandoned(t testing.TB, d *inscribe.Doc) []Unit {
	t.Helper()
	c, err := exportcore.Live(d)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	texts := map[string]bool{}
	for _, it := range c.Items {
		live[it.IDs[0]] = true
		for _, b := range it.Blocks {
			texts[b.Text] = true
		}
	}
	r, err := d.Items()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Unit
	for {
		it, err := r.Next()
		if err != nil {
			break
		}
		if live[it.IDs[0]] || (it.Role != "user" && it.Role != "assistant") {
			continue
		}
		for _, b := range it.Blocks {
			if b.Kind == session.KindText && b.Text != "" && !texts[b.Text] {
				out = append(out, Unit{Kind: it.Role, Text: b.Text})
			}
		}
	}
	return out
}

// None returns an error when got holds any of the units.
func None(units, got []Unit) error {
	for _, u := range units {
		for _, g := range got {
			if equal(u, g) {
				return fmt.Errorf("the model receives %s, which is not on the live branch", u)
			}
		}
	}
	return nil
}
