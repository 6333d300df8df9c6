package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestSearchBundledStore: what issue 30 asked of search, on the bundled
// store (data/, the inscription of testdata/, copied): the Read error and
// the ls output of session 1111 are found in its tools' text, several
// words need no quotes, the round holding them as one phrase ranks above
// those holding them apart, and the --json report shows the text as
// written (no JSON escape of a tool's input, no HTML escape).
func TestSearchBundledStore(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(t), "data"), root)
	type hit struct {
		SessionID string `json:"session_id"`
		Round     int
		Snippet   string
		In        string
	}
	search := func(args ...string) ([]hit, string) {
		t.Helper()
		var out, stderr strings.Builder
		if code := run(append([]string{"--root", root, "search", "--json", "--limit", "100"}, args...), strings.NewReader(""), &out, &stderr); code != exitOK {
			t.Fatalf("search %q: status %d: %s", args, code, stderr.String())
		}
		var hits []hit
		if err := json.Unmarshal([]byte(out.String()), &hits); err != nil {
			t.Fatalf("search %q: %v", args, err)
		}
		return hits, out.String()
	}
	const s1111 = "11111111-1111-4111-8111-111111111111"
	find := func(hits []hit, round int, in, words string) bool {
		for _, h := range hits {
			if h.SessionID == s1111 && h.Round == round && h.In == in && strings.Contains(h.Snippet, words) {
				return true
			}
		}
		return false
	}
	// The Read of missing.txt (round 2) and the ls -la (round 1).
	if hits, _ := search("does not exist"); !find(hits, 2, "tools", "missing.txt File does not exist.") {
		t.Errorf("'does not exist' does not find the Read error of session 1111: %+v", hits)
	}
	if hits, _ := search("total", "8"); !find(hits, 1, "tools", "total 8 drwxr-xr-x") {
		t.Errorf("total 8 does not find the ls output of session 1111: %+v", hits)
	}
	if hits, _ := search("No", "such", "file"); len(hits) == 0 || !strings.Contains(hits[0].Snippet, "No such file or directory") {
		t.Errorf("No such file (unquoted): %+v", hits)
	}
	// Exit code 3: every round holding the words as a phrase (session
	// 1111's Bash error, Gemini CLI's "Exit Code: 3") comes before every
	// round holding them apart (Codex's "sys.exit(3)" … "exited with
	// code"), which there are.
	phrase := regexp.MustCompile(`(?i)\bexit\W+code\W+3\b`)
	hits, _ := search("Exit", "code", "3")
	if len(hits) == 0 || hits[0].SessionID != s1111 || hits[0].Round != 2 {
		t.Errorf("Exit code 3: the first hit is not session 1111's round 2: %+v", hits)
	}
	apart := 0
	for _, h := range hits {
		if !phrase.MatchString(h.Snippet) {
			apart++
		} else if apart > 0 {
			t.Errorf("Exit code 3: %s round %d holds the phrase and ranks below a round holding the words apart: %+v", h.SessionID, h.Round, hits)
		}
	}
	if apart == 0 {
		t.Errorf("Exit code 3: no round holds the words apart (the ranking is not tested): %+v", hits)
	}
	// The --json report: a snippet is on one line, and one of the tools'
	// text holds nothing of a tool's input as JSON (an escaped backslash
	// or quote, a key; the hostile sessions' printf 'a\tb\n' is as
	// written, and their replies hold JSON: TestSnippetsAsWritten holds
	// every snippet to its round's text); the report escapes only what
	// JSON must.
	escape := regexp.MustCompile(`\\\\|\\"|":"`)
	snippets := 0
	for _, q := range []string{"hello.py", "print", "command", "file", "error", "json", "the", "exit"} {
		hits, out := search(q)
		for _, h := range hits {
			snippets++
			if h.In == "tools" && escape.MatchString(h.Snippet) || strings.ContainsAny(h.Snippet, "\n\r") {
				t.Errorf("%s: %s round %d: snippet %q", q, h.SessionID, h.Round, h.Snippet)
			}
		}
		if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u003e`) || strings.Contains(out, `\u0026`) {
			t.Errorf("%s: the --json report escapes <, > or & as HTML", q)
		}
	}
	if snippets < 50 {
		t.Errorf("%d snippets checked", snippets)
	}
}
