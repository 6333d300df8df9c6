package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// fakeStore is a store in memory: its documents, and the rounds a search
// matches, newest first, each with a score.
type fakeStore struct {
	docs    map[string]*fakeDoc
	matches []scored // newest first
	// searches counts the searches run.
	searches int
	writes   []string
	// fail, when set, is the error every read of a document gives;
	// explode panics instead.
	fail    error
	explode bool
}

type fakeDoc struct {
	doc     Doc
	meta    session.Meta
	summary string
	table   []Round
	text    map[int][]byte // each round's text
	view    []byte         // the context view
}

type scored struct {
	hit   Hit
	score int
}

func newFake() *fakeStore { return &fakeStore{docs: map[string]*fakeDoc{}} }

// add adds a document of n rounds, round r's text being text(r).
func (f *fakeStore) add(key string, n int, text func(r int) []byte) *fakeDoc {
	started := "2026-11-22T09:26:16Z"
	d := &fakeDoc{doc: Doc{Key: key, Path: "/store/sessions/claude/" + key + ".md", Rounds: n},
		meta:    session.Meta{SessionID: key, AgentID: "claude", Started: &started, Messages: 2 * n},
		summary: "_Summary pending. First prompt:_ hello", text: map[int][]byte{}}
	var view bytes.Buffer
	for r := 1; r <= n; r++ {
		d.text[r] = text(r)
		d.table = append(d.table, Round{Round: r, Started: started, User: fmt.Sprintf("prompt %d", r), Agent: fmt.Sprintf("reply %d", r)})
		fmt.Fprintf(&view, "\n## Round %d\n%s", r, d.text[r])
	}
	d.view = view.Bytes()
	f.docs[key] = d
	return d
}

func (f *fakeStore) check() error {
	if f.explode {
		panic("the store exploded")
	}
	return f.fail
}

func (f *fakeStore) Resolve(ref string) (Doc, error) {
	if d, ok := f.docs[ref]; ok {
		return d.doc, nil
	}
	return Doc{}, fmt.Errorf("no session %s in the store: search or list_sessions shows the sessions it has", ref)
}

func (f *fakeStore) Sessions(ctx context.Context, sf SessionFilter) ([]Session, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	var out []Session
	for _, d := range f.docs {
		if sf.Agent == "" || sf.Agent == d.meta.AgentID {
			out = append(out, Session{Key: d.doc.Key, Agent: d.meta.AgentID, Title: d.doc.Key + " title", Started: *d.meta.Started, Messages: d.meta.Messages})
		}
	}
	slices.SortFunc(out, func(a, b Session) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Search ranks the newest max(256, Limit) matches by score, as the
// store's index does.
func (f *fakeStore) Search(ctx context.Context, q Query) ([]Hit, error) {
	f.searches++
	if err := f.check(); err != nil {
		return nil, err
	}
	window := f.matches[:min(len(f.matches), max(firstWindow, q.Limit))]
	ranked := slices.Clone(window)
	slices.SortStableFunc(ranked, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	var out []Hit
	for _, s := range ranked[:min(len(ranked), q.Limit)] {
		out = append(out, s.hit)
	}
	return out, nil
}

func (f *fakeStore) Rounds(d Doc, spec string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(spec, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if ok {
			b, err2 = strconv.Atoi(hi)
		}
		if part == "all" {
			a, b, err1 = 1, d.Rounds, nil
		}
		if err1 != nil || err2 != nil || a < 1 || b > d.Rounds || a > b {
			return nil, fmt.Errorf("rounds %q: the session has rounds 1-%d", part, d.Rounds)
		}
		for r := a; r <= b; r++ {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeStore) Head(d Doc) (Head, error) {
	if err := f.check(); err != nil {
		return Head{}, err
	}
	fd := f.docs[d.Key]
	return Head{Meta: &fd.meta, Title: document.DisplayTitle(&fd.meta, fd.summary), Summary: fd.summary}, nil
}

func (f *fakeStore) Table(ctx context.Context, d Doc) ([]Round, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return f.docs[d.Key].table, nil
}

func (f *fakeStore) Read(d Doc, rounds []int, detail document.Detail, yield func(int, []byte) bool) error {
	if err := f.check(); err != nil {
		return err
	}
	for _, r := range rounds {
		if !yield(r, f.docs[d.Key].text[r]) {
			return nil
		}
	}
	return nil
}

func (f *fakeStore) Context(d Doc, spec ContextSpec) ([]byte, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return f.docs[d.Key].view, nil
}

func (f *fakeStore) SetSummary(d Doc, summary string) (bool, error) {
	f.writes = append(f.writes, "summary "+d.Key)
	f.docs[d.Key].summary = summary
	return true, nil
}

func (f *fakeStore) SetTitle(d Doc, title string) (bool, error) {
	f.writes = append(f.writes, "title "+d.Key)
	f.docs[d.Key].meta.Title = &title
	return true, nil
}

func (f *fakeStore) Tag(d Doc, rounds []int, engagement string) (int, error) {
	f.writes = append(f.writes, fmt.Sprintf("tag %s %v %s", d.Key, rounds, engagement))
	return len(rounds), nil
}

// client connects a client to a server over store through the SDK's
// in-memory transport.
func client(t *testing.T, store Store, opts Options) *sdk.ClientSession {
	t.Helper()
	opts.Logf = t.Logf
	srv, err := New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool and returns its text and whether it is an error.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s %v: %d contents, want 1", tool, args, len(res.Content))
	}
	text := res.Content[0].(*sdk.TextContent).Text
	budget := DefaultBudget
	if b, ok := args["max_bytes"].(int); ok && !res.IsError {
		budget = b
	}
	if len(text) > budget {
		t.Errorf("%s %v: %d bytes, over the budget of %d", tool, args, len(text), budget)
	}
	return text, res.IsError
}

// mustCall calls a tool that must succeed.
func mustCall(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s %v: tool error: %s", tool, args, text)
	}
	return text
}

// wantError calls a tool that must fail with a message matching want.
func wantError(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, want string) {
	t.Helper()
	text, isErr := call(t, cs, tool, args)
	if !isErr {
		t.Errorf("%s %v: no error, want one matching %q; got %.200s", tool, args, want, text)
		return
	}
	if !regexp.MustCompile(want).MatchString(text) {
		t.Errorf("%s %v: error %q, want one matching %q", tool, args, text, want)
	}
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestToolsOffered(t *testing.T) {
	read := []string{"context", "get_session", "list_sessions", "read_rounds", "search"}
	if got := toolNames(t, client(t, newFake(), Options{})); !slices.Equal(got, read) {
		t.Errorf("without Write: tools %v, want %v", got, read)
	}
	all := append(slices.Clone(read), "set_summary", "set_title", "tag_rounds")
	slices.Sort(all)
	if got := toolNames(t, client(t, newFake(), Options{Write: true})); !slices.Equal(got, all) {
		t.Errorf("with Write: tools %v, want %v", got, all)
	}
	if _, err := New(readOnly{newFake()}, Options{Write: true}); err == nil {
		t.Error("New with Write over a store that is no Writer: no error")
	}
}

// readOnly hides a store's Writer.
type readOnly struct{ Store }

// hits makes n matches, newest first, each in its own round, with scores
// that order them otherwise.
func (f *fakeStore) hits(n int, snippet string) {
	rng := rand.New(rand.NewPCG(1, 2))
	f.matches = nil
	for i := 0; i < n; i++ {
		f.matches = append(f.matches, scored{Hit{Key: fmt.Sprintf("s%03d", i/10), Agent: "claude", Round: i%10 + 1, Started: "2026-11-22T09:26:16Z",
			Title: "a title", Snippet: snippet}, rng.IntN(1000)})
	}
}

type hitsPage struct {
	Hits []hitJSON `json:"hits"`
	Next string    `json:"next_cursor"`
	Note string    `json:"note"`
}

// TestSearchPagesReachEveryHit: paging a search, by count and by bytes,
// returns every round that matches once, whatever the number of matches
// (within the first window, at its edge, past it by far), and never more
// than the budget.
func TestSearchPagesReachEveryHit(t *testing.T) {
	for _, c := range []struct {
		matches, limit, budget int
		snippet                string
	}{
		{0, 10, 0, "x"},
		{7, 10, 0, "x"},
		{256, 50, 0, "x"},
		{257, 50, 0, "x"},
		{1000, 50, 0, "x"},
		{1000, 50, MinBudget, strings.Repeat("«word» and more text ", 40)},
		{3000, 50, 0, "y"},
	} {
		t.Run(fmt.Sprintf("%d matches, limit %d, budget %d", c.matches, c.limit, c.budget), func(t *testing.T) {
			f := newFake()
			f.hits(c.matches, c.snippet)
			cs := client(t, f, Options{})
			seen := map[hitKey]int{}
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 2*c.matches+2 {
					t.Fatal("paging does not end")
				}
				args := map[string]any{"query": "word", "limit": c.limit}
				if c.budget > 0 {
					args["max_bytes"] = c.budget
				}
				if cursor != "" {
					args["cursor"] = cursor
				}
				var p hitsPage
				if err := json.Unmarshal([]byte(mustCall(t, cs, "search", args)), &p); err != nil {
					t.Fatalf("page %d is not JSON: %v", pages, err)
				}
				if len(p.Hits) > c.limit {
					t.Fatalf("page %d: %d hits, over the limit %d", pages, len(p.Hits), c.limit)
				}
				for _, h := range p.Hits {
					seen[hitKey{h.Session, h.Round}]++
				}
				if p.Next == "" {
					break
				}
				if len(p.Hits) == 0 {
					t.Fatalf("page %d: no hits, and a cursor", pages)
				}
				cursor = p.Next
			}
			if len(seen) != c.matches {
				t.Errorf("paging found %d distinct hits, want %d", len(seen), c.matches)
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("hit %v came %d times", k, n)
				}
			}
		})
	}
}

// TestSearchFirstPage: the first page is scribe search's ranking, and the
// snippet and fields are clipped.
func TestSearchFirstPage(t *testing.T) {
	f := newFake()
	f.hits(40, strings.Repeat("é", 1000))
	cs := client(t, f, Options{})
	var p hitsPage
	if err := json.Unmarshal([]byte(mustCall(t, cs, "search", map[string]any{"query": "word"})), &p); err != nil {
		t.Fatal(err)
	}
	want, _ := f.Search(context.Background(), Query{Limit: 10})
	if len(p.Hits) != 10 {
		t.Fatalf("%d hits, want 10 by default", len(p.Hits))
	}
	for i, h := range p.Hits {
		if h.Session != want[i].Key || h.Round != want[i].Round {
			t.Errorf("hit %d: %s round %d, want %s round %d", i, h.Session, h.Round, want[i].Key, want[i].Round)
		}
		if len(h.Snippet) > snippetBytes {
			t.Errorf("hit %d: a snippet of %d bytes", i, len(h.Snippet))
		}
	}
	if p.Next == "" || !strings.Contains(p.Note, "next_cursor") {
		t.Errorf("a first page of 10 of 40 hits: cursor %q, note %q", p.Next, p.Note)
	}
}

func TestSearchErrors(t *testing.T) {
	f := newFake()
	f.hits(30, "x")
	cs := client(t, f, Options{})
	wantError(t, cs, "search", map[string]any{"query": "  "}, "query is empty")
	wantError(t, cs, "search", map[string]any{}, `argument "query" is required`)
	wantError(t, cs, "search", map[string]any{"query": "x", "limit": 0.5}, `argument "limit"`)
	wantError(t, cs, "search", map[string]any{"query": "x", "limit": 51}, "give 1 to 50")
	wantError(t, cs, "search", map[string]any{"query": "x", "qurey": "y"}, `no argument "qurey": the arguments are .*query`)
	wantError(t, cs, "search", map[string]any{"query": "x", "max_bytes": 10}, "max_bytes 10: give 8000 to 100000")
	wantError(t, cs, "search", map[string]any{"query": "x", "cursor": "nonsense"}, "not one search returned")
	var p hitsPage
	json.Unmarshal([]byte(mustCall(t, cs, "search", map[string]any{"query": "x"})), &p)
	wantError(t, cs, "search", map[string]any{"query": "other words", "cursor": p.Next}, "given for other arguments")
	f.fail = errors.New("sessions.db: database disk image is malformed")
	wantError(t, cs, "search", map[string]any{"query": "x"}, "malformed")
}

// TestReadRoundsHugeRound: a round of 4 MiB is read a budget at a time,
// each page ending at a line where it can, and the pages give the round
// back whole; the round after it follows.
func TestReadRoundsHugeRound(t *testing.T) {
	var huge bytes.Buffer
	for i := 0; huge.Len() < 4<<20; i++ {
		fmt.Fprintf(&huge, "line %d: %s\n", i, strings.Repeat("ü", i%300))
	}
	huge.WriteString("the end, no newline")
	f := newFake()
	f.add("big", 3, func(r int) []byte {
		if r == 2 {
			return huge.Bytes()
		}
		return []byte(fmt.Sprintf("round %d text\n", r))
	})
	cs := client(t, f, Options{})
	var got bytes.Buffer
	cursor := ""
	pages := 0
	sawRound3 := false
	for {
		pages++
		args := map[string]any{"session": "big", "rounds": "2-3", "max_bytes": 50000}
		if cursor != "" {
			args["cursor"] = cursor
		}
		text := mustCall(t, cs, "read_rounds", args)
		body, more, _ := strings.Cut(text, "\n[more: ")
		if pages == 1 && !strings.HasPrefix(body, "# Session big: rounds 2-3 of 3 (detail conversation)\n\n## Round 2\n") {
			t.Fatalf("first page starts %q", body[:min(len(body), 100)])
		}
		_, round2, _ := strings.Cut(body, "\n## Round 2")
		round2, round3, has3 := strings.Cut(round2, "\n## Round 3\n")
		_, round2, _ = strings.Cut(round2, "\n") // the heading's end
		// A page cut mid-line ends its text with a line end of its own:
		// the more line says where the round goes on.
		if m := regexp.MustCompile(`goes on at byte (\d+)`).FindStringSubmatch(more); m != nil {
			next, _ := strconv.Atoi(m[1])
			if extra := round2[next-got.Len():]; extra != "" && extra != "\n" {
				t.Fatalf("page %d: %q after the byte where the round goes on", pages, extra)
			}
			round2 = round2[:next-got.Len()]
		}
		got.WriteString(round2)
		if has3 {
			sawRound3 = true
			if round3 != "round 3 text\n" {
				t.Errorf("round 3 reads %q", round3)
			}
		}
		if more == "" {
			break
		}
		m := regexp.MustCompile(`cursor "([^"]+)"\]\n$`).FindStringSubmatch(more)
		if m == nil {
			t.Fatalf("page %d ends %q: no cursor", pages, more)
		}
		cursor = m[1]
		if pages > 200 {
			t.Fatal("paging does not end")
		}
	}
	want := huge.String()
	if g := got.String(); g != want && g != want+"\n" {
		t.Errorf("the pages give back %d bytes of round 2, want its %d", got.Len(), len(want))
	}
	if !sawRound3 {
		t.Error("round 3 was never read")
	}
	if pages < (4<<20)/50000 {
		t.Errorf("%d pages for 4 MiB at 50000 bytes a page", pages)
	}
}

func TestReadRoundsErrors(t *testing.T) {
	f := newFake()
	f.add("s1", 5, func(r int) []byte { return []byte("text\n") })
	cs := client(t, f, Options{})
	wantError(t, cs, "read_rounds", map[string]any{"session": "nope", "rounds": "1"}, "no session nope")
	wantError(t, cs, "read_rounds", map[string]any{"session": "s1", "rounds": "9"}, `session s1: rounds "9": the session has rounds 1-5`)
	wantError(t, cs, "read_rounds", map[string]any{"session": "s1", "rounds": "2", "detail": "everything"}, `detail "everything" is not one of full, conversation, prompts`)
	wantError(t, cs, "read_rounds", map[string]any{"session": "s1"}, `argument "rounds" is required`)
	wantError(t, cs, "read_rounds", map[string]any{"session": "s1", "rounds": true}, `argument "rounds"`)
	if text := mustCall(t, cs, "read_rounds", map[string]any{"session": "s1", "rounds": 3}); !strings.Contains(text, "## Round 3\ntext\n") {
		t.Errorf("rounds given as a number: %q", text)
	}
	f.fail = errors.New("round 3: rounds/003.json is missing; scribe repair mends it")
	wantError(t, cs, "read_rounds", map[string]any{"session": "s1", "rounds": "3"}, "003.json is missing")
	wantError(t, cs, "get_session", map[string]any{"session": "s1"}, "003.json is missing")
	wantError(t, cs, "context", map[string]any{"session": "s1"}, "003.json is missing")
	wantError(t, cs, "list_sessions", map[string]any{}, "003.json is missing")
}

// TestPanicIsAToolError: a panic in the store is a tool error, and the
// server answers the next call.
func TestPanicIsAToolError(t *testing.T) {
	f := newFake()
	f.add("s1", 2, func(r int) []byte { return []byte("text\n") })
	cs := client(t, f, Options{})
	f.explode = true
	wantError(t, cs, "get_session", map[string]any{"session": "s1"}, "internal error .*the store exploded")
	f.explode = false
	mustCall(t, cs, "get_session", map[string]any{"session": "s1"})
}

// TestContextPages: a view longer than the budget is read in pages that
// give it back whole.
func TestContextPages(t *testing.T) {
	f := newFake()
	f.add("s1", 400, func(r int) []byte {
		return []byte(strings.Repeat(fmt.Sprintf("round %d says something. ", r), 20) + "\n")
	})
	cs := client(t, f, Options{})
	var got strings.Builder
	cursor := ""
	for pages := 0; ; pages++ {
		args := map[string]any{"session": "s1"}
		if cursor != "" {
			args["cursor"] = cursor
		}
		text := mustCall(t, cs, "context", args)
		if pages > 0 {
			var ok bool
			if _, text, ok = strings.Cut(text, "]\n\n"); !ok {
				t.Fatalf("page %d has no header", pages)
			}
		}
		body, more, _ := strings.Cut(text, "\n[more: ")
		got.WriteString(body)
		if more == "" {
			break
		}
		cursor = regexp.MustCompile(`cursor "([^"]+)"\]`).FindStringSubmatch(more)[1]
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	if got.String() != string(f.docs["s1"].view) {
		t.Errorf("the pages give back %d bytes, want the view's %d", got.Len(), len(f.docs["s1"].view))
	}
}

// TestGetSessionTable: the head, then the table of rounds in pages.
func TestGetSessionTable(t *testing.T) {
	f := newFake()
	d := f.add("s1", 500, func(r int) []byte { return nil })
	d.summary = strings.Repeat("A long summary. ", 1000)
	for i := range d.table {
		d.table[i].User = strings.Repeat("p", 1000)
	}
	cs := client(t, f, Options{})
	var rounds []int
	cursor := ""
	for pages := 0; ; pages++ {
		args := map[string]any{"session": "s1", "max_bytes": MinBudget}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var p struct {
			headJSON
			Table []roundJSON `json:"table"`
			Next  string      `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(mustCall(t, cs, "get_session", args)), &p); err != nil {
			t.Fatal(err)
		}
		if p.Session != "s1" || p.Rounds != 500 || !p.SummaryClipped || len(p.Summary) > summaryBytes {
			t.Errorf("head: session %q, rounds %d, summary of %d bytes (clipped %v)", p.Session, p.Rounds, len(p.Summary), p.SummaryClipped)
		}
		for _, r := range p.Table {
			rounds = append(rounds, r.Round)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
		if pages > 500 {
			t.Fatal("paging does not end")
		}
	}
	for i, r := range rounds {
		if r != i+1 {
			t.Fatalf("the pages give rounds %v..., want 1 to 500 in order", rounds[:min(len(rounds), i+3)])
		}
	}
	if len(rounds) != 500 {
		t.Errorf("the pages give %d rounds, want 500", len(rounds))
	}
}

func TestListSessions(t *testing.T) {
	f := newFake()
	for i := 0; i < 45; i++ {
		f.add(fmt.Sprintf("s%02d", i), 1, func(r int) []byte { return nil })
	}
	cs := client(t, f, Options{})
	var keys []string
	cursor := ""
	for {
		args := map[string]any{"limit": 20}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var p struct {
			Total    int           `json:"total"`
			Sessions []sessionJSON `json:"sessions"`
			Next     string        `json:"next_cursor"`
		}
		json.Unmarshal([]byte(mustCall(t, cs, "list_sessions", args)), &p)
		if p.Total != 45 {
			t.Errorf("total %d, want 45", p.Total)
		}
		for _, s := range p.Sessions {
			keys = append(keys, s.Session)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if len(keys) != 45 || keys[0] != "s00" || keys[44] != "s44" {
		t.Errorf("the pages list %d sessions: %v", len(keys), keys)
	}
}

func TestWriteTools(t *testing.T) {
	f := newFake()
	f.add("s1", 4, func(r int) []byte { return nil })
	cs := client(t, f, Options{Write: true})
	out := mustCall(t, cs, "set_summary", map[string]any{"session": "s1", "summary": "Fixed the parser."})
	if !strings.Contains(out, `"title":"Fixed the parser."`) {
		t.Errorf("set_summary answers %s", out)
	}
	mustCall(t, cs, "set_title", map[string]any{"session": "s1", "title": "Parser"})
	mustCall(t, cs, "tag_rounds", map[string]any{"session": "s1", "rounds": "2-3", "engagement": "parser"})
	wantError(t, cs, "tag_rounds", map[string]any{"session": "s1", "rounds": "7", "engagement": "x"}, "rounds 1-4")
	wantError(t, cs, "set_summary", map[string]any{"session": "zz", "summary": "x"}, "no session zz")
	want := []string{"summary s1", "title s1", "tag s1 [2 3] parser"}
	if !slices.Equal(f.writes, want) {
		t.Errorf("writes %q, want %q", f.writes, want)
	}
	ro := client(t, f, Options{})
	res, err := ro.CallTool(context.Background(), &sdk.CallToolParams{Name: "set_summary", Arguments: map[string]any{"session": "s1", "summary": "x"}})
	if err == nil && !res.IsError {
		t.Error("set_summary without Write: no error")
	}
}

// TestResources: the templates, a session and a round, and a URI that
// names none.
func TestResources(t *testing.T) {
	f := newFake()
	f.add("s1", 2, func(r int) []byte { return []byte(fmt.Sprintf("round %d text\n", r)) })
	cs := client(t, f, Options{})
	ctx := context.Background()
	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if want := []string{"scribe://session/{session}", "scribe://session/{session}/round/{round}"}; !slices.Equal(templates, want) {
		t.Errorf("templates %v, want %v", templates, want)
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "scribe://session/s1/round/2"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "## Round 2\nround 2 text") {
		t.Errorf("round resource: %v, %v", res, err)
	}
	res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "scribe://session/s1"})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"session":"s1"`) {
		t.Errorf("session resource: %v, %v", res, err)
	}
	for _, uri := range []string{"scribe://session/nope", "scribe://session/s1/round/x", "scribe://session/nope/round/1"} {
		if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: %v, want resource not found", uri, err)
		}
	}
}

func TestCutAt(t *testing.T) {
	for _, c := range []struct {
		text string
		room int
		want int
	}{
		{"abc", 10, 3},
		{"abcdef", 3, 3},
		{"ab\ncdef", 4, 3},
		{"a\nbcdefgh", 6, 6}, // the line's end is too early
		{"üü", 3, 2},
		{"ü", 1, 0},
		{"abc", 0, 0},
	} {
		if got := cutAt([]byte(c.text), c.room); got != c.want {
			t.Errorf("cutAt(%q, %d) = %d, want %d", c.text, c.room, got, c.want)
		}
	}
}
