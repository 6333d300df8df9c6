package gemini

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session/source"
)

// TestDiscoverCorpus: the corpus's tmp folder holds its 16 sessions, each
// once, the startup files left out and the subagent's file with its
// session; a project folder and a chats folder are read the same way.
func TestDiscoverCorpus(t *testing.T) {
	a := New()
	ss, err := a.Discover(tmp)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]source.Session{}
	for _, s := range ss {
		if _, dup := ids[s.ID]; dup {
			t.Errorf("session %s found twice", s.ID)
		}
		ids[s.ID] = s
		if h, ok := readHead(s.Path); !ok || h.stub {
			t.Errorf("%s: not a session file", s.Path)
		}
		if filepath.Base(s.Dir) != "chats" || filepath.Join(s.Dir, s.Rel) != s.Path {
			t.Errorf("%s: Dir %s, Rel %s", s.Path, s.Dir, s.Rel)
		}
	}
	if len(ss) != 16 {
		t.Errorf("%d sessions, want 16", len(ss))
	}
	sub := ids["9e333333-3333-4333-8333-333333333333"]
	if len(sub.Sidechains) != 1 || sub.Sidechains[0].ID != "079929a9-cd47-4f7f-a111-6dbb7938c66b" ||
		sub.Sidechains[0].Rel != filepath.Join("9e333333-3333-4333-8333-333333333333", "079929a9-cd47-4f7f-a111-6dbb7938c66b.jsonl") {
		t.Errorf("the subagent's session: %+v", sub)
	}
	if s := ids["9e111111-1111-4111-8111-111111111111"]; filepath.Base(s.Path) != "session-2026-11-27T04-42-9e111111.jsonl" {
		t.Errorf("session 1111… is read from %s, not its startup file's sibling", s.Path)
	}
	for _, dir := range []string{filepath.Join(tmp, "subagent"), filepath.Join(tmp, "subagent", "chats")} {
		ss, err := a.Discover(dir)
		if err != nil || len(ss) != 1 || len(ss[0].Sidechains) != 1 {
			t.Errorf("Discover(%s) = %+v, %v", dir, ss, err)
		}
		if !a.Detect(dir) {
			t.Errorf("Detect(%s) is false", dir)
		}
	}
	if !a.Detect(tmp) || !a.Detect(sub.Path) || a.Detect(filepath.Join(tmp, "rewind", "logs.json")) {
		t.Errorf("Detect of the tmp folder, a session file, a log")
	}
}

// TestDiscoverStubsAndStrangers: a startup file named alone is skipped
// saying what it is; a file named .jsonl that is not the client's is
// skipped with a warning, the rest read; a subagent whose session's file
// is gone is still found, under its session's id.
func TestDiscoverStubsAndStrangers(t *testing.T) {
	a := New()
	stub := filepath.Join(tmp, "tools-thinking", "chats", "session-2026-11-27T04-49-9e111111.jsonl")
	if _, err := a.Discover(stub); err == nil || !strings.Contains(err.Error(), "startup file") {
		t.Errorf("Discover of a startup file: %v", err)
	}
	dir := t.TempDir()
	chats := filepath.Join(dir, "p", "chats")
	copyTo := func(from, to string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	subRel := filepath.Join("9e333333-3333-4333-8333-333333333333", "079929a9-cd47-4f7f-a111-6dbb7938c66b.jsonl")
	copyTo(filepath.Join(tmp, "subagent", "chats", subRel), filepath.Join(chats, subRel))
	copyTo(filepath.Join(tmp, "rewind", "chats", "session-2026-11-27T04-45-9e555555.jsonl"), filepath.Join(chats, "session-2026-11-27T04-45-9e555555.jsonl"))
	copyTo(stub, filepath.Join(chats, filepath.Base(stub)))
	os.WriteFile(filepath.Join(chats, "session-x.jsonl"), []byte("\x00\x01binary\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p", "logs.json"), []byte("[]"), 0o644)
	ss, err := a.Discover(dir)
	skips, rest := source.Skips(err)
	if rest != nil || len(skips) != 1 || skips[0].Path != filepath.Join(chats, "session-x.jsonl") {
		t.Errorf("skipped %v (%v)", skips, rest)
	}
	var got []string
	for _, s := range ss {
		got = append(got, s.ID+" "+filepath.Base(s.Path))
	}
	sort.Strings(got)
	want := []string{"9e333333-3333-4333-8333-333333333333 .", "9e555555-5555-4555-8555-555555555555 session-2026-11-27T04-45-9e555555.jsonl"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sessions %q, want %q", got, want)
	}
	if _, err := a.Discover(filepath.Join(chats, "session-x.jsonl")); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("Discover of a file that is not the client's: %v", err)
	}
}

// TestDefaultDir: the client's home is GEMINI_CLI_HOME when set.
func TestDefaultDir(t *testing.T) {
	t.Setenv("GEMINI_CLI_HOME", "/somewhere")
	if d, err := New().DefaultDir(); err != nil || d != filepath.Join("/somewhere", ".gemini", "tmp") {
		t.Errorf("DefaultDir = %s, %v", d, err)
	}
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("HOME", "/home/x")
	if d, err := New().DefaultDir(); err != nil || d != filepath.Join("/home/x", ".gemini", "tmp") {
		t.Errorf("DefaultDir = %s, %v", d, err)
	}
}

// TestIdentify: the project is the .project_root beside chats/.
func TestIdentify(t *testing.T) {
	a := New()
	if got := a.Identify(corpusFile(t, "rewind", "9e555555")).Project; got != "/home/gemini-dev/src/rewind" {
		t.Errorf("Identify = %q", got)
	}
	sub := filepath.Join(tmp, "subagent", "chats", "9e333333-3333-4333-8333-333333333333", "079929a9-cd47-4f7f-a111-6dbb7938c66b.jsonl")
	if got := a.Identify(sub).Project; got != "/home/gemini-dev/src/subagent" {
		t.Errorf("Identify of a subagent = %q", got)
	}
}
