package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session/source"
)

// memGraph is a source.Recorder held in memory, as the store's graph file
// is read: the last recorded node of an identity wins.
type memGraph struct {
	byID  map[string]source.Node
	items []source.Node
}

func (g *memGraph) Lookup(u string) (source.Node, bool) { n, ok := g.byID[u]; return n, ok }
func (g *memGraph) Items() []source.Node                { return g.items }
func (g *memGraph) Record(nodes []source.Node) {
	for _, n := range nodes {
		g.byID[n.UUID] = n
		if n.IsItem() {
			g.items = append(g.items, n)
		}
	}
}

// BenchmarkBuild measures the builder alone over the bundled transcripts:
// lines to rounds and items, the rounds' nodes handed to a graph as the
// store hands them.
func BenchmarkBuild(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude", "projects", "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude", "projects", "*", "*", "subagents", "*.jsonl"))
	files = append(files, more...)
	if len(files) == 0 {
		b.Fatal("no sample transcripts")
	}
	data := make([][]byte, len(files))
	var size int64
	for i, f := range files {
		var err error
		if data[i], err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
		size += int64(len(data[i]))
	}
	a := New()
	b.SetBytes(size)
	for b.Loop() {
		for i, f := range files {
			cfg := source.Config{File: f, Sidechain: strings.Contains(f, "subagents"), RawInSource: true}
			bl, err := a.NewBuilder(cfg, nil, &memGraph{byID: map[string]source.Node{}})
			if err != nil {
				b.Fatal(err)
			}
			lr := source.NewLineReader(bytes.NewReader(data[i]), 1, 0)
			for {
				l, err := lr.Next()
				if err != nil {
					break
				}
				bl.Add(l)
			}
			bl.Finish()
		}
	}
}
