package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
	"github.com/scribe-archive/scribe/session/source/lifecycle"
)

// samples are the bundled rollouts (the real corpus, copied).
func samples(t testing.TB) []string {
	ms, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "codex", "sessions", "*", "*", "*", "*.jsonl"))
	if len(ms) == 0 {
		t.Fatal("no sample rollouts in testdata/codex/sessions")
	}
	return ms
}

// testBuilder starts a builder for a new document.
func testBuilder(cfg source.Config) source.Builder {
	b, err := newBuilder(cfg, nil, nil)
	if err != nil {
		panic(err) // a builder without a saved state always starts
	}
	return b
}

// build feeds data to a new builder line by line and returns how many
// lines its rounds kept.
func build(data []byte) (kept, lines int) {
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
	}
	if fin := b.Finish(); fin.Open != nil {
		kept += len(fin.Open.Entries)
	}
	return kept, lines
}

// FuzzBuilder: any bytes build without a panic, and every line is kept in
// some round.
func FuzzBuilder(f *testing.F) {
	for _, p := range samples(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		// A few lines at a time, so that mutations reach every record type.
		for _, chunk := range bytes.SplitAfter(data, []byte("\n"))[:8] {
			f.Add(chunk)
		}
	}
	f.Add([]byte("{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}}\n"))
	f.Add([]byte("{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":[{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,AAAA\"}]}}\n"))
	f.Add([]byte("null\n[1]\n\"s\"\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if kept, lines := build(data); kept != lines {
			t.Fatalf("%d lines, %d kept", lines, kept)
		}
	})
}

// TestSamplesBuild: the samples build, every line kept, without warnings
// but the crash rollout's torn line (which the store, not the builder,
// leaves out).
func TestSamplesBuild(t *testing.T) {
	for _, p := range samples(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if kept, lines := build(data); kept != lines {
			t.Errorf("%s: %d lines, %d kept", p, lines, kept)
		}
	}
}

// TestPrompt: what opens a round.
func TestPrompt(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`, true},
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n</environment_context>"}]}}`, false},
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\n</INSTRUCTIONS>"}]}}`, false},
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"user"}}]}}}`, true},
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"typed"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"harness"}}]}}}`, false},
		{`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"hi"}]}}`, false},
		{`{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`, false},
	} {
		if got := isPrompt(parse(&lifecycle.Context{}, session.Entry{Line: 1, Raw: []byte(c.line)})); got != c.want {
			t.Errorf("isPrompt(%s) = %v, want %v", c.line, got, c.want)
		}
	}
}
