package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/serve/web"
)

// This file wires the web server to a store as cmd/scribe's serve.go
// does, for the tests.

// The hostile session: every way a message could try to run script in a
// reader's browser. Executed, any of them sets window.__pwned or the
// document's title.
const (
	hostileID      = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	hostilePrompt  = `Hello <script>window.__pwned=1;document.title='pwned'</script> and <img src=x onerror="window.__pwned=2;document.title='pwned'"> and [click me](javascript:window.__pwned=3) and <a href="javascript:window.__pwned=4">raw link</a> and <javascript:window.__pwned=9> <style>body{display:none}</style>`
	hostileReply   = "See [this](JaVaScRiPt:document.title='pwned') or <iframe src=\"javascript:window.__pwned=5\"></iframe>\n\n<details open><summary>fake</summary><script>window.__pwned=6</script></details>\n\n![tracker](https://example.com/pixel.png)"
	hostileCommand = `echo '</pre><script>window.__pwned=7</script>'`
	hostileResult  = `<script>window.__pwned=8</script><svg onload="window.__pwned=10">`
)

// writeHostile writes the hostile session's transcript into a projects
// folder.
func writeHostile(t testing.TB, projects string) {
	t.Helper()
	dir := filepath.Join(projects, "-home-dev-src-pwn")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	common := func(m map[string]any) map[string]any {
		m["isSidechain"] = false
		m["userType"] = "external"
		m["cwd"] = "/home/dev/src/pwn"
		m["sessionId"] = hostileID
		m["version"] = "2.1.328"
		m["gitBranch"] = "HEAD"
		return m
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	lines := []map[string]any{
		common(map[string]any{"parentUuid": nil, "type": "user", "uuid": "u-1", "timestamp": "2026-11-23T10:00:00.000Z",
			"message": map[string]any{"role": "user", "content": hostilePrompt}}),
		common(map[string]any{"parentUuid": "u-1", "type": "assistant", "uuid": "a-1", "timestamp": "2026-11-23T10:00:01.000Z",
			"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
				"content": []any{map[string]any{"type": "text", "text": hostileReply}}, "stop_reason": "tool_use", "usage": usage}}),
		common(map[string]any{"parentUuid": "a-1", "type": "assistant", "uuid": "a-2", "timestamp": "2026-11-23T10:00:02.000Z",
			"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
				"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash",
					"input": map[string]any{"command": hostileCommand, "description": "<b>bold</b> \"quoted\""}}}, "stop_reason": "tool_use", "usage": usage}}),
		common(map[string]any{"parentUuid": "a-2", "type": "user", "uuid": "u-2", "timestamp": "2026-11-23T10:00:03.000Z",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": "toolu_1", "type": "tool_result",
				"content": hostileResult, "is_error": false}}},
			"toolUseResult": map[string]any{"stdout": hostileResult, "stderr": ""}}),
		common(map[string]any{"parentUuid": "u-2", "type": "assistant", "uuid": "a-3", "timestamp": "2026-11-23T10:00:04.000Z",
			"message": map[string]any{"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
				"content": []any{map[string]any{"type": "text", "text": "done <b onmouseover=\"window.__pwned=11\">bold</b>\n\n![tracker](https://example.com/pixel.png)"}}, "stop_reason": "end_turn", "usage": usage}}),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one line each, and no HTML escapes, as Claude Code writes them
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, hostileID+".jsonl"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sampleStore builds a store of the bundled samples of both clients and
// the hostile session.
func sampleStore(t testing.TB) (*inscribe.Store, string) {
	t.Helper()
	s, projects := storetest.Samples(t)
	writeHostile(t, projects)
	storetest.Inscribe(t, s, filepath.Join(projects, "-home-dev-src-pwn"), inscribe.Options{})
	rollouts, err := codexAdapter.Discover(filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rollouts {
		for _, res := range s.Update(r, inscribe.Options{}) {
			if res.Err != nil {
				t.Fatal(res.Err)
			}
		}
	}
	if err := storetest.Views(s).RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	return s, projects
}

var codexAdapter = codex.New()

// wire gives the web server its view of a store, as serve.go does.
func wire(t testing.TB, st *inscribe.Store) web.Store {
	t.Helper()
	s := storetest.Views(st)
	if _, err := s.EnsureIndex(); err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(s.IndexPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); s.CloseIndex() })
	return web.Store{
		Docs:  s.Store,
		Index: db,
		Search: func(ctx context.Context, q web.SearchQuery) ([]web.Hit, error) {
			iq := index.Query{Text: q.Text, Raw: q.Raw, Agent: q.Agent, Project: q.Project, Engagement: q.Engagement, Limit: q.Limit}
			for _, w := range []struct {
				v  string
				to *time.Time
			}{{q.Since, &iq.Since}, {q.Until, &iq.Until}} {
				if w.v == "" {
					continue
				}
				t, err := time.Parse("2006-01-02", w.v)
				if err != nil {
					return nil, &web.QueryError{Msg: err.Error()}
				}
				*w.to = t
			}
			hits, err := s.Search(iq)
			var qe *index.QueryError
			var fe *index.FilterError
			if errors.As(err, &qe) || errors.As(err, &fe) {
				return nil, &web.QueryError{Msg: fmt.Sprintf("%q: %v", q.Text, err)}
			}
			out := make([]web.Hit, len(hits))
			for i, h := range hits {
				out[i] = web.Hit{Key: h.SessionID, Doc: h.Doc, Agent: h.AgentID, Title: h.Title, Project: h.Project, Round: h.Round, Started: h.Started, Snippet: h.Snippet}
			}
			return out, err
		},
		Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
			m, err := d.Meta()
			if err != nil {
				return nil, err
			}
			if m.SourceFormat == codex.Format {
				return exportcodex.Transcript(d, codexAdapter, w)
			}
			return exportclaude.Transcript(d, storetest.Claude, w)
		},
	}
}

// serve starts a server of the store on a free loopback port.
func serve(t testing.TB, ws web.Store, opts web.Options) *httptest.Server {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	srv := httptest.NewServer(web.New(ws, opts))
	t.Cleanup(srv.Close)
	return srv
}

// appendEleventh appends a round to the sample session of ten
// ("an eleventh question"), as the hook does.
func appendEleventh(t *testing.T, s *inscribe.Store, projects string) {
	t.Helper()
	ts, err := storetest.Claude.Discover(filepath.Join(projects, "-home-dev-src-multiturn"))
	if err != nil || len(ts) != 1 {
		t.Fatal(ts, err)
	}
	f, err := os.OpenFile(ts[0].Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"an eleventh question"},"uuid":"11111111-aaaa-4aaa-8aaa-000000000011","timestamp":"2026-11-22T09:30:00.000Z","userType":"external","cwd":"/home/dev/src/multiturn","sessionId":"` + multiSession + `","version":"2.1.328","gitBranch":"HEAD"}` + "\n")
	f.Close()
	for _, r := range s.Update(ts[0], inscribe.Options{}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}
