package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/session/source"
)

// bundledSamples is where the repository keeps its sample sessions (one
// folder per client), used when a person runs scribe from a checkout and
// has no sessions of their own.
var bundledSamples = []string{"testdata/claude/projects", "testdata/codex/sessions", "testdata/gemini/tmp"}

type updateOptions struct {
	sources []string
	agent   string
	hook    bool
	verify  bool
	// emptyOK: with no SOURCE, a client's folder that holds no session is
	// nothing to do rather than an error (append, from cron).
	emptyOK bool
	force   bool
	rebuild bool
	verbose bool
	redact  redactFlags
}

func newInscribeCmd(e *env) *cobra.Command {
	var o updateOptions
	cmd := &cobra.Command{
		Use:   "inscribe [SOURCE...]",
		Short: "Inscribe sessions into the store (or add what is new to those already there)",
		Long: `inscribe reads Claude Code transcripts, Codex rollouts and Gemini CLI
session files into the store: a document for each session
(sessions/<agent>/<session>.md), its round files and the index files.

SOURCE is a session file (a Claude Code <session>.jsonl, a subagent's
transcript, a Codex rollout-….jsonl, a Gemini CLI session-….jsonl), a
folder of them (a Claude Code project, ~/.claude/projects/<project>; a day
of Codex sessions; a Gemini CLI project's chats) or a folder of folders
(~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp). With no SOURCE,
scribe reads every folder where a client keeps sessions on this machine:
  Claude Code  $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects
  Codex        $CODEX_HOME/sessions, else ~/.codex/sessions
  Gemini CLI   $GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp
and, when there is none, the sample sessions bundled with a checkout.

A session already in the store is checked against its source from the start
and brought up to date: inscribing twice changes nothing. A source nothing
wrote to since it was inscribed (its status change time says so) is not
read again.

Ctrl-C stops it starting sessions: those in flight are finished, one line
says how many were done, and the next run does the rest (status 130).
` + updateJSONHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.sources = args
			o.verify = true
			return runUpdate(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.agent, "agent", "", "file the sessions under this agent id (a role slug)")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every document, unchanged ones too")
	cmd.Flags().BoolVar(&o.rebuild, "rebuild", false, "rebuild documents whose read note (state.json) is lost, from their sources")
	o.redact.add(cmd, "in what is inscribed")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

func newAppendCmd(e *env) *cobra.Command {
	var o updateOptions
	cmd := &cobra.Command{
		Use:   "append [SOURCE...]",
		Short: "Add what is new in sessions to the store; safe on live sessions",
		Long: `append adds to the store only what is new in each source since the last
run: it reads the source from where it stopped (checking that the part it
read before is unchanged) and leaves the existing document alone except for
its last, still open round and its frontmatter. Running it twice changes
nothing the second time. Sessions not yet in the store are inscribed.
SOURCE is what inscribe takes, and so is no SOURCE: the folders where
Claude Code, Codex and Gemini CLI keep their sessions (a folder that is
there but empty is nothing to do, as from cron).

With --hook, the source is read from a Claude Code hook's input on stdin
(its transcript_path), so a Stop or SessionEnd hook can run it directly.
It never blocks the session:
  - Every failure exits with status 1, which Claude Code reports without
    blocking, never 2 (which would block a Stop hook): a store that does
    not open, a transcript missing or unreadable, a write that fails, bad
    hook input, a command line that does not parse, a panic. stderr says
    what went wrong.
  - stdin is read up to its first complete JSON object, for at most 10s
    and 64 MiB. A transcript the client has not written yet (a turn's
    first lines are flushed after the hook may start) is waited for at
    most 3s; at a Stop hook, one with nothing new yet (the turn the hook
    follows not written yet) for the same time, then read again.
  - A document another scribe is writing is waited for at most 1.5s, then
    left for the next append, which catches up; stderr says so. That is
    not a failure: the status is 0 unless something else failed. So are
    an index or the catalogs another process is writing: the document is
    written, and they are brought up to date by the next append.
` + updateJSONHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.sources = args
			o.emptyOK = true
			e.hook = o.hook
			return runUpdate(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.agent, "agent", "", "file the sessions under this agent id (a role slug)")
	cmd.Flags().BoolVar(&o.hook, "hook", false, "read the transcript path from Claude Code hook input on stdin")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace a provisional last round that was edited by hand")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every document, unchanged ones too")
	o.redact.add(cmd, "in what is appended")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

// updateJSONHelp documents the report of inscribe and append --json.
const updateJSONHelp = `
With --json the report is one object on stdout:
  {"documents": [{"outcome", "doc", "source", "warnings", "error",
   "hints"}, ...], "inscribed", "appended", "unchanged", "upgraded",
   "warnings", "failed", "left", "skipped"}
with one entry per document, unchanged ones too; outcome is inscribed,
appended, unchanged, upgraded, failed, left (append --hook: another
scribe was writing it) or skipped (a session file with no entry yet, which
Claude Code creates before it writes: no document until it has one; -v
lists them); doc is "" when no document exists; error is "" unless it
failed.`

func runUpdate(ctx context.Context, e *env, o updateOptions) error {
	sources := o.sources
	afterTurn := false // a Stop hook: a turn just ended
	if o.hook {
		if len(sources) > 0 {
			return &flagError{errors.New("--hook reads its source from stdin: give no SOURCE")}
		}
		in, err := readHookInput(ctx, e.stdin, hookInputTimeout, hookInputMax)
		if err != nil {
			return err
		}
		waitForTranscript(ctx, in.TranscriptPath, hookTranscriptWait)
		sources = []string{in.TranscriptPath}
		afterTurn = in.HookEventName == "Stop"
	}
	root, named, err := e.storeRoot()
	if err != nil {
		return err
	}
	if len(sources) == 0 {
		var samples bool
		if sources, samples, err = defaultSource(o.emptyOK); err != nil {
			return err
		}
		if samples {
			// The repository's data/ is the inscription of its samples:
			// inscribing them there changes nothing, and keeps a person's
			// store out of the checkout.
			where := "your store"
			if !named {
				root, where = sampleRoot, "the checkout's ./"+sampleRoot
			}
			fmt.Fprintf(e.stderr, "scribe: %s; inscribing the bundled sample sessions in %s into %s\n", noSessionsNote(), strings.Join(sources, " and "), where)
		}
	}
	store, err := openStore(root)
	if err != nil {
		return err
	}
	if _, err := setRedaction(root, store.Store, o.redact, true); err != nil {
		return err
	}
	opts := inscribe.Options{Agent: o.agent, Verify: o.verify, Force: o.force, Rebuild: o.rebuild}
	if o.hook {
		// A hook holds up the end of the turn: it does not wait out another
		// scribe writing the same document (a cron append, the hook of a
		// parallel session) but leaves the document for the next append.
		opts.LockWait = hookLockWait
		// Nor does it wait out another writer of an index or a catalog:
		// they are left for the next append, which brings them up to date.
		store.Wait = hookLockWait
	}

	var transcripts []source.Session
	var found []inscribe.Result // what discovery skipped or failed to read
	for _, src := range sources {
		ts, skipped, err := discover(src)
		for _, sk := range skipped {
			found = append(found, inscribe.Result{Source: sk.Path, Outcome: inscribe.Skipped, Warnings: []error{sk}})
		}
		if err != nil {
			found = append(found, inscribe.Result{Source: src, Outcome: inscribe.Failed, Err: describeOpenError(src, err)})
			continue
		}
		transcripts = append(transcripts, ts...)
	}
	if len(transcripts) == 0 && !anyOutcome(found, inscribe.Failed) {
		fmt.Fprintf(e.stderr, "scribe: no sessions in %s\n", strings.Join(sources, ", "))
		var below []string
		for _, src := range sources {
			below = append(below, sessionsBelow(src)...)
		}
		if len(below) > 0 {
			verb := "inscribe"
			if o.emptyOK {
				verb = "append"
			}
			fmt.Fprintf(e.stderr, "scribe: hint: sessions are in %s: run scribe %s %s\n", strings.Join(below, " and "), verb, strings.Join(below, " "))
		}
	}
	results, left := updateAll(ctx, e, store, transcripts, opts)
	if afterTurn && len(transcripts) == 1 && allUnchanged(results) && waitForGrowth(ctx, transcripts[0].Path, hookTranscriptWait) {
		// A Stop hook follows a turn: a transcript with nothing new is
		// one whose turn the client had not written yet. (Another hook,
		// SessionEnd say, does not wait.)
		results, left = updateAll(ctx, e, store, transcripts, opts)
	}
	results = append(found, results...)
	interrupted := ctx.Err() != nil

	// inscribe refreshes the catalogs of the agents it changed from every
	// document (and notices one changed by another hand); append patches
	// them with the rows of the sessions it updated alone (PatchAfter).
	refresh := store.RefreshAfter
	if o.emptyOK {
		refresh = store.PatchAfter
	}
	var busy *inscribe.LockError
	if err := refresh(results); o.hook && errors.As(err, &busy) {
		fmt.Fprintf(e.stderr, "scribe: another scribe is updating the catalogs in %s; left for the next append\n", store.SessionsDir())
	} else if err != nil {
		results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Failed, Err: fmt.Errorf("update index files: %w", err)})
	}
	if err := store.CloseIndex(); err != nil {
		results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Failed, Err: fmt.Errorf("close the index: %w", err)})
	}
	nfailed := report(e, results, o.verbose, interrupted)
	if interrupted {
		// One line: what was done, and that the rest is the next run's.
		// The documents in flight were finished; those not started are
		// untouched, as if this run had not looked at them.
		verb := "inscribe"
		if o.emptyOK {
			verb = "append"
		}
		done := 0
		for _, r := range results {
			if !errors.Is(r.Err, errInterrupted) && r.Outcome != inscribe.Skipped {
				done++
			}
		}
		failed := ""
		if nfailed > 0 {
			failed = fmt.Sprintf(" (%d failed, above)", nfailed)
		}
		if !e.json {
			fmt.Fprintf(e.stderr, "scribe: interrupted: %d of %d %s done%s; the next scribe %s does the other %d\n",
				done, done+left, plural(done+left, "document", "documents"), failed, verb, left)
		}
		return &statusError{exitInterrupted}
	}
	if nfailed > 0 {
		return &statusError{exitError} // exitHookFailed in hook mode
	}
	return nil
}

// errInterrupted is the outcome of a session an interrupted run did not
// start: left as it was, for the next run.
var errInterrupted = errors.New("interrupted before it started: left for the next run")

// anyOutcome reports whether any of results has outcome o.
func anyOutcome(results []inscribe.Result, o inscribe.Outcome) bool {
	for _, r := range results {
		if r.Outcome == o {
			return true
		}
	}
	return false
}

// hookLockWait is how long append --hook waits for a document that another
// scribe is writing before it leaves the document for the next append.
const hookLockWait = 1500 * time.Millisecond

// defaultSource is where scribe looks when given no source: every folder
// where a client keeps sessions on this machine, else the bundled samples
// (samples is then set). With emptyOK (append), a client's folder that is
// there but holds no session (Claude Code's cleanup emptied it) is where
// to look: there is nothing new, and that is no error.
func defaultSource(emptyOK bool) (srcs []string, samples bool, err error) {
	have, looked := defaultSources()
	if len(have) > 0 {
		return have, false, nil
	}
	if emptyOK {
		for _, dir := range looked {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				have = append(have, dir)
			}
		}
		if len(have) > 0 {
			return have, false, nil
		}
	}
	var dirs []string
	for _, dir := range bundledSamples {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) > 0 {
		return dirs, true, nil
	}
	return nil, false, withHint(fmt.Errorf("no sessions to inscribe: none in %s", strings.Join(looked, " or ")),
		"name a session file or a folder of sessions: scribe inscribe ~/.claude/projects/<project>/",
		"or set CLAUDE_CONFIG_DIR to the directory that holds Claude Code's projects/")
}

// noSessionsNote says where scribe looked for sessions and found none.
func noSessionsNote() string {
	_, looked := defaultSources()
	return "no sessions in " + strings.Join(looked, " or ")
}

func describeOpenError(src string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such file or directory", src)
	}
	return err
}

// updateAll updates transcripts in parallel, reporting progress on a
// terminal. Results come back in the transcripts' order.
//
// An interrupt (ctx done) stops it starting sessions; those in flight are
// finished. Each session not started is one result whose error is
// errInterrupted, and left is how many documents they hold.
func updateAll(ctx context.Context, e *env, store *views.Views, ts []source.Session, opts inscribe.Options) (results []inscribe.Result, left int) {
	out := make([][]inscribe.Result, len(ts))
	planned := 0
	for _, t := range ts {
		planned += docsOf(t)
	}
	store.Plan(planned)
	prog := newProgress(e.stderr, planned)
	var wg sync.WaitGroup
	next := make(chan int)
	workers := min(max(2, runtime.GOMAXPROCS(0)*2), 8)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = updateOne(ts[i].Path, func() []inscribe.Result { return storeUpdate(store, ts[i], opts) })
				prog.add(len(out[i]), docsOf(ts[i]))
			}
		}()
	}
feed:
	for _, i := range largestFirst(ts) {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	prog.done()
	var flat []inscribe.Result
	for i, rs := range out {
		if rs == nil && ctx.Err() != nil {
			flat = append(flat, inscribe.Result{Source: ts[i].Path, Outcome: inscribe.Failed, Err: errInterrupted})
			left += docsOf(ts[i])
		}
		flat = append(flat, rs...)
	}
	return flat, left
}

// largestFirst returns the indexes of ts, the largest sessions (their
// files and sidechains) first: a large session started last would keep
// one worker busy while the others have nothing left to do.
func largestFirst(ts []source.Session) []int {
	order := make([]int, len(ts))
	sizes := make([]int64, len(ts))
	for i, t := range ts {
		order[i] = i
		size := func(p string) {
			if fi, err := os.Stat(p); err == nil {
				sizes[i] += fi.Size()
			}
		}
		size(t.Path)
		for _, sc := range t.Sidechains {
			size(sc.Path)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	return order
}

// docsOf is how many documents an update of a session looks at: the
// session's own (when its file was found) and one per sidechain. The
// summary counts documents; so does the progress bar.
func docsOf(t source.Session) int {
	n := len(t.Sidechains)
	if t.Path != "" {
		n++
	}
	return n
}

// storeUpdate is inscribe.Store.Update; a test may make it panic.
var storeUpdate = (*views.Views).Update

// updateOne runs the update of one source. A panic fails its documents
// alone: the run goes on with the others and ends with a failure's status.
func updateOne(src string, update func() []inscribe.Result) (rs []inscribe.Result) {
	defer func() {
		if r := recover(); r != nil {
			rs = []inscribe.Result{{Source: src, Outcome: inscribe.Failed, Err: fmt.Errorf("%s: %w", src, panicError(r))}}
		}
	}()
	return update()
}

// report prints the outcome of a run and returns how many documents failed.
// In hook mode a document another scribe is writing is not a failure: it is
// left for the next append, which catches up; nor is a session an
// interrupted run did not start. An interrupted run prints its failures
// alone (runUpdate says the rest in one line).
func report(e *env, results []inscribe.Result, verbose, interrupted bool) int {
	sum := updateJSON{Documents: []docJSON{}}
	counts := map[inscribe.Outcome]int{}
	for _, r := range results {
		d := docJSON{Outcome: string(r.Outcome), Source: r.Source, Warnings: []string{}, Hints: []string{}}
		// The document of an update that did not fail is there (the
		// update wrote or checked it): a stat each is not free over a
		// store of many documents.
		if r.Doc != "" && r.Err == nil && r.Outcome != inscribe.Skipped {
			d.Doc = r.Doc
		} else if _, err := os.Stat(r.Doc); err == nil {
			d.Doc = r.Doc
		}
		for _, w := range r.Warnings {
			sum.Warnings++
			d.Warnings = append(d.Warnings, w.Error())
			if !e.json && !interrupted {
				fmt.Fprintf(e.stderr, "scribe: warning: %v\n", w)
			}
		}
		var busy *inscribe.LockError
		switch {
		case errors.Is(r.Err, errInterrupted):
			d.Outcome = "left"
			d.Error = r.Err.Error()
			sum.Left++
		case e.hook && errors.As(r.Err, &busy):
			doc := r.Doc
			if doc == "" {
				doc = busy.Path + ".md"
			}
			if !e.json {
				fmt.Fprintf(e.stderr, "scribe: another scribe is writing %s; left for the next append\n", doc)
			}
			d.Outcome = "left"
			sum.Left++
		case r.Err != nil:
			counts[r.Outcome]++
			d.Error = r.Err.Error()
			d.Hints = append(d.Hints, resultHints(r.Err)...)
			if !e.json {
				fmt.Fprintf(e.stderr, "scribe: error: %v\n", r.Err)
				for _, h := range d.Hints {
					fmt.Fprintf(e.stderr, "scribe: hint: %s\n", h)
				}
			}
		case r.Outcome == inscribe.Skipped:
			sum.Skipped++
			if !e.json && verbose && !interrupted {
				why := "" // a warning said why
				if len(r.Warnings) == 0 {
					why = " (" + skippedWhy + ")"
				}
				fmt.Fprintf(e.stdout, "%-10s %s%s\n", r.Outcome, r.Source, why)
			}
		default:
			counts[r.Outcome]++
			if !e.json && !interrupted && (verbose || r.Outcome != inscribe.Unchanged) {
				fmt.Fprintf(e.stdout, "%-10s %s\n", r.Outcome, r.Doc)
			}
		}
		sum.Documents = append(sum.Documents, d)
	}
	sum.Inscribed, sum.Appended, sum.Unchanged = counts[inscribe.Inscribed], counts[inscribe.Appended], counts[inscribe.Unchanged]
	sum.Upgraded, sum.Failed = counts[inscribe.Upgraded], counts[inscribe.Failed]
	if e.json {
		writeJSON(e.stdout, sum)
		return sum.Failed
	}
	if interrupted {
		return sum.Failed
	}
	upgraded := ""
	if sum.Upgraded > 0 {
		// Only while a store is brought forward to a new format.
		upgraded = fmt.Sprintf("%d upgraded, ", sum.Upgraded)
	}
	fmt.Fprintf(e.stdout, "%d inscribed, %d appended, %d unchanged, %s%d %s, %d failed",
		sum.Inscribed, sum.Appended, sum.Unchanged, upgraded,
		sum.Warnings, plural(sum.Warnings, "warning", "warnings"), sum.Failed)
	if sum.Left > 0 {
		fmt.Fprintf(e.stdout, ", %d left for the next append", sum.Left)
	}
	fmt.Fprintln(e.stdout)
	return sum.Failed
}

// updateJSON is the report of inscribe and append with --json.
type updateJSON struct {
	// Documents has one entry per document the run looked at, unchanged
	// ones included.
	Documents []docJSON `json:"documents"`
	Inscribed int       `json:"inscribed"`
	Appended  int       `json:"appended"`
	Unchanged int       `json:"unchanged"`
	Upgraded  int       `json:"upgraded"`
	Warnings  int       `json:"warnings"`
	Failed    int       `json:"failed"`
	// Left counts the documents append --hook left to the next append
	// because another scribe was writing them.
	Left int `json:"left"`
	// Skipped counts the session files that hold no entry yet: no
	// document is made until they do.
	Skipped int `json:"skipped"`
}

// skippedWhy says why a session file was skipped.
const skippedWhy = "no entry yet: inscribed once it has one"

// docJSON is one document of an inscribe or append report.
type docJSON struct {
	// Outcome is inscribed, appended, unchanged, upgraded, failed, left or
	// skipped.
	Outcome  string   `json:"outcome"`
	Doc      string   `json:"doc"`    // the document; "" when there is none
	Source   string   `json:"source"` // what it was read from
	Warnings []string `json:"warnings"`
	Error    string   `json:"error"` // "" unless it failed
	Hints    []string `json:"hints"`
}

// resultHints is the advice for the failure of one document.
func resultHints(err error) []string {
	var le *inscribe.LockError
	var ee *inscribe.EditedError
	var se *inscribe.SourceError
	switch {
	case errors.As(err, &le):
		return []string{"run again when the other scribe is done"}
	case errors.As(err, &ee):
		return []string{"move the edit out of the last round, or run scribe append --force to replace it"}
	case errors.As(err, new(*inscribe.MissingNoteError)), errors.As(err, new(*inscribe.DamageError)):
		return repairHints(err)
	case errors.As(err, &se):
		return []string{"inscribe the new file into another store (--root), or remove the document and its folder to inscribe it afresh"}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
