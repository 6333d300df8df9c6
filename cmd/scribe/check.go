package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
)

type checkOptions struct {
	sources []string
	store   bool
	to      string
	redact  redactFlags
}

func newCheckCmd(e *env) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check [SOURCE...] | check --store [SESSION...] | check --to codex|claude SESSION...",
		Short: "Prove the round trip: inscribe, export, diff against the source, re-inscribe",
		Long: `check inscribes each SOURCE into a scratch store, exports it back with
export-claude, compares the export with the source (line by line, then entry
by entry, with a diff of the field that differs), inscribes the export and
compares the two documents. It writes nothing to the store.

With --store, check the sessions already in the store instead (every one,
or each SESSION given: a session id, a unique prefix of one, or a
document's path): each document is exported and compared with its source,
and sessions whose source is gone are listed (the archive now holds the
only copy).

Findings: lost (in the source, not in the export), added (in the export,
not in the source), transformed (the same entry in other bytes, with the
field that differs), document (re-inscribing the export gives another
document), redacted (the same entry, but secrets replaced by markers in a
redacting store). A torn last line, which is never inscribed, a source that
is gone and a redacted entry are reported but are not failures.

A SOURCE is inscribed as scribe inscribe would inscribe it into the store:
redacted when the store redacts (or, where there is no store yet, as a new
store would), unless --no-redact.

With --to codex or --to claude, check the conversion of each SESSION (a
session id, a unique prefix of one, a document, or a source to inscribe
first) to the other client instead: what export-codex or export-claude
could not carry, each kind of loss with its count and why (dropped: not in
the conversion; transformed: carried in another form), known losses that
are not failures; then the conversion is inscribed back and compared with
the session: a difference no reported loss accounts for is a failure
(document).

EXIT STATUS
  0  every session round-trips
  1  some difference is unexplained
  2  the check could not run`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.sources = args
			return runCheck(e, o)
		},
	}
	cmd.Flags().BoolVar(&o.store, "store", false, "check the sessions in the store against their sources")
	o.redact.add(cmd, "in the scratch stores check inscribes into")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the reports as JSON")
	cmd.Flags().StringVar(&o.to, "to", "", "check the conversion of each SESSION to this client (codex, claude)")
	return cmd
}

func runCheck(e *env, o checkOptions) error {
	var reports []*check.Report
	if o.to != "" {
		if o.store {
			return &flagError{fmt.Errorf("--to checks conversions, --store the store against its sources: give one")}
		}
		var err error
		if reports, err = checkConversions(e, o); err != nil {
			return err
		}
		return printReports(e, reports, e.json)
	}
	if o.store {
		store, err := e.openExistingStore()
		if err != nil {
			return err
		}
		if _, err := setRedaction(store.Root, store.Store, o.redact, false); err != nil {
			return err
		}
		var docs []string
		if len(o.sources) > 0 {
			docs, err = sessionsToCheck(e, o.sources)
		} else {
			docs, err = storedDocs(store)
		}
		if err != nil {
			return err
		}
		if len(o.sources) == 0 {
			docs = append(docs, orphans(store, "*")...)
		}
		for _, md := range docs {
			m, err := document.ReadMeta(md)
			if err != nil {
				// A document that does not read (or is gone): what of its
				// files is damaged, and what mends it.
				rep := &check.Report{Doc: md}
				for _, err := range inscribe.VerifyDoc(md, nil, "") {
					rep.Findings = append(rep.Findings, check.DamageFinding(err))
				}
				if len(rep.Findings) == 0 {
					rep.Findings = []check.Finding{{Kind: check.Error, File: md, Msg: err.Error()}}
				}
				reports = append(reports, rep)
				continue
			}
			f, err := formatOf(m)
			if err != nil {
				reports = append(reports, &check.Report{Doc: md, Findings: []check.Finding{{Kind: check.Error, File: md, Msg: err.Error()}}})
				continue
			}
			cf := f.checkFormat()
			cf.Redact = store.Redact
			rep, err := check.Stored(store.Store, md, cf)
			if err != nil {
				return err
			}
			// Its derived views: index, tags, table of rounds.
			for _, err := range store.VerifyDoc(md) {
				rep.Findings = append(rep.Findings, check.DamageFinding(err))
			}
			reports = append(reports, rep)
		}
		if len(o.sources) == 0 {
			// The store's own: its index and its catalogs.
			rep := &check.Report{Doc: store.SessionsDir()}
			for _, err := range store.VerifyStore() {
				rep.Findings = append(rep.Findings, check.DamageFinding(err))
			}
			if len(rep.Findings) > 0 {
				reports = append(reports, rep)
			}
			store.CloseIndex()
		}
	} else {
		root, _, err := e.storeRoot()
		if err != nil {
			return err
		}
		scratch := &inscribe.Store{}
		if _, err := setRedaction(root, scratch, o.redact, false); err != nil {
			return err
		}
		sources := o.sources
		if len(sources) == 0 {
			var samples bool
			var err error
			if sources, samples, err = defaultSource(false); err != nil {
				return err
			}
			if samples {
				fmt.Fprintf(e.stderr, "scribe: %s; checking the bundled sample sessions in %s\n", noSessionsNote(), strings.Join(sources, " and "))
			}
		}
		for _, src := range sources {
			ts, err := discover(src)
			if err != nil {
				return describeOpenError(src, err)
			}
			for _, t := range ts {
				cf := formatFor(t.Adapter).checkFormat()
				cf.Redact = scratch.Redact
				rs, err := check.Session(t, cf)
				if err != nil {
					return err
				}
				reports = append(reports, rs...)
			}
		}
	}
	return printReports(e, reports, e.json)
}

// sessionsToCheck resolves the SESSIONs given to check --store to their
// documents, each with its sidechains.
func sessionsToCheck(e *env, refs []string) ([]string, error) {
	var docs []string
	for _, ref := range refs {
		md, err := findDocument(e, ref)
		if err != nil {
			return nil, err
		}
		docs = append(docs, md)
		subs, _ := filepath.Glob(filepath.Join(inscribe.Folder(md), "agent-*.md"))
		docs = append(docs, subs...)
	}
	return docs, nil
}

// storedDocs lists every document in a store, sidechains included.
func storedDocs(store *views.Views) ([]string, error) {
	mains, err := filepath.Glob(filepath.Join(store.SessionsDir(), "*", "*.md"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, md := range mains {
		if filepath.Base(md) == "index.md" {
			continue
		}
		out = append(out, md)
		subs, _ := filepath.Glob(filepath.Join(inscribe.Folder(md), "agent-*.md"))
		out = append(out, subs...)
	}
	return out, nil
}

func printReports(e *env, reports []*check.Report, asJSON bool) error {
	failed, broken := 0, 0
	for _, r := range reports {
		if !r.OK() {
			failed++
		}
		if !r.OKSoFar() {
			broken++
		}
	}
	if asJSON {
		// An empty list is [], never null, and a path names a file that
		// exists: a document check inscribed into its scratch store is
		// gone by now.
		out := make([]check.Report, len(reports))
		for i, r := range reports {
			out[i] = *r
			if out[i].Findings == nil {
				out[i].Findings = []check.Finding{}
			}
			if _, err := os.Stat(r.Doc); err != nil {
				out[i].Doc = ""
			}
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			name := r.Source
			if name == "" {
				name = r.Doc
			}
			status := "ok  "
			if !r.OK() {
				status = "FAIL"
			}
			fmt.Fprintf(e.stdout, "%s %s\n", status, name)
			for i := 0; i < len(r.Findings); i++ {
				f := r.Findings[i]
				// A run of lost or added lines is one line of the report.
				if j := runEnd(r.Findings, i); j > i+2 {
					fmt.Fprintf(e.stdout, "     %s %s:%d-%d: %d lines %s\n", f.Kind, f.File, f.Line, r.Findings[j-1].Line, j-i, strings.TrimPrefix(f.Msg, "in the "))
					i = j - 1
					continue
				}
				if f.What != "" {
					fmt.Fprintf(e.stdout, "     %s\n", lossLine(f))
					continue
				}
				loc := f.File
				if f.Line > 0 {
					loc = fmt.Sprintf("%s:%d", f.File, f.Line)
				}
				id := ""
				if f.UUID != "" {
					id = " " + f.UUID
				}
				fmt.Fprintf(e.stdout, "     %s %s%s: %s\n", f.Kind, loc, id, f.Msg)
				for _, l := range strings.Split(strings.TrimSuffix(f.Diff, "\n"), "\n") {
					if l != "" {
						fmt.Fprintf(e.stdout, "         %s\n", l)
					}
				}
				if f.Removed != "" {
					fmt.Fprintf(e.stdout, "         hint: the document no longer holds %s, which the round files keep; if it is a secret, scribe forget --secret VALUE %s removes it from every file of the store\n", f.Removed, sessionOf(r.Doc))
				}
			}
		}
		fmt.Fprintf(e.stdout, "%d checked, %d ok, %d with differences\n", len(reports), len(reports)-failed, failed)
	}
	switch {
	case broken > 0:
		return &statusError{exitError}
	case failed > 0:
		return &statusError{exitChanges}
	}
	return nil
}

// sessionOf names a document's session for a command line: its id, or
// the document's path when its head does not read.
func sessionOf(md string) string {
	if m, err := document.ReadMeta(md); err == nil {
		return m.SessionID
	}
	return md
}

// runEnd returns the end of the run of findings that starts at i: the same
// kind and file, on consecutive lines, with no diff to show.
func runEnd(fs []check.Finding, i int) int {
	j := i + 1
	for j < len(fs) && fs[j].Kind == fs[i].Kind && fs[j].File == fs[i].File && fs[j].Line == fs[j-1].Line+1 &&
		fs[j].Diff == "" && (fs[i].Kind == check.Lost || fs[i].Kind == check.Added) {
		j++
	}
	return j
}
