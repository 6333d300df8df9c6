package storetest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// smallSample is the largest bundled sample Generate copies: the others
// (150 tool calls in one turn, a 20,000-line output, two compactions) would
// make a store of many sessions a store of a few big ones.
const smallSample = 250 << 10

// GeneratedID is the session id of the i-th session Generate writes.
func GeneratedID(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

// Generate writes n sessions into dir, laid out as ~/.claude/projects: the
// bundled samples smaller than 250 KB, copied in turn, each under a new
// session id (GeneratedID) that replaces the sample's id wherever it occurs,
// in its transcript and in what Claude Code keeps beside it (subagents,
// tool results); 100 sessions to a project directory. It writes nothing to
// a dir that already holds the n sessions, so that a benchmark can reuse
// them.
func Generate(tb testing.TB, dir string, n int) {
	tb.Helper()
	stamp := filepath.Join(dir, fmt.Sprintf(".generated-%d", n))
	if _, err := os.Stat(stamp); err == nil {
		return
	}
	samples := smallSamples(tb)
	for i := 0; i < n; i++ {
		s := samples[i%len(samples)]
		project := filepath.Join(dir, fmt.Sprintf("-home-dev-src-p%04d", i/100))
		if err := copySession(s, project, GeneratedID(i)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// smallSamples lists the bundled sample transcripts smaller than
// smallSample, in order.
func smallSamples(tb testing.TB) []string {
	tb.Helper()
	all, err := filepath.Glob(filepath.Join(testenv.Projects(tb), "*", "*.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, p := range all {
		if fi, err := os.Stat(p); err == nil && fi.Size() < smallSample {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		tb.Fatalf("no sample under %d bytes in %s", smallSample, testenv.Projects(tb))
	}
	return out
}

// copySession copies the transcript src and its folder into project under
// the session id id.
func copySession(src, project, id string) error {
	old := strings.TrimSuffix(filepath.Base(src), ".jsonl")
	rewrite := func(from, to string) error {
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, bytes.ReplaceAll(data, []byte(old), []byte(id)), 0o644)
	}
	if err := rewrite(src, filepath.Join(project, id+".jsonl")); err != nil {
		return err
	}
	folder := strings.TrimSuffix(src, ".jsonl")
	err := filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(folder, p)
		return rewrite(p, filepath.Join(project, id, rel))
	})
	if os.IsNotExist(err) {
		return nil
	}
	return err
}
