package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/serve/web"
	"github.com/scribe-archive/scribe/session"
)

// The benchmarks read a store made for them once per run: 10,000 short
// sessions, listed from a sessions.db, and one session of about 60 MB.
const (
	benchSessions = 10_000
	bigID         = "b1600000-0000-4000-8000-000000000000"
)

var (
	benchOnce  sync.Once
	benchDir   string
	benchStore web.Store
	benchErr   error
	bigPages   int
	bigRounds  int
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchSetup(b *testing.B) web.Store {
	b.Helper()
	benchOnce.Do(func() { benchErr = makeBenchStore() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore
}

func makeBenchStore() error {
	start := time.Now()
	dir, err := os.MkdirTemp("", "scribe-web-bench-")
	if err != nil {
		return err
	}
	benchDir = dir
	sessions := filepath.Join(dir, "sessions")
	agentDir := filepath.Join(sessions, "claude")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return err
	}
	db, err := index.Open(filepath.Join(sessions, "sessions.db"))
	if err != nil {
		return err
	}
	ctx := context.Background()
	docs := map[string]string{}
	for i := range benchSessions {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05.000Z")
		d := benchDoc(id, started, 2)
		md := filepath.Join(agentDir, id+".md")
		if err := os.WriteFile(md, document.Render(d), 0o644); err != nil {
			return err
		}
		docs[id] = md
		if err := db.Put(ctx, index.Session{SessionID: id, AgentID: "claude", Title: fmt.Sprintf("question number %d", i),
			Project: fmt.Sprintf("/home/dev/src/project-%02d", i%40), Started: started, Ended: started, Doc: "claude/" + id + ".md"}, nil); err != nil {
			return err
		}
	}
	// The long session: rounds of a prompt, thinking, a reply and a tool
	// call with a long result, about 30 KB a round.
	bigRounds = 2700
	big := benchDoc(bigID, "2025-06-01T00:00:00.000Z", bigRounds)
	md := filepath.Join(agentDir, bigID+".md")
	data := document.Render(big)
	if err := os.WriteFile(md, data, 0o644); err != nil {
		return err
	}
	docs[bigID] = md
	bigPages = (len(big.Items) + 199) / 200
	fmt.Fprintf(os.Stderr, "bench store: %d sessions and one of %.1f MB (%d messages) in %s\n",
		benchSessions, float64(len(data))/1e6, len(big.Items), time.Since(start).Round(time.Millisecond))
	store, err := inscribe.OpenStore(dir)
	if err != nil {
		return err
	}
	benchStore = web.Store{Docs: store, Index: db}
	return nil
}

// benchDoc is a session of n rounds.
func benchDoc(id, started string, rounds int) *session.Document {
	d := &session.Document{Meta: session.Meta{Format: session.FormatVersion, SessionID: id, AgentID: "claude",
		Model: session.Ptr("claude-opus-5-5"), Started: session.Ptr(started), Ended: session.Ptr(started),
		Source: "bench/" + id + ".jsonl", Project: session.Ptr("/home/dev/src/bench")}}
	d.Summary = document.Placeholder("benchmark question")
	result := strings.Repeat("line of tool output with `code` and <angle> & ampersands 0123456789\n", 300)
	for r := 1; r <= rounds; r++ {
		u := fmt.Sprintf("u-%d", r)
		a := fmt.Sprintf("a-%d", r)
		d.Items = append(d.Items,
			session.Item{Round: r, Time: started, Role: "user", IDs: []string{u},
				Blocks: []session.Block{{Kind: session.KindText, Text: fmt.Sprintf("Question %d: please look at **this** and `that`, then [explain](https://example.com/%d).", r, r)}}},
			session.Item{Time: started, Role: "assistant", IDs: []string{a},
				Blocks: []session.Block{
					{Kind: session.KindThinking, Text: strings.Repeat("Let me think about this carefully. ", 40)},
					{Kind: session.KindText, Text: "Here is what I found:\n\n- one\n- two\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"},
					{Kind: session.KindToolUse, Label: "Bash", ID: "toolu_" + a, Input: `{"command":"cat file.txt","description":"Read the file"}`,
						Result: &session.Result{Entry: "r-" + a, Time: started, Parts: []session.Part{{Kind: session.KindText, Text: result}}}},
				}})
	}
	d.Meta.Messages = len(d.Items)
	return d
}

func benchGet(b *testing.B, h http.Handler, path string) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 200 && w.Code != 302 {
			b.Fatalf("%s: %d", path, w.Code)
		}
		b.SetBytes(int64(w.Body.Len()))
	}
}

// BenchmarkList: the first page of the list of 10,000 sessions.
func BenchmarkList(b *testing.B) {
	benchGet(b, web.New(benchSetup(b), web.Options{}), "/")
}

// BenchmarkListFiltered: a late page of one project's sessions.
func BenchmarkListFiltered(b *testing.B) {
	benchGet(b, web.New(benchSetup(b), web.Options{}), "/?project=project-07&page=4")
}

// BenchmarkListLastPage: the last page of the 10,000.
func BenchmarkListLastPage(b *testing.B) {
	benchGet(b, web.New(benchSetup(b), web.Options{}), fmt.Sprintf("/?page=%d", benchSessions/50))
}

// BenchmarkBigFirstPage: opening the 60 MB session.
func BenchmarkBigFirstPage(b *testing.B) {
	benchGet(b, web.New(benchSetup(b), web.Options{}), "/s/"+bigID+"/")
}

// BenchmarkBigLastPage: its last page, which reads the whole document.
func BenchmarkBigLastPage(b *testing.B) {
	s := benchSetup(b)
	benchGet(b, web.New(s, web.Options{}), fmt.Sprintf("/s/%s/page-%d.html", bigID, bigPages))
}

// BenchmarkBigLastRound: the redirect to its last round.
func BenchmarkBigLastRound(b *testing.B) {
	s := benchSetup(b)
	benchGet(b, web.New(s, web.Options{}), fmt.Sprintf("/s/%s/round/%d", bigID, bigRounds))
}
