package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// screen is what a terminal shows after the bytes a program wrote to it:
// enough of a terminal for the progress bar's frames (printable text,
// CR, LF, cursor up, erase below and erase to the end of the line).
func screen(out []byte) []string {
	lines := []string{""}
	row, col := 0, 0
	put := func(r rune) {
		line := []rune(lines[row])
		for len(line) < col {
			line = append(line, ' ')
		}
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		lines[row] = string(line)
		col++
	}
	csi := regexp.MustCompile(`^\x1b\[([0-9;?]*)([A-Za-z])`)
	for i := 0; i < len(out); {
		if m := csi.FindSubmatch(out[i:]); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			switch m[2][0] {
			case 'A':
				row = max(0, row-max(n, 1))
			case 'J':
				lines = lines[:row+1]
				lines[row] = string([]rune(lines[row])[:min(col, utf8.RuneCountInString(lines[row]))])
			case 'K':
				lines[row] = string([]rune(lines[row])[:min(col, utf8.RuneCountInString(lines[row]))])
			}
			i += len(m[0])
			continue
		}
		r, size := utf8.DecodeRune(out[i:])
		i += size
		switch r {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
			if row == len(lines) {
				lines = append(lines, "")
			}
		default:
			if r >= ' ' {
				put(r)
			}
		}
	}
	var shown []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			shown = append(shown, l)
		}
	}
	return shown
}

// TestInterrupt: Ctrl-C in the middle of a long inscribe, on a terminal,
// stops it starting sessions and finishes those in flight; the terminal
// is left with at most three lines (the bar cleared, one line saying what
// was done and that the next run does the rest), the status is 130, and
// the next run inscribes the rest: every document once (issue 31).
func TestInterrupt(t *testing.T) {
	const sessions = 40
	dir := t.TempDir()
	projects := filepath.Join(dir, "projects", "-home-dev-src-many")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range sessions {
		fresh := map[string]string{}
		var out bytes.Buffer
		for _, line := range bytes.SplitAfter(src, []byte("\n")) {
			out.Write(testenv.FreshUUIDs(line, fresh, rng))
		}
		id := fresh["22222222-2222-4222-8222-222222222222"]
		if err := os.WriteFile(filepath.Join(projects, id+".jsonl"), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(dir, "store")
	docs := filepath.Join(root, "sessions", "claude")

	ptmx, tty := openPTY(t, 100)
	cmd := scribeCmd("--root", root, "inscribe", filepath.Join(dir, "projects"))
	cmd.Env = append(cmd.Env, "SCRIBE_TEST_SLOW_UPDATE=150")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, tty, tty
	var term bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&term, ptmx); close(done) }()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once a few documents are written.
	deadline := time.Now().Add(60 * time.Second)
	for {
		mds, _ := filepath.Glob(filepath.Join(docs, "*.md"))
		if len(mds) >= 4 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no document written in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	tty.Close()
	<-done
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit status %d (%v), want %d", code, err, exitInterrupted)
	}
	if !bytes.Contains(term.Bytes(), []byte("/40 documents")) {
		t.Error("no progress bar was drawn: the test does not see it cleared")
	}
	shown := screen(term.Bytes())
	t.Logf("the terminal shows:\n%s", strings.Join(shown, "\n"))
	if len(shown) > 3 {
		t.Errorf("%d lines left on the terminal, want at most 3", len(shown))
	}
	m := regexp.MustCompile(`^scribe: interrupted: (\d+) of (\d+) documents done; the next scribe inscribe does the other (\d+)$`).FindStringSubmatch(shown[len(shown)-1])
	if m == nil {
		t.Fatalf("the last line is %q", shown[len(shown)-1])
	}
	first, _ := strconv.Atoi(m[1])
	if total, _ := strconv.Atoi(m[2]); total != sessions || first == 0 || first == sessions {
		t.Errorf("%s of %s done, want some of %d", m[1], m[2], sessions)
	}
	for _, l := range shown {
		if strings.Contains(l, "documents ") && strings.Contains(l, "ETA") || strings.Contains(l, "context canceled") {
			t.Errorf("left on the terminal: %q", l)
		}
	}

	// The next run does the rest, and each document is inscribed once.
	out, err := scribeCmd("--root", root, "inscribe", filepath.Join(dir, "projects")).CombinedOutput()
	if err != nil {
		t.Fatalf("the next run: %v\n%s", err, out)
	}
	want := fmt.Sprintf("%d inscribed, 0 appended, %d unchanged, 0 warnings, 0 failed", sessions-first, first)
	sc := bufio.NewScanner(bytes.NewReader(out))
	last := ""
	for sc.Scan() {
		last = sc.Text()
	}
	if last != want {
		t.Errorf("the next run says %q, want %q", last, want)
	}
	mds, _ := filepath.Glob(filepath.Join(docs, "*.md"))
	if len(mds) != sessions+1 { // and the agent's index.md
		t.Errorf("%d documents, want %d", len(mds)-1, sessions)
	}
	check := exec.Command(os.Args[0], "--root", root, "check", "--store")
	check.Env = append(os.Environ(), "SCRIBE_TEST_MAIN=1")
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("check --store after the interrupted run and the next: %v\n%s", err, out)
	}
}
