package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
)

func newRepairCmd(e *env) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "repair [SESSION...]",
		Short: "Mend what is damaged in the store, from the sessions' sources",
		Long: `repair mends the sessions given (every one in the store when none is
given) and their sidechains: round files deleted, cut short or overwritten,
a lost read note (state.json), graph.tsv or rounds.tsv, a document deleted
or damaged, damaged indexes and tags. Commands that find damage say which
file and to run scribe repair SESSION.

What was inscribed is rebuilt from the session's source, which must still
hold it, else from the round files that are whole; from the round files
too when the source gives other bytes than round files as scribe wrote
them (a text forget removed from the store that the source still holds),
so that nothing forgotten comes back. The round files are
checked against the sizes and hashes scribe recorded when it wrote them
(rounds.tsv), and only damaged ones are replaced: a round file that is as
scribe wrote it is never changed. The document is left as it is when it
still reads and holds the same messages, so a person's edits (summary,
engagements, messages) stay; one converted to CRLF line ends (git's
autocrlf) is made LF again in place, its text kept; a damaged document is
rebuilt, keeping its head's summary and engagements when they read and
every message that is still whole, and the document as it was is set
aside beside it (<session>.md.damaged-<time>), so that nothing a person
wrote is lost. Tags (tags.tsv) that were lost or damaged are recovered from
the indexes. A session's indexes are rebuilt from its round files when
the repair mended it, when they are damaged, when they do not hold the
tags its tags.tsv holds, or when its table of rounds (index.md) is not
what they give; a sound session's are checked and kept. The catalogs are
rebuilt.

What cannot be recovered (a damaged round file whose source is gone) is
named, and that session is left as it is.

EXIT STATUS
  0  every session is sound, or was mended
  2  something could not be mended

With --json the report is one object on stdout:
  {"documents": [{"outcome", "doc", "source", "notes", "error",
   "hints"}, ...], "repaired", "sound", "failed"}
where outcome is repaired, sound or failed, and notes say what was mended.`,
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRepair(cmd.Context(), e, args, verbose)
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every document, sound ones too")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

func runRepair(ctx context.Context, e *env, refs []string, verbose bool) error {
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	// A redacting store's files are mended redacted.
	if _, err := setRedaction(store.Root, store.Store, redactFlags{}, false); err != nil {
		return err
	}
	docs, err := repairTargets(store, refs)
	if err != nil {
		return err
	}
	// The store's index first: a damaged one is set aside, and the
	// documents' indexing below fills the new one.
	var results []inscribe.Result
	if ws, err := store.CheckStoreIndex(); err != nil {
		results = append(results, inscribe.Result{Doc: store.IndexPath(), Outcome: inscribe.Failed, Err: err})
	} else if len(ws) > 0 {
		results = append(results, inscribe.Result{Doc: store.IndexPath(), Outcome: inscribe.Repaired, Warnings: ws})
	}
	for _, d := range docs {
		md := d.Path()
		if ctx.Err() != nil {
			results = append(results, inscribe.Result{Doc: md, Outcome: inscribe.Failed, Err: ctx.Err()})
			continue
		}
		t, err := store.RepairSource(d)
		if err != nil {
			results = append(results, inscribe.Result{Doc: md, Outcome: inscribe.Failed, Err: err})
			continue
		}
		agent := d.Agent()
		results = append(results, updateOne(md, func() []inscribe.Result {
			return storeUpdate(store, t, inscribe.Options{Repair: true, Agent: agent})
		})...)
	}
	if len(refs) == 0 {
		if ws, err := store.EnsureIndex(); err != nil {
			results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Failed, Err: err})
		} else if len(ws) > 0 {
			results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Repaired, Warnings: ws})
		}
	}
	mended, err := store.MendIndexes()
	if err != nil {
		results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Failed, Err: fmt.Errorf("update the catalog: %w", err)})
	}
	for _, c := range mended {
		results = append(results, inscribe.Result{Doc: c, Outcome: inscribe.Repaired, Warnings: []error{errMendedCatalog(c)}})
	}
	if err := store.CloseIndex(); err != nil {
		results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Failed, Err: fmt.Errorf("close the index: %w", err)})
	}
	if repairReport(e, results, verbose) > 0 {
		return &statusError{exitError}
	}
	return nil
}

// repairTargets resolves the SESSIONs given to repair to their documents
// (a sidechain's to its parent's), or lists every one in the store. A
// session whose document is gone is named by its folder (Store.Orphans).
func repairTargets(store *views.Views, refs []string) ([]*inscribe.Doc, error) {
	if len(refs) == 0 {
		docs, err := store.Docs()
		if err != nil {
			return nil, err
		}
		return append(docs, store.Orphans("")...), nil
	}
	var out []*inscribe.Doc
	seen := map[string]bool{}
	for _, ref := range refs {
		d, err := repairTarget(store, ref)
		if err != nil {
			return nil, err
		}
		if !seen[d.Path()] {
			seen[d.Path()] = true
			out = append(out, d)
		}
	}
	return out, nil
}

func repairTarget(store *views.Views, ref string) (*inscribe.Doc, error) {
	if strings.HasSuffix(ref, ".md") {
		d, err := store.Doc(ref)
		if err != nil {
			return nil, err
		}
		if p := d.Parent(); p != nil {
			return p, nil
		}
		return d, nil
	}
	if !inscribe.ValidSessionID(ref) {
		return nil, fmt.Errorf("%q is neither a session id (%s) nor a document (.md)", ref, inscribe.SessionIDRule)
	}
	d, err := store.Resolve(ref)
	if err == nil {
		return d, nil
	}
	if o := store.Orphans(ref); len(o) == 1 {
		return o[0], nil
	}
	if u := store.Unfinished(ref); len(u) == 1 {
		return nil, u[0].Stopped()
	}
	return nil, resolveError(err)
}

// repairJSON is the report of repair --json.
type repairJSON struct {
	Documents []repairDocJSON `json:"documents"`
	Repaired  int             `json:"repaired"`
	Sound     int             `json:"sound"`
	Failed    int             `json:"failed"`
}

type repairDocJSON struct {
	Outcome string   `json:"outcome"` // repaired, sound or failed
	Doc     string   `json:"doc"`
	Source  string   `json:"source"`
	Notes   []string `json:"notes"` // what was mended, and warnings
	Error   string   `json:"error"`
	Hints   []string `json:"hints"`
}

// repairReport prints what a repair did and returns how many documents
// it could not mend.
func repairReport(e *env, results []inscribe.Result, verbose bool) int {
	sum := repairJSON{Documents: []repairDocJSON{}}
	for _, r := range results {
		d := repairDocJSON{Outcome: string(r.Outcome), Doc: r.Doc, Source: r.Source, Notes: []string{}, Hints: []string{}}
		if d.Outcome == string(inscribe.Unchanged) {
			d.Outcome = "sound"
		}
		for _, w := range r.Warnings {
			d.Notes = append(d.Notes, w.Error())
		}
		switch {
		case r.Err != nil:
			sum.Failed++
			d.Outcome, d.Error = string(inscribe.Failed), r.Err.Error()
			d.Hints = append(d.Hints, unrecoverableHints(r.Err)...)
		case r.Outcome == inscribe.Repaired || len(d.Notes) > 0: // (the views mended)
			sum.Repaired++
			d.Outcome = string(inscribe.Repaired)
		default:
			sum.Sound++
		}
		sum.Documents = append(sum.Documents, d)
		if e.json {
			continue
		}
		if r.Err != nil {
			fmt.Fprintf(e.stderr, "scribe: error: %v\n", r.Err)
			for _, h := range d.Hints {
				fmt.Fprintf(e.stderr, "scribe: hint: %s\n", h)
			}
			continue
		}
		if d.Outcome == "sound" && !verbose && len(d.Notes) == 0 {
			continue
		}
		fmt.Fprintf(e.stdout, "%-10s %s\n", d.Outcome, r.Doc)
		for _, n := range d.Notes {
			fmt.Fprintf(e.stdout, "    %s\n", n)
		}
	}
	if e.json {
		writeJSON(e.stdout, sum)
		return sum.Failed
	}
	fmt.Fprintf(e.stdout, "%d repaired, %d sound, %d failed\n", sum.Repaired, sum.Sound, sum.Failed)
	return sum.Failed
}

// unrecoverableHints is the advice when a repair could not mend something.
func unrecoverableHints(err error) []string {
	var de *inscribe.DamageError
	if errors.As(err, &de) {
		return []string{"restore the session's source (or the damaged files, from a backup), then run " + repairCommand(de.Session) + " again"}
	}
	return resultHints(err)
}

// repairHints is the advice for damage an error reports: run scribe
// repair, once for each session it names.
func repairHints(err error) []string {
	var hints []string
	seen := map[string]bool{}
	walkErrors(err, func(err error) {
		id, ok := "", false
		switch x := err.(type) {
		case *inscribe.DamageError:
			id, ok = x.Session, true
		case *inscribe.MissingNoteError:
			id, ok = x.Session, true
		}
		if ok && !seen[id] {
			seen[id] = true
			hints = append(hints, "run "+repairCommand(id)+" to mend it from the session's source (the document's edits are kept)")
		}
	})
	return hints
}

// repairCommand is the command that repairs a session (the whole store,
// for "").
func repairCommand(id string) string { return strings.TrimPrefix(check.RepairAdvice(id), "run ") }

// walkErrors calls f with err and every error it wraps.
func walkErrors(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch x := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			walkErrors(e, f)
		}
	case interface{ Unwrap() error }:
		walkErrors(x.Unwrap(), f)
	}
}

// checkStored fails when the round files of a document (and of its
// sidechains) are not what scribe wrote: an export or a view of them would
// be wrong, or stop halfway. A lost read note is a warning: the files cannot
// be checked, but they may be whole.
func checkStored(e *env, d *inscribe.Doc) error {
	var docs []*inscribe.Doc
	if d.Exists() { // else only sidechains were inscribed (lone.go)
		docs = append(docs, d)
	}
	subs, _ := d.Sidechains()
	var errs []error
	for _, d := range append(docs, subs...) {
		err := d.Check()
		var mn *inscribe.MissingNoteError
		if errors.As(err, &mn) {
			printWarnings(e, []error{fmt.Errorf("%v: its round files cannot be checked; %s makes it again", err, repairCommand(mn.Session))})
			continue
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// errMendedCatalog says that a catalog held a git merge's conflict markers
// and was written again from the documents.
func errMendedCatalog(name string) error {
	return fmt.Errorf("%s: held a git merge's conflict markers; written again from the documents (a catalog is derived: commit it as it is now)", name)
}
