package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
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
hold it, else from the round files that are whole. The round files are
checked against the sizes and hashes scribe recorded when it wrote them
(rounds.tsv), and only damaged ones are replaced: a round file that is as
scribe wrote it is never changed. The document is left as it is when it
still reads and holds the same messages, so a person's edits (summary,
engagements, messages) stay; a damaged document is rebuilt, keeping its
head's summary and engagements when they read and every message that is
still whole. Tags (tags.tsv) that were lost or damaged are recovered from
the indexes, which are then rebuilt, as are the catalogs.

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
		results = append(results, inscribe.Result{Doc: filepath.Join(store.SessionsDir(), inscribe.StoreDB), Outcome: inscribe.Failed, Err: err})
	} else if len(ws) > 0 {
		results = append(results, inscribe.Result{Doc: filepath.Join(store.SessionsDir(), inscribe.StoreDB), Outcome: inscribe.Repaired, Warnings: ws})
	}
	for _, md := range docs {
		if ctx.Err() != nil {
			results = append(results, inscribe.Result{Doc: md, Outcome: inscribe.Failed, Err: ctx.Err()})
			continue
		}
		t, err := repairSource(store, md)
		if err != nil {
			results = append(results, inscribe.Result{Doc: md, Outcome: inscribe.Failed, Err: err})
			continue
		}
		agent := filepath.Base(filepath.Dir(md))
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
	if err := store.RefreshIndexes(); err != nil {
		results = append(results, inscribe.Result{Doc: store.SessionsDir(), Outcome: inscribe.Failed, Err: fmt.Errorf("update the catalog: %w", err)})
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
// session whose document is gone is named by its folder: <folder>.md.
func repairTargets(store *views.Views, refs []string) ([]string, error) {
	if len(refs) == 0 {
		docs, err := sessionDocs(store)
		if err != nil {
			return nil, err
		}
		return append(docs, orphans(store, "*")...), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, ref := range refs {
		md, err := repairTarget(store, ref)
		if err != nil {
			return nil, err
		}
		if !seen[md] {
			seen[md] = true
			out = append(out, md)
		}
	}
	return out, nil
}

func repairTarget(store *views.Views, ref string) (string, error) {
	if strings.HasSuffix(ref, ".md") {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(filepath.Base(abs), "agent-") {
			if parent := filepath.Dir(abs) + ".md"; fileExists(parent) || fileExists(filepath.Join(filepath.Dir(abs), "state.json")) {
				return parent, nil
			}
		}
		return ref, nil
	}
	if !inscribe.ValidSessionID(ref) {
		return "", fmt.Errorf("%q is neither a session id (%s) nor a document (.md)", ref, inscribe.SessionIDRule)
	}
	md, err := resolveSession(store, ref)
	if err == nil {
		return md, nil
	}
	if o := orphans(store, ref); len(o) == 1 {
		return o[0], nil
	}
	return "", err
}

// orphans lists the documents that are gone while their folders are there
// (holding a read note or round files), named like the folders: <folder>.md.
func orphans(store *views.Views, name string) []string {
	dirs, _ := filepath.Glob(filepath.Join(store.SessionsDir(), "*", name))
	var out []string
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || strings.HasPrefix(filepath.Base(d), ".") || fileExists(d+".md") {
			continue
		}
		if fileExists(filepath.Join(d, "state.json")) || fileExists(inscribe.RoundsDir(d)) {
			out = append(out, d+".md")
		}
	}
	sort.Strings(out)
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// repairSource describes the session of a document as an update takes it:
// found at its recorded source when that is still there, else named by it,
// with the sidechains the store holds.
func repairSource(store *views.Views, md string) (source.Session, error) {
	folder := inscribe.Folder(md)
	id := strings.TrimSuffix(filepath.Base(md), ".md")
	var f *format
	rec := inscribe.NoteSource(folder)
	var listed []session.Sidechain
	if m, err := document.ReadMeta(md); err == nil {
		if f, err = formatOf(m); err != nil {
			return source.Session{}, err
		}
		id, rec, listed = m.SessionID, m.Source, m.Sidechains
	}
	path := ""
	if rec != "" {
		path = store.ResolveSource(rec)
	}
	var t source.Session
	if path != "" {
		if ts, _, err := discover(path); err == nil {
			for _, x := range ts {
				if x.ID == id && x.Path != "" {
					t = x
				}
			}
		}
	}
	if t.Path == "" {
		if f == nil {
			f = detectFormat(folder)
		}
		if f == nil {
			return source.Session{}, fmt.Errorf("%s: neither its head, its source nor its first round file says which client it came from", md)
		}
		if path == "" {
			path = filepath.Join(folder, "(source unknown)")
		}
		t = source.Session{Adapter: f.adapter, Path: path, ID: id, Dir: filepath.Dir(path), Rel: filepath.Base(path)}
	}
	// Sidechains in the store that the source no longer has.
	have := map[string]bool{}
	for _, sc := range t.Sidechains {
		have[sc.ID] = true
	}
	subs, _ := filepath.Glob(filepath.Join(folder, "agent-*.md"))
	dirs, _ := filepath.Glob(filepath.Join(folder, "agent-*"))
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !fileExists(d+".md") {
			subs = append(subs, d+".md")
		}
	}
	sort.Strings(subs)
	for _, sub := range subs {
		scID := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sub), "agent-"), ".md")
		if have[scID] {
			continue
		}
		sc := source.Sidechain{ID: scID, Path: store.ResolveSource(inscribe.NoteSource(inscribe.Folder(sub)))}
		if m, err := document.ReadMeta(sub); err == nil {
			sc.Path = store.ResolveSource(m.Source)
			if of := m.SidechainOf; of != nil {
				sc.ToolUseID, sc.Rel = of.ToolUseID, filepath.FromSlash(of.File)
			}
		}
		for _, l := range listed {
			if l.AgentID == scID {
				sc.Description = l.Description
				if sc.ToolUseID == "" {
					sc.ToolUseID = l.ToolUseID
				}
			}
		}
		if sc.Path == "" {
			sc.Path = filepath.Join(inscribe.Folder(sub), "(source unknown)")
		}
		if sc.Rel == "" {
			sc.Rel = filepath.Base(sc.Path)
		}
		t.Sidechains = append(t.Sidechains, sc)
	}
	return t, nil
}

// detectFormat tells the client a session came from by the lines of its
// first round file.
func detectFormat(folder string) *format {
	rf, err := inscribe.ReadRound(inscribe.RoundPath(folder, 1))
	if err != nil {
		return nil
	}
	tmp, err := os.CreateTemp("", "scribe-detect-*.jsonl")
	if err != nil {
		return nil
	}
	defer os.Remove(tmp.Name())
	err = inscribe.WriteEntries(tmp, rf)
	if cerr := tmp.Close(); err != nil || cerr != nil {
		return nil
	}
	for _, f := range formats {
		if f.adapter.Detect(tmp.Name()) {
			return f
		}
	}
	return nil
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
func checkStored(e *env, md string) error {
	var docs []string
	if _, err := os.Stat(md); err == nil { // else only sidechains were inscribed (lone.go)
		docs = append(docs, md)
	}
	subs, _ := filepath.Glob(filepath.Join(inscribe.Folder(md), "agent-*.md"))
	var errs []error
	for _, d := range append(docs, subs...) {
		err := inscribe.CheckDoc(d)
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
