package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// build itemizes a transcript given as lines.
func build(t *testing.T, lines ...string) []session.Item {
	t.Helper()
	b := testBuilder(source.Config{File: "t.jsonl"})
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
// message where it happened, never a message of its own; what comes before
// the round's first message is at the top of it.
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
	if len(items) != 3 {
		t.Fatalf("%d items, want 3 (two prompts and a reply)", len(items))
	}
	if it := items[0]; it.Role != "user" || len(it.Blocks) != 2 || it.Blocks[0].Kind != session.KindNote || it.Blocks[0].Label != "informational" ||
		it.Blocks[0].Text != "Session started" || it.Blocks[0].Entry != "s0" || it.Blocks[0].Time != "T0" || it.Parent != "" {
		t.Errorf("first item: %+v, want the prompt, the informational notice at its top", it)
	}
	reply := items[1]
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
	if items[2].Parent != "" {
		t.Errorf("the second prompt names a parent: %q", items[2].Parent)
	}
}

// TestEarlyBookkeeping: bookkeeping that opens a file (a bridge's session
// and status, the stop hooks of a turn whose message is in another file)
// has no heading of its own: it is at the top of the first message, and a
// chain that starts in another file does not make that message a branch.
// Only a file of bookkeeping alone shows it as a message, not to lose it.
func TestEarlyBookkeeping(t *testing.T) {
	items := build(t,
		`{"type":"bridge-session","bridgeSessionId":"b-1","lastSequenceNum":3}`,
		`{"type":"system","subtype":"bridge_status","content":"Remote Control connected","uuid":"s0","timestamp":"T0"}`,
		`{"type":"system","subtype":"stop_hook_summary","hookCount":1,"hookInfos":[],"uuid":"s1","parentUuid":"elsewhere","timestamp":"T1"}`,
		`{"type":"user","uuid":"u1","parentUuid":"s1","message":{"role":"user","content":"hi"},"timestamp":"T2"}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}]},"timestamp":"T3"}`,
	)
	if len(items) != 2 {
		t.Fatalf("%d items, want 2 (the prompt and the reply)", len(items))
	}
	p := items[0]
	if p.Role != "user" || p.Note != "" || p.Parent != "" || p.ParentMissing || len(p.Blocks) != 4 {
		t.Fatalf("first item: %+v, want the prompt, continuing nothing, with three notes on top", p)
	}
	for i, w := range []struct{ label, text, entry string }{
		{"bridge-session", "bridge session b-1", ""},
		{"bridge_status", "Remote Control connected", "s0"},
		{"stop_hook_summary", "1 stop hook ran", "s1"},
	} {
		if b := p.Blocks[i]; b.Kind != session.KindNote || b.Label != w.label || b.Text != w.text || b.Entry != w.entry {
			t.Errorf("block %d: %s %q %q %q, want a note %s %q %q", i, b.Kind, b.Label, b.Text, b.Entry, w.label, w.text, w.entry)
		}
	}
	if b := p.Blocks[3]; b.Kind != session.KindText || b.Text != "hi" {
		t.Errorf("the prompt's text is %+v", b)
	}

	// Notes before a compaction: its summary still finds it.
	items = build(t,
		`{"type":"system","subtype":"bridge_status","uuid":"s0","timestamp":"T0"}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"c1","parentUuid":null,"logicalParentUuid":"gone","compactMetadata":{"trigger":"manual","preTokens":10},"timestamp":"T1"}`,
		`{"type":"user","uuid":"u0","parentUuid":"c1","isCompactSummary":true,"message":{"role":"user","content":"the summary"},"timestamp":"T2"}`,
	)
	if len(items) != 1 || len(items[0].Blocks) != 2 || items[0].Blocks[0].Kind != session.KindNote || items[0].Blocks[1].Text != "the summary" {
		t.Errorf("a compaction after a note: %+v", items)
	}

	// A file of bookkeeping alone.
	items = build(t,
		`{"type":"bridge-session","bridgeSessionId":"b-1"}`,
		`{"type":"system","subtype":"bridge_status","uuid":"s0","timestamp":"T0"}`,
	)
	if len(items) != 1 || items[0].Role != "system" || items[0].Note != "bridge-session" || len(items[0].Blocks) != 2 {
		t.Errorf("a file of bookkeeping alone: %+v, want one item that shows both notes", items)
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

// TestNoBookkeepingHeadings: over the bundled sessions and the shared
// corpora (the real client's and other people's), no item is made of notes
// alone: every piece of the client's bookkeeping is a line in a message,
// never a message with a heading of its own.
func TestNoBookkeepingHeadings(t *testing.T) {
	files := testenv.Transcripts(t, testenv.Projects(t))
	shared := testenv.Shared(t)
	files = append(files, testenv.Transcripts(t, filepath.Join(shared, "corpus", "claude-code-2.1.328", "projects"))...)
	files = append(files, testenv.PublicTranscripts(t)...)
	notes := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b := testBuilder(source.Config{File: f, Sidechain: strings.Contains(filepath.Base(f), "agent-") || strings.Contains(f, "subagents")})
		lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
		var items []session.Item
		for {
			l, err := lr.Next()
			if err != nil {
				break
			}
			if r := b.Add(l); r != nil {
				items = append(items, r.Items...)
			}
		}
		if fin := b.Finish(); fin.Open != nil {
			items = append(items, fin.Open.Items...)
		}
		for _, it := range items {
			only := len(it.Blocks) > 0
			for _, blk := range it.Blocks {
				if blk.Kind == session.KindNote {
					notes++
				} else {
					only = false
				}
			}
			if only {
				t.Errorf("%s: %s · %s · %s is a message of bookkeeping alone: %q", f, it.Time, it.Role, it.Note, it.Blocks[0].Text)
			}
		}
	}
	if notes == 0 {
		t.Error("no note in the corpora: the test checks nothing")
	}
	t.Logf("%d transcripts, %d notes", len(files), notes)
}
