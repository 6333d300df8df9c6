package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/session/source"
)

// testBuilder starts a builder for a new document.
func testBuilder(cfg source.Config) source.Builder {
	b, err := newBuilder(cfg, nil, nil)
	if err != nil {
		panic(err) // a builder without a saved state always starts
	}
	return b
}

// buildAll feeds data to a new builder line by line, with a flush midway
// (what an append does when it stops at a source's end), and returns how
// many lines its rounds kept.
func buildAll(t *testing.T, data []byte) (kept, lines int) {
	b := testBuilder(source.Config{File: "fuzz.jsonl"})
	lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		lines++
		if r := b.Add(l); r != nil {
			kept += len(r.Entries)
		}
		if lines == 3 {
			if r := b.Flush(); r != nil {
				kept += len(r.Entries)
			}
		}
	}
	if st, err := b.State(); err != nil || !json.Valid(st) {
		t.Fatalf("the builder's state: %q, %v", st, err)
	}
	if fin := b.Finish(); fin.Open != nil {
		kept += len(fin.Open.Entries)
	}
	return kept, lines
}

// FuzzBuilder: any bytes build without a panic, every line is kept in some
// round (an entry scribe does not understand included), and the state the
// store keeps is JSON.
func FuzzBuilder(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude", "projects", "*", "*.jsonl"))
	if len(paths) == 0 {
		f.Fatal("no sample transcripts in testdata/claude/projects")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		// A few lines at a time, so that mutations reach every entry type.
		parts := bytes.SplitAfter(data, []byte("\n"))
		for i := 0; i+4 <= len(parts) && i < 40; i += 4 {
			f.Add(bytes.Join(parts[i:i+4], nil))
		}
	}
	f.Add([]byte("null\n[1]\n\"s\"\n{}\n{\"type\":\"user\"}\n{\"type\":\"assistant\",\"message\":{\"content\":[{}]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if kept, lines := buildAll(t, data); kept != lines {
			t.Fatalf("%d lines, %d kept", lines, kept)
		}
	})
}
