package realclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// rollouts is the repository's copy of the Codex corpus, relative to this
// package's directory.
const rollouts = "../../../testdata/codex/sessions/2026/11/23"

const (
	multiTurn = rollouts + "/rollout-2026-11-23T16-52-24-01a20952-b3d9-7c51-a59a-7406b691728f.jsonl"
	forkBase  = rollouts + "/rollout-2026-11-23T16-52-26-01a20952-bc69-7a02-82ff-4c4b50993747.jsonl"
	fork      = rollouts + "/rollout-2026-11-23T16-52-27-01a20952-c0af-7253-88e0-b3b78a20d055.jsonl"
)

func codexProbe(t *testing.T) *CodexProbe {
	t.Helper()
	return Codex(t)
}

// TestCodexProbeConcurrent runs probes of one rollout at once, as the test
// suites do across packages: each must be answered by its own stand-in and
// give the same bytes. (The script this probe stands for chose a port and
// let it go before its stand-in took it; two probes at once could then
// share one stand-in, and one came back with no request at all.)
func TestCodexProbeConcurrent(t *testing.T) {
	p := codexProbe(t)
	out := probeConcurrently(t, 6, func(f string) ([]byte, error) { return p.Probe(f) }, multiTurn)
	var items []any
	if err := json.Unmarshal(out, &items); err != nil || len(items) == 0 {
		t.Fatalf("probe output is not a non-empty JSON array (%v):\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("third question")) {
		t.Errorf("probe of %s lacks its third prompt:\n%s", multiTurn, out)
	}
	for _, d := range currentDate.FindAll(out, -1) {
		if string(d) != "<current_date>PROBE-DATE</current_date>" {
			t.Errorf("probe output holds the day's date: %s", d)
		}
	}
	for _, not := range []string{ProbePrompt, os.TempDir() + string(filepath.Separator) + "cxprobe-"} {
		if bytes.Contains(out, []byte(not)) {
			t.Errorf("probe output holds %q:\n%s", not, out)
		}
	}
}

// TestCodexProbeSeesChanges makes sure a comparison of probes can fail: a
// rollout whose prompt differs probes differently.
func TestCodexProbeSeesChanges(t *testing.T) {
	p := codexProbe(t)
	seesChange(t, func(f string) ([]byte, error) { return p.Probe(f) }, multiTurn, "third question", "fourth question")
}

// probeConcurrently runs n probes of file at once and returns what they
// printed, which must be the same bytes.
func probeConcurrently(t *testing.T, n int, probe func(string) ([]byte, error), file string) []byte {
	t.Helper()
	outs := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { outs[i], errs[i] = probe(file) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
	}
	for i := 1; i < n; i++ {
		if !bytes.Equal(outs[i], outs[0]) {
			t.Fatalf("probes 0 and %d of %s differ:\n--- 0\n%s\n--- %d\n%s", i, file, outs[0], i, outs[i])
		}
	}
	return outs[0]
}

// seesChange probes file and a copy of it with from replaced by to: the
// two must differ, and the copy's must hold to.
func seesChange(t *testing.T, probe func(string) ([]byte, error), file, from, to string) {
	t.Helper()
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(changed, bytes.ReplaceAll(orig, []byte(from), []byte(to)), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := probe(file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := probe(changed)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) || !bytes.Contains(got, []byte(to)) {
		t.Fatalf("changing %q to %q in %s did not change what the client sends:\n%s", from, to, file, got)
	}
}

// TestCodexProbeFork: the client resumes a fork only with its source
// beside it, and the probe passes on the client's reason when it is
// missing (Codex 0.169 says "missing source rollout"; the wording is the
// client's, so the test does not hold it).
func TestCodexProbeFork(t *testing.T) {
	p := codexProbe(t)
	if _, err := p.Probe(fork); err == nil {
		t.Errorf("probe of a fork without its source succeeded; the client needs the source to resume it")
	} else {
		t.Logf("without its source: %.300s", err)
	}
	out, err := p.Probe(fork, forkBase)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"type": "message"`)) {
		t.Errorf("probe of the fork holds no message:\n%s", out)
	}
}

func TestThreadID(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, data, want string }{
		{"rollout-2026-01-01T00-00-00-00000000-0000-4000-8000-000000000001.jsonl",
			"{torn\n" + `{"type":"session_meta","payload":{"id":"the-id","session_id":"other"}}` + "\n", "the-id"},
		{"a.jsonl", `{"type":"session_meta","payload":{"session_id":"old-id"}}`, "old-id"},
		{"rollout-2026-01-01T00-00-00-00000000-0000-4000-8000-000000000002.jsonl",
			`{"type":"response_item","payload":{}}`, "00000000-0000-4000-8000-000000000002"},
		{"b.jsonl", "", ""},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := threadID(p)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("threadID(%s) = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestMarkMinted(t *testing.T) {
	source := []byte(`{"id":"kept","turn_id":"t1","create_time":1700000000}`)
	in := []any{map[string]any{"id": "kept", "call_id": "x", "content": []any{map[string]any{"id": "new"}},
		"turn_id": "t1", "create_time": json.Number("1700000000")},
		map[string]any{"turn_id": "t2", "create_time": json.Number("1800000000"), "other": "new"}, "id"}
	want := []any{map[string]any{"id": "kept", "call_id": "x", "content": []any{map[string]any{"id": "<minted>"}},
		"turn_id": "t1", "create_time": json.Number("1700000000")},
		map[string]any{"turn_id": "<minted>", "create_time": "<minted>", "other": "new"}, "id"}
	if got := markMinted(in, source); !reflect.DeepEqual(got, want) {
		t.Errorf("markMinted = %v, want %v", got, want)
	}
}

// TestResponsesStandIn checks the stand-in without the client: a request
// carrying tools gets a streamed message, the first "probe reply"; side
// queries and websocket upgrades are answered as the client expects.
func TestResponsesStandIn(t *testing.T) {
	api := &responsesStandIn{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	post := func(body string) []string {
		resp, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("content type %q", ct)
		}
		var texts, events []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type     string
				Response struct {
					Output []struct{ Content []struct{ Text string } }
				}
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			events = append(events, ev.Type)
			if ev.Type == "response.completed" {
				texts = append(texts, ev.Response.Output[0].Content[0].Text)
			}
		}
		if len(events) == 0 || events[0] != "response.created" || len(texts) != 1 {
			t.Fatalf("events %v", events)
		}
		return texts
	}
	if got := post(`{"input":[],"tools":[]}`); got[0] != "side reply" {
		t.Errorf("side query answered %q", got[0])
	}
	if api.firstConversation() != nil {
		t.Errorf("a side query taken for the conversation")
	}
	if got := post(`{"input":[{"n":1}],"tools":[{"name":"shell"}]}`); got[0] != "probe reply" {
		t.Errorf("first conversation request answered %q", got[0])
	}
	if got := post(`{"input":[{"n":2}],"tools":[{"name":"shell"}]}`); got[0] != "done 1" {
		t.Errorf("second conversation request answered %q", got[0])
	}
	if got := api.firstConversation(); string(got["input"]) != `[{"n":1}]` {
		t.Errorf("firstConversation input = %s", got["input"])
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/responses", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("websocket upgrade: %v %v", resp, err)
	}
	if resp, err := http.Get(srv.URL + "/v1/models"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("models: %v %v", resp, err)
	}
	if s := api.summary(); !strings.Contains(s, "POST /v1/responses (tools), POST /v1/responses (tools)") {
		t.Errorf("summary %q", s)
	}
	// A compaction before the first turn carries the rebuilt history, and
	// the trigger is taken off it.
	compacting := &responsesStandIn{}
	compacting.reqs = []recorded{{"POST", "/v1/responses", map[string]json.RawMessage{
		"input": json.RawMessage(`[{"n":1},{"type":"compaction_trigger"}]`)}}}
	if got := compacting.firstConversation(); string(got["input"]) != `[{"n":1}]` {
		t.Errorf("firstConversation of a compaction request: input = %s", got["input"])
	}
}

func TestRecordedProvider(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ data, want string }{
		{`{"type":"session_meta","payload":{"id":"x","model_provider":"openai"}}`, "openai"},
		{`{"type":"session_meta","payload":{"id":"x","model_provider":"azure"}}`, "mock"},
		{`{"type":"session_meta","payload":{"id":"x"}}`, "mock"},
		{"{torn\n" + `{"type":"session_meta","payload":{"model_provider":"openai"}}`, "openai"},
	} {
		p := filepath.Join(dir, "r.jsonl")
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := recordedProvider(p); got != c.want {
			t.Errorf("recordedProvider(%s) = %q, want %q", c.data, got, c.want)
		}
	}
}

// TestCodexProbePublic: the probe resumes every rollout of other people's
// machines (../shared/corpus/codex-public, which record the provider
// "openai", and some of which the client compacts before its first turn),
// and two probes of one rollout give the same bytes.
func TestCodexProbePublic(t *testing.T) {
	p := codexProbe(t)
	files := testenv.CodexPublic(t)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			a, err := p.Probe(f)
			if err != nil {
				t.Errorf("%s: %.1500v", f, err)
				return
			}
			b, err := p.Probe(f)
			if err != nil {
				t.Errorf("%s: second probe: %.1500v", f, err)
				return
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s: two probes differ", f)
			}
			if !bytes.Contains(a, []byte(`"role": "user"`)) {
				t.Errorf("%s: the probe holds no user message", f)
			}
		})
	}
	wg.Wait()
}
