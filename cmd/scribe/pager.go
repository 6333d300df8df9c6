package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/term"
)

// terminal reports whether w is a terminal, and its file when it is.
func terminalOf(w io.Writer) (*os.File, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// outputWidth is how wide a command's lines may be: the terminal's width
// when stdout is one, else $COLUMNS when it is set, else 0 (no limit: a
// script reading the output gets whole lines).
func (e *env) outputWidth() int {
	if f, ok := terminalOf(e.stdout); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
		return 80
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// pager is what a command writes through when it shows a person something
// long: the person's pager when stdout is a terminal, as git does, else
// stdout itself.
type pager struct {
	io.Writer
	cmd  *exec.Cmd
	pipe io.WriteCloser
}

// pagerCommand is the pager a person chose: $SCRIBE_PAGER, else $PAGER,
// else less. "" or "cat" is none.
func pagerCommand() string {
	for _, v := range []string{"SCRIBE_PAGER", "PAGER"} {
		if s, ok := os.LookupEnv(v); ok {
			return strings.TrimSpace(s)
		}
	}
	return "less"
}

// startPager starts the pager on stdout when stdout is a terminal and off
// is not set. A pager that does not start is no pager: the output goes to
// the terminal.
func (e *env) startPager(off bool) *pager {
	f, ok := terminalOf(e.stdout)
	cmdline := pagerCommand()
	if off || !ok || cmdline == "" || cmdline == "cat" {
		return &pager{Writer: e.stdout}
	}
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		args := strings.Fields(cmdline)
		cmd = exec.Command(args[0], args[1:]...)
	} else {
		cmd = exec.Command("/bin/sh", "-c", cmdline)
	}
	cmd.Stdout, cmd.Stderr = f, e.stderr
	cmd.Env = os.Environ()
	// less: quit when it all fits on one screen, show colours as they are,
	// leave the screen as it is on quitting (git's defaults).
	if _, ok := os.LookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if _, ok := os.LookupEnv("LV"); !ok {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return &pager{Writer: e.stdout}
	}
	if err := cmd.Start(); err != nil {
		pipe.Close()
		return &pager{Writer: e.stdout}
	}
	// Ctrl-C in the pager is the pager's (less stops a search with it):
	// scribe, in the same process group, ignores it while the pager runs,
	// as git does, rather than end and leave the pager to the shell.
	signal.Ignore(os.Interrupt)
	return &pager{Writer: quietPipe{pipe}, cmd: cmd, pipe: pipe}
}

// finish ends the output of a command that ended with err, and waits for
// the person to quit the pager. A pager quit before the end is no error:
// the command stopped writing then.
func (p *pager) finish(err error) error {
	if p.cmd != nil {
		p.pipe.Close()
		p.cmd.Wait() // its status is the person's business (q, or Ctrl-C)
	}
	if errors.Is(err, errPagerQuit) {
		return nil
	}
	return err
}

// errPagerQuit is a write to a pager the person has quit: the command
// stops there.
var errPagerQuit = errors.New("the pager was quit")

// quietPipe is the pager's input; a write after the person quit the pager
// fails with errPagerQuit.
type quietPipe struct{ w io.Writer }

func (q quietPipe) Write(b []byte) (int, error) {
	n, err := q.w.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return n, errPagerQuit
	}
	return n, err
}
