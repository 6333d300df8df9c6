package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK      = 0
	exitChanges = 1 // check found differences
	exitError   = 2
	// exitHookFailed is every failure of append --hook, whatever it is:
	// Claude Code reports it without blocking the session, where 2 would
	// block a Stop hook (its stderr is fed back to the model, which goes on).
	exitHookFailed = 1
	// exitInterrupted is a run stopped by Ctrl-C (SIGINT) after it
	// finished what it had started: 128 + SIGINT, as a shell reports it.
	exitInterrupted = 130
)

// env is what every command reads and writes through.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	root           string // --root; see storeRoot for the store's root
	// json is set when the command reports as JSON (--json): then an
	// error is reported as JSON too. Like hook, it is guessed from the
	// arguments before they are parsed, and set by the flag once they are.
	json bool
	// hook is set when scribe runs as a Claude Code hook (append --hook):
	// then every failure exits with exitHookFailed. It is guessed from the
	// arguments before they are parsed, so that a command line that does
	// not parse fails the same way, and set by append once they are.
	hook bool
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
	return execute(e, newRootCmd(e), args)
}

// execute runs the command line and turns its outcome, a panic included,
// into an exit status.
func execute(e *env, root *cobra.Command, args []string) (code int) {
	e.hook = hookArgs(args)
	e.json = jsonArgs(args)
	defer func() {
		if r := recover(); r != nil {
			code = exitCode(e, panicError(r))
		}
	}()
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	// The first Ctrl-C (or SIGTERM, from a service manager or a timeout)
	// asks the command to stop where it safely can, removing its
	// temporary files; a second is the signal's own: it ends scribe at
	// once, which the store survives (its writes are atomic, and the next
	// run finishes them).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) && cmd != nil {
		// A command Ctrl-C stopped in the middle (html, check, …): one
		// line, and the shell's status for an interrupt. What it wrote is
		// whole: a run to the end finishes the rest.
		err = &interruptedError{cmd: cmd.CommandPath()}
	}
	var fe *flagError
	if err != nil && cmd != nil && (errors.As(err, &fe) || isCobraUsage(err)) {
		// A usage mistake points to the help of the command it was
		// made in.
		err = &usageError{err: err, help: cmd.CommandPath() + " --help"}
	}
	return exitCode(e, err)
}

// interruptedError is a command stopped by Ctrl-C before its end.
type interruptedError struct{ cmd string }

func (e *interruptedError) Error() string {
	return "interrupted: " + e.cmd + " stopped before the end; run it again to finish"
}

// usageError is a usage mistake made in a command whose help is help
// (scribe list --help).
type usageError struct {
	err  error
	help string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// hookArgs reports whether a command line asks for hook mode (--hook),
// before it is parsed. It stops at "--", after which --hook is an argument.
func hookArgs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--hook" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--hook="); ok {
			b, err := strconv.ParseBool(v)
			return b || err != nil
		}
	}
	return false
}

// jsonArgs reports whether a command line asks for JSON (--json), before
// it is parsed. It stops at "--", after which --json is an argument.
func jsonArgs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, _ := strconv.ParseBool(v)
			return b
		}
	}
	return false
}

// panicError is a panic recovered, with the stack where it happened.
func panicError(r any) error {
	return fmt.Errorf("internal error (a bug in scribe; please report it): panic: %v\n%s", r, debug.Stack())
}

// exitCode is the one place where errors become exit statuses and messages.
// In hook mode every failure is exitHookFailed. With --json the message is
// one JSON object on stderr (errorJSON).
func exitCode(e *env, err error) int {
	code := errorCode(e.stderr, e.json, err)
	if e.hook && code != exitOK {
		return exitHookFailed
	}
	return code
}

// errorJSON is how an error is reported with --json: one line on stderr,
// {"error": "...", "hints": [...]}.
type errorJSON struct {
	Error string   `json:"error"`
	Hints []string `json:"hints"`
}

func errorCode(stderr io.Writer, asJSON bool, err error) int {
	if err == nil {
		return exitOK
	}
	var st *statusError
	if errors.As(err, &st) {
		return st.code
	}
	code := exitError
	if errors.As(err, new(*interruptedError)) {
		code = exitInterrupted
	}
	report := errorJSON{Error: strings.TrimSpace(err.Error()), Hints: []string{}}
	var he *hintError
	if errors.As(err, &he) {
		report.Hints = append(report.Hints, he.hints...)
	}
	report.Hints = append(report.Hints, repairHints(err)...)
	var ue *usageError
	var fe *flagError
	switch {
	case errors.As(err, &ue):
		report.Hints = append(report.Hints, "see '"+ue.help+"'")
	case errors.As(err, &fe) || isCobraUsage(err):
		report.Hints = append(report.Hints, "see 'scribe --help'")
	}
	if asJSON {
		enc := json.NewEncoder(stderr)
		enc.SetEscapeHTML(false)
		enc.Encode(report)
		return code
	}
	if code == exitInterrupted {
		fmt.Fprintf(stderr, "scribe: %s\n", report.Error)
		return code
	}
	fmt.Fprintf(stderr, "scribe: error: %s\n", report.Error)
	for _, h := range report.Hints {
		fmt.Fprintf(stderr, "scribe: hint: %s\n", h)
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
		Long: `scribe turns AI-agent sessions (Claude Code's, Codex's and Gemini CLI's)
into a durable, readable, searchable archive, and back again. Each session
becomes a document of its own: markdown with YAML frontmatter that reads in
any editor, backed by append-only round files that keep every source line
byte for byte. scribe turns a document back into the file its client
resumes (claude --resume, codex resume, gemini --resume; a Claude Code or
Codex session converted for the other), and checks that nothing was lost on
the way.

WHERE SESSIONS ARE READ (inscribe and append without a SOURCE)
  Claude Code  $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects
  Codex        $CODEX_HOME/sessions, else ~/.codex/sessions
  Gemini CLI   $GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp

THE STORE
  --root DIR, else $SCRIBE_ROOT, else your data directory:
    Linux, Unix  $XDG_DATA_HOME/scribe, else ~/.local/share/scribe
    macOS        ~/Library/Application Support/scribe
    Windows      %LocalAppData%\scribe
  A store is a directory holding sessions/. inscribe and append create
  it; the other commands need one and never create it. The bundled
  sample sessions, inscribed from a checkout with neither --root nor
  $SCRIBE_ROOT, go to the checkout's ./data.

EXIT STATUS
  0    success
  1    check found differences; with append --hook, any failure (never 2)
  2    error
  130  interrupted (Ctrl-C): what was started is finished; the next run
       does the rest

With --json, a command's report is JSON on stdout, and an error is one
JSON object on stderr: {"error": "...", "hints": [...]}.

Each command has its own help: scribe help COMMAND, or scribe COMMAND
--help. The README says more, and man scribe once the man pages in
docs/man are installed.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
	}
	root.SetVersionTemplate("scribe {{.Version}}\n")
	root.PersistentFlags().StringVar(&e.root, "root", "", "the store's root (default $SCRIBE_ROOT, else your data directory: see scribe --help)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &flagError{err} })
	root.AddCommand(newInscribeCmd(e), newAppendCmd(e), newExportCmd(e), newExportCodexCmd(e), newExportGeminiCmd(e), newCheckCmd(e),
		newSearchCmd(e), newListCmd(e), newShowCmd(e), newTagCmd(e, false), newTagCmd(e, true), newContextCmd(e), newReindexCmd(e),
		newServeCmd(e), newHTMLCmd(e), newMCPCmd(e), newRepairCmd(e), newScanCmd(e), newForgetCmd(e), newVersionCmd(e))
	return root
}
