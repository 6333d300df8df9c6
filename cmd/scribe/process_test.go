package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
)

// synthTranscript writes a Claude Code-like transcript of n rounds (a
// prompt, a reminder, a tool call and its result, a reply), about 20 KB a
// round.
func synthTranscript(n int) []byte {
	var b bytes.Buffer
	parent := "null"
	pad := strings.Repeat("lorem ipsum ", 1500)
	for i := 0; i < n; i++ {
		u, r, a, t, x := fmt.Sprintf("u-%d", i), fmt.Sprintf("r-%d", i), fmt.Sprintf("a-%d", i), fmt.Sprintf("t-%d", i), fmt.Sprintf("x-%d", i)
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(&b, `{"type":"queue-operation","operation":"enqueue","timestamp":%q,"sessionId":"s"}`+"\n", ts)
		fmt.Fprintf(&b, `{"parentUuid":%s,"type":"user","message":{"role":"user","content":"question %d"},"uuid":%q,"timestamp":%q,"cwd":"/home/me/app","sessionId":"s"}`+"\n", parent, i, u, ts)
		fmt.Fprintf(&b, `{"parentUuid":%q,"type":"attachment","attachment":{"type":"date"},"rendered":[{"content":"<system-reminder>\n%s\n</system-reminder>"}],"uuid":%q,"timestamp":%q}`+"\n", u, pad, r, ts)
		fmt.Fprintf(&b, `{"parentUuid":%q,"type":"assistant","message":{"id":"m%d","role":"assistant","model":"m","content":[{"type":"tool_use","id":"tu%d","name":"Bash","input":{"command":"ls"}}]},"uuid":%q,"timestamp":%q}`+"\n", r, i, i, a, ts)
		fmt.Fprintf(&b, `{"parentUuid":%q,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu%d","content":"file %d"}]},"uuid":%q,"timestamp":%q}`+"\n", a, i, i, t, ts)
		fmt.Fprintf(&b, `{"parentUuid":%q,"type":"assistant","message":{"id":"n%d","role":"assistant","model":"m","content":[{"type":"text","text":"answer %d"}]},"uuid":%q,"timestamp":%q}`+"\n", t, i, i, x, ts)
		parent = fmt.Sprintf("%q", x)
	}
	return b.Bytes()
}

// storeState reads every file of a store (lock files aside) and fails if a
// scribe temporary file was left behind.
func storeState(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		// Dot files are local bookkeeping: locks, temporary files a kill
		// may leave (never read); so are the catalogs' stamps.
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".db") || d.Name() == "catalog-stamps.json" {
			return err // indexes are compared by their dumps, elsewhere
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "redact.toml" {
			return nil // each store's own key
		}
		b, _ := os.ReadFile(p)
		out[rel] = b
		return nil
	})
	return out
}

func sameStores(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for n, w := range want {
		if g, ok := got[n]; !ok || !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs from the reference", what, n)
			if strings.HasSuffix(n, "index.md") {
				t.Logf("got:\n%s\nwant:\n%s", g, w)
			}
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: %s should not be there", what, n)
		}
	}
}

// validStore checks that every document and round file of a store reads.
func validStore(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".md") && filepath.Base(p) != "index.md":
			src, _ := os.ReadFile(p)
			if _, err := document.Parse(src, p); err != nil {
				t.Errorf("after a kill: %v", err)
			}
		case filepath.Base(filepath.Dir(p)) == "rounds" && !strings.HasPrefix(d.Name(), "."):
			if data, err := os.ReadFile(p); err != nil || !json.Valid(data) {
				t.Errorf("after a kill: %s is not a whole round file: %v", p, err)
			}
		}
		return nil
	})
}

// reference inscribes a transcript whole into a fresh store.
func reference(t *testing.T, name string, data []byte) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "proj", name)
	os.MkdirAll(filepath.Dir(src), 0o755)
	os.WriteFile(src, data, 0o644)
	if out, err := scribeCmd("--root", filepath.Join(dir, "data"), "inscribe", src).CombinedOutput(); err != nil {
		t.Fatalf("reference: %v\n%s", err, out)
	}
	return storeState(t, filepath.Join(dir, "data"))
}

// TestConcurrentAppends: two processes appending to the same session at
// once serialize on the document's lock: neither fails, nothing is
// duplicated or torn.
func TestConcurrentAppends(t *testing.T) {
	data := synthTranscript(40)
	want := reference(t, "s.jsonl", data)
	for i := 0; i < 5; i++ {
		dir := t.TempDir()
		src := filepath.Join(dir, "proj", "s.jsonl")
		os.MkdirAll(filepath.Dir(src), 0o755)
		os.WriteFile(src, data[:len(data)/3], 0o644)
		root := filepath.Join(dir, "data")
		if out, err := scribeCmd("--root", root, "append", src).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		os.WriteFile(src, data, 0o644)
		var wg sync.WaitGroup
		outs := make([][]byte, 2)
		errs := make([]error, 2)
		for k := 0; k < 2; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				outs[k], errs[k] = scribeCmd("--root", root, "append", src).CombinedOutput()
			}(k)
		}
		wg.Wait()
		for k := range errs {
			if errs[k] != nil {
				t.Fatalf("append %d: %v\n%s", k, errs[k], outs[k])
			}
		}
		joined := string(outs[0]) + string(outs[1])
		if strings.Count(joined, "1 appended") != 1 || strings.Count(joined, "1 unchanged") != 1 {
			t.Errorf("want one append and one no-op, got:\n%s", joined)
		}
		sameStores(t, fmt.Sprintf("run %d", i), storeState(t, root), want)
	}
}

// TestKillDuringAppend kills appends with SIGKILL at random moments. After
// each kill the store reads; the next append completes it to exactly what a
// whole inscription gives.
func TestKillDuringAppend(t *testing.T) {
	data := synthTranscript(150) // about 3 MB
	want := reference(t, "s.jsonl", data)
	// How long does an uninterrupted append take here?
	dir := t.TempDir()
	src := filepath.Join(dir, "proj", "s.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o755)
	os.WriteFile(src, data, 0o644)
	start := time.Now()
	if out, err := scribeCmd("--root", filepath.Join(dir, "data"), "append", src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	span := time.Since(start)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	killed := 0
	for i := 0; i < 25; i++ {
		dir := t.TempDir()
		src := filepath.Join(dir, "proj", "s.jsonl")
		os.MkdirAll(filepath.Dir(src), 0o755)
		root := filepath.Join(dir, "data")
		cut := len(data) * rng.Intn(100) / 100
		cut = bytes.LastIndexByte(data[:cut], '\n') + 1
		os.WriteFile(src, data[:cut], 0o644)
		if cut > 0 {
			if out, err := scribeCmd("--root", root, "append", src).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		}
		os.WriteFile(src, data, 0o644)
		if killedRun(t, rng, span, "--root", root, "append", src) {
			killed++
		}
		validStore(t, root)
		if out, err := scribeCmd("--root", root, "append", src).CombinedOutput(); err != nil {
			t.Fatalf("run %d (cut %d): the append after the kill failed: %v\n%s", i, cut, err, out)
		}
		got := storeState(t, root)
		sameStores(t, fmt.Sprintf("run %d (cut %d)", i, cut), got, want)
	}
	t.Logf("%d of 25 appends were killed mid-run (an append takes %v here)", killed, span)
}
