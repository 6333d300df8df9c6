package claude

import (
	"testing"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// finish builds a transcript given as lines and returns its description.
func finish(t *testing.T, lines ...string) source.Finished {
	t.Helper()
	b := testBuilder(source.Config{File: "t.jsonl"})
	for i, l := range lines {
		b.Add(source.Line{No: i + 1, Raw: []byte(l), Terminated: true})
	}
	return b.Finish()
}

// TestClientSummary: the session's client summary is the title the client
// gave it (ai-title), else the last summary entry whose leaf is one of its
// entries; a summary of another session's leaf (Claude Code writes those
// at the top of a later transcript) is not its.
func TestClientSummary(t *testing.T) {
	prompt := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"fix the login bug"},"timestamp":"2026-01-01T00:00:00Z"}`
	reply := `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"done"}]},"timestamp":"2026-01-01T00:00:01Z"}`
	second := `{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"thanks"},"timestamp":"2026-01-01T00:00:02Z"}`
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"none", []string{prompt, reply}, ""},
		{"elsewhere", []string{`{"type":"summary","summary":"Another session","leafUuid":"x9"}`, prompt, reply}, ""},
		{"before its leaf", []string{`{"type":"summary","summary":"Login fix","leafUuid":"a1"}`, `{"type":"summary","summary":"Other","leafUuid":"x9"}`, prompt, reply, second}, "Login fix"},
		{"in a closed round", []string{prompt, reply, `{"type":"summary","summary":"Login fix","leafUuid":"u1"}`, second}, "Login fix"},
		{"the last", []string{`{"type":"summary","summary":"First","leafUuid":"u1"}`, prompt, reply, `{"type":"summary","summary":"Later","leafUuid":"a1"}`}, "Later"},
		{"ai-title", []string{prompt, `{"type":"ai-title","aiTitle":"Fix the login bug","sessionId":"s"}`, `{"type":"summary","summary":"Login fix","leafUuid":"u1"}`, reply}, "Fix the login bug"},
	} {
		fin := finish(t, c.lines...)
		if got := session.Str(fin.Meta.ClientSummary); got != c.want {
			t.Errorf("%s: client summary %q, want %q", c.name, got, c.want)
		}
	}
}
