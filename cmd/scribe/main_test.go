package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

func TestMain(m *testing.M) {
	// A test can run scribe as a process of its own: the test binary, with
	// SCRIBE_TEST_MAIN set, is scribe.
	if os.Getenv("SCRIBE_TEST_MAIN") != "" {
		// It may take its time over each session, for a test to
		// interrupt it in the middle.
		// It may commit a session's round files a few at a time, as it
		// does a long session's by thousands, for a test to kill it
		// between two commits.
		if n, _ := strconv.Atoi(os.Getenv("SCRIBE_TEST_ROUNDS_PER_COMMIT")); n > 0 {
			inscribe.TestOnlyRoundsPerCommit = n
		}
		// It may kill itself (SIGKILL) the nth time it is about to put
		// a new folder in place (SCRIBE_TEST_KILL_AT=rename:n), for a test
		// to kill it inside that window.
		if op, n, ok := strings.Cut(os.Getenv("SCRIBE_TEST_KILL_AT"), ":"); ok {
			left, _ := strconv.Atoi(n)
			atomicfile.TestOnlyFault = func(o, name string) error {
				if o == op {
					if left--; left == 0 {
						if p, err := os.FindProcess(os.Getpid()); err == nil {
							p.Kill() // SIGKILL
						}
					}
				}
				return nil
			}
		}
		if ms, _ := strconv.Atoi(os.Getenv("SCRIBE_TEST_SLOW_UPDATE")); ms > 0 {
			update := storeUpdate
			storeUpdate = func(v *views.Views, s source.Session, o inscribe.Options) []inscribe.Result {
				time.Sleep(time.Duration(ms) * time.Millisecond)
				return update(v, s, o)
			}
		}
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Or another scribe holding indexes in a transaction (holdIndexes).
	if paths := os.Getenv("SCRIBE_TEST_HOLD_INDEXES"); paths != "" {
		os.Exit(holdIndexesMain(filepath.SplitList(paths)))
	}
	testscript.Main(m, map[string]func(){
		"scribe": func() {
			// A script sets the time relative dates count back from.
			if s := os.Getenv("SCRIBE_TEST_NOW"); s != "" {
				t, err := time.Parse(time.RFC3339, s)
				if err != nil {
					panic("SCRIBE_TEST_NOW: " + err.Error())
				}
				testOnlyNow = t
			}
			os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"want-status": func() { os.Exit(wantStatus(os.Args[1:])) },
	})
}

// wantStatus runs "want-status N PROGRAM [ARG...]": it runs the program
// with its own stdin, stdout and stderr and succeeds when the program exits
// with status N, so a script can tell exit statuses apart (! exec only
// says "not 0").
func wantStatus(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: want-status N PROGRAM [ARG...]")
		return 2
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "want-status: %v\n", err)
		return 2
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "want-status: %v\n", err)
		return 2
	}
	if got := cmd.ProcessState.ExitCode(); got != want {
		fmt.Fprintf(os.Stderr, "want-status: %s exited with status %d (%v), want %d\n", args[1], got, cmd.ProcessState, want)
		return 1
	}
	return 0
}

// TestScript runs the end-to-end scripts in testdata/script.
func TestScript(t *testing.T) {
	samples := testenv.Projects(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *testenv.Update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir+"/home")
			// The scripts work on ./data unless they say otherwise;
			// store_root.txtar unsets this to test the default.
			e.Setenv("SCRIBE_ROOT", "data")
			e.Setenv("TZ", "UTC")
			e.Setenv("SAMPLES", samples)
			e.Setenv("CODEX_SAMPLES", filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"))
			e.Setenv("GEMINI_SAMPLES", filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" { // root ignores file permissions
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// TestExitCodes pins the one mapping from errors to exit statuses: in hook
// mode every failure is 1, never 2 (which blocks a Stop hook).
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err            error
		want, wantHook int
	}{
		{nil, exitOK, exitOK},
		{&statusError{exitChanges}, exitChanges, exitHookFailed},
		{&statusError{exitError}, exitError, exitHookFailed},
		{errors.New("boom"), exitError, exitHookFailed},
		{&flagError{errors.New("bad flag")}, exitError, exitHookFailed},
		{withHint(errors.New("x"), "do y"), exitError, exitHookFailed},
		{panicError("boom"), exitError, exitHookFailed},
		{&interruptedError{cmd: "scribe html"}, exitInterrupted, exitHookFailed},
	} {
		var stderr bytes.Buffer
		if got := exitCode(&env{stderr: &stderr}, c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
		if got := exitCode(&env{stderr: &stderr, hook: true}, c.err); got != c.wantHook {
			t.Errorf("in hook mode, exitCode(%v) = %d, want %d", c.err, got, c.wantHook)
		}
	}
}

// scribeCmd returns a command that runs scribe as a separate process.
func scribeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCRIBE_TEST_MAIN=1")
	return cmd
}

// TestErrorJSON pins the shape of an error with --json: one object on
// stderr, hints always a list.
func TestErrorJSON(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("boom"), `{"error":"boom","hints":[]}`},
		{withHint(errors.New("x <y>"), "do y", "or z"), `{"error":"x <y>","hints":["do y","or z"]}`},
		{&flagError{errors.New("bad flag")}, `{"error":"bad flag","hints":["see 'scribe --help'"]}`},
	} {
		var stderr bytes.Buffer
		if got := exitCode(&env{stderr: &stderr, json: true}, c.err); got != exitError {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, exitError)
		}
		if got := stderr.String(); got != c.want+"\n" {
			t.Errorf("with --json, %v is reported as %s, want %s", c.err, got, c.want)
		}
	}
	var stderr bytes.Buffer
	exitCode(&env{stderr: &stderr, json: true}, &statusError{exitChanges})
	if stderr.Len() != 0 {
		t.Errorf("a status after a report printed %q", stderr.String())
	}
}

// holdIndexesMain begins a write transaction in each index named (a
// document's session.db is opened as scribe opens it), says "held" and
// holds them until stdin ends.
func holdIndexesMain(paths []string) int {
	ctx := context.Background()
	for _, p := range paths {
		open := index.Open
		if filepath.Base(p) == "session.db" {
			open = index.OpenScratch
		}
		db, err := open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer db.Close()
		b, err := db.Begin(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer b.Rollback()
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return 0
}
