package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/serve/mcp"
)

// mcpConn is scribe mcp run in this process on pipes, and a client that
// speaks JSON-RPC to it line by line, as a client that started it would.
type mcpConn struct {
	t      testing.TB
	in     *io.PipeWriter
	out    *bufio.Reader
	id     int
	done   chan int
	stderr *lockedBuffer
}

// startMCP runs scribe --root root mcp ARGS and initializes a session.
func startMCP(t testing.TB, root string, args ...string) *mcpConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &mcpConn{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan int, 1), stderr: &lockedBuffer{}}
	go func() {
		code := run(append([]string{"--root", root, "mcp"}, args...), inR, outW, c.stderr)
		outW.Close()
		c.done <- code
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case code := <-c.done:
			if code != 0 {
				t.Errorf("scribe mcp exited with status %d: %s", code, c.stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("scribe mcp did not end when its stdin closed")
		}
	})
	c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *mcpConn) send(msg any) {
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to scribe mcp: %v; stderr: %s", err, c.stderr.String())
	}
}

// request sends a request and returns its result.
func (c *mcpConn) request(method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.try(method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return res
}

// try sends a request and returns its result, or the protocol's error.
func (c *mcpConn) try(method string, params any) (json.RawMessage, error) {
	c.t.Helper()
	c.id++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: read from scribe mcp: %v; stderr: %s", method, err, c.stderr.String())
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			c.t.Fatalf("%s: scribe mcp wrote a line that is not JSON: %q", method, line)
		}
		if resp.ID == nil || *resp.ID != c.id {
			continue // a notification
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("protocol error: %s", resp.Error.Message)
		}
		return resp.Result, nil
	}
}

// call calls a tool and returns its text and whether it is a tool error.
func (c *mcpConn) call(tool string, args map[string]any) (string, bool) {
	c.t.Helper()
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(c.request("tools/call", map[string]any{"name": tool, "arguments": args}), &res); err != nil || len(res.Content) != 1 {
		c.t.Fatalf("%s: result %+v, %v", tool, res, err)
	}
	return res.Content[0].Text, res.IsError
}

func (c *mcpConn) mustCall(tool string, args map[string]any) string {
	c.t.Helper()
	text, isErr := c.call(tool, args)
	if isErr {
		c.t.Fatalf("%s %v: tool error: %s", tool, args, text)
	}
	return text
}

func (c *mcpConn) wantError(tool string, args map[string]any, want string) {
	c.t.Helper()
	text, isErr := c.call(tool, args)
	if !isErr || !regexp.MustCompile(want).MatchString(text) {
		c.t.Errorf("%s %v: error %v, text %.300q; want an error matching %q", tool, args, isErr, text, want)
	}
}

// TestMCPOverTheStore: every tool answers over the repository's store what
// the matching command answers.
func TestMCPOverTheStore(t *testing.T) {
	root := bundledStore(t)
	c := startMCP(t, root)

	hits := c.mustCall("search", map[string]any{"query": "third question", "agent": "claude"})
	if !strings.Contains(hits, `"session":"`+multiturn+`","agent":"claude","round":3`) || !strings.Contains(hits, "«third question»") {
		t.Errorf("search: %s", hits)
	}
	list := c.mustCall("list_sessions", map[string]any{"agent": "codex", "limit": 3})
	var page struct {
		Total    int `json:"total"`
		Sessions []struct {
			Session, Title string
		} `json:"sessions"`
		Next string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(list), &page); err != nil || page.Total != 8 || len(page.Sessions) != 3 || page.Next == "" {
		t.Errorf("list_sessions: %s", list)
	}
	_, cli, _ := runScribe(t, "--root", root, "list", "--agent", "codex", "--json")
	var entries []sessionEntry
	json.Unmarshal([]byte(cli), &entries)
	for i, s := range page.Sessions {
		if s.Session != entries[i].SessionID || s.Title != entries[i].Title {
			t.Errorf("list_sessions gives %s %q at %d, scribe list %s %q", s.Session, s.Title, i, entries[i].SessionID, entries[i].Title)
		}
	}

	head := c.mustCall("get_session", map[string]any{"session": multiturn[:6]})
	for _, want := range []string{`"session":"` + multiturn + `"`, `"rounds":5`, `"round":3,`, `"user":"third question"`, `"agent":"Answer number 3."`} {
		if !strings.Contains(head, want) {
			t.Errorf("get_session lacks %s: %s", want, head)
		}
	}
	side := c.mustCall("get_session", map[string]any{"session": "33333333"})
	m := regexp.MustCompile(`"sidechains":\["([^"]+)"`).FindStringSubmatch(side)
	if m == nil {
		t.Fatalf("get_session of the subagent sample lists no sidechain: %s", side)
	}
	if text := c.mustCall("read_rounds", map[string]any{"session": m[1], "rounds": "1", "detail": "prompts"}); !strings.Contains(text, "# Session "+m[1]) {
		t.Errorf("read_rounds of sidechain %s: %s", m[1], text)
	}

	// read_rounds shows rounds as scribe context shows them in full.
	rounds := c.mustCall("read_rounds", map[string]any{"session": multiturn, "rounds": "2-3", "detail": "conversation"})
	_, cliRounds, _ := runScribe(t, "--root", root, "context", multiturn, "--full", "2-3", "--omit", "1,4-5", "--detail", "conversation")
	head, body, _ := strings.Cut(rounds, "\n")
	if _, want, _ := strings.Cut(cliRounds, "\n## Round 2\n"); head != "# Session "+multiturn+": rounds 2-3 of 5 (detail conversation)" || body != "\n## Round 2\n"+want {
		t.Errorf("read_rounds:\n%s\nwant the rounds of scribe context:\n%s", rounds, cliRounds)
	}

	// context is scribe context, byte for byte.
	view := c.mustCall("context", map[string]any{"session": multiturn, "full": "3", "detail": "conversation"})
	_, cliView, stderr := runScribe(t, "--root", root, "context", multiturn, "--full", "3", "--detail", "conversation")
	if view != cliView {
		t.Errorf("context differs from scribe context (%s):\n%s\nwant:\n%s", stderr, view, cliView)
	}

	// Resources.
	var res struct {
		Contents []struct{ URI, MimeType, Text string } `json:"contents"`
	}
	json.Unmarshal(c.request("resources/read", map[string]any{"uri": "scribe://session/" + multiturn + "/round/3"}), &res)
	if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "Answer number 3.") {
		t.Errorf("resource of round 3: %+v", res)
	}
}

// TestMCPToolErrors: what the model gets wrong, and what is damaged in the
// store, are tool errors it can read; the server answers on.
func TestMCPToolErrors(t *testing.T) {
	root := bundledStore(t)
	c := startMCP(t, root)
	elsewhere := filepath.Join(t.TempDir(), "x.md")
	os.WriteFile(elsewhere, []byte("---\nsession_id: x\n---\n"), 0o644)
	for _, e := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_session", map[string]any{"session": "deadbeef"}, "no session deadbeef in the store: search or list_sessions"},
		{"get_session", map[string]any{"session": "../../etc/passwd"}, "neither a session id"},
		{"get_session", map[string]any{"session": elsewhere}, "is not a session's document in the store"},
		{"get_session", map[string]any{"session": "22"}, "too short"},
		{"get_session", map[string]any{"session": multiturn + "/agent-nope"}, "has no sidechain agent-nope"},
		{"read_rounds", map[string]any{"session": multiturn, "rounds": "6"}, `rounds "6": the session has rounds 1-5`},
		{"read_rounds", map[string]any{"session": multiturn, "rounds": "3-1"}, `round range "3-1": write it as 3-7`},
		{"context", map[string]any{"session": multiturn, "full": "x"}, `rounds "x": give a number`},
		{"search", map[string]any{"query": "x", "agent": "nobody"}, `no agent "nobody" in the store; known agents: claude, codex`},
		{"search", map[string]any{"query": "x", "since": "last tuesday"}, "since: .*use 2026-11-22"},
		{"search", map[string]any{"query": "(", "fts": true}, "search: "},
		{"list_sessions", map[string]any{"agent": "nobody"}, "no agent nobody .*the store's agents: claude, codex"},
		{"set_summary", map[string]any{"session": multiturn, "summary": "x"}, "unknown tool|not found"},
	} {
		if e.tool == "set_summary" {
			// Not offered without --write: the protocol says so.
			if _, err := c.try("tools/call", map[string]any{"name": e.tool, "arguments": e.args}); err == nil || !strings.Contains(err.Error(), `unknown tool "set_summary"`) {
				t.Errorf("set_summary without --write: %v", err)
			}
			continue
		}
		c.wantError(e.tool, e.args, e.want)
	}

	// Damage: the index overwritten, a round file lost, a document cut
	// short or replaced. The index is set aside and built again; the
	// others are errors naming what to do; the server goes on.
	db := filepath.Join(root, ".scribe", "sessions.db")
	c.mustCall("search", map[string]any{"query": "question"}) // builds the index
	if err := os.WriteFile(db, bytes.Repeat([]byte("garbage!"), 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if text := c.mustCall("get_session", map[string]any{"session": multiturn[:8]}); !strings.Contains(text, `"user":"third question"`) {
		t.Errorf("get_session over a damaged index: %s", text)
	}
	if text := c.mustCall("search", map[string]any{"query": "third question"}); !strings.Contains(text, multiturn) {
		t.Errorf("search over a damaged index: %s", text)
	}
	if !strings.Contains(c.stderr.String(), "sessions.db") {
		t.Errorf("the damaged index was set aside without a word on stderr: %q", c.stderr.String())
	}
	folder := filepath.Join(root, "sessions", "claude", multiturn)
	if err := os.Remove(filepath.Join(folder, "rounds", "003.json")); err != nil {
		t.Fatal(err)
	}
	c.wantError("read_rounds", map[string]any{"session": multiturn, "rounds": "3"}, "003.json.*scribe repair")
	c.wantError("context", map[string]any{"session": multiturn}, "003.json.*scribe repair")
	long := filepath.Join(root, "sessions", "claude", "99999999-9999-4999-8999-999999999999.md")
	doc, _ := os.ReadFile(long)
	os.WriteFile(long, append(doc[:len(doc)/2:len(doc)/2], "\n```\nunclosed"...), 0o600)
	c.wantError("read_rounds", map[string]any{"session": "99999999", "rounds": "all"}, "damaged")
	os.WriteFile(long, []byte("not a document"), 0o600)
	c.wantError("get_session", map[string]any{"session": "99999999"}, "damaged")
	c.mustCall("read_rounds", map[string]any{"session": "11111111", "rounds": "1"})
}

// TestMCPReadsLive: a session appended while the server runs is found by
// its next call.
func TestMCPReadsLive(t *testing.T) {
	root, transcript, whole := growingStore(t, 20)
	c := startMCP(t, root)
	if text := c.mustCall("search", map[string]any{"query": "fifth question"}); !strings.Contains(text, `"hits":[]`) {
		t.Fatalf("search before the append: %s", text)
	}
	if err := os.WriteFile(transcript, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runScribe(t, "--root", root, "append", filepath.Dir(filepath.Dir(transcript))); code != 0 {
		t.Fatalf("append: %s", stderr)
	}
	if text := c.mustCall("search", map[string]any{"query": "fifth question"}); !strings.Contains(text, `"round":5`) {
		t.Errorf("search after the append: %s", text)
	}
	if text := c.mustCall("read_rounds", map[string]any{"session": multiturn, "rounds": "5"}); !strings.Contains(text, "Answer number 5.") {
		t.Errorf("read_rounds after the append: %s", text)
	}
}

// TestMCPHugeRound: a prompt of 4 MiB is read a page at a time, each page
// within its budget, and the pages hold all of it.
func TestMCPHugeRound(t *testing.T) {
	dir := t.TempDir()
	whole, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", multiturn+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var prompt strings.Builder
	for i := 0; prompt.Len() < 4<<20; i++ {
		fmt.Fprintf(&prompt, "pasted line %06d of the log\\n", i)
	}
	huge := bytes.Replace(whole, []byte(`"role":"user","content":"third question"}`), []byte(`"role":"user","content":"`+prompt.String()+`"}`), 1)
	transcript := filepath.Join(dir, "projects", "-home-dev-src-multiturn", multiturn+".jsonl")
	os.MkdirAll(filepath.Dir(transcript), 0o755)
	os.WriteFile(transcript, huge, 0o644)
	root := filepath.Join(dir, "data")
	if code, _, stderr := runScribe(t, "--root", root, "inscribe", "--no-redact", filepath.Join(dir, "projects")); code != 0 {
		t.Fatalf("inscribe: %s", stderr)
	}
	c := startMCP(t, root)
	const budget = 100000
	cursor := ""
	lines := map[string]bool{}
	pages := 0
	start := time.Now()
	for {
		pages++
		args := map[string]any{"session": multiturn, "rounds": "3-4", "max_bytes": budget}
		if cursor != "" {
			args["cursor"] = cursor
		}
		text := c.mustCall("read_rounds", args)
		if len(text) > budget {
			t.Fatalf("page %d: %d bytes, over the budget of %d", pages, len(text), budget)
		}
		for _, l := range regexp.MustCompile(`pasted line \d+ of the log`).FindAllString(text, -1) {
			lines[l] = true
		}
		m := regexp.MustCompile(`cursor "([^"]+)"\]\n$`).FindStringSubmatch(text)
		if m == nil {
			if !strings.Contains(text, "## Round 4") {
				t.Errorf("the last page does not reach round 4")
			}
			break
		}
		cursor = m[1]
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	t.Logf("%d pages of %d bytes for a prompt of %d bytes, %s a page", pages, budget, prompt.Len(), time.Since(start)/time.Duration(pages))
	want := strings.Count(prompt.String(), `\n`)
	if len(lines) != want {
		t.Errorf("the pages hold %d of the prompt's %d lines", len(lines), want)
	}
	// The search and the head are bounded too.
	if text := c.mustCall("search", map[string]any{"query": "pasted line"}); len(text) > mcp.DefaultBudget {
		t.Errorf("search: %d bytes", len(text))
	}
	if text := c.mustCall("context", map[string]any{"session": multiturn}); len(text) > mcp.DefaultBudget || !strings.Contains(text, "[more: ") {
		t.Errorf("context of the whole session: %d bytes, %q at the end", len(text), text[max(0, len(text)-200):])
	}
}

// TestMCPHTTP runs scribe mcp --http on a free loopback port: it says
// where, answers a client there, refuses a foreign Host, and stops when
// its context ends.
func TestMCPHTTP(t *testing.T) {
	root := bundledStore(t)
	var stdout, stderr lockedBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, root: root}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runMCP(ctx, e, mcpOptions{http: "127.0.0.1:0"}) }()
	re := regexp.MustCompile(`at (http://\S+/mcp) `)
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("scribe mcp --http said nothing of where it listens: %q", stderr.String())
		}
	}
	post := func(host string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(""); code != http.StatusOK || !strings.Contains(body, `"name":"scribe"`) {
		t.Errorf("initialize: %d %s", code, body)
	}
	if code, body := post("attacker.example"); code != http.StatusForbidden {
		t.Errorf("a foreign Host: %d %s", code, body)
	}
	if stdout.String() != "" {
		t.Errorf("scribe mcp --http wrote to stdout: %q", stdout.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("scribe mcp --http: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("scribe mcp --http did not stop")
	}
}
