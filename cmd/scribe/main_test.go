package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scribe-archive/scribe/internal/testenv"
)

func TestMain(m *testing.M) {
	// A test can run scribe as a process of its own: the test binary, with
	// SCRIBE_TEST_MAIN set, is scribe.
	if os.Getenv("SCRIBE_TEST_MAIN") != "" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"scribe": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
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
			e.Setenv("TZ", "UTC")
			e.Setenv("SAMPLES", samples)
			return nil
		},
	})
}

// TestExitCodes pins the one mapping from errors to exit statuses.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{&statusError{exitChanges}, exitChanges},
		{&statusError{exitError}, exitError},
		{errors.New("boom"), exitError},
		{&flagError{errors.New("bad flag")}, exitError},
		{withHint(errors.New("x"), "do y"), exitError},
	} {
		var stderr bytes.Buffer
		if got := exitCode(nil, &stderr, c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// scribeCmd returns a command that runs scribe as a separate process.
func scribeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCRIBE_TEST_MAIN=1")
	return cmd
}
