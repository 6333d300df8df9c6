package gemini

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestBranchesByRuns: a session built in two runs, the second resuming the
// first's state and graph, has the fork points of the session built whole,
// where the second run's leaf is not its last item (a rewind in the open
// round) and where an item has no identity (a message of id "", after
// which a rewind to an id the history does not hold makes the next
// message a root).
func TestBranchesByRuns(t *testing.T) {
	head := []string{
		`{"sessionId":"s1","projectHash":"h","startTime":"t0","kind":"main"}`,
		`{"$set":{"messages":[{"id":"ctx","timestamp":"t0","type":"user","content":[{"text":"<session_context>\nhi\n</session_context>"}]}]}}`,
		`{"id":"p1","timestamp":"t1","type":"user","content":[{"text":"first"}]}`,
		`{"id":"r1","timestamp":"t2","type":"gemini","content":"reply"}`,
		`{"$rewindTo":"r1"}`,
		`{"id":"r2","timestamp":"t3","type":"gemini","content":"reply again"}`,
		`{"id":"p2","timestamp":"t4","type":"user","content":[{"text":"second"}]}`,
	}
	for name, tail := range map[string][]string{
		"leaf behind the last item": {`{"$rewindTo":"r2"}`},
		"an item of no identity": {
			`{"id":"","timestamp":"t5","type":"gemini","content":"a reply of no id"}`,
			`{"$rewindTo":"nowhere"}`,
			`{"id":"r3","timestamp":"t6","type":"gemini","content":"after"}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			data := []byte(strings.Join(append(head, tail...), "\n") + "\n")
			whole := build(t, "s.jsonl", data, 1, nil, newRecorder())
			g := newRecorder()
			first := build(t, "s.jsonl", []byte(strings.Join(head, "\n")+"\n"), 1, nil, g)
			var pos struct {
				NextLine int `json:"next_line"`
			}
			if err := json.Unmarshal(first.state, &pos); err != nil {
				t.Fatal(err)
			}
			second := build(t, "s.jsonl", data, pos.NextLine, first.state, g)
			if got, want := second.fin.Meta.Branches, whole.fin.Meta.Branches; !reflect.DeepEqual(got, want) || len(want) == 0 {
				t.Errorf("two runs: branches %+v\none run:  branches %+v", got, want)
			}
		})
	}
}
