package claude

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session/source"
)

const (
	prompt = `{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"%s"}` + "\n"
	sid1   = "11111111-1111-4111-8111-111111111111"
	sid2   = "22222222-2222-4222-8222-222222222222"
	sid3   = "33333333-3333-4333-8333-333333333333"
)

func transcriptOf(id string) []byte { return []byte(strings.ReplaceAll(prompt, "%s", id)) }

// put writes files under root (paths with slashes) and returns root.
func put(t *testing.T, root string, files map[string][]byte) string {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// found runs Discover and returns what it found, as "id:file" for each
// session file and "id/agent:file" for each subagent (file relative to
// root, "-" for a session without its file), and what it skipped.
func found(t *testing.T, root string) (got []string, skipped map[string]string) {
	t.Helper()
	ts, err := Discover(root)
	skips, rest := source.Skips(err)
	if rest != nil {
		t.Fatalf("Discover: %v", rest)
	}
	rel := func(p string) string {
		if p == "" {
			return "-"
		}
		r, _ := filepath.Rel(root, p)
		return filepath.ToSlash(r)
	}
	for _, tr := range ts {
		got = append(got, tr.ID+":"+rel(tr.Path))
		for _, sa := range tr.Subagents {
			got = append(got, tr.ID+"/"+sa.AgentID+":"+rel(sa.Path))
		}
	}
	sort.Strings(got)
	skipped = map[string]string{}
	for _, s := range skips {
		skipped[rel(s.Path)] = s.Why
	}
	return got, skipped
}

func same(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// Subagents whose session file is gone (deleted, or left out of a partial
// copy) are found, laid out as 2.1 clients lay them out or as earlier ones
// did, and so is everything else in the tree (issue 14).
func TestDiscoverSubagentsWithoutTheirSession(t *testing.T) {
	root := put(t, t.TempDir(), map[string][]byte{
		"p/" + sid1 + ".jsonl":                           transcriptOf(sid1),
		"p/" + sid1 + "/subagents/agent-a1.jsonl":        transcriptOf(sid1),
		"p/" + sid2 + "/subagents/agent-b1.jsonl":        transcriptOf(sid2),
		"p/" + sid2 + "/subagents/agent-b1.meta.json":    []byte(`{"description":"d"}`),
		"p/agent-c1.jsonl":                               transcriptOf(sid3),
		"q/" + sid3 + "/subagents/agent-c2.jsonl":        transcriptOf(sid3),
		"q/" + sid3 + "/tool-results/not-a-subagent.txt": []byte("x"),
	})
	want := []string{
		sid1 + "/a1:p/" + sid1 + "/subagents/agent-a1.jsonl",
		sid1 + ":p/" + sid1 + ".jsonl",
		sid2 + "/b1:p/" + sid2 + "/subagents/agent-b1.jsonl",
		sid2 + ":-",
		sid3 + "/c1:p/agent-c1.jsonl",
		sid3 + "/c2:q/" + sid3 + "/subagents/agent-c2.jsonl",
		sid3 + ":-",
		sid3 + ":-",
	}
	sort.Strings(want)
	for _, dir := range []string{root, filepath.Join(root, "q")} {
		got, skipped := found(t, dir)
		if dir != root {
			want = []string{sid3 + "/c2:" + sid3 + "/subagents/agent-c2.jsonl", sid3 + ":-"}
		}
		if !same(got, want) || len(skipped) > 0 {
			t.Errorf("Discover(%s) found\n%s\nwant\n%s\nskipped %v", dir, strings.Join(got, "\n"), strings.Join(want, "\n"), skipped)
		}
	}
	a := New()
	if !a.Detect(filepath.Join(root, "q")) {
		t.Errorf("a project directory holding only a session's folder with subagents is not detected")
	}
}

// A file named .jsonl that does not start with a Claude Code entry (binary
// data, another client's file) is skipped with one message, and the rest
// of its folder is read (issue 14).
func TestDiscoverRefusesWhatIsNotATranscript(t *testing.T) {
	binary := make([]byte, 200<<10)
	for i := range binary {
		binary[i] = byte(i*7 + i>>8)
	}
	root := put(t, t.TempDir(), map[string][]byte{
		"p/" + sid1 + ".jsonl":                   transcriptOf(sid1),
		"p/" + sid2 + ".jsonl":                   binary,
		"p/" + sid3 + ".jsonl":                   []byte("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n"),
		"p/" + sid1 + "/subagents/agent-x.jsonl": []byte("\x00\x01\x02 not json\n"),
		"p/empty.jsonl":                          nil, // Claude Code creates the file before it writes
	})
	got, skipped := found(t, root)
	want := []string{sid1 + ":p/" + sid1 + ".jsonl", "empty:p/empty.jsonl"}
	if !same(got, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []string{"p/" + sid2 + ".jsonl", "p/" + sid3 + ".jsonl", "p/" + sid1 + "/subagents/agent-x.jsonl"} {
		if !strings.Contains(skipped[p], "not a Claude Code transcript") {
			t.Errorf("%s: skipped for %q, want not a Claude Code transcript", p, skipped[p])
		}
	}
	if len(skipped) != 3 {
		t.Errorf("skipped %v, want 3 files", skipped)
	}
}

// A project directory that cannot be read, or a subagent transcript that
// names no session, is skipped with a message naming it; the rest of the
// tree is read (issue 14).
func TestDiscoverGoesOnPastWhatItCannotRead(t *testing.T) {
	root := put(t, t.TempDir(), map[string][]byte{
		"a/" + sid1 + ".jsonl": transcriptOf(sid1),
		"b/" + sid2 + ".jsonl": transcriptOf(sid2),
		"b/agent-x.jsonl":      []byte(`{"type":"user","message":{"role":"user","content":"no session id"}}` + "\n"),
		"c/" + sid3 + ".jsonl": transcriptOf(sid3),
	})
	unreadable := filepath.Join(root, "b")
	source.TestOnlyReadDir = func(dir string) ([]os.DirEntry, error) {
		if dir == unreadable {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
		}
		return os.ReadDir(dir)
	}
	got, skipped := found(t, root)
	source.TestOnlyReadDir = nil
	want := []string{sid1 + ":a/" + sid1 + ".jsonl", sid3 + ":c/" + sid3 + ".jsonl"}
	if !same(got, want) || !strings.Contains(skipped["b"], "cannot be read (permission denied)") || len(skipped) != 1 {
		t.Errorf("with b unreadable, found %v, skipped %v; want %v and b skipped", got, skipped, want)
	}

	got, skipped = found(t, root)
	want = []string{sid1 + ":a/" + sid1 + ".jsonl", sid2 + ":b/" + sid2 + ".jsonl", sid3 + ":c/" + sid3 + ".jsonl"}
	if !same(got, want) || !strings.Contains(skipped["b/agent-x.jsonl"], "names the session") || len(skipped) != 1 {
		t.Errorf("found %v, skipped %v; want %v and b/agent-x.jsonl skipped", got, skipped, want)
	}
}

// Links are followed inside the tree (once per folder, so a loop ends) and
// skipped, with a message, when they lead out of it or nowhere: a link to
// /etc/passwd named like a transcript is not read (issue 14).
func TestDiscoverFollowsLinksInsideTheTreeOnly(t *testing.T) {
	dir := t.TempDir()
	root := put(t, filepath.Join(dir, "projects"), map[string][]byte{
		"real/" + sid1 + ".jsonl": transcriptOf(sid1),
		"p/" + sid2 + ".jsonl":    transcriptOf(sid2),
	})
	put(t, filepath.Join(dir, "elsewhere"), map[string][]byte{"q/" + sid3 + ".jsonl": transcriptOf(sid3)})
	for link, target := range map[string]string{
		"linked":               "real",                                              // a project folder, inside: followed, once
		"p/loop":               "..",                                                // a loop
		"p/inside.jsonl":       filepath.Join("..", "real", sid1+".jsonl"),          // a transcript inside: followed
		"p/passwd.jsonl":       "/etc/passwd",                                       // out of the tree
		"out":                  filepath.Join(dir, "elsewhere", "q"),                // out of the tree
		"p/" + sid3 + ".jsonl": filepath.Join(dir, "elsewhere", "q", sid3+".jsonl"), // out of the tree
		"p/dangling.jsonl":     "nowhere.jsonl",                                     // nowhere
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	got, skipped := found(t, root)
	want := []string{sid1 + ":linked/" + sid1 + ".jsonl", sid2 + ":p/" + sid2 + ".jsonl", "inside:p/inside.jsonl"}
	if !same(got, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []string{"p/passwd.jsonl", "out", "p/" + sid3 + ".jsonl"} {
		if !strings.Contains(skipped[p], "outside") {
			t.Errorf("%s: skipped for %q, want: outside the tree", p, skipped[p])
		}
	}
	if !strings.Contains(skipped["p/dangling.jsonl"], "does not exist") {
		t.Errorf("p/dangling.jsonl: skipped for %q", skipped["p/dangling.jsonl"])
	}
	if len(skipped) != 4 {
		t.Errorf("skipped %v, want 4", skipped)
	}
	var se *source.SkipError
	_, err := Discover(root)
	if !errors.As(err, &se) {
		t.Errorf("Discover's error %v holds no SkipError", err)
	}
}
