package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// A scripted run starts the real client on a prompt (not on a session to
// resume), with its model a stand-in that answers the requests carrying
// tools from a script: one reply each, in order, text and tool calls. It is
// how a test makes the client call a tool (an MCP server's) and reads what
// the client then sends the model: the tool's result, as the model would
// see it. The Python counterparts are mockapi.py and mock_responses.py in
// ../shared/realclient.

// Block is one block of a scripted reply: a text, or a call of a tool.
type Block struct {
	Text  string
	Tool  string         // the tool, as the request's tools name it
	Input map[string]any // the call's arguments
	// Namespace is the namespace of the tool (Codex: the MCP tools a
	// tool search found are functions in namespace mcp__<server>).
	Namespace string
	// Item, when set, is an output item of the Responses API sent as
	// it is (Codex: a tool_search_call, which finds the MCP tools it
	// defers); its id and call_id are filled in.
	Item map[string]any
}

// Run is a scripted run.
type Run struct {
	Prompt string
	// Args are the client's arguments before the prompt (Claude Code:
	// --mcp-config, --allowedTools).
	Args []string
	// Config is TOML added to the client's config.toml (Codex:
	// [mcp_servers.NAME]).
	Config string
	// Features are set in the [features] table of the client's
	// config.toml (Codex: tool_search = false offers an MCP server's
	// tools to the model at once, rather than behind its tool_search).
	Features map[string]bool
	Script   [][]Block
}

// Exchange is what a scripted run sent the model.
type Exchange struct {
	// Requests are the bodies of the requests that carried tools (the
	// conversation, not side queries), in order: request i+1 carries the
	// results of the calls of reply i.
	Requests []map[string]json.RawMessage
	// Output is the client's output (stdout and stderr).
	Output string
	api    string // the shape of the requests: "messages" or "responses"
}

// messageContent is a scripted reply as the Messages API's content, and
// its stop reason.
func messageContent(n int, blocks []Block) ([]any, string) {
	var content []any
	stop := "end_turn"
	for k, b := range blocks {
		if b.Tool == "" {
			content = append(content, map[string]any{"type": "text", "text": b.Text})
			continue
		}
		input := b.Input
		if input == nil {
			input = map[string]any{}
		}
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%04d_%d", n, k), "name": b.Tool, "input": input})
		stop = "tool_use"
	}
	return content, stop
}

// RunClaude runs the Claude Code client (claude -p ARGS... PROMPT) in a
// temporary HOME and project, its model a stand-in that answers from the
// script. A run is bounded by ctx and by Timeout.
func RunClaude(ctx context.Context, claude string, r Run) (*Exchange, error) {
	tmp, home, project, err := probeHome("scripted-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	api := &standIn{script: r.Script}
	if api.script == nil {
		api.script = [][]Block{}
	}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	args := append(append([]string{"-p"}, r.Args...), "--", r.Prompt)
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = project
	cmd.Env = env(home, srv.URL)
	run, err := runClient(ctx, cmd, tmp)
	if err != nil {
		return nil, err
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	x := &Exchange{Output: tail(run.output, 1<<20), api: "messages"}
	for _, req := range api.reqs {
		if hasTools(req.body) && strings.HasSuffix(pathOnly(req.path), "/v1/messages") {
			x.Requests = append(x.Requests, req.body)
		}
	}
	if run.err != nil || len(x.Requests) == 0 {
		return x, fmt.Errorf("claude %s: %s; requests: %s; output (tail): %s", strings.Join(args, " "), run.status(), summarize(api.reqs), tail(run.output, 3000))
	}
	return x, nil
}

// Run runs the Codex client (codex exec PROMPT) in a temporary HOME and
// project, with r.Config added to its config.toml and its model a
// stand-in that answers from the script. A run is bounded by Timeout.
func (p *CodexProbe) Run(r Run) (*Exchange, error) {
	tmp, home, project, err := probeHome("cxscripted-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	api := &responsesStandIn{script: r.Script}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		return nil, err
	}
	// The base configuration ends in its [features] table.
	config := fmt.Sprintf(codexConfig, srv.URL, "mock")
	for _, k := range slices.Sorted(maps.Keys(r.Features)) {
		config += fmt.Sprintf("%s = %v\n", k, r.Features[k])
	}
	config += "\n" + r.Config
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	args := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", r.Prompt}
	cmd := exec.CommandContext(ctx, p.Launcher, args...)
	cmd.Dir = project
	cmd.Env = codexEnv(home, srv.URL)
	run, err := runClient(ctx, cmd, tmp)
	if err != nil {
		return nil, err
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	x := &Exchange{Output: tail(run.output, 1<<20), api: "responses"}
	for _, req := range api.reqs {
		if _, ok := req.body["input"]; ok && hasTools(req.body) {
			x.Requests = append(x.Requests, req.body)
		}
	}
	if run.err != nil || len(x.Requests) == 0 {
		return x, fmt.Errorf("codex %s: %s; requests: %s; output (tail): %s", strings.Join(args, " "), run.status(), summarize(api.reqs), tail(run.output, 3000))
	}
	return x, nil
}

// Tools returns the names of the tools request i offered the model: its
// tools, and those a tool search found (Codex defers an MCP server's tools
// until the model searches for them), named <namespace>__<name>.
func (x *Exchange) Tools(i int) []string {
	type tool struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		Tools []tool `json:"tools"`
	}
	var names []string
	var add func(ns string, ts []tool)
	add = func(ns string, ts []tool) {
		for _, t := range ts {
			name := t.Name
			if name == "" {
				name = t.Function.Name
			}
			if ns != "" {
				name = ns + "__" + name
			}
			if t.Type == "namespace" {
				add(name, t.Tools)
				continue
			}
			names = append(names, name)
		}
	}
	var tools []tool
	json.Unmarshal(x.Requests[i]["tools"], &tools)
	add("", tools)
	var items []struct {
		Type  string `json:"type"`
		Tools []tool `json:"tools"`
	}
	json.Unmarshal(x.Requests[i]["input"], &items)
	for _, it := range items {
		if it.Type == "tool_search_output" {
			add("", it.Tools)
		}
	}
	return names
}

// ToolResults returns the results of tool calls that request i carries
// after the last message of the model: what the client sent back of the
// calls of the reply before, as text.
func (x *Exchange) ToolResults(i int) []string {
	if x.api == "messages" {
		var msgs []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(x.Requests[i]["messages"], &msgs)
		if len(msgs) == 0 {
			return nil
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(msgs[len(msgs)-1].Content, &blocks)
		var out []string
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, contentText(b.Content))
			}
		}
		return out
	}
	var items []map[string]json.RawMessage
	json.Unmarshal(x.Requests[i]["input"], &items)
	// The outputs after the model's last calls: back from the end, the
	// outputs up to the first call met, then the calls.
	var out []string
	calls := false
	for k := len(items) - 1; k >= 0; k-- {
		var typ string
		json.Unmarshal(items[k]["type"], &typ)
		switch {
		case strings.HasSuffix(typ, "_call_output") && !calls:
			out = append([]string{contentText(items[k]["output"])}, out...)
		case strings.HasSuffix(typ, "_call"):
			calls = true
		default:
			return out
		}
	}
	return out
}

// contentText is a tool result's content as text: a string, or the texts
// of its blocks (JSON that is neither, as it is).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			parts = append(parts, b.Text)
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}
