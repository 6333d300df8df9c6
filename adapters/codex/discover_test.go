package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// A file named .jsonl among the rollouts that is not one (binary data) is
// skipped with one message, and the rollouts beside it are read; an empty
// rollout (no record yet) is a session for the store to skip until it has
// one (issue 14).
func TestDiscoverRefusesWhatIsNotARollout(t *testing.T) {
	samples := filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions")
	dir := t.TempDir()
	testenv.CopyTree(t, samples, dir)
	day := filepath.Join(dir, "2026", "11", "23")
	binary := make([]byte, 200<<10)
	for i := range binary {
		binary[i] = byte(i*13 + i>>9)
	}
	bad := filepath.Join(day, "rollout-2026-11-23T17-00-00-01a20952-0000-7000-8000-000000000001.jsonl")
	empty := filepath.Join(day, "rollout-2026-11-23T17-00-01-01a20952-0000-7000-8000-000000000002.jsonl")
	if err := os.WriteFile(bad, binary, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := New().Discover(samples)
	if err != nil {
		t.Fatal(err)
	}
	got, err := New().Discover(dir)
	skips, rest := source.Skips(err)
	if rest != nil {
		t.Fatal(rest)
	}
	if len(got) != len(want)+1 {
		t.Errorf("found %d rollouts, want the %d samples and the empty one", len(got), len(want))
	}
	for _, s := range got {
		if s.Path == bad {
			t.Errorf("the binary file was found as a rollout")
		}
	}
	if len(skips) != 1 || skips[0].Path != bad || !strings.Contains(skips[0].Why, "not a Codex rollout") {
		t.Errorf("skipped %v, want the binary file, once", skips)
	}
}

// Detection reads only the first bytes of a file that is no rollout, and
// still finds a rollout whose session_meta is spelled with escapes or
// whose first line is longer than those bytes.
func TestDetectBeyondTheFirstBytes(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 40<<10)
	cases := []struct {
		name, first string
		rollout     bool
	}{
		{"claude", `{"type":"user","message":{"content":"session"}}`, false},
		{"escaped", `{"timestamp":"t","type":"session\u005fmeta","payload":{"id":"01a20952-0000-7000-8000-000000000001"}}`, true},
		{"long", `{"timestamp":"t","payload":{"id":"01a20952-0000-7000-8000-000000000001","base_instructions":"` + long + `"},"type":"session_meta"}`, true},
		{"long-other", `{"type":"user","message":{"content":"` + long + `"}}`, false},
		{"no-newline", `{"timestamp":"t","type":"session_meta","payload":{}}`, true},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".jsonl")
		data := c.first
		if c.name != "no-newline" {
			data += "\n{\"type\":\"response_item\",\"payload\":{}}\n"
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := New().Detect(p); got != c.rollout {
			t.Errorf("%s: Detect = %v, want %v", c.name, got, c.rollout)
		}
	}
}

// readMeta finds a rollout's session_meta however long its first line, in
// a file with or without a last line end, and nothing in another client's
// file.
func TestReadMeta(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat("x", 40<<10)
	meta := `{"timestamp":"2026-11-23T17:00:00Z","type":"session_meta","payload":{"id":"01a20952-0000-7000-8000-000000000001","cwd":"/p"}}`
	late := `{"timestamp":"2026-11-23T17:00:00Z","payload":{"id":"01a20952-0000-7000-8000-000000000001","cwd":"/p","note":"` + pad + `"},"type":"session_meta"}`
	for name, c := range map[string]struct {
		data string
		want bool
	}{
		"short":         {meta + "\n{}\n", true},
		"unterminated":  {meta, true},
		"long":          {late + "\n", true},
		"long-alone":    {late, true},
		"claude":        {`{"type":"user","message":"hi"}` + "\n", false},
		"claude-long":   {`{"type":"user","message":"` + pad + `"}` + "\n", false},
		"claude-alone":  {`{"type":"user"}`, false},
		"escaped-claim": {`{"type":"session_\u006deta","payload":{"id":"x"}}` + "\n", true},
		"empty":         {"", false},
		// A record of Codex's written twice, ahead of the session_meta.
		"dup-first": {`{"timestamp":"2026-11-23T17:00:01Z","type":"event_msg","payload":{"type":"task_started"}}` + "\n" + meta + "\n", true},
		// Another client's lines before one that says session_meta.
		"claude-then-meta": {`{"type":"user","message":"hi"}` + "\n" + meta + "\n", false},
	} {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		m, ok := readMeta(p)
		if ok != c.want {
			t.Errorf("%s: readMeta ok %v, want %v", name, ok, c.want)
		}
		if ok && name != "escaped-claim" && m.ID != "01a20952-0000-7000-8000-000000000001" {
			t.Errorf("%s: session id %q", name, m.ID)
		}
	}
}

// A rollout whose one line is a session_meta record still being written is
// a rollout (the store skips it until the line is whole); a torn line of
// another client's is not.
func TestTornHead(t *testing.T) {
	dir := t.TempDir()
	meta := `{"timestamp":"2026-11-23T17:00:00Z","type":"session_meta","payload":{"id":"01a20952-0000-7000-8000-000000000001","cwd":"/p","base`
	for name, c := range map[string]struct {
		data string
		want head
	}{
		"torn":        {meta, tornMeta},
		"torn-claude": {`{"type":"user","message":"session_meta is`, noMeta},
		"torn-second": {meta + "\n" + meta, noMeta},
	} {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, h := readHead(p); h != c.want {
			t.Errorf("%s: readHead %v, want %v", name, h, c.want)
		}
		if got := New().Detect(p); got != (c.want != noMeta) {
			t.Errorf("%s: Detect %v", name, got)
		}
	}
}
