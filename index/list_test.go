package index

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

func TestList(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, s := range []Session{
		{SessionID: "a", AgentID: "claude", Project: "/src/web", Started: "2026-01-01T00:00:00Z", Doc: "claude/a.md"},
		{SessionID: "b", AgentID: "codex", Project: "/src/web-api", Started: "2026-01-03T00:00:00Z", Doc: "codex/b.md"},
		{SessionID: "c", AgentID: "claude", Project: "/src/cli", Started: "2026-01-02T00:00:00Z", Doc: "claude/c.md"},
		{SessionID: "c/agent-x", AgentID: "claude", Project: "/src/cli", Started: "2026-01-04T00:00:00Z", Doc: "claude/c/agent-x.md"},
	} {
		if err := db.Put(ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(q ListQuery) ([]string, int) {
		t.Helper()
		ss, n, err := db.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ss {
			out = append(out, s.SessionID)
		}
		return out, n
	}
	for _, tc := range []struct {
		q     ListQuery
		want  []string
		total int
	}{
		{ListQuery{}, []string{"b", "c", "a"}, 3}, // newest first, no sidechain
		{ListQuery{Agent: "claude"}, []string{"c", "a"}, 2},
		{ListQuery{Project: "web"}, []string{"b", "a"}, 2},
		{ListQuery{Agent: "claude", Project: "web"}, []string{"a"}, 1},
		{ListQuery{Offset: 1, Limit: 1}, []string{"c"}, 3},
		{ListQuery{Offset: 5, Limit: 1}, nil, 3},
	} {
		got, n := ids(tc.q)
		if !reflect.DeepEqual(got, tc.want) || n != tc.total {
			t.Errorf("List(%+v) = %v, %d; want %v, %d", tc.q, got, n, tc.want, tc.total)
		}
	}
	agents, projects, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Count{{"claude", 2}, {"codex", 1}}; !reflect.DeepEqual(agents, want) {
		t.Errorf("agents: %v, want %v", agents, want)
	}
	if want := []Count{{"/src/cli", 1}, {"/src/web", 1}, {"/src/web-api", 1}}; !reflect.DeepEqual(projects, want) {
		t.Errorf("projects: %v, want %v", projects, want)
	}
}

// TestNeighboursAndTokens: a session's neighbours in the list (newest
// first; sidechains are not in it, and a tie in time goes by id), and each
// session's tokens, its rounds' sum.
func TestNeighboursAndTokens(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, s := range []struct {
		Session
		tokens []int64
	}{
		{Session{SessionID: "a", Started: "2026-01-01T00:00:00Z", Doc: "claude/a.md"}, []int64{10, 20}},
		{Session{SessionID: "b", Started: "2026-01-03T00:00:00Z", Doc: "claude/b.md"}, nil},
		{Session{SessionID: "c", Started: "2026-01-02T00:00:00Z", Doc: "claude/c.md"}, []int64{5}},
		{Session{SessionID: "d", Started: "2026-01-02T00:00:00Z", Doc: "claude/d.md"}, nil},
		{Session{SessionID: "c/agent-x", Started: "2026-01-02T12:00:00Z", Doc: "claude/c/agent-x.md"}, []int64{7}},
	} {
		var rows []Row
		for i, n := range s.tokens {
			rows = append(rows, Row{SessionID: s.SessionID, Round: i + 1, Started: s.Started, TokenCount: n})
		}
		if err := db.Put(ctx, s.Session, rows); err != nil {
			t.Fatal(err)
		}
	}
	ss, _, err := db.List(ctx, ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	var order []string
	for _, s := range ss {
		got[s.SessionID] = s.Tokens
		order = append(order, s.SessionID)
	}
	if want := map[string]int64{"a": 30, "b": 0, "c": 5, "d": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("tokens %v, want %v", got, want)
	}
	if want := []string{"b", "c", "d", "a"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	id := func(s *Session) string {
		if s == nil {
			return ""
		}
		return s.SessionID
	}
	for i, s := range order {
		newer, older, ok, err := db.Neighbours(ctx, s)
		if err != nil || !ok {
			t.Fatalf("Neighbours(%s): %v %v", s, ok, err)
		}
		wantNewer, wantOlder := "", ""
		if i > 0 {
			wantNewer = order[i-1]
		}
		if i+1 < len(order) {
			wantOlder = order[i+1]
		}
		if id(newer) != wantNewer || id(older) != wantOlder {
			t.Errorf("Neighbours(%s) = %q, %q; want %q, %q", s, id(newer), id(older), wantNewer, wantOlder)
		}
	}
	if _, _, ok, err := db.Neighbours(ctx, "nobody"); ok || err != nil {
		t.Errorf("Neighbours(nobody): %v %v", ok, err)
	}
}
