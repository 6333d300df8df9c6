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
	"testing"
)

// geminiTmp is the repository's copy of the Gemini corpus, laid out as
// ~/.gemini/tmp, relative to this package's directory.
const geminiTmp = "../../../testdata/gemini/tmp"

const (
	geminiTools  = geminiTmp + "/tools-thinking/chats/session-2026-11-27T04-42-9e111111.jsonl"
	geminiRewind = geminiTmp + "/rewind/chats/session-2026-11-27T04-45-9e555555.jsonl"
	geminiLoop   = geminiTmp + "/loop-detected/chats/session-2026-11-27T04-45-9effffff.jsonl"
)

// TestGeminiProbeConcurrent runs probes of one session at once, as the
// test suites do across packages: each is answered by its own stand-in,
// and they print the same bytes.
func TestGeminiProbeConcurrent(t *testing.T) {
	p := Gemini(t)
	out := probeConcurrently(t, 3, func(f string) ([]byte, error) { return p.Probe(f) }, geminiTools)
	turns, err := GeminiTurns(out)
	if err != nil || len(turns) == 0 {
		t.Fatalf("probe output is not a non-empty array of contents (%v):\n%s", err, out)
	}
	for _, want := range []string{"create hello.py please", "now read missing.txt and run a failing command",
		"`missing.txt` does not exist and the command failed with status 3.", `"functionCall"`, `"functionResponse"`,
		"/PROBE/PROJ"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("probe of %s lacks %q:\n%s", geminiTools, want, out)
		}
	}
	for _, not := range []string{ProbePrompt, os.TempDir() + string(filepath.Separator) + "gmprobe-", "probe reply"} {
		if bytes.Contains(out, []byte(not)) {
			t.Errorf("probe output holds %q:\n%s", not, out)
		}
	}
}

// TestGeminiProbeSeesChanges makes sure a comparison of probes can fail: a
// session whose prompt differs probes differently.
func TestGeminiProbeSeesChanges(t *testing.T) {
	p := Gemini(t)
	seesChange(t, func(f string) ([]byte, error) { return p.Probe(f) }, geminiTools, "create hello.py please", "create bye.py please")
}

// TestGeminiProbeRewind: after a /rewind, the client sends the live branch
// only; the rewound tail stays in the file and never reaches the model.
// A session that holds nothing resumable (a loop-detection rollback) is
// refused, and the probe passes on the client's reason.
func TestGeminiProbeRewind(t *testing.T) {
	p := Gemini(t)
	out, err := p.Probe(geminiRewind)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Branch reply one.", "two again", "Branch reply two (new).", "three again", "Branch reply three (new)."} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("probe of %s lacks %q:\n%s", geminiRewind, want, out)
		}
	}
	for _, not := range []string{"(old)", `"text": "two"`, `"text": "three"`} {
		if bytes.Contains(out, []byte(not)) {
			t.Errorf("probe of %s holds %q, of the rewound branch:\n%s", geminiRewind, not, out)
		}
	}
	if _, err := p.Probe(geminiLoop); err == nil {
		t.Errorf("probe of %s, which holds nothing resumable, succeeded", geminiLoop)
	} else {
		t.Logf("nothing resumable: %.300s", err)
	}
}

func TestGeminiSessionID(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, data, want string }{
		{"meta.jsonl", `{"sessionId":"first","projectHash":"h"}` + "\n" + `{"sessionId":"second","projectHash":"h"}` + "\n", "first"},
		{"set.jsonl", "{torn\n" + `{"sessionId":"first","projectHash":"h"}` + "\n" + `{"$set":{"sessionId":"resumed"}}` + "\n" + `{"$set":{"lastUpdated":"x"}}`, "resumed"},
		{"legacy.json", "{\n  \"sessionId\": \"legacy\",\n  \"messages\": []\n}\n", "legacy"},
		{"none.jsonl", `{"id":"m1","type":"user"}` + "\n", ""},
		{"empty.jsonl", "", ""},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := GeminiSessionID(p)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("GeminiSessionID(%s) = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestStripGeminiProbe(t *testing.T) {
	user := func(parts ...any) map[string]any { return map[string]any{"role": "user", "parts": parts} }
	text := func(s string) map[string]any { return map[string]any{"text": s} }
	model := map[string]any{"role": "model", "parts": []any{text("hi")}}
	for _, c := range []struct{ in, want []any }{
		{[]any{user(text("a")), model, user(text(ProbePrompt))}, []any{user(text("a")), model}},
		{[]any{user(text("a")), model, user(map[string]any{"functionResponse": map[string]any{}}, text(ProbePrompt))},
			[]any{user(text("a")), model, user(map[string]any{"functionResponse": map[string]any{}})}},
		{[]any{user(text("a")), model}, []any{user(text("a")), model}},
		{nil, nil},
	} {
		if got := stripGeminiProbe(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("stripGeminiProbe(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestFromSchema(t *testing.T) {
	var schema any
	json.Unmarshal([]byte(`{"type":"object","properties":{"next_speaker":{"type":"string","enum":["model","user"]},
		"reasoning":{"type":"string"},"n":{"type":["null","integer"],"minimum":2},"ok":{"type":"boolean"},"list":{"type":"array"}}}`), &schema)
	got := fromSchema(schema, "")
	want := map[string]any{"next_speaker": "user", "reasoning": "side reply", "n": float64(2), "ok": false, "list": []any{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fromSchema = %#v, want %#v", got, want)
	}
}

// TestGeminiStandIn checks the stand-in without the client: the first
// streamed request carrying tools is answered "probe reply", the next
// "done 1"; side queries get text or JSON of their schema.
func TestGeminiStandIn(t *testing.T) {
	api := &geminiStandIn{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	post := func(path, body string) []string {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var texts []string
		var got struct {
			Candidates []struct {
				Content struct{ Parts []struct{ Text string } }
			}
		}
		if ct := resp.Header.Get("Content-Type"); ct == "text/event-stream" {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				if err := json.Unmarshal([]byte(strings.TrimSuffix(data, "\r")), &got); err != nil {
					t.Fatalf("event %s: %v", data, err)
				}
				texts = append(texts, got.Candidates[0].Content.Parts[0].Text)
			}
		} else if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		} else {
			texts = append(texts, got.Candidates[0].Content.Parts[0].Text)
		}
		return texts
	}
	const stream = "/v1beta/models/m:streamGenerateContent?alt=sse"
	if got := post(stream, `{"contents":[],"tools":[]}`); !reflect.DeepEqual(got, []string{"side reply"}) {
		t.Errorf("side query answered %q", got)
	}
	if got := post(stream, `{"contents":[{"n":1}],"tools":[{"functionDeclarations":[]}]}`); !reflect.DeepEqual(got, []string{"probe reply"}) {
		t.Errorf("first conversation request answered %q", got)
	}
	if got := post(stream, `{"contents":[{"n":2}],"tools":[{"functionDeclarations":[]}]}`); !reflect.DeepEqual(got, []string{"done 1"}) {
		t.Errorf("second conversation request answered %q", got)
	}
	if got := post("/v1beta/models/m:generateContent", `{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"next_speaker":{"type":"string"}}}}}`); !reflect.DeepEqual(got, []string{`{"next_speaker":"user"}`}) {
		t.Errorf("JSON side query answered %q", got)
	}
	if got := api.firstConversation(); string(got["contents"]) != `[{"n":1}]` {
		t.Errorf("firstConversation contents = %s", got["contents"])
	}
	if s := api.summary(); !strings.Contains(s, "(tools), POST "+stream+" (tools)") {
		t.Errorf("summary %q", s)
	}
}
