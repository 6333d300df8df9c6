package realclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	_ "github.com/scribe-archive/scribe/internal/testkit/testenv" // understands -update (go test ./... -update)
)

// projects is the repository's copy of the corpus of real sessions, relative
// to this package's directory (where go test runs).
const projects = "../../../testdata/claude/projects"

const toolsThinking = projects + "/-home-dev-src-tools-thinking/11111111-1111-4111-8111-111111111111.jsonl"

// client returns the client binary. Without one, the test is skipped with
// the install instructions, unless SCRIBE_REQUIRE_CLAUDE is set (as CI sets
// it): then it fails, so CI cannot pass without running the probes.
func client(t *testing.T) string {
	t.Helper()
	c, err := Find()
	if err != nil {
		if os.Getenv("SCRIBE_REQUIRE_CLAUDE") != "" {
			t.Fatalf("%v (SCRIBE_REQUIRE_CLAUDE is set, so the real client is required)", err)
		}
		t.Skip(err)
	}
	return c
}

func probe(t *testing.T, claude, transcript, subagents string) []byte {
	t.Helper()
	start := time.Now()
	out, err := Probe(context.Background(), claude, transcript, subagents)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probed %s in %s", filepath.Base(transcript), time.Since(start).Round(time.Millisecond))
	return out
}

// messages decodes a probe's output, failing the test unless it is a
// non-empty array.
func messages(t *testing.T, out []byte) []any {
	t.Helper()
	var msgs []any
	if err := json.Unmarshal(out, &msgs); err != nil {
		t.Fatalf("probe output is not a JSON array: %v\n%s", err, out)
	}
	if len(msgs) == 0 {
		t.Fatalf("probe output is an empty array")
	}
	return msgs
}

func TestProbeIsDeterministic(t *testing.T) {
	claude := client(t)
	t.Parallel()
	a := probe(t, claude, toolsThinking, "")
	b := probe(t, claude, toolsThinking, "")
	if !bytes.Equal(a, b) {
		t.Fatalf("two probes of %s differ:\n--- first\n%s\n--- second\n%s", toolsThinking, a, b)
	}
	messages(t, a)
	for _, want := range []string{"create hello.py please", "Both failed as expected."} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("probe of %s lacks %q:\n%s", toolsThinking, want, a)
		}
	}
	if bytes.Contains(a, []byte(ProbePrompt)) {
		t.Errorf("probe output still holds the probe's own prompt:\n%s", a)
	}
}

// TestProbeSeesChanges makes sure a comparison of probes can fail: a
// transcript that differs from the original in one prompt, or in one
// thinking block, must probe differently.
func TestProbeSeesChanges(t *testing.T) {
	claude := client(t)
	t.Parallel()
	orig, err := os.ReadFile(toolsThinking)
	if err != nil {
		t.Fatal(err)
	}
	want := probe(t, claude, toolsThinking, "")
	for _, c := range []struct{ name, from, to string }{
		{"prompt", "now read missing.txt and run a failing command", "now read absent.txt and run a failing command"},
		// Thinking is only sent back when the probe resumes with the
		// transcript's own model; this case keeps that choice honest.
		{"thinking", "Both failed as expected.", "Both failed, unexpectedly."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !bytes.Contains(orig, []byte(c.from)) {
				t.Fatalf("%s no longer holds %q; update the test", toolsThinking, c.from)
			}
			changed := filepath.Join(t.TempDir(), filepath.Base(toolsThinking))
			if err := os.WriteFile(changed, bytes.ReplaceAll(orig, []byte(c.from), []byte(c.to)), 0o644); err != nil {
				t.Fatal(err)
			}
			got := probe(t, claude, changed, "")
			if bytes.Equal(got, want) {
				t.Fatalf("changing %q to %q in %s did not change what the client sends", c.from, c.to, toolsThinking)
			}
			if !bytes.Contains(got, []byte(c.to)) {
				t.Errorf("probe of the changed transcript lacks %q:\n%s", c.to, got)
			}
		})
	}
}

// TestProbeCorpus resumes every session of the corpus once: each must give
// a conversation, whatever the session holds (compactions, branches, a torn
// last line, images, subagents).
func TestProbeCorpus(t *testing.T) {
	claude := client(t)
	sessions, err := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) == 0 {
		t.Fatalf("no sessions under %s", projects)
	}
	for _, s := range sessions {
		t.Run(filepath.Base(filepath.Dir(s))+"/"+filepath.Base(s), func(t *testing.T) {
			t.Parallel()
			subagents := filepath.Join(strings.TrimSuffix(s, ".jsonl"), "subagents")
			if _, err := os.Stat(subagents); err != nil {
				subagents = ""
			}
			messages(t, probe(t, claude, s, subagents))
		})
	}
}

func TestFindHonoursSCRIBE_CLAUDE(t *testing.T) {
	t.Setenv("SCRIBE_CLAUDE", filepath.Join(t.TempDir(), "no-such-claude"))
	_, err := Find()
	if err == nil || !strings.Contains(err.Error(), "npm install @anthropic-ai/claude-code") {
		t.Fatalf("Find with SCRIBE_CLAUDE naming a missing file: got %v, want an error saying how to install", err)
	}
}

func TestSlug(t *testing.T) {
	if got, want := Slug("/home/dev/src/tools-thinking"), "-home-dev-src-tools-thinking"; got != want {
		t.Errorf("Slug = %q, want %q", got, want)
	}
	if got, want := Slug("/tmp/a.b_c/ü"), "-tmp-a-b-c---"; got != want {
		t.Errorf("Slug = %q, want %q", got, want)
	}
}

func TestStripProbe(t *testing.T) {
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	result := map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
	probeBlock := map[string]any{"type": "text", "text": ProbePrompt, "cache_control": map[string]any{"type": "ephemeral"}}
	hi := map[string]any{"role": "user", "content": "hi"}
	reply := map[string]any{"role": "assistant", "content": []any{text("hello")}}
	skills := map[string]any{"role": "system", "content": "The following skills are available"}
	for _, c := range []struct {
		name    string
		in, out []any
	}{
		{"turn of its own, with what follows it",
			[]any{hi, reply, map[string]any{"role": "user", "content": []any{probeBlock}}, skills},
			[]any{hi, reply}},
		{"string content",
			[]any{hi, reply, map[string]any{"role": "user", "content": ProbePrompt}},
			[]any{hi, reply}},
		{"merged into the transcript's last user message",
			[]any{hi, reply, map[string]any{"role": "user", "content": []any{result, probeBlock}}},
			[]any{hi, reply, map[string]any{"role": "user", "content": []any{result}}}},
		{"absent",
			[]any{hi, reply},
			[]any{hi, reply}},
	} {
		if got := StripProbe(c.in); !reflect.DeepEqual(got, c.out) {
			t.Errorf("%s: StripProbe =\n%v\nwant\n%v", c.name, got, c.out)
		}
	}
}

// TestStandInStreams checks the stand-in's event stream against the API's
// shape without the client, so a broken stand-in shows up as itself rather
// than as a client that hangs or exits.
func TestStandInStreams(t *testing.T) {
	srv := httptest.NewServer(newStandIn())
	defer srv.Close()
	body := `{"model":"claude-x","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(srv.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var events []string
	var text string
	sc := bufio.NewScanner(resp.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d struct {
				Type  string `json:"type"`
				Delta struct {
					Type, Text string
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data line is not JSON: %v: %s", err, line)
			}
			if d.Type != event {
				t.Errorf("event %q carries data of type %q", event, d.Type)
			}
			if d.Delta.Type == "text_delta" {
				text += d.Delta.Text
			}
			events = append(events, event)
		}
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events = %v, want %v", events, want)
	}
	if text != "probe reply" {
		t.Errorf("streamed text = %q", text)
	}

	resp, err = http.Post(srv.URL+"/v1/messages/count_tokens?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var count struct {
		InputTokens int `json:"input_tokens"`
	}
	err = json.NewDecoder(resp.Body).Decode(&count)
	resp.Body.Close()
	if err != nil || count.InputTokens != 10 {
		t.Errorf("count_tokens: %+v, %v", count, err)
	}
}

// fakeClient writes a shell script standing in for the client, to see how
// Probe reports a client that fails or hangs without needing the real one.
func fakeClient(t *testing.T, script string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake client is a shell script")
	}
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProbeReportsClientFailure(t *testing.T) {
	t.Parallel()
	claude := fakeClient(t, `echo "No conversation found with session ID: $3" >&2; exit 3`)
	_, err := Probe(context.Background(), claude, toolsThinking, "")
	if err == nil {
		t.Fatal("Probe succeeded with a client that exits 3")
	}
	for _, want := range []string{toolsThinking, "exit status 3", "No conversation found with session ID: 11111111-1111-4111-8111-111111111111"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestProbeReportsNoRequest(t *testing.T) {
	t.Parallel()
	claude := fakeClient(t, `echo "resumed, said nothing"`)
	_, err := Probe(context.Background(), claude, toolsThinking, "")
	if err == nil || !strings.Contains(err.Error(), "no Messages API request carrying tools") || !strings.Contains(err.Error(), "resumed, said nothing") {
		t.Fatalf("Probe with a client that sends nothing: got %v", err)
	}
}

func TestProbeStopsAHungClient(t *testing.T) {
	t.Parallel()
	// exec, so that the process the context kills is the one sleeping.
	claude := fakeClient(t, `echo started; exec sleep 60`)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Probe(ctx, claude, toolsThinking, "")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Probe took %s to give up on a hung client", took)
	}
	if err == nil || !strings.Contains(err.Error(), "killed after") || !strings.Contains(err.Error(), "started") {
		t.Fatalf("Probe with a hung client: got %v", err)
	}
}

// TestProbeTalksToTheStandIn checks Probe's plumbing end to end with a
// client that does what the real one does: POST a streamed request with
// tools to $ANTHROPIC_BASE_URL, from the project directory named by the
// slug, under the temporary HOME.
func TestProbeTalksToTheStandIn(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl to play the client")
	}
	claude := fakeClient(t, `set -e
test "$1 $2 $3" = "-p --resume 11111111-1111-4111-8111-111111111111"
test "$4 $5 $6" = "--model claude-opus-5-5 `+ProbePrompt+`"
test -f "$HOME/.claude/projects/$(pwd -P | sed 's/[^A-Za-z0-9]/-/g')/$3.jsonl"
test "$ANTHROPIC_API_KEY" = sk-test
curl -sSf -X POST "$ANTHROPIC_BASE_URL/v1/messages?beta=true" -H 'content-type: application/json' -d '{"stream":true,"messages":[{"role":"user","content":"side"}]}' >/dev/null
curl -sSf -X POST "$ANTHROPIC_BASE_URL/v1/messages?beta=true" -H 'content-type: application/json' -d '{"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi <b> & 12345678901234567890"},{"role":"user","content":[{"type":"text","text":"`+ProbePrompt+`"}]}]}'`)
	out, err := Probe(context.Background(), claude, toolsThinking, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n {\n  \"content\": \"hi <b> & 12345678901234567890\",\n  \"role\": \"user\"\n }\n]\n"
	if string(out) != want {
		t.Errorf("Probe = %q, want %q", out, want)
	}
}
