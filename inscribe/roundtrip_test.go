package inscribe

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/internal/testenv"
	"github.com/scribe-archive/scribe/session"
)

// buildDoc builds the document of a transcript in memory.
func buildDoc(t testing.TB, path string) *session.Document {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	b := claude.NewBuilder(claude.Config{File: path, DocBase: base, Sidechain: strings.HasPrefix(base, "agent-")}, claude.State{}, nil)
	lr := claude.NewLineReader(f, 1, 0)
	var items []session.Item
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r := b.Add(l); r != nil {
			items = append(items, r.Items...)
		}
	}
	fin := b.Finish()
	if fin.Open != nil {
		items = append(items, fin.Open.Items...)
	}
	return &session.Document{Meta: fin.Meta, Summary: Placeholder(fin.FirstPrompt), Items: items}
}

// checkRoundTrip asserts parse(render(d)) == d and that rendering the parsed
// document gives the same bytes.
func checkRoundTrip(t *testing.T, name string, d *session.Document) {
	t.Helper()
	md := Render(d)
	back, err := Parse(md, name)
	if err != nil {
		t.Fatalf("parse(render(x)): %v", err)
	}
	if !Equal(d, back) {
		for i := range d.Items {
			if i >= len(back.Items) || !Equal(&session.Document{Items: d.Items[i : i+1]}, &session.Document{Items: back.Items[i : i+1]}) {
				t.Fatalf("parse(render(x)) != x: first difference at item %d (%v)", i, d.Items[i].IDs)
			}
		}
		t.Fatalf("parse(render(x)) != x (metadata, summary or item count)")
	}
	if again := Render(back); !bytes.Equal(again, md) {
		t.Fatalf("render(parse(render(x))) != render(x)")
	}
}

func TestRoundTripCorpus(t *testing.T) {
	for _, p := range testenv.Transcripts(t, testenv.Projects(t)) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			checkRoundTrip(t, p, buildDoc(t, p))
		})
	}
}

func TestRoundTripPublicCorpus(t *testing.T) {
	for _, p := range testenv.PublicTranscripts(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			checkRoundTrip(t, p, buildDoc(t, p))
		})
	}
}
