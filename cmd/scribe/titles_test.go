package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/serve/web"
)

// TestPublicTitles: no title of the public corpus starts with client
// markup (issue 30: 15 of its 29 sessions were titled
// <command-name>/clear</command-name> and the like), in list --json, in
// the index the web list and search read, in the web list and each
// session's page, or in the catalog.
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
	// The web list, and each session's page title.
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, root: root}
	store, err := e.openExistingStore()
	if err != nil {
		t.Fatal(err)
	}
	ws, closeStore, err := webStore(e, store)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	h := web.New(ws, web.Options{})
	get := func(path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	cells := regexp.MustCompile(`<td class="title"><a href="([^"]+)">([^<]*)</a>`).FindAllStringSubmatch(get("/"), -1)
	if len(cells) != len(list) {
		t.Errorf("the web list shows %d sessions, list %d", len(cells), len(list))
	}
	pageTitle := regexp.MustCompile(`<title>([^<]*) · scribe</title>`)
	for _, c := range cells {
		if title := html.UnescapeString(c[2]); strings.HasPrefix(title, "<") {
			t.Errorf("the web list: %s titled %q", c[1], title)
		}
		m := pageTitle.FindStringSubmatch(get("/" + strings.TrimPrefix(html.UnescapeString(c[1]), "/")))
		if m == nil || strings.HasPrefix(html.UnescapeString(m[1]), "<") || html.UnescapeString(m[1]) != html.UnescapeString(c[2]) {
			t.Errorf("the page of %s is titled %q, listed %q", c[1], m, c[2])
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
