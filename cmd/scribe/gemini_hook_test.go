package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/realclient"
)

// TestGeminiHook: the Gemini CLI runs scribe append --hook --json after
// every turn (an AfterAgent hook, as the README shows it), and the store
// holds each turn as it ends; the hook's report, JSON on stdout, is not
// shown to the person (plain text would be: the client shows a hook's
// stdout that is not JSON as a "Hook system message").
func TestGeminiHook(t *testing.T) {
	p := realclient.Gemini(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	home, root := filepath.Join(dir, "home"), filepath.Join(dir, "store")
	project := filepath.Join(home, "src", "p")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := "SCRIBE_TEST_MAIN=1 " + exe + " --root " + root + " append --hook --json"
	settings := map[string]any{
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"hooks": map[string]any{"AfterAgent": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": hook, "name": "scribe"}}}}},
	}
	data, _ := json.Marshal(settings)
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := func() []byte {
		t.Helper()
		ms, _ := filepath.Glob(filepath.Join(root, "sessions", "gemini", "*.md"))
		for _, m := range ms {
			if filepath.Base(m) != "index.md" {
				b, _ := os.ReadFile(m)
				return b
			}
		}
		t.Fatalf("no Gemini session in %s", root)
		return nil
	}
	for i, args := range [][]string{{"-p", "first question"}, {"--resume", "latest", "-p", "second question"}} {
		stdout, stderr, err := p.Run(home, project, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if got := strings.TrimSpace(string(stdout)); got != "probe reply" && !strings.HasPrefix(got, "done") {
			t.Errorf("turn %d: the client printed %q", i+1, stdout)
		}
		if bytes.Contains(stdout, []byte("Hook system message")) || bytes.Contains(stderr, []byte("Hook system message")) {
			t.Errorf("turn %d: the hook's report reached the person:\n%s%s", i+1, stdout, stderr)
		}
		if bytes.Contains(stderr, []byte("scribe: error")) {
			t.Errorf("turn %d: the hook failed:\n%s", i+1, stderr)
		}
		md := doc()
		for _, want := range args[len(args)-1:] {
			if !bytes.Contains(md, []byte(want)) {
				t.Errorf("turn %d: the document lacks %q once the turn ended", i+1, want)
			}
		}
	}
	// The resume wrote the history again: nothing of it shows twice.
	if n := bytes.Count(doc(), []byte("\nfirst question\n")); n != 1 {
		t.Errorf("the first prompt shows %d times", n)
	}
}
