package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

type exportOptions struct {
	session string
	out     string
	project string // resume it in this working directory (--project)
	force   bool
}

// projectFlag adds --project, which every export takes.
func projectFlag(cmd *cobra.Command, o *exportOptions, client string) {
	cmd.Flags().StringVar(&o.project, "project", "", "write it where "+client+" finds it when resumed in this directory (your own checkout), instead of in the session's")
}

// exportDir is where an export goes: --out, else where the client looks
// for the session, in the session's working directory or --project's.
func exportDir(o exportOptions, f *format, m *session.Meta) (string, error) {
	if o.out != "" {
		if o.project != "" {
			return "", &flagError{errors.New("--out and --project each say where the export goes: give one")}
		}
		return o.out, nil
	}
	if o.project != "" {
		abs, err := filepath.Abs(o.project)
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", &flagError{fmt.Errorf("--project %s: not a directory", o.project)}
		}
		mm := *m
		mm.Project = &abs
		m = &mm
	}
	dir, err := f.exportDir(m)
	if err != nil {
		return "", withHint(err, "use --out DIR, or --project DIR")
	}
	return dir, nil
}

func newExportCmd(e *env) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export-claude SESSION",
		Short: "Regenerate, from the store, a transcript that claude --resume accepts",
		Long: `export-claude writes the Claude Code transcript of a session in the store:
$CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl (default
~/.claude/projects), where <project> is the session's working directory
encoded as Claude Code encodes it, with its subagent transcripts in
<session>/subagents/ and the files Claude Code kept beside it.

SESSION is a session id or the path of a document (.md). The markdown is
the authority for content: a message edited in the document is exported as
edited. Structure, identities and timestamps come from the round files and
are never regenerated. An existing file that differs is not overwritten
without --force; an identical one is left alone.

A session inscribed from another client (Codex) is converted: its live
conversation becomes a transcript Claude Code resumes under the same session
id, with prompts, replies, tool calls and their full results, images and
compactions as Claude Code's own entries. What cannot be carried as it was
(reasoning, the client's injected context, ...) is summarised on stderr;
scribe check --to claude SESSION lists it with the reasons.

With --json the report is one object on stdout:
  {"files": [{"path", "written"}, ...], "warnings": [...]}
where written is false for a file that was already there, identical; a
conversion's adds "losses": [{"kind", "what", "count", "unit", "detail",
"why"}, ...].`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.session = args[0]
			return runExport(e, o, formatNamed(claude.Format))
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "write into this directory instead (\"-\": the session's transcript to stdout)")
	projectFlag(cmd, &o, "claude --resume")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite existing files that differ")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

// runExport exports a session as the target client keeps it: the
// client's own file back, or a conversion of another client's session.
func runExport(e *env, o exportOptions, target *format) error {
	d, err := findSession(e, o.session)
	if err != nil {
		return err
	}
	if d.Exists() {
		// A session that went on in another file (a continuation) is
		// exported as it went on last: its whole conversation.
		d = d.Latest()
	}
	m, err := d.SessionMeta()
	if err != nil {
		return err
	}
	f, err := formatOf(m)
	if err != nil {
		return err
	}
	if err := checkStored(e, d); err != nil {
		return err
	}
	if f != target {
		if !d.Exists() {
			return loneError(d)
		}
		return runConvert(e, o, d, m, f, target)
	}
	if o.out == "-" {
		if e.json {
			return &flagError{errors.New("--out - writes the transcript to stdout: it cannot also be a --json report")}
		}
		if !d.Exists() {
			return loneError(d)
		}
		warnings, err := f.transcript(d, e.stdout)
		printWarnings(e, warnings)
		return err
	}
	dir, err := exportDir(o, f, m)
	if err != nil {
		return err
	}
	files, warnings, err := f.exportSession(d, dir, o.force)
	recordExports(e, d, files)
	if e.json {
		rep := exportJSON{Files: []exportFileJSON{}, Warnings: []string{}}
		for _, f := range files {
			rep.Files = append(rep.Files, exportFileJSON{Path: f.Path, Written: f.Written})
		}
		for _, w := range warnings {
			rep.Warnings = append(rep.Warnings, w.Error())
		}
		if werr := writeJSON(e.stdout, rep); err == nil {
			err = werr
		}
	} else {
		printWarnings(e, warnings)
		for _, f := range files {
			verb := "unchanged"
			if f.Written {
				verb = "wrote"
			}
			fmt.Fprintf(e.stdout, "%-10s %s\n", verb, f.Path)
		}
	}
	var ee *exportclaude.ExistsError
	if errors.As(err, &ee) {
		return withHint(err, "use --force to replace it, or --out to write elsewhere")
	}
	return err
}

// exportJSON is the report of export-claude --json.
type exportJSON struct {
	Files    []exportFileJSON `json:"files"`
	Warnings []string         `json:"warnings"`
	// Losses is what a conversion could not carry as it was.
	Losses []exportcore.Loss `json:"losses,omitempty"`
}

type exportFileJSON struct {
	Path    string `json:"path"`
	Written bool   `json:"written"` // false: an identical file was already there
}

func printWarnings(e *env, ws []error) {
	for _, w := range ws {
		fmt.Fprintf(e.stderr, "scribe: warning: %v\n", w)
	}
}

// recordExports records the files an export wrote in the store, so that a
// client's resuming one continues the session rather than takes its
// source's place (inscribe.Store.RecordExport). A file it cannot record is
// a warning: the export itself is done.
func recordExports(e *env, d *inscribe.Doc, files []exportclaude.File) {
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".jsonl") {
			if err := d.Exported(f.Path); err != nil {
				printWarnings(e, []error{fmt.Errorf("record the export %s: %w", f.Path, err)})
			}
		}
	}
}
