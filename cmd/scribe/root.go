package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK      = 0
	exitChanges = 1 // check found differences; also a failed --hook run
	exitError   = 2
)

// env is what every command reads and writes through.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	root           string // store root (--root, $SCRIBE_ROOT, ./data)
}

// errSilent ends a command with a status after it printed its own report.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// flagError is a usage mistake: the usage is shown with it.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

// hintError carries advice for the person at the terminal.
type hintError struct {
	err   error
	hints []string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, hints ...string) error { return &hintError{err: err, hints: hints} }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := root.ExecuteContext(ctx)
	return exitCode(root, stderr, err)
}

// exitCode is the one place where errors become exit statuses and messages.
func exitCode(root *cobra.Command, stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var st *statusError
	if errors.As(err, &st) {
		return st.code
	}
	fmt.Fprintf(stderr, "scribe: error: %s\n", strings.TrimSpace(err.Error()))
	var he *hintError
	if errors.As(err, &he) {
		for _, h := range he.hints {
			fmt.Fprintf(stderr, "scribe: hint: %s\n", h)
		}
	}
	var fe *flagError
	if errors.As(err, &fe) || isCobraUsage(err) {
		fmt.Fprintf(stderr, "scribe: hint: see 'scribe --help'\n")
	}
	return exitError
}

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") || strings.Contains(s, "accepts ") ||
		strings.HasPrefix(s, "flag needs an argument") || strings.HasPrefix(s, "invalid argument")
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "scribe",
		Short: "Turn agent sessions into a durable, readable, searchable archive, and back again",
		Long: `scribe turns Claude Code sessions into documents: markdown with YAML
frontmatter, backed by append-only round files, in a store (by default
./data). It can turn them back into a transcript that
claude --resume accepts, and check that nothing was lost on the way.

EXIT STATUS
  0  success
  1  check found differences (or, with append --hook, something failed)
  2  error`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if e.root == "" {
				e.root = os.Getenv("SCRIBE_ROOT")
			}
			if e.root == "" {
				e.root = "data"
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&e.root, "root", "", "store root (default $SCRIBE_ROOT, else ./data)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &flagError{err} })
	root.AddCommand(newInscribeCmd(e), newAppendCmd(e), newExportCmd(e), newCheckCmd(e),
		newSearchCmd(e), newTagCmd(e, false), newTagCmd(e, true), newContextCmd(e), newReindexCmd(e), newServeCmd(e), newHTMLCmd(e))
	return root
}
