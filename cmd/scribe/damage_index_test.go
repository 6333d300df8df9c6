package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corruptPages overwrites the pages of a SQLite database from a quarter of
// its length to nine tenths with random bytes, leaving its header (and
// first page) as they were: a database that opens, then fails where it is
// read.
func corruptPages(t *testing.T, p string, rng *rand.Rand) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := fi.Size() / page
	if pages < 8 {
		t.Fatalf("%s has %d pages: too small to damage in the middle", p, pages)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, page)
	for n := pages / 4; n < pages*9/10; n++ {
		rng.Read(junk)
		if _, err := f.WriteAt(junk, n*page); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDamagedIndexes: a page-damaged sessions.db or session.db does not
// fail every append ("database disk image is malformed"): it is set aside
// as <name>.damaged-<time> and rebuilt from the round files, with a
// warning, and the append goes on (issue 14).
func TestDamagedIndexes(t *testing.T) {
	for _, which := range []string{"sessions.db", "session.db"} {
		t.Run(which, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "data")
			src := filepath.Join(dir, "proj", "s.jsonl")
			os.MkdirAll(filepath.Dir(src), 0o755)
			data := synthTranscript(120)
			cut := strings.Index(string(data), `"question 100"`)
			cut = strings.LastIndexByte(string(data[:cut]), '\n') + 1
			os.WriteFile(src, data[:cut], 0o644)
			if out, err := scribeCmd("--root", root, "append", src).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			db := filepath.Join(root, ".scribe", "sessions.db")
			if which == "session.db" {
				db = filepath.Join(root, ".scribe", "docs", "claude", "s", "session.db")
			}
			corruptPages(t, db, rand.New(rand.NewSource(1)))
			os.WriteFile(src, data, 0o644)
			cmd := scribeCmd("--root", root, "append", src)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("append over a damaged %s: %v\n%s%s", which, err, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), "1 appended") {
				t.Errorf("stdout: %s", stdout.String())
			}
			if !strings.Contains(stderr.String(), "scribe: warning: "+db+": damaged") || !strings.Contains(stderr.String(), "set aside as "+which+".damaged-") {
				t.Errorf("no warning that %s was damaged and set aside:\n%s", which, stderr.String())
			}
			if aside, _ := filepath.Glob(db + ".damaged-*Z"); len(aside) != 1 {
				t.Errorf("set aside: %v", aside)
			}
			out, err := scribeCmd("--root", root, "search", "question 110").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "round 111") {
				t.Errorf("search after the rebuild: %v\n%s", err, out)
			}
			if out, err := scribeCmd("--root", root, "check", "--store").CombinedOutput(); err != nil {
				t.Errorf("check --store: %v\n%s", err, out)
			}
		})
	}
}
