package claude

import (
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// build itemizes a transcript given as lines.
func build(t *testing.T, lines ...string) []session.Item {
	t.Helper()
	b := testBuilder(source.Config{File: "t.jsonl", DocBase: "t"})
	var items []session.Item
	for i, l := range lines {
		if r := b.Add(source.Line{No: i + 1, Raw: []byte(l), Terminated: true}); r != nil {
			items = append(items, r.Items...)
		}
	}
	if fin := b.Finish(); fin.Open != nil {
		items = append(items, fin.Open.Items...)
	}
	return items
}

// TestBookkeepingNotes: the client's bookkeeping is a one-line note in the
// message where it happened, never a message of its own (but for a round
// that has none yet).
func TestBookkeepingNotes(t *testing.T) {
	items := build(t,
		`{"type":"system","subtype":"informational","content":"Session started","uuid":"s0","timestamp":"T0"}`,
		`{"type":"user","uuid":"u1","parentUuid":"s0","message":{"role":"user","content":"hi"},"timestamp":"T1"}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"","signature":"sig"},{"type":"text","text":"hello"}]},"timestamp":"T2"}`,
		`{"type":"system","subtype":"api_error","error":{"status":529},"retryInMs":5400,"retryAttempt":2,"maxRetries":10,"uuid":"s1","parentUuid":"a1","timestamp":"T3"}`,
		`{"type":"system","subtype":"stop_hook_summary","hookCount":2,"hookInfos":[],"hookErrors":["x"],"preventedContinuation":true,"stopReason":"tests\nfail","uuid":"s2","parentUuid":"s1","timestamp":"T4"}`,
		`{"type":"system","subtype":"turn_duration","durationMs":228400,"uuid":"s3","parentUuid":"s2","timestamp":"T5"}`,
		`{"type":"system","content":"\u001b[1mPostToolUse:Edit\u001b[22m [fmt] completed\nline two","level":"info","uuid":"s4","parentUuid":"s3","timestamp":"T6"}`,
		`{"type":"system","subtype":"away_summary","content":"Did  things.\nNext: more.","uuid":"s5","parentUuid":"s4","timestamp":"T7"}`,
		`{"type":"system","subtype":"bridge_status","uuid":"s6","parentUuid":"s5","timestamp":"T8"}`,
		`{"type":"ai-title","aiTitle":"Say hello","sessionId":"x"}`,
		`{"type":"bridge-session","bridgeSessionId":"b-1","lastSequenceNum":3}`,
		`{"type":"user","uuid":"u2","parentUuid":"s6","message":{"role":"user","content":"again"},"timestamp":"T9"}`,
	)
	if len(items) != 4 {
		t.Fatalf("%d items, want 4 (the informational notice of an empty round, two prompts and a reply)", len(items))
	}
	if it := items[0]; it.Role != "system" || it.Note != "informational" || len(it.Blocks) != 1 || it.Blocks[0].Text != "Session started" || it.Blocks[0].Entry != "" {
		t.Errorf("first item: %+v", it)
	}
	reply := items[2]
	want := []struct{ label, text, entry string }{
		{"api_error", "API error (status 529), retrying in 5.4 s (attempt 2 of 10)", "s1"},
		{"stop_hook_summary", "2 stop hooks ran · 1 error · prevented continuation: tests fail", "s2"},
		{"turn_duration", "turn took 3 min 48 s", "s3"},
		{"system", "PostToolUse:Edit [fmt] completed …", "s4"},
		{"away_summary", "recap: Did things. Next: more.", "s5"},
		{"bridge_status", "bridge status", "s6"},
		{"ai-title", "title: Say hello", ""},
		{"bridge-session", "bridge session b-1", ""},
	}
	if len(reply.Blocks) != 2+len(want) {
		t.Fatalf("the reply has %d blocks, want %d", len(reply.Blocks), 2+len(want))
	}
	if b := reply.Blocks[0]; b.Kind != session.KindThinking || b.Text != "" {
		t.Errorf("the thinking not recorded is %+v", b)
	}
	for i, w := range want {
		b := reply.Blocks[2+i]
		if b.Kind != session.KindNote || b.Label != w.label || b.Text != w.text || b.Entry != w.entry {
			t.Errorf("note %d: %s %q %q, want %s %q %q", i, b.Kind, b.Label, b.Text, w.label, w.text, w.entry)
		}
	}
	// The next prompt's parent is the last note's entry: it continues the
	// reply, so it names no parent.
	if items[3].Parent != "" {
		t.Errorf("the second prompt names a parent: %q", items[3].Parent)
	}
}

func TestDuration(t *testing.T) {
	for ms, want := range map[float64]string{0: "0 ms", 999: "999 ms", 1000: "1 s", 12340: "12.3 s", 59990: "60 s",
		60000: "1 min 0 s", 228400: "3 min 48 s", 3599499: "59 min 59 s", 3599500: "1 h 0 min", 7384000: "2 h 3 min"} {
		if got := duration(ms); got != want {
			t.Errorf("duration(%v) = %q, want %q", ms, got, want)
		}
	}
	if got := firstNoticeLine([]byte(`"` + strings.Repeat("x", 250) + `"`)); len([]rune(got)) != 202 {
		t.Errorf("a long notice is %d characters", len([]rune(got)))
	}
}
