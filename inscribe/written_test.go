package inscribe

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestWritten: a header taken back is the one written, without the tool
// calls' results; each is taken once; the file is gone once closed.
func TestWritten(t *testing.T) {
	dir := t.TempDir()
	w := &Written{dir: dir}
	long := strings.Repeat("é", 1<<20)
	rfs := []RoundFile{
		{Round: 1, Started: "t1", Open: false, TokenCount: 3, Lines: [2]int{1, 4}, User: &RoundBlock{Type: "text", Text: "hello " + long},
			Agent: []RoundBlock{{Type: "thinking", Text: "hm"}, {Type: "tool_use", Name: "Bash", ID: "x1", Input: json.RawMessage(`{"command":"ls"}`),
				Result: &RoundResult{Content: []RoundBlock{{Type: "text", Text: "a b"}}}}, {Type: "text", Text: ""}},
			Entries: []RoundEntry{{Line: 1}}},
		{Round: 2, Open: true},
		{Round: 3, Agent: []RoundBlock{{Type: "tool_use", Name: "Read"}}},
	}
	for i := range rfs {
		w.add(&rfs[i])
	}
	if !w.open(2) || w.open(1) || w.open(9) {
		t.Error("open")
	}
	for _, rf := range rfs {
		want := rf
		want.Entries = nil
		if len(want.Agent) > 0 {
			want.Agent = append([]RoundBlock(nil), want.Agent...)
			for i := range want.Agent {
				want.Agent[i].Result = nil
			}
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
