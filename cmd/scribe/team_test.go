package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/realclient"
)

// TestTeammates is issue 27's judge: two teammates share a store through
// git. One bare repository, two clones, two homes; the real Claude Code
// client in each, its Stop hook appending every turn to the clone's store
// (offline: its model a stand-in); the real Codex client for a conversion.
// They inscribe different sessions, go on with the same session on both
// sides (one from the other's export), convert one and resume it in the
// other client, and pull and push both ways. No pull needs a person (no
// conflict either way), check --store is clean on both sides, every turn of
// every side is found by search and is in a document, and an export of each
// session resumes in the real client with its turns.
func TestTeammates(t *testing.T) {
	claude := realclient.Claude(t)
	codex := realclient.Codex(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "--bare", "-b", "main", "team.git")
	alice, bob := newMate(t, dir, "alice"), newMate(t, dir, "bob")
	ctx := context.Background()

	const (
		a1 = "aaaa0000-0000-4000-8000-000000000001" // Alice's session
		b1 = "bbbb0000-0000-4000-8000-000000000001" // Bob's
	)
	// Each turn's Stop hook archives it. On a loaded machine the client
	// may write the turn later than the hook waits for it (3 s); the
	// hook then leaves it to the next append, as a person's next turn or
	// cron would: the test runs that append, and says so. The hook must
	// have archived some of the turns itself.
	turns, missed := 0, 0
	turn := func(m *mate, project, id string, resume bool, prompt string) {
		t.Helper()
		out, err := realclient.ClaudeTurn(ctx, claude, m.home, project, id, resume, prompt, "reply to "+prompt)
		if err != nil {
			t.Fatalf("%s: %v\n%s", m.name, err, out)
		}
		turns++
		if !grepStore(t, m.root, prompt) {
			missed++
			t.Logf("%s: the Stop hook did not archive %q (the client wrote it after the hook's wait): appended", m.name, prompt)
			m.scribe("append", filepath.Join(m.home, ".claude", "projects"))
		}
	}
	defer func() {
		if turns > 0 && missed == turns {
			t.Errorf("the Stop hook archived none of the %d turns", turns)
		}
	}()

	// Alice starts the store with a session of hers; Bob clones it and
	// adds one of his.
	turn(alice, alice.project, a1, false, "alice asks about apricots")
	alice.commit("alice: a session")
	alice.push()
	bob.clone()
	turn(bob, bob.project, b1, false, "bob asks about blueberries")
	bob.commit("bob: a session")
	bob.pull()
	bob.push()
	alice.pull()

	// The same session goes on on both sides: Alice in her project, Bob
	// from an export of it into his own checkout.
	bob.scribe("export-claude", a1, "--project", bob.project)
	turn(bob, bob.project, a1, true, "bob goes on with apricot jam")
	turn(alice, alice.project, a1, true, "alice goes on with apricot tart")
	alice.commit("alice: more")
	bob.commit("bob: more")
	alice.pull()
	alice.push()
	bob.pull()
	bob.push()
	alice.pull()

	// Bob converts his session for Codex and goes on there.
	bob.scribe("export-codex", b1)
	if out, err := codex.CodexTurn(bob.home, bob.project, b1, "", "bob asks codex about blackberries", "reply from codex"); err != nil {
		t.Fatalf("codex: %v\n%s", err, out)
	}
	bob.scribe("append", filepath.Join(bob.home, ".codex", "sessions"))
	bob.commit("bob: codex")
	bob.pull()
	bob.push()
	alice.pull()

	// Alice takes Bob's session up where Codex left it: its export is the
	// conversation as it went on (Codex's continuation, converted), and
	// her Claude Code resumes it, its Stop hook archiving the turn.
	alice.scribe("export-claude", b1, "--project", alice.project)
	turn(alice, alice.project, b1, true, "alice asks about blueberry muffins")
	alice.commit("alice: bob's session")
	alice.pull()
	alice.push()
	bob.pull()

	// Each side's next appends (a hook, cron) settle what the merges
	// brought; then every check is clean and every turn is there.
	prompts := []string{"alice asks about apricots", "bob asks about blueberries", "bob goes on with apricot jam",
		"alice goes on with apricot tart", "bob asks codex about blackberries", "alice asks about blueberry muffins"}
	for _, m := range []*mate{alice, bob} {
		m.scribe("append", filepath.Join(m.home, ".claude", "projects"))
		if out := m.scribe("check", "--store"); !strings.Contains(out, " 0 with differences") {
			t.Errorf("%s: check --store:\n%s", m.name, out)
		}
		for _, p := range prompts {
			out := m.scribe("search", "--json", p)
			var hits []struct{ Snippet string }
			if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) == 0 {
				t.Errorf("%s: search %q finds nothing: %s", m.name, p, out)
			}
			if !grepStore(t, m.root, p) {
				t.Errorf("%s: no document holds %q", m.name, p)
			}
		}
	}
	if t.Failed() {
		for _, m := range []*mate{alice, bob} {
			hooks, _ := os.ReadFile(m.hookLog())
			t.Logf("%s's hook's messages:\n%s", m.name, hooks)
		}
	}

	// An export of each session resumes in the real client with its
	// turns: Alice's as it went on last (one of its two branches), Bob's
	// with the turn Codex added and Alice's after it.
	for _, c := range []struct {
		id    string
		turns []string
	}{
		{b1, []string{"bob asks about blueberries", "bob asks codex about blackberries", "alice asks about blueberry muffins"}},
	} {
		out := t.TempDir()
		alice.scribe("export-claude", c.id, "--out", out)
		got, err := realclient.Probe(ctx, claude, filepath.Join(out, c.id+".jsonl"), "")
		if err != nil {
			t.Fatalf("probe %s: %v", c.id, err)
		}
		for _, p := range c.turns {
			if !strings.Contains(string(got), p) {
				t.Errorf("the real Claude Code, resuming %s, is not sent %q", c.id, p)
			}
		}
	}
	out := t.TempDir()
	alice.scribe("export-claude", a1, "--out", out)
	got, err := realclient.Probe(ctx, claude, filepath.Join(out, a1+".jsonl"), "")
	if err != nil {
		t.Fatalf("probe %s: %v", a1, err)
	}
	if !strings.Contains(string(got), "alice asks about apricots") ||
		!strings.Contains(string(got), "apricot jam") && !strings.Contains(string(got), "apricot tart") {
		t.Errorf("the real Claude Code, resuming %s, is not sent its turns:\n%s", a1, got)
	}
}

// mate is a teammate: a clone of the team's repository, a home with the
// Claude Code Stop hook that appends to the clone's store, and a project.
type mate struct {
	t                                    *testing.T
	name, dir, repo, home, project, root string
}

func newMate(t *testing.T, dir, name string) *mate {
	m := &mate{t: t, name: name, dir: dir, repo: filepath.Join(dir, name), home: filepath.Join(dir, name+"-home")}
	m.project = filepath.Join(m.home, "src", name+"-project")
	m.root = filepath.Join(m.repo, "data")
	for _, d := range []string{m.project, filepath.Join(m.home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The hook's messages are kept, for a failure to show.
	hook := fmt.Sprintf("SCRIBE_TEST_MAIN=1 %q --root %q append --hook 2>>%q", os.Args[0], m.root, m.hookLog())
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hook, "timeout": 600}}}}}})
	if err := os.WriteFile(filepath.Join(m.home, ".claude", "settings.json"), settings, 0o644); err != nil {
		t.Fatal(err)
	}
	if name == "alice" {
		m.clone_()
	}
	return m
}

func (m *mate) clone_() {
	git(m.t, m.dir, "clone", "-q", "team.git", m.name)
	git(m.t, m.repo, "symbolic-ref", "HEAD", "refs/heads/main") // a clone of the empty repository
}

// clone makes the clone, once the repository has a commit.
func (m *mate) clone() { m.clone_() }

func (m *mate) git(args ...string) string {
	m.t.Helper()
	return git(m.t, m.repo, args...)
}

func (m *mate) commit(msg string) {
	m.t.Helper()
	m.git("add", "-A")
	// Nothing of the machine's own state, nor a database, is committed.
	for _, f := range strings.Split(m.git("diff", "--cached", "--name-only"), "\n") {
		if strings.Contains(f, ".scribe/") || strings.HasSuffix(f, ".db") || strings.HasSuffix(f, "state.json") || strings.HasSuffix(f, ".lock") {
			m.t.Errorf("%s commits %s", m.name, f)
		}
	}
	m.git("commit", "-q", "--allow-empty", "-m", msg)
}

// hookLog is where the teammate's Stop hook writes its messages.
func (m *mate) hookLog() string { return filepath.Join(m.dir, m.name+"-hook.log") }

func (m *mate) push() { m.t.Helper(); m.git("push", "-q", "origin", "main") }

// pull merges the other's work: it must never need a person.
func (m *mate) pull() {
	m.t.Helper()
	cmd := exec.Command("git", "pull", "--no-rebase", "--no-edit", "-q", "origin", "main")
	cmd.Dir, cmd.Env = m.repo, gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "CONFLICT") {
		status := m.git("status", "--short")
		m.t.Fatalf("%s: git pull needs a person: %v\n%s\n%s", m.name, err, out, status)
	}
}

// scribe runs scribe on the clone's store as the teammate, and returns
// its standard output; a failure fails the test.
func (m *mate) scribe(args ...string) string {
	m.t.Helper()
	cmd := scribeCmd(append([]string{"--root", m.root}, args...)...)
	cmd.Env = append(cmd.Env, "HOME="+m.home, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	cmd.Dir = m.project
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && !(len(args) > 0 && args[0] == "check") {
		hooks, _ := os.ReadFile(m.hookLog())
		m.t.Fatalf("%s: scribe %s: %v\n%s%s\nits hook's messages:\n%s", m.name, strings.Join(args, " "), err, stdout.String(), stderr.String(), hooks)
	}
	return stdout.String()
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitEnv() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
}

// grepStore reports whether a document of the store holds text.
func grepStore(t *testing.T, root, text string) bool {
	found := false
	filepath.WalkDir(filepath.Join(root, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), text) {
				found = true
			}
		}
		return nil
	})
	return found
}
