// Package realclient runs the real clients, Claude Code, Codex and Gemini
// CLI, against loopback stand-ins of their model APIs, to learn what a
// client sends the model when it resumes a session file. That request is the ground truth for
// whether a file scribe regenerates resumes the same conversation as the
// original: probe both and compare the bytes.
//
// It is the Go counterpart of ../shared/realclient/resume_probe.py,
// codex_resume_probe.py and gemini_resume_probe.py, with the stand-ins
// (mockapi.py, mock_responses.py and mock_gemini.py there) served in
// process by net/http/httptest, so a test needs nothing but the client, and
// concurrent probes never share a port.
package realclient

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ProbePrompt is the prompt a probe resumes the session with. It is unlikely
// to occur in a real session, so Probe can find and remove the probe's own
// turn from what the client sent.
const ProbePrompt = "RESUME-PROBE-7f3a"

// Timeout bounds one run of the client when the caller's context has no
// earlier deadline. A resume takes a second or two; the margin is for a cold,
// loaded CI machine, and the bound is there so a wedged client fails the test
// instead of hanging it.
const Timeout = 120 * time.Second

// Install says how to get the client; every error about a missing client
// carries it, so whoever reads a failed test knows what to run.
const Install = "install the Claude Code client with `npm install @anthropic-ai/claude-code` " +
	"and set SCRIBE_CLAUDE to the binary's absolute path " +
	"(e.g. export SCRIBE_CLAUDE=$PWD/node_modules/.bin/claude), " +
	"or run .ci/install-claude, which installs it where Find looks"

// Find returns the path of the client binary: $SCRIBE_CLAUDE if set, else
// claude on PATH, else the copy .ci/install-claude installs under
// ${SCRIBE_CI_CACHE:-$HOME/.cache/scribe-ci}/claude.
func Find() (string, error) {
	if p := os.Getenv("SCRIBE_CLAUDE"); p != "" {
		// An explicit choice that is wrong must not silently fall back to
		// some other client: the probe would then test a different version.
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("SCRIBE_CLAUDE=%s: %v; %s", p, err, Install)
		}
		if err := executable(abs); err != nil {
			return "", fmt.Errorf("SCRIBE_CLAUDE=%s: %v; %s", p, err, Install)
		}
		return abs, nil
	}
	if p, err := exec.LookPath("claude"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
		return p, nil
	}
	cached := cacheBinary()
	if cached != "" && executable(cached) == nil {
		return cached, nil
	}
	return "", fmt.Errorf("the Claude Code client is not installed (SCRIBE_CLAUDE is unset, no claude is on PATH, and %s is absent): %s", cached, Install)
}

// cacheBinary is where .ci/install-claude puts the client; the two must
// agree.
func cacheBinary() string {
	cache := os.Getenv("SCRIBE_CI_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache", "scribe-ci")
	}
	return filepath.Join(cache, "claude", "node_modules", ".bin", "claude")
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory, not the client binary", p)
	}
	if fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

// Probe resumes the session in transcript (a <session-id>.jsonl file; the
// id is the file name's stem) with the client binary claude, prompting it
// with ProbePrompt and choosing the model the transcript's last assistant
// message names (see lastModel). It returns the messages array of the first
// Messages API request that carries tools: the main conversation, as opposed
// to tool-less side queries (titles, summaries) that some clients make. The
// probe's own turn is removed, and the array is re-encoded canonically
// (object keys sorted, one-space indent, a final newline), so byte-equal
// results mean the same conversation.
//
// subagentsDir, when not "", is copied to <session-id>/subagents/ beside the
// transcript, where the client keeps subagent transcripts.
//
// Every call has its own stand-in server and its own temporary HOME, so
// probes may run concurrently. A run is bounded by ctx and by Timeout.
func Probe(ctx context.Context, claude, transcript, subagentsDir string) ([]byte, error) {
	base := filepath.Base(transcript)
	id, ok := strings.CutSuffix(base, ".jsonl")
	if !ok || id == "" {
		return nil, fmt.Errorf("%s: the client resumes <session-id>.jsonl files, and this name is not one; name the copy after its session id", transcript)
	}
	if _, err := os.Stat(transcript); err != nil {
		return nil, fmt.Errorf("probe: %v", err)
	}
	if subagentsDir != "" {
		if fi, err := os.Stat(subagentsDir); err != nil {
			return nil, fmt.Errorf("probe %s: subagents: %v", transcript, err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("probe %s: subagents: %s is not a directory", transcript, subagentsDir)
		}
	}

	tmp, home, project, err := probeHome("realclient-")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", transcript, err)
	}
	defer os.RemoveAll(tmp)
	sessions := filepath.Join(home, ".claude", "projects", Slug(project))
	if err := copyFile(transcript, filepath.Join(sessions, id+".jsonl")); err != nil {
		return nil, fmt.Errorf("probe %s: %v", transcript, err)
	}
	if subagentsDir != "" {
		if err := copyTree(subagentsDir, filepath.Join(sessions, id, "subagents")); err != nil {
			return nil, fmt.Errorf("probe %s: subagents: %v", transcript, err)
		}
	}

	api := newStandIn()
	srv := httptest.NewServer(api)
	// Close waits for open connections; the client is gone by then, and a
	// keep-alive connection it left behind must not hold the probe up.
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()

	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	args := []string{"-p", "--resume", id}
	if model := lastModel(transcript); model != "" {
		args = append(args, "--model", model)
	}
	args = append(args, ProbePrompt)
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = project
	cmd.Env = env(home, srv.URL)
	// With -p the client also reads a prompt from stdin when stdin is not a
	// terminal; nil gives it /dev/null, so it never waits on the caller's.
	cmd.Stdin = nil
	// Output goes to files rather than pipes: if the client leaves a child
	// holding its stdout, Wait would otherwise wait for that child too.
	out, err := os.Create(filepath.Join(tmp, "output"))
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", transcript, err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)

	fail := func(what string) error {
		status := "exit status 0"
		if runErr != nil {
			status = runErr.Error()
		}
		if ctx.Err() != nil {
			status = fmt.Sprintf("killed after %s (%v)", elapsed.Round(time.Millisecond), ctx.Err())
		}
		return fmt.Errorf("probe %s with %s: %s; client: %s; requests: %s; client output (tail):\n%s",
			transcript, claude, what, status, api.summary(), tail(filepath.Join(tmp, "output"), 2000))
	}
	if runErr != nil {
		return nil, fail("the client failed")
	}
	req := api.firstWithTools()
	if req == nil {
		return nil, fail("the client sent no Messages API request carrying tools")
	}
	var msgs []any
	if raw, ok := req["messages"]; !ok {
		return nil, fail("the request carrying tools has no messages")
	} else if err := decode(raw, &msgs); err != nil {
		return nil, fail(fmt.Sprintf("the request's messages are not an array: %v", err))
	}
	return Canonical(StripProbe(msgs))
}

// clientRun is one run of a client by a probe: its output, in a file, and
// how it ended.
type clientRun struct {
	output string // the file holding the client's stdout and stderr
	err    error  // what Run returned
	ctx    context.Context
}

// runClient runs cmd with its output in a file in tmp (rather than pipes:
// a child left holding a pipe would hold Wait up), bounded by ctx.
func runClient(ctx context.Context, cmd *exec.Cmd, tmp string) (*clientRun, error) {
	r := &clientRun{output: filepath.Join(tmp, "output"), ctx: ctx}
	out, err := os.Create(r.output)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	r.err = cmd.Run()
	return r, nil
}

// status says how the client ended, for an error message.
func (r *clientRun) status() string {
	if r.ctx.Err() != nil {
		return fmt.Sprintf("killed (%v)", r.ctx.Err())
	}
	if r.err != nil {
		return r.err.Error()
	}
	return "exit status 0"
}

// probeHome makes a probe's temporary folder, tmp, holding the client's
// HOME and, in it, the project folder the client runs in. The caller
// removes tmp.
func probeHome(prefix string) (tmp, home, project string, err error) {
	if tmp, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", "", err
	}
	// The clients name a project after the real path of the working
	// directory; on macOS the temp dir is behind a symlink.
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	home = filepath.Join(tmp, "home")
	project = filepath.Join(home, "src", "p")
	if err := os.MkdirAll(project, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", "", "", err
	}
	return tmp, home, project, nil
}

// lastModel is the model of the transcript's last assistant message, or ""
// when it names none. The probe resumes with that model because the client
// drops the thinking blocks that another model signed: resumed with its own
// default model, the client would not show the thinking at all, and a
// transcript that lost or garbled it would probe the same as the original.
func lastModel(transcript string) string {
	data, err := os.ReadFile(transcript)
	if err != nil {
		return ""
	}
	model := ""
	for line := range bytes.Lines(data) {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Model string `json:"model"`
			} `json:"message"`
		}
		// Torn lines (a crash mid-write) and entries whose message is
		// not an object are not assistant messages with a model; skip
		// them as the client does.
		if json.Unmarshal(line, &e) != nil || e.Type != "assistant" {
			continue
		}
		// "<synthetic>" marks messages the client made up itself (an
		// interrupted turn); it is not a model the API knows.
		if m := e.Message.Model; m != "" && !strings.HasPrefix(m, "<") {
			model = m
		}
	}
	return model
}

// Slug is the name Claude Code gives a project's directory under
// ~/.claude/projects: the working directory's path with every character
// other than an ASCII letter or digit replaced by '-'.
func Slug(path string) string {
	b := []byte(path)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// env is the client's environment: the caller's, minus anything that would
// make the client read the real user's configuration, talk to a real
// endpoint or go through a proxy, plus what points it at the stand-in.
func env(home, baseURL string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch up := strings.ToUpper(k); {
		case up == "HOME", up == "USERPROFILE",
			strings.HasPrefix(up, "CLAUDE"), strings.HasPrefix(up, "ANTHROPIC_"),
			strings.HasPrefix(up, "XDG_CONFIG"),
			up == "HTTP_PROXY", up == "HTTPS_PROXY", up == "ALL_PROXY", up == "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"HOME="+home,
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
}

// StripProbe removes the probe's own turn from messages: the last user
// message holding ProbePrompt, and what the client appended after it for that
// turn (e.g. a listing of skills). When the client merged the prompt into a
// user message that also carries the end of the transcript (a trailing
// tool_result), only the prompt's block goes. Messages without the prompt
// come back unchanged.
func StripProbe(msgs []any) []any {
	for i := len(msgs) - 1; i >= 0; i-- {
		m, ok := msgs[i].(map[string]any)
		if !ok || m["role"] != "user" {
			continue
		}
		switch c := m["content"].(type) {
		case string:
			if c == ProbePrompt {
				return msgs[:i]
			}
		case []any:
			var keep []any
			found := false
			for _, b := range c {
				if bm, ok := b.(map[string]any); ok && !found && bm["type"] == "text" && bm["text"] == ProbePrompt {
					found = true
					continue
				}
				keep = append(keep, b)
			}
			if !found {
				continue
			}
			if len(keep) == 0 {
				return msgs[:i]
			}
			rest := make(map[string]any, len(m))
			for k, v := range m {
				rest[k] = v
			}
			rest["content"] = keep
			return append(append([]any(nil), msgs[:i]...), rest)
		}
	}
	return msgs
}

// Canonical encodes v as JSON with object keys sorted, a one-space indent
// and no HTML escaping, ending in a newline: the same value always gives the
// same bytes.
func Canonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// standIn answers the client as the Messages API would, with one short text
// reply per request, and records every request it gets. With a script, the
// requests that carry tools are answered from it, one reply each, in
// order.
type standIn struct {
	mu     sync.Mutex
	reqs   []recorded
	script [][]Block
	turns  int // scripted replies given
}

type recorded struct {
	method, path string
	body         map[string]json.RawMessage // nil when the body is not a JSON object
}

func newStandIn() *standIn { return &standIn{} }

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if r.Method == http.MethodPost {
		var rd io.Reader = r.Body
		if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
			if zr, err := gzip.NewReader(r.Body); err == nil {
				rd = zr
			}
		}
		if data, err := io.ReadAll(rd); err == nil {
			// A body that is not a JSON object is recorded as nil:
			// only message requests matter, and they are objects.
			_ = json.Unmarshal(data, &body)
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{r.Method, r.URL.RequestURI(), body})
	n := len(s.reqs)
	var blocks []Block
	if s.script != nil && hasTools(body) {
		blocks = []Block{{Text: fmt.Sprintf("done %d", s.turns)}}
		if s.turns < len(s.script) {
			blocks = s.script[s.turns]
		}
		s.turns++
	}
	s.mu.Unlock()

	switch {
	case r.Method != http.MethodPost:
		writeJSON(w, map[string]any{})
	case strings.Contains(r.URL.Path, "count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		reply := "side reply"
		if hasTools(body) {
			reply = "probe reply"
		}
		var model any = "m"
		if raw, ok := body["model"]; ok {
			_ = json.Unmarshal(raw, &model)
		}
		var stream bool
		if raw, ok := body["stream"]; ok {
			_ = json.Unmarshal(raw, &stream)
		}
		content, stop := []any{map[string]any{"type": "text", "text": reply}}, "end_turn"
		if blocks != nil {
			content, stop = messageContent(n, blocks)
		}
		msg := map[string]any{
			"id": fmt.Sprintf("msg_%04d", n), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 100 + n, "output_tokens": 10 + n},
		}
		if stream {
			writeStream(w, msg)
		} else {
			writeJSON(w, msg)
		}
	default:
		writeJSON(w, map[string]any{})
	}
}

// decode keeps numbers as written: a float64 would round large integers in
// tool inputs and make distinct conversations encode alike.
func decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	_, _ = w.Write(data)
}

// writeStream sends msg as the API streams it: Server-Sent Events, each an
// "event:" line naming the type and a "data:" line holding the JSON. Each
// block of its content is streamed whole: a text as one text_delta, a tool
// call's input as one input_json_delta.
func writeStream(w http.ResponseWriter, msg map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	// The API ends the stream by closing; so does mockapi.py.
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	start := make(map[string]any, len(msg))
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	usage := msg["usage"].(map[string]any)
	ev("message_start", map[string]any{"message": start})
	for i, c := range msg["content"].([]any) {
		b := c.(map[string]any)
		if b["type"] == "tool_use" {
			input, _ := json.Marshal(b["input"])
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		}
		ev("content_block_stop", map[string]any{"index": i})
	}
	ev("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage["output_tokens"]},
	})
	ev("message_stop", map[string]any{})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// hasTools is the test mockapi.py makes: a request with a non-empty tools
// array is the conversation itself; the rest are side queries.
func hasTools(body map[string]json.RawMessage) bool {
	var tools []json.RawMessage
	raw, ok := body["tools"]
	return ok && json.Unmarshal(raw, &tools) == nil && len(tools) > 0
}

func (s *standIn) firstWithTools() map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		if r.method == http.MethodPost && strings.HasSuffix(pathOnly(r.path), "/v1/messages") && hasTools(r.body) {
			return r.body
		}
	}
	return nil
}

// summary lists the requests the stand-in got, for an error message: which
// ones arrived tells where the client stopped.
func (s *standIn) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return summarize(s.reqs)
}

func summarize(reqs []recorded) string {
	if len(reqs) == 0 {
		return "none"
	}
	var parts []string
	for _, r := range reqs {
		p := r.method + " " + r.path
		if hasTools(r.body) {
			p += " (tools)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func pathOnly(uri string) string {
	p, _, _ := strings.Cut(uri, "?")
	return p
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(fi.Size()-n, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	if len(bytes.TrimSpace(data)) == 0 {
		return "(none)"
	}
	return string(data)
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		return copyFile(p, dst)
	})
}
