package realclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// CodexInstall says how to get the Codex client the Codex probe runs.
const CodexInstall = "install the client with .ci/install-codex and export CODEX=$(.ci/install-codex | tail -1)"

// A CodexProbe asks the real Codex client what it sends the model when it
// resumes a rollout. It is the Go counterpart of
// ../shared/realclient/codex_resume_probe.py, with the stand-in of the
// Responses API (mock_responses.py there) served in process.
//
// The script picks a free port, closes it and starts its stand-in on it a
// moment later, so two probes running at once can pick the same port: one
// stand-in fails to start, and its client talks to the other's, which
// answers a conversation that is not its own. Here the stand-in's listener
// is held from the start, so concurrent probes cannot meet.
type CodexProbe struct {
	// Launcher is the client's launcher ($CODEX).
	Launcher string
}

// FindCodex returns the probe of the client $CODEX names, or why it cannot
// run here.
func FindCodex() (*CodexProbe, error) {
	launcher := os.Getenv("CODEX")
	if launcher == "" {
		return nil, errors.New("CODEX is not set")
	}
	if err := executable(launcher); err != nil {
		return nil, fmt.Errorf("CODEX=%s: %v", launcher, err)
	}
	return &CodexProbe{Launcher: launcher}, nil
}

// codexConfig points the client at the stand-in and turns off what would
// reach anywhere else. The provider is the one the rollout recorded (the
// client refuses to resume a thread under another provider): files written
// against a stand-in record "mock"; people's rollouts record "openai", whose
// base URL is pointed at the stand-in as well.
const codexConfig = `model = "gpt-5.5"
model_provider = "%[2]s"
openai_base_url = "%[1]s/v1"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = "%[1]s/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
`

// rolloutDay is the date in a rollout's file name, which is also the
// folder the client looks for it in: ~/.codex/sessions/YYYY/MM/DD/.
var rolloutDay = regexp.MustCompile(`^rollout-(\d{4})-(\d{2})-(\d{2})T`)

// currentDate is the date the client adds to the context of every turn; it
// differs from day to day, not from file to file.
var currentDate = regexp.MustCompile(`<current_date>[^<]*</current_date>`)

// Probe returns the input items (JSON, canonically encoded) of the first
// request carrying tools that the client sends when it resumes rollout
// (`codex exec resume <thread id> PROBE`), with the probe's own turn
// removed. others (a fork's source) are placed beside it, where the client
// finds them. Ids, turn ids and creation times the client mints on this
// run (those the file does not hold) read "<minted>", and the probe's own paths and the date are
// replaced by fixed ones, so two probes of the same file give the same
// bytes. The client runs under the provider the rollout records (people's
// rollouts record "openai"), pointed at the stand-in. When the client
// compacts the resumed history before its first turn (its compaction
// settings changed since the rollout was written), the history it sends
// to be compacted is the answer. A run is bounded by Timeout.
func (p *CodexProbe) Probe(rollout string, others ...string) ([]byte, error) {
	tid, err := threadID(rollout)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", rollout, err)
	}
	tmp, home, project, err := probeHome("cxprobe-")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", rollout, err)
	}
	defer os.RemoveAll(tmp)
	day := []string{"2026", "01", "01"}
	for i, f := range append([]string{rollout}, others...) {
		name := filepath.Base(f)
		if m := rolloutDay.FindStringSubmatch(name); m != nil {
			if i == 0 {
				day = m[1:]
			}
			err = copyFile(f, filepath.Join(home, ".codex", "sessions", m[1], m[2], m[3], name))
		} else {
			id := tid
			if i > 0 {
				if id, err = threadID(f); err != nil {
					return nil, fmt.Errorf("probe %s: %v", rollout, err)
				}
			}
			err = copyFile(f, filepath.Join(home, ".codex", "sessions", day[0], day[1], day[2],
				"rollout-2026-01-01T00-00-00-"+id+".jsonl"))
		}
		if err != nil {
			return nil, fmt.Errorf("probe %s: %v", rollout, err)
		}
	}

	api := &responsesStandIn{}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()
	provider := recordedProvider(rollout)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), fmt.Appendf(nil, codexConfig, srv.URL, provider), 0o644); err != nil {
		return nil, fmt.Errorf("probe %s: %v", rollout, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Launcher, "exec", "--json", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", "resume", tid, ProbePrompt)
	cmd.Dir = project
	cmd.Env = codexEnv(home, srv.URL)
	cmd.Stdin = nil
	run, err := runClient(ctx, cmd, tmp)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", rollout, err)
	}

	// As the script does, the request decides, not the exit status: the
	// client may fail after sending it, for reasons that are not the
	// file's.
	req := api.firstConversation()
	if req == nil {
		return nil, fmt.Errorf("probe %s with %s: the client sent no request carrying tools and input; client: %s; requests: %s; client output (tail):\n%s",
			rollout, p.Launcher, run.status(), api.summary(), tail(run.output, 2000))
	}
	var items []any
	if err := decode(req["input"], &items); err != nil {
		return nil, fmt.Errorf("probe %s: the request's input is not an array: %v", rollout, err)
	}
	for len(items) > 0 {
		last, _ := json.Marshal(items[len(items)-1])
		if !bytes.Contains(last, []byte(ProbePrompt)) {
			break
		}
		items = items[:len(items)-1]
	}
	source, err := os.ReadFile(rollout)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", rollout, err)
	}
	enc, err := Canonical(markMinted(items, source))
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", rollout, err)
	}
	enc = bytes.ReplaceAll(enc, []byte(project), []byte("/PROBE/PROJ"))
	enc = bytes.ReplaceAll(enc, []byte(home), []byte("/PROBE/HOME"))
	return currentDate.ReplaceAll(enc, []byte("<current_date>PROBE-DATE</current_date>")), nil
}

// threadID is the id of the session_meta line of rollout, else the UUID
// its name ends with.
func threadID(rollout string) (string, error) {
	f, err := os.Open(rollout)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		var e struct {
			Type    string `json:"type"`
			Payload struct {
				ID        string `json:"id"`
				SessionID string `json:"session_id"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &e) == nil && e.Type == "session_meta" {
			if e.Payload.ID != "" {
				return e.Payload.ID, nil
			}
			if e.Payload.SessionID != "" {
				return e.Payload.SessionID, nil
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if m := rolloutUUID.FindStringSubmatch(filepath.Base(rollout)); m != nil {
		return m[1], nil
	}
	return "", errors.New("no thread id: neither a session_meta line nor a name ending in <uuid>.jsonl")
}

var rolloutUUID = regexp.MustCompile(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$`)

// minted are the fields whose values the client mints on every run (the
// resume turn's fresh context messages, their turn id and creation time).
var minted = map[string]bool{"id": true, "turn_id": true, "create_time": true}

// markMinted replaces every value of a minted field (a string or a number)
// that source does not hold with "<minted>"; values that come from the
// file are kept.
func markMinted(v any, source []byte) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			var s string
			switch y := val.(type) {
			case string:
				s = y
			case json.Number:
				s = y.String()
			}
			if minted[k] && s != "" && !bytes.Contains(source, []byte(s)) {
				out[k] = "<minted>"
			} else {
				out[k] = markMinted(val, source)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = markMinted(val, source)
		}
		return out
	}
	return v
}

// recordedProvider is the model provider the rollout's session_meta
// records when it is one the probe's configuration serves ("mock" or
// "openai"), else "mock".
func recordedProvider(rollout string) string {
	f, err := os.Open(rollout)
	if err != nil {
		return "mock"
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		var e struct {
			Type    string `json:"type"`
			Payload struct {
				ModelProvider string `json:"model_provider"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &e) == nil && e.Type == "session_meta" {
			if p := e.Payload.ModelProvider; p == "openai" || p == "mock" {
				return p
			}
			return "mock"
		}
		if err != nil {
			return "mock"
		}
	}
}

// codexEnv is the client's environment: the caller's, minus what would make
// it read the real user's configuration or credentials or go through a
// proxy, plus the stand-in's key.
func codexEnv(home, baseURL string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch up := strings.ToUpper(k); {
		case up == "HOME", up == "USERPROFILE",
			strings.HasPrefix(up, "OPENAI_"), strings.HasPrefix(up, "CODEX_"),
			up == "HTTP_PROXY", up == "HTTPS_PROXY", up == "ALL_PROXY", up == "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+home, "MOCK_API_KEY=sk-test", "OPENAI_API_KEY=sk-test", "NO_COLOR=1",
		"OPENAI_BASE_URL="+baseURL+"/v1")
}

// responsesStandIn answers the client as the Responses API would: every
// request to /responses gets a streamed reply of one short message. It
// records every request.
type responsesStandIn struct {
	mu        sync.Mutex
	reqs      []recorded
	withTools int // requests carrying tools answered so far
	// script, when set, answers the requests carrying tools, one reply
	// each, in order; past its end they get "done N".
	script [][]Block
}

func (s *responsesStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if r.Method == http.MethodPost {
		// A compressed (zstd) body stays unread, as in the script: the
		// client compresses only for OpenAI's own endpoint.
		enc := r.Header.Get("Content-Encoding")
		if data, err := io.ReadAll(r.Body); err == nil && (enc == "" || strings.EqualFold(enc, "identity")) {
			_ = json.Unmarshal(data, &body)
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{r.Method, r.URL.RequestURI(), body})
	n := len(s.reqs)
	reply := []Block{{Text: "side reply"}}
	if hasTools(body) {
		reply[0].Text = "probe reply"
		if s.withTools > 0 {
			reply[0].Text = fmt.Sprintf("done %d", s.withTools)
		}
		if s.withTools < len(s.script) {
			reply = s.script[s.withTools]
		}
		s.withTools++
	}
	s.mu.Unlock()

	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method != http.MethodPost && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		// No websocket transport here: the client falls back to HTTP.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUpgradeRequired)
		_, _ = io.WriteString(w, `{"error":{"message":"websocket not supported"}}`)
	case r.Method != http.MethodPost && strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		writeResponseStream(w, n, reply, body)
	default:
		writeJSON(w, map[string]any{})
	}
}

// writeResponseStream sends a response holding the reply's blocks (an
// assistant message for each text, a function call for each call) as the
// Responses API streams it: Server-Sent Events, each an "event:" line
// naming the type and a "data:" line holding the JSON.
func writeResponseStream(w http.ResponseWriter, n int, reply []Block, req map[string]json.RawMessage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	seq := 0
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	var model any = "m"
	if raw, ok := req["model"]; ok {
		_ = json.Unmarshal(raw, &model)
	}
	id := fmt.Sprintf("%03d", n)
	response := func(status string, output []any, usage any) map[string]any {
		r := map[string]any{"id": "resp_" + id, "object": "response", "status": status, "model": model, "output": output}
		if usage != nil {
			r["usage"] = usage
		}
		return r
	}
	ev("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	ev("response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})
	var output []any
	for k, b := range reply {
		itemID := fmt.Sprintf("%s_%d", id, k)
		if b.Item != nil {
			item := map[string]any{"id": "it_" + itemID, "call_id": "call_" + itemID, "status": "completed"}
			for key, v := range b.Item {
				item[key] = v
			}
			ev("response.output_item.added", map[string]any{"output_index": k, "item": item})
			ev("response.output_item.done", map[string]any{"output_index": k, "item": item})
			output = append(output, item)
			continue
		}
		if b.Tool != "" {
			args, _ := json.Marshal(b.Input)
			if b.Input == nil {
				args = []byte("{}")
			}
			call := func(status, arguments string) map[string]any {
				c := map[string]any{"type": "function_call", "id": "fc_" + itemID, "call_id": "call_" + itemID, "name": b.Tool, "arguments": arguments, "status": status}
				if b.Namespace != "" {
					c["namespace"] = b.Namespace
				}
				return c
			}
			ev("response.output_item.added", map[string]any{"output_index": k, "item": call("in_progress", "")})
			ev("response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + itemID, "output_index": k, "delta": string(args)})
			ev("response.function_call_arguments.done", map[string]any{"item_id": "fc_" + itemID, "output_index": k, "arguments": string(args)})
			done := call("completed", string(args))
			ev("response.output_item.done", map[string]any{"output_index": k, "item": done})
			output = append(output, done)
			continue
		}
		part := map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}
		item := func(status string, content []any) map[string]any {
			return map[string]any{"type": "message", "id": "msg_" + itemID, "role": "assistant", "status": status, "content": content}
		}
		at := func(m map[string]any) map[string]any {
			m["item_id"], m["output_index"], m["content_index"] = "msg_"+itemID, k, 0
			return m
		}
		ev("response.output_item.added", map[string]any{"output_index": k, "item": item("in_progress", []any{})})
		ev("response.content_part.added", at(map[string]any{"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
		ev("response.output_text.delta", at(map[string]any{"delta": b.Text}))
		ev("response.output_text.done", at(map[string]any{"text": b.Text}))
		ev("response.content_part.done", at(map[string]any{"part": part}))
		done := item("completed", []any{part})
		ev("response.output_item.done", map[string]any{"output_index": k, "item": done})
		output = append(output, done)
	}
	ev("response.completed", map[string]any{"response": response("completed", output, map[string]any{
		"input_tokens": 1000 + n, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20 + n, "output_tokens_details": map[string]any{"reasoning_tokens": 5},
		"total_tokens": 1020 + 2*n,
	})})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// firstConversation is the body of the first request carrying the
// conversation: one carrying tools and input, as opposed to side queries,
// or a compaction request (its input ends in a compaction_trigger item),
// which a client makes before its first turn when it must compact the
// history it resumed (its compaction settings changed since the rollout
// was written): that input is the history the client rebuilt, and the
// trigger is taken off it.
func (s *responsesStandIn) firstConversation() map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		in, ok := r.body["input"]
		if !ok {
			continue
		}
		if hasTools(r.body) {
			return r.body
		}
		var items []json.RawMessage
		if json.Unmarshal(in, &items) == nil && len(items) > 0 {
			var last struct{ Type string }
			if json.Unmarshal(items[len(items)-1], &last) == nil && last.Type == "compaction_trigger" {
				body := maps.Clone(r.body)
				body["input"], _ = json.Marshal(items[:len(items)-1])
				return body
			}
		}
	}
	return nil
}

func (s *responsesStandIn) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return summarize(s.reqs)
}
