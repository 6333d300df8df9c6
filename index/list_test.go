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
