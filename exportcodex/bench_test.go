package exportcodex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session/source"
)

// bigRollout is a rollout of about size bytes: the tools_reasoning sample
// with its turns repeated (a prompt, reasoning, text, shell calls, a
// patch and their outputs each time).
func bigRollout(b *testing.B, size int) ([]byte, string) {
	data, rel := sample(&testing.T{}, "aced")
	lines := bytes.SplitAfter(data, []byte("\n"))
	head, turns := bytes.Join(lines[:7], nil), bytes.Join(lines[7:], nil)
	var out bytes.Buffer
	out.Write(head)
	for out.Len() < size {
		out.Write(turns)
	}
	return out.Bytes(), rel
}

// BenchmarkBuild measures the builder alone: lines to rounds and items.
func BenchmarkBuild(b *testing.B) {
	data, _ := bigRollout(b, 16<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		bl, err := adapter.NewBuilder(source.Config{File: "big.jsonl", RawInSource: true}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
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

// BenchmarkInscribe measures a whole inscription into a fresh store: the
// builder, round files, the document and its indexes.
func BenchmarkInscribe(b *testing.B) {
	data, rel := bigRollout(b, 16<<20)
	dir := b.TempDir()
	p := filepath.Join(dir, "sessions", rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	src, err := adapter.Session(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		n++
		s, err := inscribe.OpenStore(filepath.Join(dir, "data", string(rune('a'+n%26)), filepath.Base(b.TempDir())))
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range s.Update(src, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}
