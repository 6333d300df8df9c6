package document

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

var claudeSrc = claude.New()

// buildDoc builds the document of a transcript in memory.
func buildDoc(t testing.TB, path string) *session.Document {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	side := strings.HasPrefix(base, "agent-")
	// As the store lays a document's files and sidechains out
	// (inscribe's builderConfig).
	cfg := source.Config{File: path, Sidechain: side,
		FilePath: func(name string) string { return base + "/files/" + name },
		SidechainPath: func(id string) string {
			if side {
				return "agent-" + id + ".md"
			}
			return base + "/agent-" + id + ".md"
		}}
	b, err := claudeSrc.NewBuilder(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return buildWith(t, b, f, claudeSrc.Format(), claudeSrc.AgentName())
}

// buildWith builds a document from a source with a builder.
func buildWith(t testing.TB, b source.Builder, f io.Reader, format, agentName string) *session.Document {
	t.Helper()
	lr := source.NewLineReader(f, 1, 0)
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
	fin.Meta.Format, fin.Meta.SourceFormat, fin.Meta.AgentName = session.FormatVersion, format, agentName
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
	// Read message by message (as an export does), in large reads and in
	// reads of a few bytes, the document gives what Parse gives.
	for _, chunk := range []int{0, 7} {
		ir, err := ReadItems(nopCloser{bytes.NewReader(md)}, int64(len(md)), "doc.md")
		if err != nil {
			t.Fatalf("open the items: %v", err)
		}
		if chunk > 0 {
			ir.chunk = chunk
		}
		var items []session.Item
		for {
			it, err := ir.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read the items (reads of %d bytes): %v", ir.chunk, err)
			}
			items = append(items, *it)
		}
		ir.Close()
		if !Equal(&session.Document{Meta: *ir.Meta, Summary: ir.Summary, Items: items}, back) {
			t.Fatalf("read item by item (reads of %d bytes), the document differs from parse(render(x))", ir.chunk)
		}
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

// nopCloser is a bytes.Reader that closes.
type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// TestRoundTripLongTexts reads back items with texts of a few MiB, which
// an ItemReader keeps as its window's bytes (shareMin) and reads into a
// window of about their size: plain, with rules and fences inside (a
// fenced block), and two in a row.
func TestRoundTripLongTexts(t *testing.T) {
	p := filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222.jsonl")
	d := buildDoc(t, p)
	long := func(line string) string { return strings.Repeat(line+"\n", (3<<20)/(len(line)+1)) + "end" }
	texts := []string{long("words of a prompt é→"), long("---\n```\n### not a heading"), strings.Repeat("x", 2<<20)}
	k := 0
	for i := range d.Items {
		for j := range d.Items[i].Blocks {
			if b := &d.Items[i].Blocks[j]; b.Kind == session.KindText && k < len(texts) {
				b.Text = texts[k]
				k++
			}
		}
	}
	if k < len(texts) {
		t.Fatalf("the sample has %d texts, want %d", k, len(texts))
	}
	checkRoundTrip(t, "long", d)
}
