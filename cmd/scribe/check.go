package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/session/source"
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
		Use:   "check [SOURCE...] | check --store [SESSION...] | check --to codex|claude|gemini SESSION...",
		Short: "Prove the round trip: inscribe, export, diff against the source, re-inscribe",
		Long: `check inscribes each SOURCE into a scratch store, exports it back with
export-claude, compares the export with the source (line by line, then entry
by entry, with a diff of the field that differs), inscribes the export and
compares the two documents. It writes nothing to the store.

With --store, check the sessions already in the store instead (every one,
or each SESSION given: a session id, a unique prefix of one, or a
document's path): each document is exported and compared with its source,
and sessions whose source is gone are listed (the archive now holds the
only copy). Subagents' documents whose session has none (its transcript
was never found) are checked too; name such a session by its exact id.
Each report is printed as it is made.

Over sources, files that are not sessions, links that lead out of a
folder and folders that cannot be read are skipped with a warning.

Findings: lost (in the source, not in the export), added (in the export,
not in the source), transformed (the same entry in other bytes, with the
field that differs), document (re-inscribing the export gives another
document), redacted (the same entry, but secrets replaced by markers in a
redacting store). A torn last line, which is never inscribed, a source that
is gone and a redacted entry are reported but are not failures.

A SOURCE is inscribed as scribe inscribe would inscribe it into the store:
redacted when the store redacts (or, where there is no store yet, as a new
store would), unless --no-redact.

With --to codex, --to claude or --to gemini, check the conversion of each
SESSION (a session id, a unique prefix of one, a document, or a source to
inscribe first) to that client instead: what export-codex, export-claude or
export-gemini could not carry, each kind of loss with its count and why
(dropped: not in the conversion; transformed: carried in another form),
known losses that are not failures; then what that client would send its
model resuming the conversion is compared with what the session's own
client sends resuming it: a prompt, reply, image, tool call or result
missing that no reported loss accounts for is a failure (document).

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
	cmd.Flags().BoolVar(&e.json, "json", false, "print the reports as JSON")
	cmd.Flags().StringVar(&o.to, "to", "", "check the conversion of each SESSION to this client (codex, claude, gemini)")
	o.redact.add(cmd, "in the scratch stores check inscribes into")
	return cmd
}

func runCheck(e *env, o checkOptions) (err error) {
	if o.to != "" {
		if o.store {
			return &flagError{fmt.Errorf("--to checks conversions, --store the store against its sources: give one")}
		}
		reports, err := checkConversions(e, o)
		if err != nil {
			return err
		}
		return printReports(e, reports, e.json)
	}
	// Each report is printed as it comes: a check of any number of
	// sessions holds none of them.
	p := newReportPrinter(e, e.json)
	defer func() {
		if err != nil {
			p.abort()
			return
		}
		err = p.finish()
	}()
	if o.store {
		store, err := e.openExistingStore()
		if err != nil {
			return err
		}
		if _, err := setRedaction(store.Root, store.Store, o.redact, false); err != nil {
			return err
		}
		checkDoc := func(d *inscribe.Doc) error {
			md := d.Path()
			m, err := d.Meta()
			if err != nil {
				// A document that does not read (or is gone): what of its
				// files is damaged, and what mends it.
				rep := &check.Report{Doc: md}
				for _, err := range d.Verify(nil, "") {
					rep.Findings = append(rep.Findings, check.DamageFinding(err))
				}
				if len(rep.Findings) == 0 {
					rep.Findings = []check.Finding{{Kind: check.Error, File: md, Msg: err.Error()}}
				}
				return p.add(rep)
			}
			f, err := formatOf(m)
			if err != nil {
				return p.add(&check.Report{Doc: md, Findings: []check.Finding{{Kind: check.Error, File: md, Msg: err.Error()}}})
			}
			cf := f.checkFormat()
			cf.Redact = store.Redact
			rep, err := check.Stored(d, cf)
			if err != nil {
				return err
			}
			// Markers made with another key than the store's (two stores
			// started apart, then merged): equal secrets no longer read as
			// equal.
			if r := store.Redact; r != nil && m.RedactKey != "" && m.RedactKey != r.KeyID() {
				rep.Findings = append(rep.Findings, check.Finding{Kind: check.Document, File: md,
					Msg: fmt.Sprintf("its markers were made with the redaction key %s, not this store's (%s): the same secret no longer gives the same marker in its documents; keep one key in redact.toml, the one most documents were made with (scribe check --store names them all), and scribe forget --secret VALUE makes markers of the store's key", m.RedactKey, r.KeyID())})
			}
			// Its derived views: index, tags, table of rounds.
			for _, err := range store.VerifyDoc(d) {
				rep.Findings = append(rep.Findings, check.DamageFinding(err))
			}
			return p.add(rep)
		}
		if len(o.sources) > 0 {
			docs, err := sessionsToCheck(e, o.sources)
			if err != nil {
				return err
			}
			for _, d := range docs {
				if err := checkDoc(d); err != nil {
					return err
				}
			}
			return nil
		}
		if err := store.Walk(checkDoc); err != nil {
			return err
		}
		for _, d := range store.Orphans("") {
			if err := checkDoc(d); err != nil {
				return err
			}
		}
		for _, d := range store.Unfinished("") {
			if err := p.add(&check.Report{Doc: d.Path(), Findings: []check.Finding{check.DamageFinding(d.Stopped())}}); err != nil {
				return err
			}
		}
		// The store's own: its index and its catalogs.
		rep := &check.Report{Doc: store.SessionsDir()}
		for _, err := range store.VerifyStore() {
			rep.Findings = append(rep.Findings, check.DamageFinding(err))
		}
		store.CloseIndex()
		if len(rep.Findings) > 0 {
			return p.add(rep)
		}
		return nil
	}
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
		if sources, samples, err = defaultSource(false); err != nil {
			return err
		}
		if samples {
			fmt.Fprintf(e.stderr, "scribe: %s; checking the bundled sample sessions in %s\n", noSessionsNote(), strings.Join(sources, " and "))
		}
	}
	return forEachSession(e, sources, func(t source.Session) error {
		cf := formatFor(t.Adapter).checkFormat()
		cf.Redact = scratch.Redact
		rs, err := check.Session(t, cf)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := p.add(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// sessionsToCheck resolves the SESSIONs given to check --store to their
// documents, each with its sidechains.
func sessionsToCheck(e *env, refs []string) ([]*inscribe.Doc, error) {
	var docs []*inscribe.Doc
	for _, ref := range refs {
		d, err := findSession(e, ref)
		if err != nil {
			return nil, err
		}
		if d.Exists() {
			docs = append(docs, d)
		}
		subs, _ := d.Sidechains()
		docs = append(docs, subs...)
	}
	return docs, nil
}

func printReports(e *env, reports []*check.Report, asJSON bool) error {
	p := newReportPrinter(e, asJSON)
	for _, r := range reports {
		if err := p.add(r); err != nil {
			return err
		}
	}
	return p.finish()
}

// reportPrinter prints check's reports one at a time, as they come, and
// then the summary (the text) or the end of the list (--json), and says
// what the exit status is.
type reportPrinter struct {
	e                 *env
	json              bool
	n, failed, broken int
	finished          bool
}

func newReportPrinter(e *env, asJSON bool) *reportPrinter {
	return &reportPrinter{e: e, json: asJSON}
}

// add prints one report.
func (p *reportPrinter) add(r *check.Report) error {
	p.n++
	if !r.OK() {
		p.failed++
	}
	if !r.OKSoFar() {
		p.broken++
	}
	if p.json {
		// An empty list is [], never null, and a path names a file that
		// exists: a document check inscribed into its scratch store is
		// gone by now. The list is written as writeJSON writes it whole.
		out := *r
		if out.Findings == nil {
			out.Findings = []check.Finding{}
		}
		if _, err := os.Stat(r.Doc); err != nil {
			out.Doc = ""
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("  ", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
		sep := ",\n  "
		if p.n == 1 {
			sep = "[\n  "
		}
		_, err := fmt.Fprintf(p.e.stdout, "%s%s", sep, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	e := p.e
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
	return nil
}

// abort ends what was printed when the check stops on an error: a JSON
// list begun is closed, so that stdout stays one JSON document.
func (p *reportPrinter) abort() {
	if !p.finished && p.json && p.n > 0 {
		fmt.Fprintln(p.e.stdout, "\n]")
	}
	p.finished = true
}

// finish prints the summary, or ends the JSON list, once, and returns the
// status the reports call for.
func (p *reportPrinter) finish() error {
	if p.finished {
		return nil
	}
	p.finished = true
	switch {
	case p.json && p.n == 0:
		fmt.Fprintln(p.e.stdout, "[]")
	case p.json:
		fmt.Fprintln(p.e.stdout, "\n]")
	default:
		fmt.Fprintf(p.e.stdout, "%d checked, %d ok, %d with differences\n", p.n, p.n-p.failed, p.failed)
	}
	switch {
	case p.broken > 0:
		return &statusError{exitError}
	case p.failed > 0:
		return &statusError{exitChanges}
	}
	return nil
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

// sessionOf names a document's session for a command line: its id, or
// the document's path when its head does not read.
func sessionOf(md string) string {
	if d, err := inscribe.OpenDoc(md); err == nil {
		if m, err := d.Meta(); err == nil {
			return m.SessionID
		}
	}
	return md
}

// storedDocs lists every document of a store, as inscribe.Store.Walk walks
// them.
func storedDocs(store *views.Views) ([]*inscribe.Doc, error) {
	var docs []*inscribe.Doc
	err := store.Walk(func(d *inscribe.Doc) error {
		docs = append(docs, d)
		return nil
	})
	return docs, err
}
