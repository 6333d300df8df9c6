package realclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// GeminiInstall says how to get the Gemini CLI the Gemini probe runs.
const GeminiInstall = "install the client with .ci/install-gemini and export GEMINI=$(.ci/install-gemini | tail -1)"

// GeminiModel is the model the probe tells the client to use. The model
// decides what the client does with a history before it sends it (whether
// it strips thoughts, merges consecutive turns), so it is the model the
// shared corpus was written with.
const GeminiModel = "gemini-3.1-pro-preview"

// geminiClockMS pins the client's clock (2030-01-01T00:00:00Z), so that
// nothing the client dates on the probe's run (the session context's date)
// varies from run to run.
const geminiClockMS = "1893456000000"

// A GeminiProbe asks the real Gemini CLI what it sends the model when it
// resumes a session file. It is the Go counterpart of
// ../shared/realclient/gemini_resume_probe.py, with the stand-in of the
// Gemini API (mock_gemini.py there) served in process by httptest: the
// stand-in's listener is held from the start, so concurrent probes never
// share a port.
type GeminiProbe struct {
	// Launcher is the client's launcher ($GEMINI).
	Launcher string
	// Model is the model named to the client; GeminiModel when "".
	Model string
}

// FindGemini returns the probe of the client $GEMINI names, or why it
// cannot run here.
func FindGemini() (*GeminiProbe, error) {
	launcher := os.Getenv("GEMINI")
	if launcher == "" {
		return nil, errors.New("GEMINI is not set")
	}
	if err := executable(launcher); err != nil {
		return nil, fmt.Errorf("GEMINI=%s: %v", launcher, err)
	}
	return &GeminiProbe{Launcher: launcher, Model: os.Getenv("GEMINI_PROBE_MODEL")}, nil
}

// geminiSettings turns off what would reach anywhere but the stand-in, and
// the session retention whose start-up sweep could delete an old file
// before the client resumes it.
const geminiSettings = `{"general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "sessionRetention": {"enabled": false}}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}}`

// geminiClock is ../shared/realclient/gemini_clock.cjs, preloaded into the
// client (NODE_OPTIONS=--require): the process's clock starts at
// GEMINI_GEN_CLOCK_START_MS and runs at normal speed from there. Only the
// JavaScript Date changes.
const geminiClock = `"use strict";
const start = Number(process.env.GEMINI_GEN_CLOCK_START_MS || 0);
if (start > 0) {
  const RealDate = Date;
  const offset = start - RealDate.now();
  function ShiftedDate(...args) {
    if (!new.target) return new RealDate(RealDate.now() + offset).toString();
    return args.length ? new RealDate(...args) : new RealDate(RealDate.now() + offset);
  }
  ShiftedDate.prototype = RealDate.prototype;
  ShiftedDate.now = () => RealDate.now() + offset;
  ShiftedDate.parse = RealDate.parse;
  ShiftedDate.UTC = RealDate.UTC;
  Object.setPrototypeOf(ShiftedDate, RealDate);
  globalThis.Date = ShiftedDate;
}
`

// sessionFileName is the name the client gives a main session's file, and
// which it lists when it looks for one to resume.
var sessionFileName = regexp.MustCompile(`^session-.*\.jsonl?$`)

// Probe returns the contents (JSON, canonically encoded) of the first
// model request carrying tools that the client sends when it resumes file
// (`gemini --resume <id> -p PROBE`), with the probe's own prompt removed.
// others are copied into the same chats folder under their own relative
// names (a subagent's file, "<parent id>/<agent id>.jsonl"). The probe's
// own home and project are replaced by /PROBE/HOME and /PROBE/PROJ, so two
// probes of the same file give the same bytes. A run is bounded by
// Timeout.
func (p *GeminiProbe) Probe(file string, others ...string) ([]byte, error) {
	req, err := p.request(file, others)
	if err != nil {
		return nil, err
	}
	var contents []any
	if raw, ok := req.body["contents"]; ok {
		if err := decode(raw, &contents); err != nil {
			return nil, fmt.Errorf("probe %s: the request's contents are not an array: %v", file, err)
		}
	}
	enc, err := Canonical(stripGeminiProbe(contents))
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", file, err)
	}
	enc = bytes.ReplaceAll(enc, []byte(req.project), []byte("/PROBE/PROJ"))
	return bytes.ReplaceAll(enc, []byte(req.home), []byte("/PROBE/HOME")), nil
}

type geminiRequest struct {
	body          map[string]json.RawMessage
	home, project string
}

func (p *GeminiProbe) request(file string, others []string) (*geminiRequest, error) {
	sid, err := GeminiSessionID(file)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", file, err)
	}
	tmp, home, project, err := probeHome("gmprobe-")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", file, err)
	}
	defer os.RemoveAll(tmp)
	gdir := filepath.Join(home, ".gemini")
	chats := filepath.Join(gdir, "tmp", "p", "chats")
	projects, _ := json.Marshal(map[string]any{"projects": map[string]string{project: "p"}})
	name := filepath.Base(file)
	if !sessionFileName.MatchString(name) {
		name = "session-2026-01-01T00-00-" + sid[:min(8, len(sid))] + ".jsonl"
	}
	clock := filepath.Join(tmp, "gemini_clock.cjs")
	for _, w := range []struct {
		path string
		data []byte
	}{
		{filepath.Join(gdir, "settings.json"), []byte(geminiSettings)},
		{filepath.Join(gdir, "projects.json"), projects},
		{filepath.Join(gdir, "tmp", "p", ".project_root"), []byte(project)},
		{clock, []byte(geminiClock)},
	} {
		if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
			return nil, fmt.Errorf("probe %s: %v", file, err)
		}
		if err := os.WriteFile(w.path, w.data, 0o644); err != nil {
			return nil, fmt.Errorf("probe %s: %v", file, err)
		}
	}
	if err := copyFile(file, filepath.Join(chats, name)); err != nil {
		return nil, fmt.Errorf("probe %s: %v", file, err)
	}
	for _, o := range others {
		rel := filepath.Join(filepath.Base(filepath.Dir(o)), filepath.Base(o))
		if err := copyFile(o, filepath.Join(chats, rel)); err != nil {
			return nil, fmt.Errorf("probe %s: %v", file, err)
		}
	}

	api := &geminiStandIn{}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()

	model := p.Model
	if model == "" {
		model = GeminiModel
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Launcher, "-m", model, "--approval-mode", "yolo", "--resume", sid, "-p", ProbePrompt)
	cmd.Dir = project
	cmd.Env = geminiEnv(home, srv.URL, clock)
	cmd.Stdin = nil
	run, err := runClient(ctx, cmd, tmp)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %v", file, err)
	}

	// As the script does, the request decides, not the exit status.
	body := api.firstConversation()
	if body == nil {
		return nil, fmt.Errorf("probe %s with %s: the client sent no streamGenerateContent request carrying tools; client: %s; requests: %s; client output (tail):\n%s",
			file, p.Launcher, run.status(), api.summary(), tail(run.output, 2000))
	}
	return &geminiRequest{body: body, home: home, project: project}, nil
}

// GeminiSessionID is the id of the session file holds: its last $set of
// sessionId, else its first record that names one (the metadata line),
// else, for a file that is one JSON document (a session written by clients
// before 0.30), its sessionId.
func GeminiSessionID(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var whole struct {
		SessionID *string `json:"sessionId"`
	}
	if json.Unmarshal(data, &whole) == nil && whole.SessionID != nil {
		return *whole.SessionID, nil
	}
	sid := ""
	for line := range bytes.Lines(data) {
		var e struct {
			SessionID *string `json:"sessionId"`
			Set       *struct {
				SessionID *string `json:"sessionId"`
			} `json:"$set"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if e.SessionID != nil && sid == "" {
			sid = *e.SessionID
		}
		if e.Set != nil && e.Set.SessionID != nil {
			sid = *e.Set.SessionID
		}
	}
	if sid == "" {
		return "", errors.New("no session id: no metadata line or $set names one")
	}
	return sid, nil
}

// stripGeminiProbe removes the probe's prompt from contents: the client
// may have merged it into the last user turn (after a trailing function
// response), so only its parts go, and the turn when nothing else is left.
func stripGeminiProbe(contents []any) []any {
	n := len(contents)
	if n == 0 {
		return contents
	}
	last, ok := contents[n-1].(map[string]any)
	if !ok || last["role"] != "user" {
		return contents
	}
	parts, _ := last["parts"].([]any)
	var keep []any
	for _, pt := range parts {
		enc, _ := json.Marshal(pt)
		if !bytes.Contains(enc, []byte(ProbePrompt)) {
			keep = append(keep, pt)
		}
	}
	if len(keep) == 0 {
		return contents[:n-1]
	}
	rest := make(map[string]any, len(last))
	for k, v := range last {
		rest[k] = v
	}
	rest["parts"] = keep
	return append(append([]any(nil), contents[:n-1]...), rest)
}

// geminiEnv is the client's environment: the caller's, minus what would
// make it read the real user's configuration or credentials, relaunch
// itself or go through a proxy, plus what points it at the stand-in.
func geminiEnv(home, baseURL, clock string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch up := strings.ToUpper(k); {
		case up == "HOME", up == "USERPROFILE", up == "CI",
			strings.HasPrefix(up, "GEMINI_"), strings.HasPrefix(up, "GOOGLE_"), strings.HasPrefix(up, "NODE_"),
			up == "HTTP_PROXY", up == "HTTPS_PROXY", up == "ALL_PROXY", up == "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"HOME="+home,
		"GOOGLE_GEMINI_BASE_URL="+baseURL,
		"GEMINI_API_KEY=test-key",
		"GEMINI_CLI_NO_RELAUNCH=true",
		"NO_COLOR=1",
		"TERM=xterm-256color",
		"NODE_OPTIONS=--require "+clock,
		"GEMINI_GEN_CLOCK_START_MS="+geminiClockMS,
	)
}

// geminiStandIn answers the client as the Gemini API would, as
// mock_gemini.py does with the probe's script: the first streamed request
// carrying tools (the conversation) gets "probe reply", later ones
// "done N"; side queries (the next-speaker check, routing, summaries) get a
// short text, or for a request asking for JSON a minimal instance of its
// schema. It records every request.
type geminiStandIn struct {
	mu        sync.Mutex
	reqs      []recorded
	withTools int
}

func (s *geminiStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if r.Method == http.MethodPost {
		if data, err := io.ReadAll(r.Body); err == nil {
			_ = json.Unmarshal(data, &body)
		}
	}
	path := r.URL.Path
	main := strings.Contains(path, ":streamGenerateContent") && hasTools(body)
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{r.Method, r.URL.RequestURI(), body})
	n := len(s.reqs)
	reply := ""
	if main {
		reply = "probe reply"
		if s.withTools > 0 {
			reply = fmt.Sprintf("done %d", s.withTools)
		}
		s.withTools++
	}
	s.mu.Unlock()

	model := "gemini"
	if _, after, ok := strings.Cut(path, "/models/"); ok {
		model, _, _ = strings.Cut(after, ":")
	}
	switch {
	case r.Method != http.MethodPost:
		if strings.Contains(path, "/models") {
			writeJSON(w, map[string]any{"models": []any{}})
			return
		}
		writeJSON(w, map[string]any{})
	case strings.Contains(path, ":countTokens"):
		size, _ := json.Marshal(body)
		writeJSON(w, map[string]any{"totalTokens": 10 + len(size)/4})
	case strings.Contains(path, ":embedContent"), strings.Contains(path, ":batchEmbedContents"):
		writeJSON(w, map[string]any{"embedding": map[string]any{"values": make([]float64, 8)}})
	case strings.Contains(path, ":generateContent"), strings.Contains(path, ":streamGenerateContent"):
		parts := []any{map[string]any{"text": reply}}
		if !main {
			parts = geminiSideContent(body)
		}
		resp := map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
				"finishReason": "STOP", "index": 0}},
			"usageMetadata": geminiUsage(n, body),
			"modelVersion":  model,
			"responseId":    fmt.Sprintf("probe-%04d", n),
		}
		if !strings.Contains(path, ":streamGenerateContent") {
			writeJSON(w, resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusOK)
		// One event holding the whole reply: the script streams a text in
		// chunks of 60 characters, and the probe's replies are shorter.
		// json.Marshal escapes U+2028 and U+2029, which inside an event's
		// data line make the client drop the chunk.
		data, _ := json.Marshal(resp)
		fmt.Fprintf(w, "data: %s\r\n\r\n", data)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	default:
		writeJSON(w, map[string]any{})
	}
}

// geminiUsage is the usage the stand-in reports: a prompt count that grows
// with the request, so the client never thinks it must compress.
func geminiUsage(n int, body map[string]json.RawMessage) map[string]any {
	size := len(body["contents"]) / 4
	return map[string]any{
		"promptTokenCount": 1000 + size, "candidatesTokenCount": 20 + n, "thoughtsTokenCount": 7,
		"totalTokenCount":     1027 + size + n,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": 1000 + size}},
	}
}

// geminiSideContent answers a side query: the compression summary when the
// system instruction asks for a state snapshot, a minimal instance of the
// response schema when JSON is asked for, else a short text.
func geminiSideContent(body map[string]json.RawMessage) []any {
	if bytes.Contains(body["systemInstruction"], []byte("state_snapshot")) {
		return []any{map[string]any{"text": "<state_snapshot>\n<overall_goal>scripted summary</overall_goal>\n</state_snapshot>"}}
	}
	var gc struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	}
	_ = json.Unmarshal(body["generationConfig"], &gc)
	if gc.ResponseMimeType == "application/json" {
		schema := gc.ResponseJSONSchema
		if len(schema) == 0 {
			schema = gc.ResponseSchema
		}
		var s any
		_ = json.Unmarshal(schema, &s)
		text, _ := json.Marshal(fromSchema(s, ""))
		return []any{map[string]any{"text": string(text)}}
	}
	return []any{map[string]any{"text": "side reply"}}
}

// fromSchema is a minimal instance of a JSON schema, as mock_gemini.py
// makes one; a next_speaker is always the user, so the client never takes
// another turn on its own.
func fromSchema(v any, key string) any {
	s, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	t := ""
	switch x := s["type"].(type) {
	case string:
		t = x
	case []any:
		t = "string"
		for _, e := range x {
			if e, ok := e.(string); ok && e != "null" {
				t = e
				break
			}
		}
	}
	t = strings.ToLower(t)
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		if key == "next_speaker" {
			for _, e := range enum {
				if e == "user" {
					return "user"
				}
			}
		}
		return enum[0]
	}
	props, hasProps := s["properties"].(map[string]any)
	switch {
	case t == "object" || hasProps:
		out := make(map[string]any, len(props))
		for k, pv := range props {
			out[k] = fromSchema(pv, k)
		}
		return out
	case t == "array":
		return []any{}
	case t == "number" || t == "integer":
		if m, ok := s["minimum"]; ok {
			return m
		}
		return 0
	case t == "boolean":
		return false
	case key == "next_speaker":
		return "user"
	}
	return "side reply"
}

// firstConversation is the body of the first streamed request carrying
// tools: the conversation, as opposed to side queries.
func (s *geminiStandIn) firstConversation() map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		if r.method == http.MethodPost && strings.Contains(pathOnly(r.path), ":streamGenerateContent") && hasTools(r.body) {
			return r.body
		}
	}
	return nil
}

func (s *geminiStandIn) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return summarize(s.reqs)
}

// GeminiTurns reads a probe's output: the contents, each a role and its
// parts, for tests that look into what the client sent.
func GeminiTurns(out []byte) ([]GeminiContent, error) {
	var cs []GeminiContent
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(out)))
	dec.UseNumber()
	if err := dec.Decode(&cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// GeminiContent is one turn of a Gemini request's contents.
type GeminiContent struct {
	Role  string           `json:"role"`
	Parts []map[string]any `json:"parts"`
}

// Run runs the client headless in project, a folder of home (which holds
// the client's .gemini folder: its settings, its sessions), against a
// stand-in of the API that answers every conversation request with a
// short text ("probe reply", then "done N"), with args after the model and
// the approval mode. It returns what the client printed on stdout and on
// stderr. A run is bounded by Timeout.
func (p *GeminiProbe) Run(home, project string, args ...string) (stdout, stderr []byte, err error) {
	tmp, err := os.MkdirTemp("", "gmrun-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	clock := filepath.Join(tmp, "gemini_clock.cjs")
	if err := os.WriteFile(clock, []byte(geminiClock), 0o644); err != nil {
		return nil, nil, err
	}
	api := &geminiStandIn{}
	srv := httptest.NewServer(api)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
	}()
	model := p.Model
	if model == "" {
		model = GeminiModel
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Launcher, append([]string{"-m", model, "--approval-mode", "yolo"}, args...)...)
	cmd.Dir = project
	// The clock runs from now: only the probe pins it.
	cmd.Env = append(geminiEnv(home, srv.URL, clock), "GEMINI_GEN_CLOCK_START_MS=0")
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %v; requests: %s", p.Launcher, strings.Join(args, " "), err, api.summary())
	}
	return out.Bytes(), errw.Bytes(), err
}
