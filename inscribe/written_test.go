package inscribe

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWritten: a header taken back is the one written, the tool calls'
// results as the index holds them (ResultText); each is peeked at as
// often as asked, and taken once,
// whatever the order they are written and taken in; the file is gone once
// closed.
func TestWritten(t *testing.T) {
	dir := t.TempDir()
	w := &Written{dir: dir}
	long := strings.Repeat("é", 1<<20)
	rfs := []RoundFile{
		{Round: 1, Started: "t1", Open: false, TokenCount: 3, Lines: [2]int{1, 4}, User: &RoundBlock{Type: "text", Text: "hello " + long},
			Agent: []RoundBlock{{Type: "thinking", Text: "hm"}, {Type: "tool_use", Name: "Bash", ID: "x1", Input: json.RawMessage(`{"command":"ls"}`),
				Result: &RoundResult{IsError: true, Content: []RoundBlock{{Type: "text", Text: "a b"}, {Type: "raw", Text: `{"x":1}`},
					{Type: "text", Text: "start " + long + " end"}, {Type: "image", Path: "files/a.png"}}}}, {Type: "text", Text: ""}},
			Entries: []RoundEntry{{Line: 1}}},
		{Round: 2, Open: true},
		{Round: 3, Agent: []RoundBlock{{Type: "tool_use", Name: "Read"}}},
		{Round: 5, EngagementID: ptr("eng-1"), Started: "t5", Lines: [2]int{9, 9}},
		{Round: 4, User: &RoundBlock{Type: "text", Text: "before"}, Open: true},
	}
	// Rounds 3, 2 and 1 written first: each placed before the first.
	for _, i := range []int{2, 1, 0, 3, 4} {
		w.add(&rfs[i])
	}
	if _, ok := w.Peek(6); ok {
		t.Fatal("round 6 found, never written")
	}
	// Taken out of order: round 4 (written last) first, then 1, 2 and 3
	// (each read on from where the one before ended), then 5.
	rfs = append(rfs[4:], rfs[:4]...)
	for _, rf := range rfs {
		want := rf
		want.Entries = nil
		if len(want.Agent) > 0 {
			want.Agent = append([]RoundBlock(nil), want.Agent...)
			for i, b := range want.Agent {
				if b.Result == nil {
					continue
				}
				r := &RoundResult{IsError: b.Result.IsError}
				for _, c := range b.Result.Content {
					if c.Type == "text" {
						c.Text = ResultText(c.Text)
					}
					r.Content = append(r.Content, RoundBlock{Type: c.Type, Text: c.Text})
				}
				want.Agent[i].Result = r
			}
		}
		if got, ok := w.Peek(rf.Round); !ok || !reflect.DeepEqual(*got, want) {
			t.Fatalf("round %d, peeked: %+v, want %+v", rf.Round, got, want)
		}
		got, ok := w.Take(rf.Round)
		if !ok || !reflect.DeepEqual(*got, want) {
			t.Fatalf("round %d: %+v, want %+v", rf.Round, got, want)
		}
		if _, ok := w.Take(rf.Round); ok {
			t.Fatalf("round %d taken twice", rf.Round)
		}
	}
	w.close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}

func ptr(s string) *string { return &s }

// TestResultText: a long result is held by its start and end, cut between
// words; one it returns it returns unchanged.
func TestResultText(t *testing.T) {
	short := "total 8\nfile"
	if ResultText(short) != short {
		t.Error("a short result is cut")
	}
	long := "START " + strings.Repeat("output line\n", 20000) + "FAILED"
	got := ResultText(long)
	if !strings.HasPrefix(got, "START output line") || !strings.HasSuffix(got, "output line\nFAILED") || !strings.Contains(got, "\n…\n") ||
		len(got) > ResultHead+ResultTail+len(resultCut) {
		t.Errorf("%d bytes: %q … %q", len(got), got[:20], got[len(got)-20:])
	}
	if ResultText(got) != got {
		t.Error("ResultText(ResultText(s)) != ResultText(s)")
	}
	cjk := strings.Repeat("日", 40000)
	if got := ResultText(cjk); !utf8.ValidString(got) || ResultText(got) != got {
		t.Errorf("a run without spaces is cut inside a character, or not once for all")
	}
}
