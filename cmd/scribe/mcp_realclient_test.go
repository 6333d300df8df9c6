package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// The real clients judge scribe mcp: each starts it as its configuration
// says (Claude Code: --mcp-config; Codex: [mcp_servers] in config.toml)
// over a copy of the repository's store, its model a stand-in scripted to
// call the tools, and the test reads what the client sends the model next:
// the tool's result, as the model sees it.

// multiturn is the sample session whose third round the judges look for.
const multiturn = "22222222-2222-4222-8222-222222222222"

// bundledStore copies the repository's store (data/) and returns its root.
func bundledStore(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "data")
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(t), "data"), root)
	return root
}

// scribeServer is how a client starts scribe mcp: this test binary, which
// is scribe with SCRIBE_TEST_MAIN set.
func scribeServer(t *testing.T, root string, write bool) (command string, args []string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args = []string{"--root", root, "mcp"}
	if write {
		args = append(args, "--write")
	}
	return exe, args, map[string]string{"SCRIBE_TEST_MAIN": "1"}
}

// claudeMCPConfig writes a --mcp-config file naming scribe mcp.
func claudeMCPConfig(t *testing.T, root string, write bool) string {
	t.Helper()
	command, args, env := scribeServer(t, root, write)
	cfg := map[string]any{"mcpServers": map[string]any{"scribe": map[string]any{"type": "stdio", "command": command, "args": args, "env": env}}}
	p := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// toolCall is how a client's model calls a tool of scribe's: Claude Code
// names it mcp__scribe__<tool>; Codex gives it as <tool> in namespace
// mcp__scribe, once a tool search found it.
type toolCall func(tool string, input map[string]any) realclient.Block

func claudeCall(tool string, input map[string]any) realclient.Block {
	return realclient.Block{Tool: "mcp__scribe__" + tool, Input: input}
}

func codexCall(tool string, input map[string]any) realclient.Block {
	return realclient.Block{Namespace: "mcp__scribe", Tool: tool, Input: input}
}

// codexToolSearch is the call of Codex's tool search that finds scribe's
// tools, which Codex does not offer the model until it searches.
var codexToolSearch = []realclient.Block{{Item: map[string]any{"type": "tool_search_call", "execution": "client",
	"arguments": map[string]any{"query": "scribe archive search sessions rounds", "limit": 8}}}}

// readScript calls search, read_rounds and context in turn.
func readScript(call toolCall) [][]realclient.Block {
	return [][]realclient.Block{
		{{Text: "Let me look."}, call("search", map[string]any{"query": "third question", "agent": "claude"})},
		{call("read_rounds", map[string]any{"session": multiturn, "rounds": "3"})},
		{call("context", map[string]any{"session": multiturn, "full": "3", "detail": "conversation"})},
		{{Text: "Found it: round 3 of " + multiturn + "."}},
	}
}

// judgeReads checks what the client sent after each call of readScript,
// whose first reply request first answers.
func judgeReads(t *testing.T, x *realclient.Exchange, first int) {
	t.Helper()
	if len(x.Requests) < first+4 {
		t.Fatalf("%d requests carrying tools, want %d (one per scripted reply); output:\n%s", len(x.Requests), first+4, x.Output)
	}
	tools := x.Tools(first)
	for _, name := range []string{"search", "list_sessions", "get_session", "read_rounds", "context"} {
		if !slices.Contains(tools, "mcp__scribe__"+name) {
			t.Errorf("the client did not offer mcp__scribe__%s to the model; it offered %v", name, tools)
		}
	}
	if slices.Contains(tools, "mcp__scribe__set_summary") {
		t.Errorf("without --write the client offered mcp__scribe__set_summary")
	}
	for i, c := range []struct {
		tool string
		want []string
	}{
		{"search", []string{`"session":"` + multiturn + `"`, `"round":3`, `«third question»`}},
		{"read_rounds", []string{"# Session " + multiturn + ": rounds 3 of 5", "## Round 3", "third question", "Answer number 3."}},
		{"context", []string{"# Context: Claude · 2026-11-22", "Session `" + multiturn + "`", "## Round 3", "Answer number 3.", "- Round 1, ", "- Round 5, "}},
	} {
		results := x.ToolResults(first + i + 1)
		if len(results) != 1 {
			t.Errorf("after the %s call: %d tool results, want 1: %q; output:\n%s", c.tool, len(results), results, x.Output)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(results[0], w) {
				t.Errorf("the %s result the model received lacks %q:\n%s", c.tool, w, results[0])
			}
		}
	}
}

func TestMCPClaudeReads(t *testing.T) {
	claude := realclient.Claude(t)
	t.Parallel()
	root := bundledStore(t)
	const prefix = "mcp__scribe__"
	x, err := realclient.RunClaude(context.Background(), claude, realclient.Run{
		Prompt: "find where we asked the third question",
		Args: []string{"--mcp-config", claudeMCPConfig(t, root, false), "--strict-mcp-config",
			"--allowedTools", prefix + "search," + prefix + "read_rounds," + prefix + "context"},
		Script: readScript(claudeCall),
	})
	if err != nil {
		t.Fatal(err)
	}
	judgeReads(t, x, 0)
}

// codexMCPConfig is the [mcp_servers] table naming scribe mcp.
func codexMCPConfig(t *testing.T, root string, write bool) string {
	t.Helper()
	command, args, env := scribeServer(t, root, write)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var as []string
	for _, a := range args {
		as = append(as, q(a))
	}
	var es []string
	for k, v := range env {
		es = append(es, k+" = "+q(v))
	}
	return "[mcp_servers.scribe]\ncommand = " + q(command) + "\nargs = [" + strings.Join(as, ", ") + "]\nenv = { " + strings.Join(es, ", ") + " }\n"
}

func TestMCPCodexReads(t *testing.T) {
	codex := realclient.Codex(t)
	t.Parallel()
	root := bundledStore(t)
	x, err := codex.Run(realclient.Run{
		Prompt: "find where we asked the third question",
		Config: codexMCPConfig(t, root, false),
		Script: append([][]realclient.Block{codexToolSearch}, readScript(codexCall)...),
	})
	if err != nil {
		t.Fatal(err)
	}
	judgeReads(t, x, 1)
}

// growingStore inscribes the first lines of the multiturn sample (its
// first rounds) into a fresh store and returns the store's root, the
// transcript's copy and the whole transcript, which a later append adds.
func growingStore(t *testing.T, lines int) (root, transcript string, whole []byte) {
	t.Helper()
	dir := t.TempDir()
	rel := filepath.Join("-home-dev-src-multiturn", multiturn+".jsonl")
	whole, err := os.ReadFile(filepath.Join(testenv.Projects(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	transcript = filepath.Join(dir, "projects", rel)
	os.MkdirAll(filepath.Dir(transcript), 0o755)
	off := 0
	for range lines {
		off += bytes.IndexByte(whole[off:], '\n') + 1
	}
	if err := os.WriteFile(transcript, whole[:off], 0o644); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(dir, "data")
	if code, _, stderr := runScribe(t, "--root", root, "inscribe", "--no-redact", filepath.Join(dir, "projects")); code != 0 {
		t.Fatalf("inscribe: status %d: %s", code, stderr)
	}
	return root, transcript, whole
}

// judgeSummary checks that the summary the client's model set is in the
// document's head and in list, and stays there when the session goes on.
func judgeSummary(t *testing.T, x *realclient.Exchange, first int, root, transcript string, whole []byte, summary string) {
	t.Helper()
	if !slices.Contains(x.Tools(first), "mcp__scribe__set_summary") {
		t.Errorf("with --write the client did not offer mcp__scribe__set_summary; it offered %v", x.Tools(first))
	}
	if len(x.Requests) < first+2 {
		t.Fatalf("%d requests, want %d; output:\n%s", len(x.Requests), first+2, x.Output)
	}
	if r := x.ToolResults(first + 1); len(r) != 1 || !strings.Contains(r[0], `"changed":true`) {
		t.Errorf("the set_summary result the model received: %q", r)
	}
	check := func(when string) {
		t.Helper()
		md := filepath.Join(root, "sessions", "claude", multiturn+".md")
		h, err := storetest.Doc(t, md).Head()
		if err != nil {
			t.Fatal(err)
		}
		if h.Summary != summary {
			t.Errorf("%s: the document's summary is %q, want %q", when, h.Summary, summary)
		}
		code, out, stderr := runScribe(t, "--root", root, "list", "--json")
		var entries []sessionEntry
		if code != 0 || json.Unmarshal([]byte(out), &entries) != nil || len(entries) != 1 {
			t.Fatalf("%s: list --json: status %d, %s %s", when, code, out, stderr)
		}
		if firstLine, _, _ := strings.Cut(summary, "\n"); entries[0].Title != firstLine {
			t.Errorf("%s: list shows the title %q, want the summary's first line %q", when, entries[0].Title, firstLine)
		}
	}
	check("after set_summary")
	rounds := func() int {
		n, err := storetest.Doc(t, filepath.Join(root, "sessions", "claude", multiturn+".md")).RoundCount()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := rounds()
	if err := os.WriteFile(transcript, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runScribe(t, "--root", root, "append", filepath.Dir(filepath.Dir(transcript))); code != 0 {
		t.Fatalf("append: status %d: %s", code, stderr)
	}
	if after := rounds(); after <= before {
		t.Fatalf("the append added no round (%d, then %d)", before, after)
	}
	check("after an append")
}

const judgeSummaryText = "Asked five numbered questions; each answer was \"Answer number N.\"\n\nNothing is left to do."

func TestMCPClaudeWritesSummary(t *testing.T) {
	claude := realclient.Claude(t)
	t.Parallel()
	root, transcript, whole := growingStore(t, 20)
	x, err := realclient.RunClaude(context.Background(), claude, realclient.Run{
		Prompt: "summarize the session about numbered questions",
		Args:   []string{"--mcp-config", claudeMCPConfig(t, root, true), "--strict-mcp-config", "--allowedTools", "mcp__scribe__set_summary"},
		Script: [][]realclient.Block{
			{claudeCall("set_summary", map[string]any{"session": multiturn[:8], "summary": judgeSummaryText})},
			{{Text: "Done."}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	judgeSummary(t, x, 0, root, transcript, whole, judgeSummaryText)
}

func TestMCPCodexWritesSummary(t *testing.T) {
	codex := realclient.Codex(t)
	t.Parallel()
	root, transcript, whole := growingStore(t, 20)
	x, err := codex.Run(realclient.Run{
		Prompt: "summarize the session about numbered questions",
		Config: codexMCPConfig(t, root, true),
		Script: [][]realclient.Block{
			codexToolSearch,
			{codexCall("set_summary", map[string]any{"session": multiturn[:8], "summary": judgeSummaryText})},
			{{Text: "Done."}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	judgeSummary(t, x, 1, root, transcript, whole, judgeSummaryText)
}
