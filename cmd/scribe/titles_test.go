package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestPublicTitles: no title of the public corpus starts with client
// markup (issue 30: 15 of its 29 sessions were titled
// <command-name>/clear</command-name> and the like), in list --json, in
// the index the web list and search read, or in the catalog.
func TestPublicTitles(t *testing.T) {
	tree, _ := testenv.PublicTree(t)
	root := filepath.Join(t.TempDir(), "data")
	var stderr strings.Builder
	if code := run([]string{"--root", root, "inscribe", "--no-redact", tree}, strings.NewReader(""), io.Discard, &stderr); code != exitOK {
		t.Fatalf("inscribe: status %d: %s", code, stderr.String())
	}
	var out strings.Builder
	if code := run([]string{"--root", root, "list", "--json"}, strings.NewReader(""), &out, io.Discard); code != exitOK {
		t.Fatalf("list: status %d", code)
	}
	var list []struct{ SessionID, Title string }
	if err := json.Unmarshal([]byte(out.String()), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) < 20 {
		t.Fatalf("list: %d sessions", len(list))
	}
	for _, s := range list {
		if strings.HasPrefix(s.Title, "<") {
			t.Errorf("list: %s titled %q", s.SessionID, s.Title)
		}
	}
	db, err := index.Open(filepath.Join(root, ".scribe", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, _, err := db.List(context.Background(), index.ListQuery{})
	if err != nil || len(rows) != len(list) {
		t.Fatalf("the index lists %d sessions (%v), list %d", len(rows), err, len(list))
	}
	for _, r := range rows {
		if strings.HasPrefix(r.Title, "<") {
			t.Errorf("the index (the web list, search): %s titled %q", r.SessionID, r.Title)
		}
	}
	catalog, err := os.ReadFile(filepath.Join(root, "sessions", "claude", "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(catalog), "\n") {
		if cells := strings.Split(line, " | "); len(cells) > 2 && strings.HasPrefix(cells[1], "<") {
			t.Errorf("the catalog: %s", line)
		}
	}
}
