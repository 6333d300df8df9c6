package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/inscribe"
)

type exportOptions struct {
	session string
	out     string
	force   bool
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
scribe check --to claude SESSION lists it with the reasons.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.session = args[0]
			return runExport(e, o, formatNamed(claude.Format))
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "write into this directory instead (\"-\": the session's transcript to stdout)")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite existing files that differ")
	return cmd
}

// findDocument resolves a session id or a document path. A path needs no
// store.
func findDocument(e *env, ref string) (string, error) {
	if strings.HasSuffix(ref, ".md") {
		_, err := os.Stat(ref)
		return ref, err
	}
	_, md, err := openDocument(e, ref)
	return md, err
}

// openDocument opens the store and resolves a session id or a document
// path in it.
func openDocument(e *env, ref string) (*inscribe.Store, string, error) {
	store, err := inscribe.OpenStore(e.root)
	if err != nil {
		return nil, "", err
	}
	if strings.HasSuffix(ref, ".md") {
		_, err := os.Stat(ref)
		return store, ref, err
	}
	if strings.ContainsAny(ref, `/\`) || ref == "." || ref == ".." || ref == "" {
		return nil, "", fmt.Errorf("%q is neither a session id nor a document (.md)", ref)
	}
	p, ok := store.FindDoc(ref)
	if !ok {
		return nil, "", withHint(fmt.Errorf("no session %s in %s", ref, store.SessionsDir()),
			"give the store with --root, or the document's path")
	}
	return store, p, nil
}

// runExport exports a session as the target client keeps it: the
// client's own file back, or a conversion of another client's session.
func runExport(e *env, o exportOptions, target *format) error {
	md, err := findDocument(e, o.session)
	if err != nil {
		return err
	}
	m, err := inscribe.ReadMeta(md)
	if err != nil {
		return err
	}
	f, err := formatOf(m)
	if err != nil {
		return err
	}
	if f != target {
		return runConvert(e, o, md, m, f, target)
	}
	if o.out == "-" {
		warnings, err := f.transcript(md, e.stdout)
		printWarnings(e, warnings)
		return err
	}
	dir := o.out
	if dir == "" {
		if dir, err = f.exportDir(m); err != nil {
			return withHint(err, "use --out DIR")
		}
	}
	files, warnings, err := f.exportSession(md, dir, o.force)
	printWarnings(e, warnings)
	for _, f := range files {
		verb := "unchanged"
		if f.Written {
			verb = "wrote"
		}
		fmt.Fprintf(e.stdout, "%-10s %s\n", verb, f.Path)
	}
	var ee *exportclaude.ExistsError
	if errors.As(err, &ee) {
		return withHint(err, "use --force to replace it, or --out to write elsewhere")
	}
	return err
}

func printWarnings(e *env, ws []error) {
	for _, w := range ws {
		fmt.Fprintf(e.stderr, "scribe: warning: %v\n", w)
	}
}
