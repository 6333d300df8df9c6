package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
)

type checkOptions struct {
	sources []string
	store   bool
	json    bool
	to      string
}

func newCheckCmd(e *env) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check [SOURCE...]",
		Short: "Prove the round trip: inscribe, export, diff against the source, re-inscribe",
		Long: `check inscribes each SOURCE into a scratch store, exports it back with
export-claude, compares the export with the source (line by line, then entry
by entry, with a diff of the field that differs), inscribes the export and
compares the two documents. It writes nothing to the store.

With --store, check the sessions already in the store instead: each
document is exported and compared with its source, and sessions whose
source is gone are listed (the archive now holds the only copy).

Findings: lost (in the source, not in the export), added (in the export,
not in the source), transformed (the same entry in other bytes, with the
field that differs), document (re-inscribing the export gives another
document). A torn last line, which is never inscribed, and a source that is
gone are reported but are not failures.

With --to codex or --to claude, check the conversion of each SESSION (a
session id or a document, or a source to inscribe first) to the other
client instead: what export-codex or export-claude could not carry, each
kind of loss with its count and why (dropped: not in the conversion;
transformed: carried in another form), then the conversion is inscribed back
and compared with the session: a difference no reported loss accounts for
is a failure (document).

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
	cmd.Flags().BoolVar(&o.json, "json", false, "print the reports as JSON")
	cmd.Flags().StringVar(&o.to, "to", "", "check the conversion of each SESSION to this client (codex, claude)")
	return cmd
}

func runCheck(e *env, o checkOptions) error {
	var reports []*check.Report
	if o.to != "" {
		if o.store {
			return &flagError{fmt.Errorf("--to checks sessions, --store the store's sources: give one")}
		}
		var err error
		if reports, err = checkConversions(e, o); err != nil {
			return err
		}
		return printReports(e, reports, o.json)
	}
	if o.store {
		if len(o.sources) > 0 {
			return &flagError{fmt.Errorf("--store checks the whole store: give no SOURCE")}
		}
		store, err := inscribe.OpenStore(e.root)
		if err != nil {
			return err
		}
		docs, err := storedDocs(store)
		if err != nil {
			return err
		}
		for _, md := range docs {
			m, err := inscribe.ReadMeta(md)
			if err != nil {
				reports = append(reports, &check.Report{Doc: md, Findings: []check.Finding{{Kind: check.Error, File: md, Msg: err.Error()}}})
				continue
			}
			f, err := formatOf(m)
			if err != nil {
				reports = append(reports, &check.Report{Doc: md, Findings: []check.Finding{{Kind: check.Error, File: md, Msg: err.Error()}}})
				continue
			}
			rep, err := check.Stored(store, md, f.checkFormat())
			if err != nil {
				return err
			}
			reports = append(reports, rep)
		}
	} else {
		sources := o.sources
		if len(sources) == 0 {
			var note string
			var err error
			if sources, note, err = defaultSource(); err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintf(e.stderr, "scribe: %s\n", strings.Replace(note, "inscribing", "checking", 1))
			}
		}
		for _, src := range sources {
			ts, err := discover(src)
			if err != nil {
				return describeOpenError(src, err)
			}
			for _, t := range ts {
				rs, err := check.Session(t, formatFor(t.Adapter).checkFormat())
				if err != nil {
					return err
				}
				reports = append(reports, rs...)
			}
		}
	}
	return printReports(e, reports, o.json)
}

// storedDocs lists every document in a store, sidechains included.
func storedDocs(store *inscribe.Store) ([]string, error) {
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
		if reports == nil {
			reports = []*check.Report{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
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
