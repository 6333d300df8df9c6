package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestCheckTermRemovesTemp: a check --store ended by SIGTERM (a service
// manager, a timeout) removes its temporary folder, as one stopped by
// Ctrl-C does (issue 32, 11: one left 207 MB).
func TestCheckTermRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	projects := filepath.Join(dir, "projects", "-home-dev-src-many")
	os.MkdirAll(projects, 0o755)
	src, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 60 {
		fresh := map[string]string{}
		var out bytes.Buffer
		for _, line := range bytes.SplitAfter(src, []byte("\n")) {
			out.Write(testenv.FreshUUIDs(line, fresh, rng))
		}
		os.WriteFile(filepath.Join(projects, fresh["22222222-2222-4222-8222-222222222222"]+".jsonl"), out.Bytes(), 0o644)
	}
	root := filepath.Join(dir, "store")
	if code, out, errOut := scribeRun(t, root, "inscribe", filepath.Join(dir, "projects")); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	tmp := filepath.Join(dir, "tmp")
	os.MkdirAll(tmp, 0o700)
	caught := false
	for try := 0; try < 5 && !caught; try++ {
		cmd := scribeCmd("--root", root, "check", "--store")
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if ms, _ := filepath.Glob(filepath.Join(tmp, "scribe-check-*")); len(ms) > 0 {
				caught = cmd.Process.Signal(syscall.SIGTERM) == nil
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		cmd.Wait()
	}
	if !caught {
		t.Skip("check --store ended before its temporary folder was seen")
	}
	if ms, _ := filepath.Glob(filepath.Join(tmp, "scribe-check-*")); len(ms) > 0 {
		t.Errorf("left behind: %v", ms)
	}
}
