package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// openPTY opens a pseudo-terminal of cols columns and returns its two
// ends: what a program writes to tty shows on the terminal, which the
// test reads from ptmx.
func openPTY(t *testing.T, cols int) (ptmx, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws := struct{ rows, cols, x, y uint16 }{24, uint16(cols), 0, 0}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		t.Fatal(e)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// onTerminal runs scribe as a process of its own with its stdout on a
// terminal of cols columns, and its pager (if it starts one) writing what
// it is given to a file. It returns what the terminal showed and what the
// pager was given ("" when no pager ran).
func onTerminal(t *testing.T, cols int, env []string, args ...string) (shown, paged string) {
	t.Helper()
	ptmx, tty := openPTY(t, cols)
	out := filepath.Join(t.TempDir(), "paged")
	cmd := scribeCmd(args...)
	cmd.Env = append(cmd.Env, "SCRIBE_PAGER=cat > "+out, "TZ=UTC")
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, tty, &stderr
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&screen, ptmx); close(done) }()
	if err := cmd.Run(); err != nil {
		t.Fatalf("scribe %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	tty.Close() // the terminal's output ends when the last writer is gone
	<-done
	data, err := os.ReadFile(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return screen.String(), string(data)
}

// TestTerminal: on a terminal, show is the reading view through the pager
// (no identity comment), --raw is the document byte for byte, and list
// fits the terminal's width and stops at its default limit or --limit
// (issue 31).
func TestTerminal(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	var stderr bytes.Buffer
	if code := run([]string{"--root", root, "inscribe", testenv.Projects(t), filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions")}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("inscribe: %d\n%s", code, stderr.String())
	}
	md := filepath.Join(root, "sessions", "claude", "22222222-2222-4222-8222-222222222222.md")
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}

	shown, paged := onTerminal(t, 80, nil, "--root", root, "show", "2222")
	if !strings.HasPrefix(paged, "# first question\n") || strings.Contains(paged, "<!-- scribe") || strings.Contains(paged, `<a id=`) {
		t.Errorf("show 2222 gave the pager:\n%s", paged)
	}
	if strings.Contains(shown, "first question") {
		t.Errorf("show 2222 wrote to the terminal itself:\n%s", shown)
	}

	_, paged = onTerminal(t, 80, nil, "--root", root, "show", "--raw", "2222")
	if paged != string(doc) {
		t.Errorf("show --raw 2222 is not the document (%d bytes, want %d)", len(paged), len(doc))
	}

	// --no-pager, or a pager of cat: the terminal itself.
	for _, c := range []struct {
		env  []string
		args []string
	}{{nil, []string{"--no-pager"}}, {[]string{"SCRIBE_PAGER=cat"}, nil}} {
		shown, paged = onTerminal(t, 80, c.env, append([]string{"--root", root, "show", "2222"}, c.args...)...)
		if paged != "" || !strings.Contains(shown, "# first question") {
			t.Errorf("%v %v: the pager had %q, the terminal %q", c.env, c.args, paged, shown)
		}
	}

	// list at 80 columns: no line wider; --limit 5 shows 5.
	for _, cols := range []int{80, 60, 200} {
		_, paged = onTerminal(t, cols, nil, "--root", root, "list")
		lines := strings.Split(strings.TrimSuffix(paged, "\n"), "\n")
		if len(lines) != 23 {
			t.Errorf("list at %d columns: %d lines, want a header and 22 sessions:\n%s", cols, len(lines), paged)
		}
		for _, l := range lines {
			if cells(l) > cols {
				t.Errorf("list at %d columns: %d columns in %q", cols, cells(l), l)
			}
		}
	}
	_, paged = onTerminal(t, 80, nil, "--root", root, "list", "--limit", "5")
	lines := strings.Split(strings.TrimSuffix(paged, "\n"), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "SESSION ") || lines[6] != "… and 17 more (--limit 0 lists them all)" {
		t.Errorf("list --limit 5 is %d lines:\n%s", len(lines), paged)
	}
}

// TestPagerInterrupt: Ctrl-C while the pager shows the session is the
// pager's: scribe, given two, waits for the pager to end and ends well,
// its output whole, instead of leaving the pager to the shell.
func TestPagerInterrupt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	var stderr bytes.Buffer
	if code := run([]string{"--root", root, "inscribe", filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn")}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("inscribe: %d\n%s", code, stderr.String())
	}
	ptmx, tty := openPTY(t, 80)
	out := filepath.Join(t.TempDir(), "paged")
	started := filepath.Join(t.TempDir(), "started")
	cmd := scribeCmd("--root", root, "show", "2222")
	cmd.Env = append(cmd.Env, "SCRIBE_PAGER=touch "+started+"; sleep 1; cat > "+out, "TZ=UTC")
	cmd.Stdout, cmd.Stderr = tty, &stderr
	go io.Copy(io.Discard, ptmx)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the pager did not start")
		}
	}
	for range 2 {
		cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("scribe show, interrupted twice while the pager ran: %v (%v)\n%s", err, cmd.ProcessState, stderr.String())
	}
	if data, _ := os.ReadFile(out); !strings.Contains(string(data), "Answer number 5.") {
		t.Errorf("the pager was given %q", data)
	}
}
