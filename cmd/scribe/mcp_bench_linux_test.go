package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkStoreMCP measures scribe mcp's tools over the benchmark store
// (benchStore), through the protocol on pipes as a client speaks it: a
// search's first page, a page past the newest 256 matches (its second
// window), get_session and read_rounds.
//
//	SCRIBE_BENCH_SESSIONS=1000 go test ./cmd/scribe -run '^$' -bench StoreMCP
func BenchmarkStoreMCP(b *testing.B) {
	root, n := benchStore(b)
	c := startMCP(b, root)
	search := map[string]any{"query": "question", "limit": 50}
	// A cursor into the second window: page until the cursor says so.
	var second string
	for args := search; second == ""; {
		var p struct {
			Next string `json:"next_cursor"`
		}
		json.Unmarshal([]byte(c.mustCall("search", args)), &p)
		if p.Next == "" {
			b.Fatalf("a search for %q in %d sessions matches fewer than 256 rounds", search["query"], n)
		}
		if strings.HasPrefix(p.Next, "2.") {
			second = p.Next
		}
		args = map[string]any{"query": "question", "limit": 50, "cursor": p.Next}
	}
	session := firstSession(b, c)
	for _, bc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"search", "search", search},
		{"search-window2", "search", map[string]any{"query": "question", "limit": 50, "cursor": second}},
		{"get_session", "get_session", map[string]any{"session": session}},
		{"read_rounds", "read_rounds", map[string]any{"session": session, "rounds": "all"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				c.mustCall(bc.tool, bc.args)
			}
		})
	}
}

func firstSession(b *testing.B, c *mcpConn) string {
	var p struct {
		Sessions []struct{ Session string } `json:"sessions"`
	}
	json.Unmarshal([]byte(c.mustCall("list_sessions", map[string]any{"limit": 1})), &p)
	if len(p.Sessions) == 0 {
		b.Fatal("no sessions")
	}
	return p.Sessions[0].Session
}
