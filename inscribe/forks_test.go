package inscribe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/session/source"
)

// TestForksByRuns: Claude Code's adapter over the store's graph, where an
// assistant message's second line (a node that is no item, folded into
// the first) is written again in a later round, where it is an item (a
// fork): a second run has the fork points of the session built whole,
// whether it answers from the state the first run kept or reads the graph
// (the state's fork points dropped).
func TestForksByRuns(t *testing.T) {
	l := func(parent, typ, msg, uuid string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"parentUuid":` + p + `,"isSidechain":false,"type":"` + typ + `","message":` + msg + `,"uuid":"` + uuid + `","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s"}`
	}
	user := func(text string) string { return `{"role":"user","content":"` + text + `"}` }
	asst := func(id, text string) string {
		return `{"id":"` + id + `","role":"assistant","model":"m","content":[{"type":"text","text":"` + text + `"}]}`
	}
	lines := []string{
		l("", "user", user("q1"), "u1"),
		l("u1", "assistant", asst("m1", "part 1"), "a1"),
		l("a1", "assistant", asst("m1", "part 2"), "a2"),
		l("a2", "user", user("q2"), "u2"),
		l("a1", "assistant", asst("m1", "part 2"), "a2"), // line 3 again
		l("a2", "user", user("q3"), "u3"),
		l("u3", "assistant", asst("m3", "answer 3"), "a3"),
	}
	// build feeds lines first to upto to a builder over the graph at path
	// (nil: none, a build of the session whole).
	build := func(path string, size int64, state json.RawMessage, first, upto int) (source.Finished, json.RawMessage, int, int64) {
		t.Helper()
		var b atomicfile.Batch
		var g *fileGraph
		var graph source.Graph
		if path != "" {
			g = newFileGraph(&b, path, size)
			graph = g
		}
		bl, err := claudeSrc.NewBuilder(source.Config{File: "s.jsonl"}, state, graph)
		if err != nil {
			t.Fatal(err)
		}
		for i := first - 1; i < upto; i++ {
			bl.Add(source.Line{No: i + 1, Raw: []byte(lines[i]), Terminated: true})
		}
		fin := bl.Finish()
		st, err := bl.State()
		if err != nil {
			t.Fatal(err)
		}
		var pos struct {
			NextLine int `json:"next_line"`
		}
		if err := json.Unmarshal(st, &pos); err != nil {
			t.Fatal(err)
		}
		var n int64
		if g != nil {
			if n, err = g.finish(); err != nil {
				t.Fatal(err)
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		return fin, st, pos.NextLine, n
	}
	whole, _, _, _ := build("", 0, nil, 1, len(lines))
	if len(whole.Meta.Branches) == 0 {
		t.Fatal("the session built whole has no fork point")
	}
	path := filepath.Join(t.TempDir(), graphFile)
	_, st, next, size := build(path, 0, nil, 1, 6)
	var drop map[string]any
	if err := json.Unmarshal(st, &drop); err != nil || drop["forks"] == nil {
		t.Fatalf("the first run kept no fork points: %s", st)
	}
	delete(drop, "forks")
	noForks, _ := json.Marshal(drop)
	again := filepath.Join(t.TempDir(), graphFile)
	if err := os.WriteFile(again, mustRead(t, path), 0o644); err != nil {
		t.Fatal(err)
	}
	fromState, _, _, _ := build(path, size, st, next, len(lines))
	fromGraph, _, _, _ := build(again, size, noForks, next, len(lines))
	for name, got := range map[string]source.Finished{"from the state": fromState, "reading the graph": fromGraph} {
		if !reflect.DeepEqual(got.Meta.Branches, whole.Meta.Branches) {
			t.Errorf("second run, %s: %+v; built whole: %+v", name, got.Meta.Branches, whole.Meta.Branches)
		}
	}
}
